"""The distributions built on transforms (TransformedDistribution, LogNormal, Gumbel, Weibull,
Pareto, HalfNormal, ...) and the other heavy-tailed families (Exponential, Cauchy,
GeneralizedPareto) against torch.distributions in float64: densities, entropies, moments,
cdf/icdf and their gradients over full, broadcast and 0-d parameters; rsample (the random streams
equal PyTorch's after the same seed) with its gradients; shapes, expand, validation errors, KL
pairs; sample moments of many draws."""
import math

import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, torch
from test_distributions import _errors

D = minitorch.distributions
rng = np.random.default_rng(19)


def _draw(kind, shape):
    low, high = {"pos": (0.5, 2.0), "unit": (0.1, 0.9), "big": (2.5, 4.0), "gpc": (-0.3, 0.4), "temp": (0.3, 1.5)}.get(
        kind, (None, None)
    )
    if kind == "real":
        return rng.standard_normal(shape)
    return rng.uniform(low, high, shape)


def _unit(ps, shape):
    return rng.uniform(0.05, 0.95, shape)


def _positive(ps, shape):
    return rng.uniform(0.2, 3.0, shape)


def _real(ps, shape):
    return rng.standard_normal(shape) * 2


def _above_scale(ps, shape):  # Pareto: scale is the first parameter
    return np.broadcast_to(ps[0], shape) * rng.uniform(1.05, 3.0, shape)


def _gp_value(ps, shape):  # GeneralizedPareto(loc, scale, c): inside [loc, loc + 1.5 scale]
    return np.broadcast_to(ps[0], shape) + np.broadcast_to(ps[1], shape) * rng.uniform(0.05, 1.5, shape)


def _halfsign(ps, shape):  # both signs: the folded densities are -inf below 0 (validation off)
    return rng.standard_normal(shape) * 2


# name -> (make(lib, *params), parameter kinds, value(params, shape) in the support, validate)
CASES = {
    "exponential": (lambda lib, r: lib.distributions.Exponential(r), ["pos"], _positive),
    "cauchy": (lambda lib, m, s: lib.distributions.Cauchy(m, s), ["real", "pos"], _real),
    "half_cauchy": (lambda lib, s: lib.distributions.HalfCauchy(s), ["pos"], _positive),
    "half_normal": (lambda lib, s: lib.distributions.HalfNormal(s), ["pos"], _positive),
    "half_normal_both_signs": (lambda lib, s: lib.distributions.HalfNormal(s, validate_args=False), ["pos"], _halfsign),
    "log_normal": (lambda lib, m, s: lib.distributions.LogNormal(m, s), ["real", "pos"], _positive),
    "gumbel": (lambda lib, m, s: lib.distributions.Gumbel(m, s), ["real", "pos"], _real),
    "weibull": (lambda lib, s, k: lib.distributions.Weibull(s, k), ["pos", "big"], _positive),
    "pareto": (lambda lib, s, a: lib.distributions.Pareto(s, a), ["pos", "big"], _above_scale),
    "inverse_gamma": (lambda lib, a, b: lib.distributions.InverseGamma(a, b), ["big", "pos"], _positive),
    "kumaraswamy": (lambda lib, a, b: lib.distributions.Kumaraswamy(a, b), ["pos", "pos"], _unit),
    "relaxed_bernoulli_probs": (lambda lib, t, p: lib.distributions.RelaxedBernoulli(t, probs=p), ["temp", "unit"], _unit),
    "relaxed_bernoulli_logits": (lambda lib, t, l: lib.distributions.RelaxedBernoulli(t, logits=l), ["temp", "real"], _unit),
    "logit_relaxed_bernoulli": (
        lambda lib, t, p: lib.distributions.relaxed_bernoulli.LogitRelaxedBernoulli(t, probs=p), ["temp", "unit"], _real),
    "generalized_pareto": (lambda lib, m, s, c: lib.distributions.GeneralizedPareto(m, s, c), ["real", "pos", "gpc"],
                           _gp_value),
}
SHAPES = {  # parameter shapes per layout: all full, broadcasting against each other, 0-d
    "full": lambda n: [(4, 3)] * n,
    "broadcast": lambda n: [(4, 1) if i % 2 == 0 else (3,) for i in range(n)],
    "scalar": lambda n: [()] * n,
    "empty": lambda n: [(0, 3)] * n,
}
WHATS = ["log_prob", "entropy", "mean", "variance", "stddev", "mode", "cdf", "icdf"]


def _instance(name, shapes):
    make, kinds, value = CASES[name]
    params = [_draw(k, s) for k, s in zip(kinds, SHAPES[shapes](len(kinds)))]
    batch = np.broadcast_shapes(*[p.shape for p in params])
    x = value(params, (5,) + batch if batch == () else batch)
    if name == "generalized_pareto":  # PyTorch's log_prob compares with a float32 zero: float64 fails there
        params, x = [p.astype(np.float32) for p in params], x.astype(np.float32)
    return make, params, x


def _tolerance(name):
    return {"atol": 1e-5, "rtol": 1e-4} if name == "generalized_pareto" else {"atol": 1e-8, "rtol": 1e-6}


def _evaluate(what, d, lib, x):
    if what in ("log_prob", "cdf"):
        return getattr(d, what)(lib.tensor(x))
    if what == "icdf":
        return d.icdf(lib.tensor(rng_u[: x.size].reshape(x.shape).astype(x.dtype)))
    if what == "entropy":
        return d.entropy()
    return getattr(d, what)


rng_u = np.random.default_rng(1).uniform(0.02, 0.98, 1000)


@pytest.mark.parametrize("shapes", sorted(SHAPES))
@pytest.mark.parametrize("what", WHATS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_as_torch(name, what, shapes):
    """Where PyTorch raises (NotImplementedError: no cdf, no entropy), minitorch must too."""
    if name == "kumaraswamy" and what == "mode":
        pytest.skip("PyTorch 2.13's Kumaraswamy.mode is NaN for every b > 1: checked in test_kumaraswamy_mode")
    make, params, x = _instance(name, shapes)
    layout = "transposed" if shapes == "full" else "contiguous"
    same_as_torch(lambda lib, *ps: _evaluate(what, make(lib, *ps), lib, x), params, layout=layout, **_tolerance(name))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("what", ["log_prob", "cdf"])
def test_nan_values_as_torch(name, what):
    """NaN in the value (validation off in both): where PyTorch's result is NaN, so is ours."""
    make, params, x = _instance(name, "full")
    x = x.copy()
    x[1, 2] = x[3, 0] = np.nan

    def fn(lib, *ps):
        saved = lib.distributions.Distribution._validate_args
        lib.distributions.Distribution.set_default_validate_args(False)
        try:
            return getattr(make(lib, *ps), what)(lib.tensor(x))
        finally:
            lib.distributions.Distribution.set_default_validate_args(saved)

    same_as_torch(fn, params, **_tolerance(name))


@pytest.mark.parametrize("shapes", ["full", "broadcast", "scalar", "empty"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_rsample_and_its_gradients_as_torch(name, shapes):
    """The random streams equal PyTorch's after the same seed, so rsample (and its gradient
    with respect to every parameter) can be compared value for value."""
    make, params, _ = _instance(name, shapes)

    def fn(lib, *ps):
        d = make(lib, *ps)
        lib.manual_seed(7)
        return d.rsample((2,)) if d.has_rsample else d.sample((2,))

    same_as_torch(fn, params, **_tolerance(name))


@pytest.mark.parametrize("name", sorted(CASES))
def test_shapes_expand_support_and_repr(name):
    # A relaxed Bernoulli's temperature must broadcast with its batch shape: all full there.
    make, params, _ = _instance(name, "full" if "relaxed" in name else "broadcast")
    d = make(minitorch, *[minitorch.tensor(p) for p in params])
    # The relaxed Bernoullis' batch shape is their probabilities' (the temperature is not broadcast).
    batch = params[-1].shape if "relaxed" in name else np.broadcast_shapes(*[p.shape for p in params])
    assert tuple(d.batch_shape) == batch and tuple(d.event_shape) == ()
    e = d.expand((2,) + batch)
    assert tuple(e.batch_shape) == (2,) + batch and type(e) is type(d)
    assert tuple(e.sample().shape) == (2,) + batch and tuple(d.sample((6,)).shape) == (6,) + batch
    assert tuple(e.log_prob(d.sample()).shape) == (2,) + batch
    number = make(minitorch, *[float(p.flat[0]) for p in params])
    assert tuple(number.batch_shape) == () and number.sample().dim() == 0
    if torch is None:
        return
    t = make(torch, *[torch.tensor(p) for p in params])
    assert d.has_rsample == t.has_rsample and type(d).__name__ == type(t).__name__
    def text(x):
        return repr(x).replace("minitorch.", "torch.")

    assert text(d) == repr(t) and text(d.support) == repr(t.support)
    assert text(e.support) == repr(t.expand((2,) + batch).support)


VECTOR_CASES = {
    "logistic_normal": (lambda lib, m, s: lib.distributions.LogisticNormal(m, s), [(4, 3), (3,)]),
    "relaxed_one_hot_probs": (lambda lib, t, p: lib.distributions.RelaxedOneHotCategorical(t, probs=p), [(), (4, 3)]),
    "relaxed_one_hot_logits": (lambda lib, t, l: lib.distributions.RelaxedOneHotCategorical(t, logits=l),
                               [(4, 1), (4, 3)]),
    "exp_relaxed_categorical": (
        lambda lib, t, p: lib.distributions.relaxed_categorical.ExpRelaxedCategorical(t, probs=p), [(1,), (4, 3)]),
}


def _vector_params(name):
    _, shapes = VECTOR_CASES[name]
    if name == "logistic_normal":
        return [rng.standard_normal(shapes[0]), rng.uniform(0.5, 2.0, shapes[1])]
    second = rng.standard_normal(shapes[1]) if name.endswith("logits") else rng.dirichlet(np.ones(3), 4)
    return [rng.uniform(0.3, 1.5, shapes[0]), second]


@pytest.mark.parametrize("name", sorted(VECTOR_CASES))
def test_simplex_families_as_torch(name):
    """Values on the simplex (or its log) from the distribution itself, seeded alike in both."""
    make, _ = VECTOR_CASES[name]
    params = _vector_params(name)

    def draw_then(what):
        def fn(lib, *ps):
            d = make(lib, *ps)
            lib.manual_seed(3)
            value = d.rsample((2,))
            if what == "rsample":
                return value
            return d.log_prob(value.detach())

        return fn

    same_as_torch(draw_then("rsample"), params, atol=1e-8, rtol=1e-6)
    same_as_torch(draw_then("log_prob"), params, atol=1e-7, rtol=1e-6)
    d = make(minitorch, *[minitorch.tensor(p) for p in params])
    assert tuple(d.expand((2,) + tuple(d.batch_shape)).sample().shape) == (2,) + tuple(d.batch_shape + d.event_shape)
    if torch is not None:
        t = make(torch, *[torch.tensor(p) for p in params])
        assert (tuple(d.batch_shape), tuple(d.event_shape)) == (tuple(t.batch_shape), tuple(t.event_shape))
        assert repr(d.support) == repr(t.support)


def test_logistic_normal_of_a_scalar_and_its_parameters():
    d = D.LogisticNormal(0.5, 2.0)
    assert tuple(d.batch_shape) == () and tuple(d.event_shape) == (2,)
    s = d.sample((1000,))
    assert bool((s > 0).all()) and np.allclose(s.sum(-1).numpy(), 1.0)
    assert d.loc.tolist() == [0.5] and d.scale.tolist() == [2.0]


def test_kumaraswamy_mode():
    """((a - 1) / (a b - 1))^(1/a), the maximiser of the density; NaN when a or b is below 1."""
    a = np.array([2.0, 3.0, 0.5, 4.0, 1.0])
    b = np.array([2.0, 5.0, 2.0, 0.7, 3.0])
    got = D.Kumaraswamy(minitorch.tensor(a), minitorch.tensor(b)).mode.numpy()
    with np.errstate(divide="ignore"):  # a b = 1 where a < 1: not used
        want = np.where((a < 1) | (b < 1), np.nan, ((a - 1) / (a * b - 1)) ** (1 / a))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    density = D.Kumaraswamy(minitorch.tensor(a[:2]), minitorch.tensor(b[:2]))
    for step in (-1e-3, 1e-3):
        assert bool((density.log_prob(minitorch.tensor(got[:2] + step)) < density.log_prob(minitorch.tensor(got[:2]))).all())


def test_generalized_pareto_at_zero_concentration_and_bounded_support():
    """c = 0 is the exponential limit; c < 0 bounds the support at loc - scale / c."""
    loc, scale = minitorch.tensor([0.5, 0.5]), minitorch.tensor([2.0, 2.0])
    d = D.GeneralizedPareto(loc, scale, minitorch.tensor([0.0, -0.5]))
    x = minitorch.tensor([1.5, 2.0])
    expo = D.Exponential(minitorch.tensor(0.5)).log_prob(minitorch.tensor(1.0)).item()
    assert d.log_prob(x)[0].item() == pytest.approx(expo)
    assert d.support.upper_bound.tolist() == [math.inf, 4.5]
    with pytest.raises(ValueError, match="to be within the support"):
        d.log_prob(minitorch.tensor([1.0, 5.0]))
    u = minitorch.tensor([0.3, 0.8])
    np.testing.assert_allclose(d.cdf(d.icdf(u)).numpy(), u.numpy(), rtol=1e-6)


# name -> (mean, variance) of the distribution made by SAMPLERS[name]
SAMPLERS = {
    "exponential": (lambda: D.Exponential(minitorch.tensor([0.5, 2.0])), [2.0, 0.5], [4.0, 0.25]),
    "half_normal": (lambda: D.HalfNormal(minitorch.tensor([1.0, 3.0])), [math.sqrt(2 / math.pi), 3 * math.sqrt(2 / math.pi)],
                    [1 - 2 / math.pi, 9 * (1 - 2 / math.pi)]),
    "log_normal": (lambda: D.LogNormal(0.0, 0.5), [math.exp(0.125)], [(math.exp(0.25) - 1) * math.exp(0.25)]),
    "gumbel": (lambda: D.Gumbel(1.0, 2.0), [1 + 2 * 0.5772156649], [math.pi**2 / 6 * 4]),
    "weibull": (lambda: D.Weibull(2.0, 3.0), [2 * math.gamma(1 + 1 / 3)],
                [4 * (math.gamma(1 + 2 / 3) - math.gamma(1 + 1 / 3) ** 2)]),
    "pareto": (lambda: D.Pareto(1.0, 5.0), [1.25], [5 / (16 * 3)]),
    "inverse_gamma": (lambda: D.InverseGamma(5.0, 2.0), [0.5], [4 / (16 * 3)]),
    "kumaraswamy": (lambda: D.Kumaraswamy(2.0, 3.0), [3 * math.gamma(1.5) * 2 / math.gamma(4.5)],
                    [0.25 - (3 * math.gamma(1.5) * 2 / math.gamma(4.5)) ** 2]),  # E X^n = b B(1 + n/a, b)
    "generalized_pareto": (lambda: D.GeneralizedPareto(0.0, 1.0, 0.2), [1.25], [1 / (0.64 * 0.6)]),
    "cauchy_median": (lambda: D.Cauchy(1.0, 2.0), None, None),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sample_moments(name):
    """200000 draws, seed 0: means within 1%, variances within 5% (the heavier tails: Pareto,
    GeneralizedPareto, Kumaraswamy, 10%); Cauchy's median and quartiles within 0.02 scale."""
    make, mean, var = SAMPLERS[name]
    minitorch.manual_seed(0)
    d = make()
    x = d.sample((200000,)).double().numpy()
    if mean is None:
        np.testing.assert_allclose(np.percentile(x, [25, 50, 75]), [-1.0, 1.0, 3.0], atol=0.04)
        return
    np.testing.assert_allclose(x.mean(0), np.reshape(mean, x.shape[1:]), rtol=0.01)
    rtol = 0.1 if name in ("pareto", "generalized_pareto", "inverse_gamma") else 0.05
    np.testing.assert_allclose(x.var(0), np.reshape(var, x.shape[1:]), rtol=rtol)
    np.testing.assert_allclose(d.mean.numpy(), np.reshape(mean, x.shape[1:]), rtol=1e-5)
    np.testing.assert_allclose(d.variance.numpy(), np.reshape(var, x.shape[1:]), rtol=1e-5)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.distributions.Exponential(lib.tensor([1.0, -1.0])),
    lambda lib: lib.distributions.Exponential(1.0).log_prob(lib.tensor(-1.0)),
    lambda lib: lib.distributions.Cauchy(lib.tensor([0.0]), lib.tensor([0.0])),
    lambda lib: lib.distributions.HalfNormal(lib.tensor([1.0])).log_prob(lib.tensor([-1.0])),
    lambda lib: lib.distributions.HalfCauchy(lib.tensor([-1.0])),
    lambda lib: lib.distributions.LogNormal(lib.tensor([0.0]), lib.tensor([-1.0])),
    lambda lib: lib.distributions.LogNormal(0.0, 1.0).log_prob(lib.tensor(-2.0)),
    lambda lib: lib.distributions.Gumbel(lib.tensor([0.0]), lib.tensor([0.0])),
    lambda lib: lib.distributions.Weibull(lib.tensor([1.0]), lib.tensor([-2.0])),
    lambda lib: lib.distributions.Pareto(lib.tensor([2.0]), lib.tensor([1.0])).log_prob(lib.tensor([1.0])),
    lambda lib: lib.distributions.InverseGamma(lib.tensor([-2.0]), lib.tensor([1.0])),
    lambda lib: lib.distributions.Kumaraswamy(lib.tensor([2.0]), lib.tensor([1.0])).log_prob(lib.tensor([1.5])),
    lambda lib: lib.distributions.LogisticNormal(lib.zeros(2), lib.ones(2)).log_prob(lib.tensor([0.5, 0.6, 0.1])),
    lambda lib: lib.distributions.RelaxedBernoulli(lib.tensor(0.5), probs=lib.tensor([1.5])),
    lambda lib: lib.distributions.RelaxedBernoulli(lib.tensor(0.5)),
    lambda lib: lib.distributions.RelaxedOneHotCategorical(lib.tensor(0.5), probs=lib.tensor([0.5, -0.5])),
    lambda lib: lib.distributions.GeneralizedPareto(lib.tensor([0.0]), lib.tensor([-1.0]), lib.tensor([0.1])),
    lambda lib: lib.distributions.GeneralizedPareto(0.0, 1.0, 0.1).log_prob(lib.tensor(-1.0)),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0), "exp"),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0), [1]),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0),
                                                          lib.distributions.StickBreakingTransform()),
])
def test_validation_errors_as_torch(fn):
    msgs = _errors(fn)
    assert len(set(msgs)) == 1, msgs


# TransformedDistribution itself


def _td_cases(lib):
    T = lib.distributions
    loc = lib.tensor(np.linspace(-1.0, 1.0, 12).reshape(4, 3))
    return {
        "affine_exp": T.TransformedDistribution(T.Normal(loc, 0.5), [T.AffineTransform(1.0, -2.0), T.ExpTransform()]),
        "sigmoid": T.TransformedDistribution(T.Normal(loc, 1.5), T.SigmoidTransform()),
        "tanh_scaled": T.TransformedDistribution(T.Normal(loc, 0.7), [T.TanhTransform(), T.AffineTransform(0.0, 3.0)]),
        "stick": T.TransformedDistribution(T.Normal(loc, 1.0), T.StickBreakingTransform()),
        "reshape": T.TransformedDistribution(T.Normal(loc, 1.0), T.ReshapeTransform((4, 3), (2, 6))),
        "broadcast_affine": T.TransformedDistribution(T.Normal(0.0, 1.0), T.AffineTransform(loc, lib.tensor(2.0))),
        "event_affine": T.TransformedDistribution(T.Independent(T.Normal(loc, 1.0), 1),
                                                  T.AffineTransform(0.0, lib.tensor([1.0, -2.0, 3.0]), event_dim=1)),
        "power": T.TransformedDistribution(T.Exponential(loc.exp()), T.PowerTransform(lib.tensor(-0.5))),
        "softplus": T.TransformedDistribution(T.Normal(loc, 1.0), T.SoftplusTransform()),
        "cdf_transform": T.TransformedDistribution(T.Normal(loc, 1.0), T.CumulativeDistributionTransform(T.Normal(0.0, 2.0))),
    }


TD_NAMES = sorted(_td_cases(minitorch))


@pytest.mark.parametrize("name", TD_NAMES)
def test_transformed_distribution_as_torch(name):
    d = _td_cases(minitorch)[name]
    minitorch.manual_seed(11)
    x = d.sample((3,))
    assert tuple(x.shape) == (3,) + tuple(d.batch_shape + d.event_shape)
    assert bool(d.support.check(x).all())
    if torch is None:
        return
    t = _td_cases(torch)[name]
    torch.manual_seed(11)
    tx = t.sample((3,))
    assert (tuple(d.batch_shape), tuple(d.event_shape)) == (tuple(t.batch_shape), tuple(t.event_shape))
    assert repr(d.support) == repr(t.support)
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(d.log_prob(x).numpy(), t.log_prob(tx).numpy(), rtol=1e-5, atol=1e-5)
    for method, arg in (("cdf", x), ("icdf", minitorch.tensor(0.3))):
        try:
            want = getattr(t, method)(torch.tensor(arg.numpy()))
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(d, method)(arg)
            continue
        np.testing.assert_allclose(getattr(d, method)(arg).numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    e, te = d.expand((2,) + tuple(d.batch_shape)), t.expand((2,) + tuple(t.batch_shape))
    assert (tuple(e.batch_shape), tuple(e.event_shape)) == (tuple(te.batch_shape), tuple(te.event_shape))


def test_transformed_log_prob_gradients_as_torch():
    """log_prob's gradient with respect to the base's parameters and the transforms' through the
    Jacobian terms, at a fixed value."""
    value = rng.uniform(0.2, 3.0, (4, 3))

    def fn(lib, loc, scale, shift):
        T = lib.distributions
        chain = [T.ExpTransform(), T.AffineTransform(shift, scale), T.PowerTransform(lib.tensor(1.5))]
        return T.TransformedDistribution(T.Normal(loc, 1.0), chain).log_prob(lib.tensor(value) + 2.0)

    same_as_torch(fn, [rng.standard_normal((4, 3)), rng.uniform(0.5, 2.0, (3,)), rng.uniform(0.0, 1.0, (4, 1))],
                  atol=1e-8, rtol=1e-6)


def test_transformed_cdf_flips_for_decreasing_transforms():
    d = D.TransformedDistribution(D.Normal(0.0, 1.0), [D.AffineTransform(0.0, -1.0), D.ExpTransform()])
    y = minitorch.tensor([0.5, 1.0, 2.0])
    np.testing.assert_allclose(d.cdf(y).numpy(), 1 - D.Normal(0.0, 1.0).cdf(-y.log()).numpy(), rtol=1e-6)
    np.testing.assert_allclose(d.icdf(d.cdf(y)).numpy(), y.numpy(), rtol=1e-5)


# KL divergences among these and the older families


def _kl_make(lib, name, params):
    T = lib.distributions
    ctor = {
        "exponential": T.Exponential, "gumbel": T.Gumbel, "pareto": T.Pareto, "half_normal": T.HalfNormal,
        "cauchy": T.Cauchy, "normal": T.Normal, "gamma": T.Gamma, "beta": T.Beta, "uniform": T.Uniform,
        "log_normal": T.LogNormal,
    }[name]
    return ctor(*params)


KL_PARAMS = {  # kinds of each family's parameters, in its constructor's order
    "exponential": ["pos"], "gumbel": ["real", "pos"], "pareto": ["pos", "big"], "half_normal": ["pos"],
    "cauchy": ["real", "pos"], "normal": ["real", "pos"], "gamma": ["pos", "pos"], "beta": ["pos", "pos"],
    "uniform": ["uniform_low", "uniform_high"], "log_normal": ["real", "pos"],
}
KL_PAIRS = [
    ("cauchy", "cauchy"), ("exponential", "exponential"), ("gumbel", "gumbel"), ("half_normal", "half_normal"),
    ("pareto", "pareto"), ("log_normal", "log_normal"), ("beta", "exponential"), ("exponential", "gamma"),
    ("exponential", "gumbel"), ("exponential", "normal"), ("gamma", "exponential"), ("gamma", "gumbel"),
    ("gumbel", "normal"), ("normal", "gumbel"), ("pareto", "exponential"), ("pareto", "gamma"), ("pareto", "normal"),
    ("uniform", "exponential"), ("uniform", "gumbel"), ("uniform", "pareto"), ("beta", "pareto"),
    ("exponential", "beta"), ("exponential", "pareto"), ("exponential", "uniform"), ("gamma", "pareto"),
    ("gumbel", "beta"), ("gumbel", "exponential"), ("gumbel", "gamma"), ("gumbel", "pareto"), ("gumbel", "uniform"),
    ("normal", "exponential"), ("normal", "pareto"), ("pareto", "beta"), ("pareto", "uniform"),
]


def _kl_draw(kind, shape, role):
    if kind == "uniform_low":
        return rng.uniform(0.1, 0.5, shape) if role == "p" else rng.uniform(0.0, 0.2, shape)
    if kind == "uniform_high":
        return rng.uniform(1.0, 2.0, shape) if role == "p" else rng.uniform(2.0, 3.0, shape)
    return _draw(kind, shape)


@pytest.mark.parametrize("p,q", KL_PAIRS)
def test_kl_divergence_as_torch(p, q):
    """Values and gradients over (4, 3) parameters against (3,) ones (broadcasting); Pareto's
    alpha drawn above 2 where the divergence is finite, and one pair with alpha <= 1 (inf)."""
    pp = [_kl_draw(k, (4, 3), "p") for k in KL_PARAMS[p]]
    pq = [_kl_draw(k, (3,), "q") for k in KL_PARAMS[q]]
    if (p, q) == ("uniform", "pareto"):
        pq[0] = np.full((3,), 0.05)  # Pareto's support must start below the uniform's
    if (p, q) == ("pareto", "exponential"):
        pp[1][0, 0] = 0.8  # infinite
    n = len(pp)

    def fn(lib, *ts):
        return lib.distributions.kl_divergence(_kl_make(lib, p, ts[:n]), _kl_make(lib, q, ts[n:]))

    same_as_torch(fn, pp + pq, atol=1e-8, rtol=1e-6)


def test_kl_of_transformed_needs_equal_transforms():
    a = D.TransformedDistribution(D.Normal(0.0, 1.0), D.ExpTransform())
    b = D.TransformedDistribution(D.Normal(1.0, 2.0), D.ExpTransform())
    assert D.kl_divergence(a, b).item() == pytest.approx(D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)).item())
    with pytest.raises(NotImplementedError):
        D.kl_divergence(a, D.TransformedDistribution(D.Normal(1.0, 2.0), D.SigmoidTransform()))
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Weibull(1.0, 2.0), D.Weibull(1.0, 3.0))  # different PowerTransforms
