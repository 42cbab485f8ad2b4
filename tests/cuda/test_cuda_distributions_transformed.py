"""The transform-built and heavy-tailed distributions and the transforms on the CUDA device:
draws stay on the device, densities, moments, cdfs and their gradients equal the CPU's at the
same values, and biject_to / transform_to's transforms give the CPU's results."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

D = minitorch.distributions
rng = np.random.default_rng(5)
POS = rng.uniform(0.5, 2.0, (4, 3))
BIG = rng.uniform(2.5, 4.0, (4, 3))
REAL = rng.standard_normal((4, 3))

MAKERS = {
    "exponential": (lambda p, q: D.Exponential(p), POS, POS),
    "cauchy": (lambda p, q: D.Cauchy(q, p), POS, REAL),
    "half_cauchy": (lambda p, q: D.HalfCauchy(p), POS, POS),
    "half_normal": (lambda p, q: D.HalfNormal(p), POS, POS),
    "log_normal": (lambda p, q: D.LogNormal(q, p), POS, REAL),
    "gumbel": (lambda p, q: D.Gumbel(q, p), POS, REAL),
    "weibull": (lambda p, q: D.Weibull(p, q), POS, BIG),
    "pareto": (lambda p, q: D.Pareto(p, q), POS, BIG),
    "inverse_gamma": (lambda p, q: D.InverseGamma(q, p), POS, BIG),
    "kumaraswamy": (lambda p, q: D.Kumaraswamy(p, q), POS, POS),
    "relaxed_bernoulli": (lambda p, q: D.RelaxedBernoulli(p, logits=q), POS, REAL),
    "generalized_pareto": (lambda p, q: D.GeneralizedPareto(q, p, p / 10), POS, REAL),
    "logistic_normal": (lambda p, q: D.LogisticNormal(q, p), POS, REAL),
    "relaxed_one_hot": (lambda p, q: D.RelaxedOneHotCategorical(p[0, 0], logits=q), POS, REAL),
}


def _on(device, make, p, q):
    ps = [minitorch.tensor(a, device=device, requires_grad=True) for a in (p, q)]
    return make(*ps), ps


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_density_and_gradients_equal_the_cpus(name):
    make, p, q = MAKERS[name]
    d_cuda, ps_cuda = _on("cuda", make, p, q)
    draw = d_cuda.sample((5,))
    assert draw.device.type == "cuda" and tuple(draw.shape) == (5,) + tuple(d_cuda.batch_shape + d_cuda.event_shape)
    assert d_cuda.rsample().device.type == "cuda"
    d_cpu, ps_cpu = _on("cpu", make, p, q)
    lp_cuda = d_cuda.log_prob(draw)
    lp_cpu = d_cpu.log_prob(draw.cpu())
    assert_same(lp_cuda, lp_cpu, atol=1e-4, rtol=1e-4)
    lp_cuda.sum().backward()
    lp_cpu.sum().backward()
    for a, b in zip(ps_cuda, ps_cpu):
        if b.grad is not None:
            assert_same(a.grad, b.grad, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("name", ["exponential", "cauchy", "half_normal", "log_normal", "gumbel", "weibull", "pareto",
                                  "generalized_pareto"])
def test_moments_and_cdfs_equal_the_cpus(name):
    make, p, q = MAKERS[name]
    d_cuda, _ = _on("cuda", make, p, q)
    d_cpu, _ = _on("cpu", make, p, q)
    u = minitorch.tensor(rng.uniform(0.1, 0.9, (4, 3)), dtype=minitorch.float32)
    assert_same(d_cuda.icdf(u.to("cuda")), d_cpu.icdf(u), atol=1e-4, rtol=1e-4)
    x = d_cpu.icdf(u)
    assert_same(d_cuda.cdf(x.to("cuda")), d_cpu.cdf(x), atol=1e-5, rtol=1e-4)
    for what in ("mean", "variance", "mode"):
        assert_same(getattr(d_cuda, what), getattr(d_cpu, what), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("constraint", [
    D.constraints.positive, D.constraints.interval(-1.0, 2.0), D.constraints.simplex, D.constraints.corr_cholesky,
    D.constraints.lower_cholesky, D.constraints.positive_definite,
])
def test_registry_transforms_equal_the_cpus(constraint):
    registry = D.transform_to if constraint.event_dim == 2 and constraint is not D.constraints.corr_cholesky else D.biject_to
    t = registry(constraint)
    x = minitorch.tensor(rng.standard_normal((2, 3, 3) if constraint.event_dim == 2 and registry is D.transform_to
                                             else (2, 6)), dtype=minitorch.float32)
    y = t(x.to("cuda"))
    assert_same(y, t(x), atol=1e-5, rtol=1e-4)
    if t.bijective:
        assert_same(t.inv(y), t.inv(t(x)), atol=1e-4, rtol=1e-4)
        assert_same(t.log_abs_det_jacobian(x.to("cuda"), y), t.log_abs_det_jacobian(x, t(x)), atol=1e-4, rtol=1e-4)


def test_kl_divergences_on_the_device():
    r = minitorch.tensor(POS, device="cuda")
    for p, q in ((D.Gumbel(r, r), D.Normal(r, r)), (D.Exponential(r), D.Gamma(r, r)), (D.Pareto(r, r + 2), D.Pareto(r, r + 3)),
                 (D.LogNormal(r, r), D.LogNormal(r * 2, r))):
        kl = D.kl_divergence(p, q)
        assert kl.device.type == "cuda" and tuple(kl.shape) == (4, 3)
