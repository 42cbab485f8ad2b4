"""The programs distributions exist for, run in minitorch and PyTorch from the same seed:
REINFORCE with a Categorical policy and a Gaussian VAE step (rsample, Independent Normal
log_prob, kl_divergence). Sampling uses PyTorch's ops in PyTorch's order and minitorch's
generator is PyTorch's, so the trajectories (sampled actions, losses, weights) are equal."""
import numpy as np
import pytest

import minitorch
from helpers import torch


def _reinforce(lib, steps=6):
    lib.manual_seed(0)
    D = lib.distributions
    policy = lib.nn.Sequential(lib.nn.Linear(4, 16), lib.nn.Tanh(), lib.nn.Linear(16, 3))
    opt = lib.optim.Adam(policy.parameters(), lr=1e-2)
    obs = lib.tensor(np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4))
    trace = []
    for _ in range(steps):
        dist = D.Categorical(logits=policy(obs))
        actions = dist.sample()
        rewards = (actions == 1).float() - 0.1 * actions.float()
        loss = -(dist.log_prob(actions) * (rewards - rewards.mean())).mean() - 0.01 * dist.entropy().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        trace.append((actions.numpy().copy(), loss.item()))
    return trace, [p.detach().numpy().copy() for p in policy.parameters()]


def _vae(lib, steps=4):
    lib.manual_seed(1)
    D = lib.distributions
    enc = lib.nn.Linear(6, 4)  # -> mu (2), log-std (2)
    dec = lib.nn.Linear(2, 6)
    opt = lib.optim.SGD(list(enc.parameters()) + list(dec.parameters()), lr=0.05)
    x = lib.tensor(np.linspace(0, 1, 30, dtype=np.float32).reshape(5, 6))
    trace = []
    for _ in range(steps):
        mu, log_std = enc(x).chunk(2, dim=-1)
        q = D.Normal(mu, log_std.exp())
        z = q.rsample()
        recon = D.Independent(D.Normal(dec(z), 1.0), 1).log_prob(x)
        kl = D.kl_divergence(q, D.Normal(lib.zeros_like(mu), lib.ones_like(mu))).sum(-1)
        loss = (kl - recon).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        trace.append(loss.item())
    return trace, [p.detach().numpy().copy() for p in list(enc.parameters()) + list(dec.parameters())]


@pytest.mark.parametrize("program", [_reinforce, _vae])
def test_program_as_torch(program):
    trace, params = program(minitorch)
    if torch is None:
        return
    t_trace, t_params = program(torch)
    for got, want in zip(trace, t_trace):
        if isinstance(got, tuple):
            np.testing.assert_array_equal(got[0], want[0])
            assert got[1] == pytest.approx(want[1], rel=1e-5, abs=1e-6)
        else:
            assert got == pytest.approx(want, rel=1e-5)
    for p, tp in zip(params, t_params):
        np.testing.assert_allclose(p, tp, rtol=1e-4, atol=1e-5)
