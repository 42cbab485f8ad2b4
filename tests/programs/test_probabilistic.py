"""Probabilistic models written with torch.distributions the way scripts use them: a mixture
density network (MixtureSameFamily of Categorical(logits) and Independent Normals, negative
log_prob as the loss), a Bayesian-style VAE head whose posterior is Independent(Normal(mu,
softplus(s))) with kl_divergence to the prior and a reparameterised sample taken from NumPy noise
(loc + scale * eps); a MultivariateNormal with scale_tril built by tril and exp of the diagonal;
a planar normalising flow's log-det through log1p/abs; the libraries' own rsample()/sample()
checked by their moments, and the score-function estimate through Bernoulli(logits).log_prob."""
import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

K, D = 3, 2


def data(rng, n):
    comp = rng.integers(0, K, n)
    centers = np.array([[-2.0, 0.0], [2.0, 1.0], [0.0, -2.0]])
    x = rng.uniform(-1, 1, (n, 1))
    y = centers[comp] + 0.3 * rng.standard_normal((n, D)) + x
    return x.astype(np.float32), y.astype(np.float32)


def probabilistic(torch, init=None, steps=8, batch=32):
    nn, F = torch.nn, torch.nn.functional
    dist = torch.distributions
    torch.manual_seed(0)

    class MDN(nn.Module):
        def __init__(self, hidden=16):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(1, hidden), nn.Tanh())
            self.logits = nn.Linear(hidden, K)
            self.means = nn.Linear(hidden, K * D)
            self.log_scales = nn.Linear(hidden, K * D)

        def forward(self, x):
            h = self.body(x)
            mix = dist.Categorical(logits=self.logits(h))
            comp = dist.Independent(dist.Normal(self.means(h).view(-1, K, D),
                                                self.log_scales(h).view(-1, K, D).exp()), 1)
            return dist.MixtureSameFamily(mix, comp)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(D, 2 * D)
            self.flow_u = nn.Parameter(torch.full((D,), 0.1))
            self.flow_w = nn.Parameter(torch.full((D,), 0.2))
            self.flow_b = nn.Parameter(torch.zeros(1))

        def forward(self, y, eps):
            mu, s = self.net(y).chunk(2, dim=-1)
            q = dist.Independent(dist.Normal(mu, F.softplus(s) + 1e-4), 1)
            prior = dist.Independent(dist.Normal(torch.zeros_like(mu), torch.ones_like(mu)), 1)
            z = q.mean + q.stddev * eps
            lin = z @ self.flow_w + self.flow_b
            z_k = z + self.flow_u * torch.tanh(lin).unsqueeze(-1)
            psi = (1 - torch.tanh(lin) ** 2).unsqueeze(-1) * self.flow_w
            log_det = torch.log1p(psi @ self.flow_u).abs().clamp(max=10)
            return z_k, dist.kl_divergence(q, prior), q.log_prob(z) - log_det

    mdn, enc = MDN(), Encoder()
    result = {}
    start_from(torch, {"mdn": mdn, "enc": enc}, init, result)
    optimizer = torch.optim.Adam(list(mdn.parameters()) + list(enc.parameters()), lr=1e-2)
    rng = np.random.default_rng(0)
    losses = []
    for _ in range(steps):
        x, y = data(rng, batch)
        x, y = torch.from_numpy(x), torch.from_numpy(y)
        eps = torch.from_numpy(rng.standard_normal((batch, D)).astype(np.float32))
        nll = -mdn(x).log_prob(y).mean()
        z, kl, log_q = enc(y, eps)
        loss = nll + kl.mean() + 0.1 * log_q.mean() + 0.01 * z.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append([loss.item(), nll.item(), kl.mean().item()])

    with torch.no_grad():
        grid = torch.linspace(-1, 1, 5).unsqueeze(1)
        mixture = mdn(grid)
        mix_mean, mix_var = mixture.mean, mixture.variance
        probs = mixture.mixture_distribution.probs
        raw = torch.from_numpy(rng.standard_normal((D, D)).astype(np.float32))
        scale_tril = torch.tril(raw, diagonal=-1) + torch.diag(raw.diagonal().exp())
        mvn = dist.MultivariateNormal(torch.tensor([1.0, -1.0]), scale_tril=scale_tril)
        mvn_lp = mvn.log_prob(torch.from_numpy(rng.standard_normal((4, D)).astype(np.float32)))
        own_mvn = mvn.sample((4000,))
        own_mix = mixture.sample((2000,))
    logits = torch.zeros(3, requires_grad=True)
    bern = dist.Bernoulli(logits=logits)
    actions = torch.tensor([1.0, 0.0, 1.0])
    surrogate = (bern.log_prob(actions) * torch.tensor([2.0, -1.0, 0.5])).sum()
    surrogate.backward()
    result.update(losses=np.array(losses), mix_mean=numpy_of(mix_mean), mix_var=numpy_of(mix_var),
                  probs=numpy_of(probs), mvn_lp=numpy_of(mvn_lp), cov=numpy_of(mvn.covariance_matrix),
                  score_grad=numpy_of(logits.grad), entropy=numpy_of(bern.entropy()),
                  own={"mvn": numpy_of(own_mvn), "mix": numpy_of(own_mix)})
    return result


def test_mixture_density_vae_flow_distributions():
    ref, got = compare_program(probabilistic)
    for draws in (ref["own"], got["own"]):
        np.testing.assert_allclose(draws["mvn"].mean(0), [1, -1], atol=0.15)
        np.testing.assert_allclose(np.cov(draws["mvn"].T), ref["cov"], rtol=0.15, atol=0.05)
        assert draws["mix"].shape == (2000, 5, D)
        np.testing.assert_allclose(draws["mix"].mean(0), ref["mix_mean"], atol=0.25)
