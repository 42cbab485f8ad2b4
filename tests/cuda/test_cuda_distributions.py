"""The directly parameterised distributions (tests/distributions/test_families.py on the CPU) on
a CUDA device: draws stay on the device, in the support, with the right moments, and log_prob,
entropy and their gradients equal the CPU's for the same parameters (the device's ops, the same
formulas)."""
import warnings

import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

D = minitorch.distributions

# name -> (make(*parameters), the parameters' values)
FAMILIES = {
    "laplace": (lambda m, s: D.Laplace(m, s), [[0.5, -1.0], [1.0, 0.3]]),
    "poisson": (lambda r: D.Poisson(r), [[0.7, 12.0]]),
    "studentT": (lambda df, m: D.StudentT(df, m), [[5.0, 9.0], [0.5, -1.0]]),
    "binomial": (lambda n, p: D.Binomial(n, p), [[10.0, 300.0], [0.3, 0.9]]),
    "multinomial": (lambda p: D.Multinomial(8, p), [[0.2, 0.5, 0.3]]),
    "geometric": (lambda p: D.Geometric(p), [[0.3, 0.8]]),
    "negbin": (lambda n, p: D.NegativeBinomial(n, p), [[3.0, 10.0], [0.3, 0.6]]),
    "cb": (lambda p: D.ContinuousBernoulli(p), [[0.1, 0.5, 0.8]]),
    "lowrank": (lambda m, w, d: D.LowRankMultivariateNormal(m, w, d), [[1.0, 2.0], [[1.0], [0.5]], [0.5, 1.0]]),
    "mixture": (lambda p, m, s: D.MixtureSameFamily(D.Categorical(p), D.Normal(m, s)),
                [[0.3, 0.7], [0.0, 3.0], [1.0, 0.5]]),
    "vonmises": (lambda m, k: D.VonMises(m, k), [[0.5, -2.0], [0.5, 4.0]]),
    "fisher": (lambda a, b: D.FisherSnedecor(a, b), [[6.0, 12.0], [20.0, 30.0]]),
    "wishart": (lambda df, c: D.Wishart(df, covariance_matrix=c), [5.0, [[2.0, 0.5], [0.5, 1.0]]]),
    "lkj": (lambda c: D.LKJCholesky(3, c), [[0.5, 2.0]]),
}
NO_MOMENTS = {"vonmises", "lkj"}  # circular, and no mean in PyTorch
# fewer draws where the emulated device is slow (LKJ's Beta and normal draws, one categorical
# draw per Multinomial trial)
DRAWS = {"lkj": 500, "multinomial": 4000}


def _build(name, device, requires_grad=False):
    make, values = FAMILIES[name]
    params = [minitorch.tensor(v, dtype=minitorch.float64, device=device, requires_grad=requires_grad)
              for v in values]
    return make(*params), params


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_draws_on_device(name):
    minitorch.manual_seed(0)
    d, _ = _build(name, "cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = d.sample((DRAWS.get(name, 20_000),))
    assert s.device.type == "cuda" and s.dtype == minitorch.float64
    assert tuple(s.shape) == (DRAWS.get(name, 20_000),) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(d.support.check(s).all())
    if name in NO_MOMENTS:
        return
    x = s.cpu().numpy()
    mean, var = d.mean.cpu().numpy(), d.variance.cpu().numpy()
    assert (np.abs(x.mean(0) - mean) <= 0.05 * (np.abs(mean) + np.sqrt(var))).all(), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=0.15)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_densities_as_cpu(name):
    """log_prob of the same draws plus the entropy where the family has one, and the gradients
    with respect to every parameter, on the device and on the CPU."""
    minitorch.manual_seed(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = _build(name, "cpu")[0].sample((4,))
    results = {}
    for device in ("cpu", "cuda"):
        d, params = _build(name, device, requires_grad=True)
        out = d.log_prob(value.to(device)).sum()
        try:
            out = out + d.entropy().sum()
        except NotImplementedError:
            pass
        out.backward()
        results[device] = [out.item()] + [p.grad.cpu().numpy() if p.grad is not None else None for p in params]
    for got, want in zip(results["cuda"], results["cpu"]):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)
