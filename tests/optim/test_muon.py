"""optim.Muon: against torch.optim.Muon step for step (Muon on the 2-D weights, AdamW on the
biases, as its documentation pairs them), every option that changes the update, the
orthogonalisation itself against NumPy's SVD, state_dict, and PyTorch's argument errors.

Tolerance: rtol 1e-5 over 15 steps. The Newton-Schulz iteration runs in bfloat16 in both
libraries and agrees bit for bit on one call here; the float32 matrix products of the model's
forward and backward differ by ulps, which a bfloat16 rounding can turn into one bfloat16 ulp
(2^-8) of an update entry scaled by lr."""
import numpy as np
import pytest

import minitorch
from minitorch.optim.muon import _orthogonalize

STEPS = 15


def test_orthogonalize_leaves_singular_vectors_and_brings_singular_values_near_one():
    # The quintic's fixed point band: singular values end in about [0.5, 1.5] (Muon's design),
    # and the singular vectors are the input's, so U^T O V is nearly diagonal.
    rng = np.random.default_rng(1)
    for shape in [(6, 10), (10, 6), (16, 16)]:
        g = rng.standard_normal(shape) * np.exp(rng.uniform(-3, 3))
        o = _orthogonalize(minitorch.tensor(g.astype(np.float32)), (3.4445, -4.7750, 2.0315), 5, 1e-7)
        assert o.dtype == minitorch.bfloat16 and tuple(o.shape) == shape
        o = o.float().numpy().astype(np.float64)
        u, s, vt = np.linalg.svd(g, full_matrices=False)
        core = u.T @ o @ vt.T
        diag = np.diag(core)
        assert diag.min() > 0.3 and diag.max() < 1.6
        assert np.abs(core - np.diag(diag)).max() < 0.05


@pytest.mark.parametrize("bad,match", [
    (dict(ns_steps=100), "Number of steps must be less than 100"),
    (dict(ns_coefficients=(1.0, 2.0)), "exactly 3 values"),
])
def test_orthogonalize_errors(bad, match):
    args = dict(ns_coefficients=(3.4445, -4.7750, 2.0315), ns_steps=5)
    args.update(bad)
    with pytest.raises(ValueError, match=match):
        _orthogonalize(minitorch.ones(3, 3), args["ns_coefficients"], args["ns_steps"], 1e-7)


def test_argument_errors_are_pytorchs():
    w = minitorch.nn.Parameter(minitorch.ones(2, 2))
    for kwargs, match in [(dict(lr=-1.0), "Learning rate should be >= 0 but is: -1.0"),
                          (dict(momentum=-0.1), "momentum should be >= 0 but is: -0.1"),
                          (dict(weight_decay=-1), "weight decay should be >= 0 but is: -1"),
                          (dict(adjust_lr_fn="cosine"), "Adjust learning rate function cosine is not supported")]:
        with pytest.raises(ValueError, match=match):
            minitorch.optim.Muon([w], **kwargs)
    with pytest.raises(ValueError, match=r"Muon only supports 2D parameters whereas we found a parameter with size: "
                                         r"minitorch.Size\(\[3\]\)"):
        minitorch.optim.Muon([w, minitorch.nn.Parameter(minitorch.ones(3))])


CASES = [
    {},
    {"lr": 0.02, "momentum": 0.9},
    {"lr": 0.01, "nesterov": False},
    {"lr": 0.01, "weight_decay": 0.0, "adjust_lr_fn": "match_rms_adamw"},
    {"lr": 0.05, "ns_steps": 3, "ns_coefficients": (2.0, -1.5, 0.5), "eps": 1e-5},
]


@pytest.mark.parametrize("options", CASES, ids=[str(i) for i in range(len(CASES))])
def test_training_matches_torch_step_for_step(options):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.Tanh(), torch.nn.Linear(12, 3))
    mm = minitorch.nn.Sequential(minitorch.nn.Linear(6, 12), minitorch.nn.Tanh(), minitorch.nn.Linear(12, 3))
    mm.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 6)).astype(np.float32), rng.standard_normal((16, 3)).astype(np.float32)

    def optimizers(lib, model):
        weights = [p for p in model.parameters() if p.ndim == 2]
        others = [p for p in model.parameters() if p.ndim != 2]
        return [lib.optim.Muon(weights, **options), lib.optim.AdamW(others, lr=1e-2)]

    topts, mopts = optimizers(torch, tm), optimizers(minitorch, mm)
    for step in range(STEPS):
        for lib, model, opts in ((torch, tm, topts), (minitorch, mm, mopts)):
            for o in opts:
                o.zero_grad()
            lib.nn.functional.mse_loss(model(lib.tensor(x)), lib.tensor(y)).backward()
            for o in opts:
                o.step()
        for (name, p), q in zip(mm.named_parameters(), tm.parameters()):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} at step {step}")
    msd, tsd = mopts[0].state_dict(), topts[0].state_dict()
    assert msd["param_groups"][0].keys() == tsd["param_groups"][0].keys()
    assert sorted(msd["state"][0]) == sorted(tsd["state"][0]) == ["momentum_buffer"]
    np.testing.assert_allclose(msd["state"][0]["momentum_buffer"].numpy(),
                               tsd["state"][0]["momentum_buffer"].numpy(), rtol=1e-5, atol=1e-7)


def test_state_dict_round_trip_continues_the_same_trajectory():
    def run(reload):
        minitorch.manual_seed(0)
        w = minitorch.nn.Parameter(minitorch.randn(5, 4))
        opt = minitorch.optim.Muon([w], lr=0.02)
        for step in range(6):
            if reload and step == 3:
                sd = opt.state_dict()
                opt = minitorch.optim.Muon([w], lr=0.02)
                opt.load_state_dict(sd)
            opt.zero_grad()
            ((w ** 3).sum()).backward()
            opt.step()
        return w.detach().numpy()

    np.testing.assert_array_equal(run(False), run(True))


def test_parameters_without_grad_are_left_alone_and_closure_loss_returned():
    a = minitorch.nn.Parameter(minitorch.ones(3, 2))
    b = minitorch.nn.Parameter(minitorch.ones(2, 3))
    opt = minitorch.optim.Muon([a, b], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = (a * minitorch.arange(6.0).reshape(3, 2)).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 15.0
    np.testing.assert_array_equal(b.detach().numpy(), np.ones((2, 3), np.float32))
    assert not np.allclose(a.detach().numpy(), 1.0)
