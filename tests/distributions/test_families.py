"""The directly parameterised families (Laplace, Poisson, StudentT, Binomial, Multinomial,
Geometric, NegativeBinomial, ContinuousBernoulli, LowRankMultivariateNormal, MixtureSameFamily,
VonMises, FisherSnedecor, Wishart, LKJCholesky) and ExponentialFamily against
torch.distributions in float64: log_prob, entropy, cdf, icdf and the moments with their
gradients with respect to every parameter (helpers.same_as_torch), over broadcast, 0-d and
probs/logits parameters; the Bregman entropy of each exponential family against its closed form;
enumerate_support, expand, shapes and reprs; draws against PyTorch's stream (same seed) and their
moments over 200k draws; PyTorch's validation errors; KL values and gradients."""
import math
import warnings

import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, torch

D = minitorch.distributions
needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")
rng = np.random.default_rng(19)
X = rng.standard_normal((4, 3))
X2 = rng.standard_normal((4, 3))
POS = rng.uniform(0.5, 2.0, (4, 3))
POS2 = rng.uniform(0.5, 2.0, (4, 3))
UNIT = rng.uniform(0.05, 0.95, (4, 3))
UNIT[0, :2] = [0.4995, 0.5004]  # inside ContinuousBernoulli's Taylor region
COUNTS = rng.integers(0, 6, (4, 3)).astype(np.float64)  # values of Binomial(total_count=6)
ROW = rng.uniform(0.5, 2.0, (3,))
ANGLES = rng.uniform(-math.pi, math.pi, (4, 3))
W = rng.standard_normal((2, 3, 2))
DIAG = rng.uniform(0.5, 1.5, (2, 3))
LOC3 = rng.standard_normal((2, 3))
A = rng.standard_normal((2, 3, 3))
COV = A @ A.transpose(0, 2, 1) + 3 * np.eye(3)
B = rng.standard_normal((3, 3))
SPD = B @ B.T + 2 * np.eye(3)  # a Wishart value


def _corr_cholesky(n_batch: int, dim: int) -> np.ndarray:
    out = []
    for _ in range(n_batch):
        m = rng.standard_normal((dim, dim + 2))
        c = m @ m.T
        d = np.sqrt(np.diag(c))
        out.append(np.linalg.cholesky(c / np.outer(d, d)))
    return np.array(out)


CORR_L = _corr_cholesky(2, 3)
MULTI = np.array([[2.0, 1.0, 3.0], [0.0, 6.0, 0.0], [1.0, 1.0, 4.0], [3.0, 3.0, 0.0]])  # counts summing to 6


def _d(lib):
    return lib.distributions


# name -> (make(lib, *params), params, a value in the support)
CASES = {
    "laplace": (lambda lib, m, s: _d(lib).Laplace(m, s), [X, POS], X2),
    "laplace_broadcast": (lambda lib, m, s: _d(lib).Laplace(m, s), [X[:1, :], ROW.reshape(3)], X2),
    "laplace_0d": (lambda lib, m, s: _d(lib).Laplace(m, s), [np.array(0.3), np.array(1.7)], X2[0, 0]),
    "poisson": (lambda lib, r: _d(lib).Poisson(r), [POS * 3], COUNTS),
    "poisson_0d": (lambda lib, r: _d(lib).Poisson(r), [np.array(2.5)], COUNTS),
    "studentT": (lambda lib, df, m, s: _d(lib).StudentT(df, m, s), [POS * 2, X, POS2], X2),
    "studentT_broadcast": (lambda lib, df: _d(lib).StudentT(df), [ROW * 2], X2),
    "binomial_probs": (lambda lib, p: _d(lib).Binomial(6, probs=p), [UNIT], COUNTS),
    "binomial_logits": (lambda lib, lg: _d(lib).Binomial(6, logits=lg), [X], COUNTS),
    "binomial_counts": (lambda lib, n, p: _d(lib).Binomial(n, probs=p), [COUNTS + 2, UNIT], COUNTS),
    "multinomial_probs": (lambda lib, p: _d(lib).Multinomial(6, probs=p), [POS], MULTI),
    "multinomial_logits": (lambda lib, lg: _d(lib).Multinomial(6, logits=lg), [X], MULTI),
    "geometric_probs": (lambda lib, p: _d(lib).Geometric(probs=p), [UNIT], COUNTS),
    "geometric_logits": (lambda lib, lg: _d(lib).Geometric(logits=lg), [X], COUNTS),
    "negbin_probs": (lambda lib, n, p: _d(lib).NegativeBinomial(n, probs=p), [POS * 3, UNIT], COUNTS),
    "negbin_logits": (lambda lib, n, lg: _d(lib).NegativeBinomial(n, logits=lg), [ROW * 3, X], COUNTS),
    "cb_probs": (lambda lib, p: _d(lib).ContinuousBernoulli(probs=p), [UNIT], UNIT[::-1].copy()),
    "cb_logits": (lambda lib, lg: _d(lib).ContinuousBernoulli(logits=lg), [X], UNIT[::-1].copy()),
    "lowrank": (lambda lib, m, w, d: _d(lib).LowRankMultivariateNormal(m, w, d), [LOC3, W, DIAG], X[:2]),
    "lowrank_broadcast": (lambda lib, m, w, d: _d(lib).LowRankMultivariateNormal(m, w, d), [LOC3[0], W, DIAG[:1]],
                          X[:1]),
    "mixture": (lambda lib, p, m, s: _d(lib).MixtureSameFamily(_d(lib).Categorical(probs=p), _d(lib).Normal(m, s)),
                [POS, X, POS2], X2[:, 0]),
    "mixture_mvn": (lambda lib, p, m, c: _d(lib).MixtureSameFamily(
        _d(lib).Categorical(probs=p), _d(lib).MultivariateNormal(m, covariance_matrix=c)), [ROW[:2], LOC3, COV], X2[0]),
    "vonmises": (lambda lib, m, k: _d(lib).VonMises(m, k), [X, POS * 3], ANGLES),
    "fisher": (lambda lib, a, b: _d(lib).FisherSnedecor(a, b), [POS * 3, POS2 * 5], POS),
    "wishart_cov": (lambda lib, df, c: _d(lib).Wishart(df, covariance_matrix=c), [np.array([4.0, 6.5]), COV], SPD),
    "wishart_tril": (lambda lib, df, c: _d(lib).Wishart(df, scale_tril=lib.linalg.cholesky(c)), [np.array(5.0), COV],
                     SPD),
    "wishart_prec": (lambda lib, df, c: _d(lib).Wishart(df, precision_matrix=c), [np.array([3.5, 4.0]), COV], SPD),
    "lkj": (lambda lib, c: _d(lib).LKJCholesky(3, c), [np.array([0.5, 2.0])], CORR_L),
}

# what each family has; PyTorch raises NotImplementedError for the rest, and so must minitorch
HAS = {
    "laplace": {"entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf"},
    "poisson": {"mean", "mode", "variance", "stddev"},
    "studentT": {"entropy", "mean", "mode", "variance", "stddev"},
    "binomial": {"entropy", "mean", "mode", "variance", "stddev"},
    "multinomial": {"entropy", "mean", "variance", "stddev"},
    "geometric": {"entropy", "mean", "mode", "variance", "stddev"},
    "negbin": {"mean", "mode", "variance", "stddev"},
    "cb": {"entropy", "mean", "variance", "stddev", "cdf", "icdf"},
    "lowrank": {"entropy", "mean", "mode", "variance", "stddev"},
    "mixture": {"mean", "variance", "stddev"},
    "vonmises": {"mean", "mode", "variance", "stddev"},
    "fisher": {"mean", "mode", "variance", "stddev"},
    "wishart": {"entropy", "mean", "mode", "variance", "stddev"},
    "lkj": set(),
}


def _family(name):
    return name.split("_")[0]


def _evaluate(what, d, lib, value):
    if what == "log_prob":
        return d.log_prob(lib.tensor(value))
    if what == "cdf":
        return d.cdf(lib.tensor(value))
    if what == "icdf":
        return d.icdf(lib.tensor(np.resize(UNIT, np.shape(value))))
    if what == "entropy":
        return d.entropy()
    return getattr(d, what)


WHATS = ["log_prob", "entropy", "mean", "mode", "variance", "stddev", "cdf", "icdf"]


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("what", WHATS)
def test_values_and_gradients_as_torch(name, what):
    make, params, value = CASES[name]
    if what != "log_prob" and what not in HAS[_family(name)] and torch is None:
        pytest.skip(f"{_family(name)} has no {what} in PyTorch 2.13 (both raise NotImplementedError: needs PyTorch)")
    if name == "mixture" and what == "cdf":
        pytest.skip("checked in test_mixture_cdf")

    def fn(lib, *ps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Wishart's low-df warning
            return _evaluate(what, make(lib, *ps), lib, value)

    # PyTorch's Bessel functions are polynomial fits good to about 1e-7
    loose = _family(name) == "vonmises"
    same_as_torch(fn, params, atol=1e-6 if loose else 1e-7, rtol=1e-5 if loose else 1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_strided_parameters_as_torch(name, layout):
    """Parameters that are transposed or strided views give the same values and gradients."""
    make, params, value = CASES[name]
    what = "entropy" if "entropy" in HAS[_family(name)] else "mean" if "mean" in HAS[_family(name)] else None

    def fn(lib, *ps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = make(lib, *ps)
            out = d.log_prob(lib.tensor(value))
            return out if what is None else out.sum() + _evaluate(what, d, lib, value).sum()

    loose = _family(name) == "vonmises"
    same_as_torch(fn, params, layout=layout, atol=1e-6 if loose else 1e-7, rtol=1e-5 if loose else 1e-6)


EMPTY = {
    "laplace": (lambda lib, m, s: _d(lib).Laplace(m, s), 2),
    "poisson": (lambda lib, r: _d(lib).Poisson(r), 1),
    "studentT": (lambda lib, df, m: _d(lib).StudentT(df, m), 2),
    "binomial": (lambda lib, p: _d(lib).Binomial(4, p), 1),
    "geometric": (lambda lib, p: _d(lib).Geometric(p), 1),
    "negbin": (lambda lib, n, p: _d(lib).NegativeBinomial(n, p), 2),
    "cb": (lambda lib, p: _d(lib).ContinuousBernoulli(p), 1),
    "vonmises": (lambda lib, m, k: _d(lib).VonMises(m, k), 2),
    "fisher": (lambda lib, a, b: _d(lib).FisherSnedecor(a, b), 2),
    "multinomial": (lambda lib, p: _d(lib).Multinomial(3, p), 1),
    "lowrank": (lambda lib, m, d: _d(lib).LowRankMultivariateNormal(m, lib.ones(m.shape + (2,), dtype=m.dtype), d), 2),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
@pytest.mark.parametrize("what", ["log_prob", "entropy", "mean", "variance", "sample"])
def test_empty_batch_as_torch(name, what):
    """A batch with no elements: empty results of the right shapes (or PyTorch's error)."""
    make, n = EMPTY[name]
    params = [np.full((0, 3), 0.5)] * n

    def fn(lib, *ps):
        d = make(lib, *ps)
        if what == "log_prob":
            return d.log_prob(lib.zeros((0,) + tuple(d.batch_shape[1:]) + tuple(d.event_shape), dtype=lib.float64))
        if what == "sample":
            return d.sample((2,))
        return d.entropy() if what == "entropy" else getattr(d, what)

    same_as_torch(fn, params, grad=what != "sample")


NAN_VALUES = ["laplace", "studentT", "cb_probs", "lowrank", "mixture", "vonmises", "fisher", "negbin_probs",
              "geometric_probs", "poisson", "binomial_probs"]


@pytest.mark.parametrize("name", NAN_VALUES)
def test_nan_values_as_torch(name):
    """With validation off, a NaN value (or a NaN parameter) gives NaN where PyTorch does."""
    make, params, value = CASES[name]
    value = np.array(value, dtype=np.float64)
    value.reshape(-1)[1] = np.nan
    params = [p.copy() for p in params]
    params[0].reshape(-1)[-1] = np.nan

    def fn(lib, *ps):
        lib.distributions.Distribution.set_default_validate_args(False)
        try:
            return make(lib, *ps).log_prob(lib.tensor(value))
        finally:
            lib.distributions.Distribution.set_default_validate_args(True)

    same_as_torch(fn, params, atol=1e-7, rtol=1e-6)


def test_mixture_cdf():
    def fn(lib, p, m, s):
        d = _d(lib).MixtureSameFamily(_d(lib).Categorical(probs=p), _d(lib).Normal(m, s))
        return d.cdf(lib.tensor(X2[:, 0]))

    same_as_torch(fn, [POS, X, POS2], atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes_repr_support_and_expand(name):
    make, params, _ = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        d = make(minitorch, *[minitorch.tensor(p) for p in params])
    if torch is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = make(torch, *[torch.tensor(p) for p in params])
        assert tuple(d.batch_shape) == tuple(t.batch_shape) and tuple(d.event_shape) == tuple(t.event_shape)
        assert d.has_rsample == t.has_rsample and d.has_enumerate_support == t.has_enumerate_support
        assert repr(d).replace("minitorch.", "torch.") == repr(t)
        assert repr(d.support).replace("minitorch.", "torch.") == repr(t.support)
        ours = {k: repr(v).replace("minitorch.", "torch.") for k, v in d.arg_constraints.items()}
        assert ours == {k: repr(v) for k, v in t.arg_constraints.items()}
    # an expanded copy gives the same densities, broadcast
    e = d.expand((5,) + tuple(d.batch_shape))
    assert tuple(e.batch_shape) == (5,) + tuple(d.batch_shape) and e.event_shape == d.event_shape
    minitorch.manual_seed(0)
    value = d.sample()
    lp, elp = d.log_prob(value), e.log_prob(value)
    assert tuple(elp.shape) == (5,) + tuple(d.batch_shape)
    np.testing.assert_allclose(elp.detach().numpy(), np.broadcast_to(lp.detach().numpy(), tuple(elp.shape)), rtol=1e-12)
    assert tuple(e.sample((2,)).shape) == (2, 5) + tuple(d.batch_shape) + tuple(d.event_shape)


EXP_FAMILIES = {
    "bernoulli": (lambda lib, p: _d(lib).Bernoulli(probs=p), [UNIT]),
    "beta": (lambda lib, a, b: _d(lib).Beta(a, b), [POS, POS2]),
    "cb": (lambda lib, p: _d(lib).ContinuousBernoulli(probs=p), [UNIT]),
    "cb_logits": (lambda lib, lg: _d(lib).ContinuousBernoulli(logits=lg), [X * 3]),
    "chi2": (lambda lib, k: _d(lib).Chi2(k), [POS * 3]),
    "dirichlet": (lambda lib, c: _d(lib).Dirichlet(c), [POS]),
    "gamma": (lambda lib, c, r: _d(lib).Gamma(c, r), [POS, POS2]),
    "normal": (lambda lib, m, s: _d(lib).Normal(m, s), [X, POS]),
    "poisson": (lambda lib, r: _d(lib).Poisson(r), [POS * 3]),
    "wishart": (lambda lib, df, c: _d(lib).Wishart(df, covariance_matrix=c), [np.array([4.0, 6.5]), COV]),
}


@pytest.mark.parametrize("name", sorted(EXP_FAMILIES))
def test_exponential_family_entropy(name):
    """ExponentialFamily.entropy (the Bregman form through autograd) is PyTorch's, and equals the
    family's closed form where PyTorch's family has one."""
    make, params = EXP_FAMILIES[name]
    d = make(minitorch, *[minitorch.tensor(p) for p in params])
    assert isinstance(d, D.ExponentialFamily)
    if name in ("beta", "dirichlet", "poisson"):  # no carrier measure given, as in PyTorch
        with pytest.raises(NotImplementedError):
            D.ExponentialFamily.entropy(d)
    else:
        bregman = D.ExponentialFamily.entropy(d)
        assert tuple(bregman.shape) == tuple(d.batch_shape)
        np.testing.assert_allclose(bregman.detach().numpy(), d.entropy().detach().numpy(), rtol=1e-9, atol=1e-9)
    same_as_torch(lambda lib, *ps: _d(lib).ExponentialFamily.entropy(make(lib, *ps)), params, grad=False,
                  atol=1e-8, rtol=1e-7)


def test_exponential_family_is_torchs_hierarchy():
    for cls in (D.Bernoulli, D.Beta, D.Chi2, D.ContinuousBernoulli, D.Dirichlet, D.Gamma, D.Normal, D.Poisson,
                D.Wishart):
        assert issubclass(cls, D.ExponentialFamily), cls
    for cls in (D.Binomial, D.Laplace, D.StudentT, D.Geometric, D.Categorical, D.Uniform):
        assert not issubclass(cls, D.ExponentialFamily), cls
    if torch is not None:
        for name in D.__all__:
            ours, theirs = getattr(D, name), getattr(torch.distributions, name)
            if isinstance(ours, type) and isinstance(theirs, type):
                theirs_is = issubclass(theirs, torch.distributions.ExponentialFamily)
                assert issubclass(ours, D.ExponentialFamily) == theirs_is, name


def test_gamma_cdf():
    same_as_torch(lambda lib, c, r: _d(lib).Gamma(c, r).cdf(lib.tensor(POS2)), [POS, POS2], grad=False)


@pytest.mark.parametrize("make", [
    lambda lib: _d(lib).Binomial(lib.tensor([[3.0], [3.0]]), probs=lib.tensor([0.2, 0.5, 0.9])),
    lambda lib: _d(lib).Binomial(4, logits=lib.tensor(0.3)),
])
@pytest.mark.parametrize("expand", [True, False])
def test_enumerate_support(make, expand):
    got = make(minitorch).enumerate_support(expand)
    assert got.dtype == minitorch.get_default_dtype()
    if torch is not None:
        want = make(torch).enumerate_support(expand)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_inhomogeneous_binomial():
    d = D.Binomial(minitorch.tensor([2.0, 3.0]), probs=minitorch.tensor([0.5, 0.5]))
    for fn, what in ((d.enumerate_support, "enumerate_support"), (d.entropy, "entropy")):
        with pytest.raises(NotImplementedError, match=f"Inhomogeneous total count not supported by `{what}`"):
            fn()


# Draws: name -> (make(lib), sample shape); PyTorch's stream where the algorithms are PyTorch's
DRAWS = {
    "laplace": (lambda lib: _d(lib).Laplace(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 2.0])), (3,)),
    "studentT": (lambda lib: _d(lib).StudentT(lib.tensor([3.0, 1.5]), lib.tensor([0.0, 1.0]), lib.tensor([1.0, 2.0])),
                 (3,)),
    "fisher": (lambda lib: _d(lib).FisherSnedecor(lib.tensor([3.0, 1.5]), lib.tensor([4.0, 2.0])), (3,)),
    "cb": (lambda lib: _d(lib).ContinuousBernoulli(lib.tensor([0.3, 0.8, 0.5])), (3,)),
    "lowrank": (lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 2), lib.ones(3)), (3,)),
    "poisson": (lambda lib: _d(lib).Poisson(lib.tensor([3.0, 1.5])), (3,)),
    "geometric": (lambda lib: _d(lib).Geometric(lib.tensor([0.3, 0.5])), (3,)),
    "negbin": (lambda lib: _d(lib).NegativeBinomial(lib.tensor([3.0, 1.5]), lib.tensor([0.3, 0.5])), (3,)),
    "multinomial": (lambda lib: _d(lib).Multinomial(5, lib.tensor([0.3, 0.5, 0.2])), (3, 2)),
    "vonmises": (lambda lib: _d(lib).VonMises(lib.tensor([0.3, 0.5]), lib.tensor([1.0, 4.0])), (3,)),
    "lkj": (lambda lib: _d(lib).LKJCholesky(3, lib.tensor([1.0, 4.0])), (3,)),
    "mixture": (lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.tensor([0.3, 0.7])),
                                                      _d(lib).Normal(lib.tensor([0.0, 5.0]), lib.tensor([1.0, 1.0]))),
                (3,)),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(DRAWS))
def test_draws_are_torchs_stream(name):
    make, shape = DRAWS[name]
    out = []
    for lib in (minitorch, torch):
        lib.manual_seed(5)
        d = make(lib)
        out.append((d.sample(shape).numpy(), d.rsample(shape).detach().numpy() if d.has_rsample else None))
    (s, r), (ts, tr) = out
    assert s.shape == ts.shape and str(s.dtype) == str(ts.dtype)
    np.testing.assert_allclose(s, ts, rtol=1e-6, atol=1e-6)
    if r is not None:
        np.testing.assert_allclose(r, tr, rtol=1e-6, atol=1e-6)


RSAMPLE = {
    "laplace": (lambda lib, m, s: _d(lib).Laplace(m, s), [X[0], POS[0]]),
    "studentT": (lambda lib, df, m, s: _d(lib).StudentT(df, m, s), [POS[0] * 2, X[0], POS2[0]]),
    "fisher": (lambda lib, a, b: _d(lib).FisherSnedecor(a, b), [POS[0] * 3, POS2[0] * 5]),
    "cb": (lambda lib, p: _d(lib).ContinuousBernoulli(probs=p), [UNIT[0]]),
    "lowrank": (lambda lib, m, w, d: _d(lib).LowRankMultivariateNormal(m, w, d), [LOC3, W, DIAG]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(RSAMPLE))
def test_rsample_gradients_as_torch(name):
    make, params = RSAMPLE[name]

    def fn(lib, *ps):
        lib.manual_seed(11)
        return make(lib, *ps).rsample((4,))

    same_as_torch(fn, params, atol=1e-7, rtol=1e-6)


def test_wishart_rsample_gradient_and_psd():
    """Bartlett draws are positive definite and differentiable in df (through the Chi2 draws)
    and the scale; the mean of many is df * Sigma."""
    df = minitorch.tensor([4.0, 6.0], dtype=minitorch.float64, requires_grad=True)
    cov = minitorch.tensor(COV, requires_grad=True)
    minitorch.manual_seed(2)
    s = D.Wishart(df, covariance_matrix=cov).rsample((3,))
    assert tuple(s.shape) == (3, 2, 3, 3)
    assert bool(D.constraints.positive_definite.check(s).all())
    s.sum().backward()
    assert df.grad is not None and bool(df.grad.isfinite().all()) and cov.grad is not None


# name -> (make(), the mean and variance of a draw, relative tolerance), over 200k draws (seed 0)
MOMENTS = {
    "laplace": (lambda: D.Laplace(minitorch.tensor([0.5, -1.0]), minitorch.tensor([1.0, 0.3])), 0.02),
    "poisson": (lambda: D.Poisson(minitorch.tensor([0.7, 12.0])), 0.02),
    "studentT": (lambda: D.StudentT(minitorch.tensor([5.0, 9.0]), minitorch.tensor([0.5, -1.0])), 0.03),
    "binomial": (lambda: D.Binomial(minitorch.tensor([10.0, 300.0]), minitorch.tensor([0.3, 0.9])), 0.02),
    "binomial_large": (lambda: D.Binomial(minitorch.tensor([1e6]), minitorch.tensor([0.4])), 0.02),
    "multinomial": (lambda: D.Multinomial(8, minitorch.tensor([0.2, 0.5, 0.3])), 0.02),
    "geometric": (lambda: D.Geometric(minitorch.tensor([0.3, 0.8])), 0.02),
    "negbin": (lambda: D.NegativeBinomial(minitorch.tensor([3.0, 10.0]), minitorch.tensor([0.3, 0.6])), 0.03),
    "cb": (lambda: D.ContinuousBernoulli(minitorch.tensor([0.1, 0.5, 0.8])), 0.02),
    "lowrank": (lambda: D.LowRankMultivariateNormal(minitorch.tensor([1.0, 2.0]), minitorch.tensor([[1.0], [0.5]]),
                                                    minitorch.tensor([0.5, 1.0])), 0.02),
    "mixture": (lambda: D.MixtureSameFamily(D.Categorical(minitorch.tensor([0.3, 0.7])),
                                            D.Normal(minitorch.tensor([0.0, 3.0]), minitorch.tensor([1.0, 0.5]))),
                0.02),
    "fisher": (lambda: D.FisherSnedecor(minitorch.tensor([6.0, 12.0]), minitorch.tensor([20.0, 30.0])), 0.05),
    "wishart": (lambda: D.Wishart(minitorch.tensor(5.0), covariance_matrix=minitorch.tensor([[2.0, 0.5], [0.5, 1.0]])),
                0.03),
}


@pytest.mark.parametrize("name", sorted(MOMENTS))
def test_sample_moments(name):
    make, rtol = MOMENTS[name]
    minitorch.manual_seed(0)
    d = make()
    n = 200_000
    s = d.sample((n,))
    assert tuple(s.shape) == (n,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert s.dtype == minitorch.float32
    x = s.double().numpy()
    mean, var = d.mean.double().numpy(), d.variance.double().numpy()
    # the mean to rtol of its scale (|mean| + standard deviation), the variance to 3 rtol
    assert (np.abs(x.mean(0) - mean) <= rtol * (np.abs(mean) + np.sqrt(var))).all(), (x.mean(0), mean)
    np.testing.assert_allclose(x.var(0), var, rtol=3 * rtol)
    assert bool(d.support.check(s).all())


def test_vonmises_draws():
    """Circular mean direction and mean resultant length I1(k)/I0(k) of 200k draws, in [-pi, pi)."""
    minitorch.manual_seed(0)
    loc = np.array([0.5, -2.8, 3.0])
    k = np.array([0.5, 4.0, 1e-6])
    s = D.VonMises(minitorch.tensor(loc), minitorch.tensor(k)).sample((200_000,)).double().numpy()
    assert s.min() >= -math.pi and s.max() < math.pi
    c, sn = np.cos(s).mean(0), np.sin(s).mean(0)
    r = 1 - D.VonMises(minitorch.tensor(loc, dtype=minitorch.float64), minitorch.tensor(k)).variance.numpy()
    np.testing.assert_allclose(np.hypot(c, sn), r, atol=0.005)
    np.testing.assert_allclose(np.angle(np.exp(1j * (np.arctan2(sn, c) - loc)))[:2], 0, atol=0.02)


def test_lkj_draws():
    """Draws are correlation Cholesky factors; with concentration 1 the correlations are uniform
    on [-1, 1] for dim 2 (mean 0, variance 1/3)."""
    minitorch.manual_seed(0)
    s = D.LKJCholesky(2, 1.0).sample((200_000,))
    assert bool(D.constraints.corr_cholesky.check(s).all())
    corr = s[:, 1, 0].double().numpy()
    assert abs(corr.mean()) < 0.01 and abs(corr.var() - 1 / 3) < 0.01
    s = D.LKJCholesky(4, minitorch.tensor([0.5, 3.0])).sample((50,))
    assert tuple(s.shape) == (50, 2, 4, 4) and bool(D.constraints.corr_cholesky.check(s).all())


def test_binomial_function():
    """minitorch.binomial: count's dtype, broadcasting, the edges p = 0 and 1 and count 0."""
    minitorch.manual_seed(0)
    count = minitorch.tensor([0.0, 5.0, 5.0, 300.0, 300.0], dtype=minitorch.float64)
    prob = minitorch.tensor([0.5, 0.0, 1.0, 0.0, 1.0], dtype=minitorch.float64)
    got = minitorch.binomial(count, prob)
    assert got.dtype == minitorch.float64
    np.testing.assert_array_equal(got.numpy(), [0, 0, 5, 0, 300])
    draws = minitorch.binomial(minitorch.full((1000, 1), 40.0), minitorch.tensor([0.1, 0.5, 0.9]))
    assert tuple(draws.shape) == (1000, 3) and bool(((draws >= 0) & (draws <= 40) & (draws % 1 == 0)).all())
    # as PyTorch's: a node that refuses the backward (test_binomial_sampling.py)
    assert minitorch.binomial(minitorch.ones(3, requires_grad=True), minitorch.full((3,), 0.5)).requires_grad
    # PyTorch's answers off the usual domain: every trial above p = 1, none below 0 or for a
    # negative count, NaN for a NaN probability; empty stays empty
    edges = minitorch.binomial(minitorch.tensor([3.0, 3.0, -3.0, 3.0, 100.0]),
                               minitorch.tensor([1.5, -0.5, 0.5, float("nan"), 2.0]))
    np.testing.assert_array_equal(edges.numpy(), [3, 0, 0, np.nan, 100])
    assert tuple(minitorch.binomial(minitorch.zeros(0, 3), minitorch.zeros(3)).shape) == (0, 3)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.binomial(lib.tensor([3]), lib.tensor([0.5])),
    lambda lib: lib.binomial(lib.tensor([3.0]), lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.binomial(3.0, lib.tensor([0.5])),
])
def test_binomial_function_errors_as_torch(fn):
    raised = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with pytest.raises(Exception) as e:
            fn(lib)
        raised.append((type(e.value).__name__, str(e.value)))
    assert len(set(raised)) == 1, raised


def _errors(fn):
    out = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(ValueError) as e:
                fn(lib)
        out.append(str(e.value).replace("minitorch.", "torch."))
    return out


@pytest.mark.parametrize("fn", [
    lambda lib: _d(lib).Laplace(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0])),
    lambda lib: _d(lib).Laplace(0.0, 1.0).log_prob(lib.zeros(2, 3)).sum() + _d(lib).Laplace(lib.zeros(3), 1.0).log_prob(
        lib.zeros(2)),
    lambda lib: _d(lib).Poisson(lib.tensor([-1.0])),
    lambda lib: _d(lib).Poisson(lib.tensor([1.0])).log_prob(lib.tensor([0.5])),
    lambda lib: _d(lib).StudentT(lib.tensor([0.0])),
    lambda lib: _d(lib).Binomial(lib.tensor([2.5]), lib.tensor([0.5])),
    lambda lib: _d(lib).Binomial(3, lib.tensor([1.5])),
    lambda lib: _d(lib).Binomial(3, lib.tensor([0.5])).log_prob(lib.tensor([4.0])),
    lambda lib: _d(lib).Binomial(3),
    lambda lib: _d(lib).Multinomial(3, lib.tensor([0.5, -0.5])),
    lambda lib: _d(lib).Multinomial(3, lib.tensor([0.5, 0.5])).log_prob(lib.tensor([4.0, 0.0])),
    lambda lib: _d(lib).Geometric(lib.tensor([0.0, 0.5])),
    lambda lib: _d(lib).Geometric(lib.tensor([0.5])).log_prob(lib.tensor([-1.0])),
    lambda lib: _d(lib).NegativeBinomial(lib.tensor([2.0]), lib.tensor([1.0])),
    lambda lib: _d(lib).NegativeBinomial(lib.tensor([-2.0]), lib.tensor([0.5])),
    lambda lib: _d(lib).ContinuousBernoulli(lib.tensor([1.5]), validate_args=True),
    lambda lib: _d(lib).ContinuousBernoulli(lib.tensor([0.5])).log_prob(lib.tensor([1.5])),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.zeros(2, 1), lib.ones(3)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.zeros(3), lib.ones(3)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.zeros(3, 1), lib.ones(2)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(()), lib.zeros(3, 1), lib.ones(3)),
    lambda lib: _d(lib).LowRankMultivariateNormal(lib.zeros(3), lib.zeros(3, 1), -lib.ones(3)),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Normal(0.0, 1.0), _d(lib).Normal(lib.zeros(2), 1.0)),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.ones(2)), 3),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.ones(3, 2)), _d(lib).Normal(lib.zeros(4, 2), 1.0)),
    lambda lib: _d(lib).MixtureSameFamily(_d(lib).Categorical(lib.ones(2)), _d(lib).Normal(lib.zeros(3), 1.0)),
    lambda lib: _d(lib).VonMises(lib.tensor([0.0]), lib.tensor([0.0])),
    lambda lib: _d(lib).FisherSnedecor(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda lib: _d(lib).FisherSnedecor(1.0, 2.0).log_prob(lib.tensor(-1.0)),
    lambda lib: _d(lib).Wishart(lib.tensor(1.0), lib.eye(3)),
    lambda lib: _d(lib).Wishart(lib.tensor(5.0), lib.eye(3)[0]),
    lambda lib: _d(lib).Wishart(lib.tensor(5.0), lib.eye(3)).log_prob(lib.eye(2)),
    lambda lib: _d(lib).Wishart(lib.tensor(5.0), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: _d(lib).LKJCholesky(1),
    lambda lib: _d(lib).LKJCholesky(2, lib.tensor([-1.0])),
    lambda lib: _d(lib).LKJCholesky(2).log_prob(lib.tensor([[1.0, 0.0], [0.5, 0.5]])),
])
def test_validation_errors_as_torch(fn):
    msgs = _errors(fn)
    assert len(set(msgs)) == 1, msgs


def test_other_errors_as_torch():
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with pytest.raises(AssertionError, match="Exactly one of covariance_matrix or precision_matrix or scale_tril"):
            _d(lib).Wishart(lib.tensor(5.0), covariance_matrix=lib.eye(3), scale_tril=lib.eye(3))
        with pytest.raises(NotImplementedError, match="inhomogeneous total_count is not supported"):
            _d(lib).Multinomial(lib.tensor([3, 4]), lib.tensor([0.5, 0.5]))
        with pytest.raises(NotImplementedError, match="KL between Binomials where q.total_count > p.total_count"):
            _d(lib).kl_divergence(_d(lib).Binomial(2, lib.tensor(0.5)), _d(lib).Binomial(3, lib.tensor(0.5)))
        with pytest.raises(NotImplementedError, match="cross KL-divergence between different exponential families"):
            _d(lib).kl_divergence(_d(lib).Poisson(lib.tensor(1.0)), _d(lib).Gamma(lib.tensor(1.0), lib.tensor(1.0)))
        with pytest.raises(NotImplementedError):
            _d(lib).VonMises(lib.tensor(0.0), lib.tensor(1.0)).entropy()


def test_validate_args_off():
    assert math.isnan(D.Laplace(0.0, -1.0, validate_args=False).log_prob(minitorch.tensor(0.0)).item())
    assert D.Poisson(minitorch.tensor(2.0), validate_args=False).log_prob(minitorch.tensor(0.5)).item() < 0


# KL pairs: (p case, p params, q case, q params)
_LR2 = [LOC3[::-1].copy(), W[::-1].copy() * 0.5, DIAG[::-1].copy()]
KL_CASES = {
    "laplace_laplace": ("laplace", [X, POS], "laplace", [X2, POS2]),
    "poisson_poisson": ("poisson", [POS * 3], "poisson", [POS2 * 2]),
    "binomial_binomial": ("binomial_probs", [UNIT], "binomial_logits", [X]),
    "binomial_counts": ("binomial_counts", [COUNTS + 3, UNIT], "binomial_counts",
                        [np.full((4, 3), 3.0), UNIT[::-1].copy()]),
    "geometric_geometric": ("geometric_probs", [UNIT], "geometric_logits", [X]),
    "cb_cb": ("cb_probs", [UNIT], "cb_logits", [X]),
    "lowrank_lowrank": ("lowrank", [LOC3, W, DIAG], "lowrank", _LR2),
    "lowrank_broadcast": ("lowrank", [LOC3, W, DIAG], "lowrank_broadcast", [LOC3[0], W[:1] * 2, DIAG[:1]]),
    "bernoulli_poisson": ("bernoulli", [UNIT], "poisson", [POS]),
    "beta_cb": ("beta", [POS, POS2], "cb_probs", [UNIT]),
    "cb_normal": ("cb_logits", [X], "normal", [X2, POS]),
    "cb_uniform": ("cb_probs", [UNIT], "uniform", [-POS, 1 + POS2]),
    "cb_uniform_inside": ("cb_probs", [UNIT], "uniform", [UNIT * 0.1, 1 + POS2]),
    "uniform_cb": ("uniform", [UNIT * 0.4, 0.5 + UNIT * 0.4], "cb_probs", [UNIT[::-1].copy()]),
    "uniform_cb_outside": ("uniform", [UNIT - 0.9, UNIT], "cb_probs", [UNIT]),
    "laplace_normal": ("laplace", [X, POS], "normal", [X2, POS2]),
    "normal_laplace": ("normal", [X, POS], "laplace", [X2, POS2]),
    "gamma_cb": ("gamma", [POS, POS2], "cb_probs", [UNIT]),
    "normal_cb": ("normal", [X, POS], "cb_probs", [UNIT]),
    "laplace_beta": ("laplace", [X, POS], "beta", [POS, POS2]),
    "laplace_gamma": ("laplace", [X, POS], "gamma", [POS, POS2]),
    "laplace_uniform": ("laplace", [X, POS], "uniform", [-POS, POS2]),
    "laplace_cb": ("laplace", [X, POS], "cb_probs", [UNIT]),
    "poisson_binomial": ("poisson", [POS], "binomial_probs", [UNIT]),
    "poisson_bernoulli": ("poisson", [POS], "bernoulli", [UNIT]),
    "mvn_lowrank": ("mvn", [LOC3, COV], "lowrank", [LOC3[::-1].copy(), W, DIAG]),
    "lowrank_mvn": ("lowrank", [LOC3, W, DIAG], "mvn", [LOC3[::-1].copy(), COV]),
    "lowrank_mvn_broadcast": ("lowrank", [LOC3[0], W[0], DIAG[0]], "mvn", [LOC3, COV]),
    "expfamily_gamma": ("gamma", [POS, POS2], "gamma", [POS2, POS]),
}
EXTRA = {
    "bernoulli": lambda lib, p: _d(lib).Bernoulli(probs=p),
    "beta": lambda lib, a, b: _d(lib).Beta(a, b),
    "normal": lambda lib, m, s: _d(lib).Normal(m, s),
    "uniform": lambda lib, lo, hi: _d(lib).Uniform(lo, hi),
    "gamma": lambda lib, c, r: _d(lib).Gamma(c, r),
    "mvn": lambda lib, m, c: _d(lib).MultivariateNormal(m, covariance_matrix=c),
}


def _maker(case):
    return EXTRA[case] if case in EXTRA else CASES[case][0]


@pytest.mark.parametrize("name", sorted(KL_CASES))
def test_kl_divergence_as_torch(name):
    p_case, p_params, q_case, q_params = KL_CASES[name]
    make_p, make_q = _maker(p_case), _maker(q_case)
    n = len(p_params)

    def fn(lib, *ts):
        return _d(lib).kl_divergence(make_p(lib, *ts[:n]), make_q(lib, *ts[n:]))

    same_as_torch(fn, p_params + q_params, atol=1e-7, rtol=1e-6)


def test_kl_expfamily_bregman_matches_closed_forms():
    """The (ExponentialFamily, ExponentialFamily) Bregman KL equals the registered closed forms."""
    kl_bregman = D.kl._kl_expfamily_expfamily
    t = minitorch.tensor
    pairs = [
        (D.Normal(t(X), t(POS)), D.Normal(t(X2), t(POS2))),
        (D.Gamma(t(POS), t(POS2)), D.Gamma(t(POS2), t(POS))),
        (D.Poisson(t(POS)), D.Poisson(t(POS2))),
        (D.Beta(t(POS), t(POS2)), D.Beta(t(POS2), t(POS))),
        (D.Dirichlet(t(POS)), D.Dirichlet(t(POS2))),
        (D.ContinuousBernoulli(t(UNIT)), D.ContinuousBernoulli(t(UNIT[::-1].copy()))),
        (D.Bernoulli(t(UNIT)), D.Bernoulli(t(UNIT[::-1].copy()))),
    ]
    for p, q in pairs:
        np.testing.assert_allclose(kl_bregman(p, q).detach().numpy(), D.kl_divergence(p, q).detach().numpy(),
                                   rtol=1e-6, atol=1e-9)


def test_kl_uniform_continuous_bernoulli_bounds():
    """Infinite exactly where the supports require it: a Uniform inside [0, 1] against a
    ContinuousBernoulli is finite (its endpoints included), one leaving [0, 1] infinite."""
    cb = D.ContinuousBernoulli(minitorch.tensor([0.3, 0.3, 0.3]))
    u = D.Uniform(minitorch.tensor([0.0, 0.2, -0.1]), minitorch.tensor([1.0, 0.7, 0.5]))
    kl = D.kl_divergence(u, cb).numpy()
    assert np.isfinite(kl[:2]).all() and np.isinf(kl[2])
    kl = D.kl_divergence(cb, D.Uniform(minitorch.tensor([0.0, -1.0, 0.1]), minitorch.tensor([1.0, 2.0, 1.0]))).numpy()
    assert np.isfinite(kl[:2]).all() and np.isinf(kl[2])
