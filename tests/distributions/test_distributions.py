"""minitorch.distributions against torch.distributions: log_prob, entropy, moments and KL values
and their gradients with respect to every parameter (through helpers.same_as_torch), PyTorch's
validation errors, shapes and reprs; samples by shape, dtype and moments over many draws."""
import math

import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, torch

D = minitorch.distributions
rng = np.random.default_rng(0)
X = rng.standard_normal((4, 3))
POS = rng.uniform(0.5, 2.0, (4, 3))
PROBS = rng.uniform(0.1, 1.0, (4, 3))
UNIT = rng.uniform(0.05, 0.95, (4, 3))
LOW, HIGH = rng.uniform(-2, -1, (4, 3)), rng.uniform(1, 2, (4, 3))
A = rng.standard_normal((2, 3, 3))
COV = A @ A.transpose(0, 2, 1) + 3 * np.eye(3)
LOC3 = rng.standard_normal((2, 3))


def _t(lib, a):
    return lib.tensor(a)


# name -> (make(lib, *params), params, a value in the support)
CASES = {
    "normal": (lambda lib, m, s: lib.distributions.Normal(m, s), [X, POS], X[::-1].copy()),
    "uniform": (lambda lib, lo, hi: lib.distributions.Uniform(lo, hi), [LOW, HIGH], UNIT - 0.5),
    "categorical_probs": (lambda lib, p: lib.distributions.Categorical(probs=p), [PROBS], np.array([0, 2, 1, 2])),
    "categorical_logits": (lambda lib, l: lib.distributions.Categorical(logits=l), [X], np.array([1, 1, 0, 2])),
    "bernoulli_probs": (lambda lib, p: lib.distributions.Bernoulli(probs=p), [UNIT], (UNIT > 0.5).astype(np.float64)),
    "bernoulli_logits": (lambda lib, l: lib.distributions.Bernoulli(logits=l), [X], (X > 0).astype(np.float64)),
    "onehot": (lambda lib, p: lib.distributions.OneHotCategorical(probs=p), [PROBS], np.eye(3)[[0, 2, 1, 1]]),
    "gamma": (lambda lib, c, r: lib.distributions.Gamma(c, r), [POS, POS[::-1].copy()], POS.T[:, :3].copy()[:4] if False else POS * 1.5),
    "beta": (lambda lib, a, b: lib.distributions.Beta(a, b), [POS, POS[::-1].copy()], UNIT),
    "mvn_cov": (lambda lib, m, c: lib.distributions.MultivariateNormal(m, covariance_matrix=c), [LOC3, COV], X[:2]),
    "mvn_tril": (lambda lib, m, c: lib.distributions.MultivariateNormal(m, scale_tril=lib.linalg.cholesky(c)), [LOC3, COV], X[:2]),
    "mvn_prec": (lambda lib, m, c: lib.distributions.MultivariateNormal(m, precision_matrix=c), [LOC3, COV], X[:2]),
    "independent": (lambda lib, m, s: lib.distributions.Independent(lib.distributions.Normal(m, s), 1), [X, POS], X * 0.5),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("what", ["log_prob", "entropy", "mean", "variance", "stddev"])
def test_values_and_gradients_as_torch(name, what):
    make, params, value = CASES[name]
    if name.startswith("categorical") and what in ("mean", "variance", "stddev"):
        pytest.skip("NaN by definition; checked in test_categorical_nan_moments")

    def fn(lib, *ps):
        d = make(lib, *ps)
        return d.log_prob(lib.tensor(value)) if what == "log_prob" else (d.entropy() if what == "entropy" else getattr(d, what))

    same_as_torch(fn, params, atol=1e-5)


@pytest.mark.parametrize("name", ["normal", "categorical_probs", "bernoulli_probs", "onehot", "mvn_cov", "independent", "gamma", "beta"])
def test_shapes_and_repr(name):
    make, params, _ = CASES[name]
    d = make(minitorch, *[minitorch.tensor(p) for p in params])
    if torch is None:
        return
    t = make(torch, *[torch.tensor(p) for p in params])
    assert tuple(d.batch_shape) == tuple(t.batch_shape) and tuple(d.event_shape) == tuple(t.event_shape)
    assert d.has_rsample == t.has_rsample and d.has_enumerate_support == t.has_enumerate_support
    assert repr(d).replace("minitorch.", "torch.") == repr(t)
    assert repr(d.support) == repr(t.support)
    e = d.expand((5,) + tuple(d.batch_shape))
    assert tuple(e.batch_shape) == (5,) + tuple(d.batch_shape)


def test_mode():
    p = np.array([[0.2, 0.5, 0.3], [0.6, 0.1, 0.3]])
    same_as_torch(lambda lib, p: lib.distributions.Categorical(p).mode, [p], grad=False)
    same_as_torch(lambda lib, p: lib.distributions.OneHotCategorical(p).mode, [p], grad=False)
    same_as_torch(lambda lib, p: lib.distributions.Bernoulli(p).mode, [np.array([0.2, 0.5, 0.7])], grad=False)
    same_as_torch(lambda lib, m, s: lib.distributions.Normal(m, s).mode, [X, POS])
    same_as_torch(lambda lib, c, r: lib.distributions.Gamma(c, r).mode, [POS + 1, POS])


def test_categorical_nan_moments():
    d = D.Categorical(minitorch.tensor(PROBS))
    assert tuple(d.mean.shape) == (4,) and bool(d.mean.isnan().all()) and bool(d.variance.isnan().all())


def test_enumerate_support():
    for lib_fn in (lambda lib: lib.distributions.Categorical(lib.tensor(PROBS)),
                   lambda lib: lib.distributions.Bernoulli(lib.tensor(UNIT)),
                   lambda lib: lib.distributions.OneHotCategorical(lib.tensor(PROBS))):
        for expand in (True, False):
            got = lib_fn(minitorch).enumerate_support(expand)
            if torch is not None:
                want = lib_fn(torch).enumerate_support(expand)
                assert tuple(got.shape) == tuple(want.shape) and str(got.dtype)[-5:] == str(want.dtype)[-5:]
                np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_reinforce_step():
    """The REINFORCE pattern: sample actions, sum log-probs weighted by returns, backward."""
    logits = minitorch.randn(5, 4, requires_grad=True)
    dist = D.Categorical(logits=logits)
    a = dist.sample()
    assert a.dtype == minitorch.int64 and tuple(a.shape) == (5,)
    loss = -(dist.log_prob(a) * minitorch.arange(5.0)).sum() - 0.01 * dist.entropy().sum()
    loss.backward()
    assert tuple(logits.grad.shape) == (5, 4)


SAMPLERS = {
    "normal": (lambda: D.Normal(minitorch.tensor([1.0, -2.0]), minitorch.tensor([0.5, 2.0])), [1.0, -2.0], [0.25, 4.0]),
    "uniform": (lambda: D.Uniform(minitorch.tensor([0.0, 2.0]), minitorch.tensor([1.0, 5.0])), [0.5, 3.5], [1 / 12, 0.75]),
    "bernoulli": (lambda: D.Bernoulli(minitorch.tensor([0.2, 0.7])), [0.2, 0.7], [0.16, 0.21]),
    "categorical": (lambda: D.Categorical(minitorch.tensor([0.1, 0.2, 0.7])), [1.6], [0.44]),
    "mvn": (lambda: D.MultivariateNormal(minitorch.tensor([1.0, 2.0]), minitorch.tensor([[2.0, 0.5], [0.5, 1.0]])), [1.0, 2.0], [2.0, 1.0]),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sample_moments(name):
    make, mean, var = SAMPLERS[name]
    minitorch.manual_seed(0)
    d = make()
    s = d.sample((40000,))
    assert tuple(s.shape) == (40000,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert s.dtype == (minitorch.int64 if name == "categorical" else minitorch.float32)
    x = s.double().numpy()
    np.testing.assert_allclose(x.mean(0), mean, atol=0.05)
    np.testing.assert_allclose(x.var(0), var, rtol=0.05)


def test_onehot_sample():
    s = D.OneHotCategorical(minitorch.tensor([0.1, 0.2, 0.7])).sample((1000, 2))
    assert tuple(s.shape) == (1000, 2, 3) and s.dtype == minitorch.float32
    assert bool((s.sum(-1) == 1).all())


def test_samples_equal_torch_after_same_seed():
    """The samplers use PyTorch's ops in PyTorch's order, so with minitorch's PyTorch-equal
    generator the streams are equal too (not promised by PyTorch; holds here)."""
    if torch is None:
        pytest.skip("PyTorch not installed")
    for lib in (minitorch, torch):
        lib.manual_seed(3)
    pairs = [
        (D.Categorical(minitorch.tensor(PROBS)), torch.distributions.Categorical(torch.tensor(PROBS)), (7,)),
        (D.Normal(minitorch.tensor(X), minitorch.tensor(POS)), torch.distributions.Normal(torch.tensor(X), torch.tensor(POS)), (2,)),
    ]
    for d, t, shape in pairs:
        np.testing.assert_allclose(d.sample(shape).numpy(), t.sample(shape).numpy(), rtol=1e-6)
        if d.has_rsample:
            np.testing.assert_allclose(d.rsample(shape).detach().numpy(), t.rsample(shape).detach().numpy(), rtol=1e-6)


def test_rsample_reparametrisation_gradient():
    loc = minitorch.tensor([0.5, -1.0], requires_grad=True)
    scale = minitorch.tensor([2.0, 0.5], requires_grad=True)
    minitorch.manual_seed(1)
    s = D.Normal(loc, scale).rsample((3,))
    s.sum().backward()
    minitorch.manual_seed(1)
    eps = minitorch.empty(3, 2).normal_()
    np.testing.assert_allclose(loc.grad.numpy(), [3.0, 3.0])
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0).numpy(), rtol=1e-6)
    u_low = minitorch.tensor(0.0, requires_grad=True)
    D.Uniform(u_low, 1.0).rsample((10,)).sum().backward()
    assert u_low.grad is not None
    assert not D.Normal(loc, scale).sample().requires_grad


def _errors(fn):
    """The message minitorch and PyTorch raise (each with its own module name)."""
    out = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with pytest.raises(ValueError) as e:
            fn(lib)
        out.append(str(e.value).replace("minitorch.", "torch."))
    return out


@pytest.mark.parametrize("fn", [
    lambda lib: lib.distributions.Normal(lib.tensor([0.0, 1.0]), lib.tensor([1.0, -1.0])),
    lambda lib: lib.distributions.Normal(0.0, 1.0).log_prob(1.0),
    lambda lib: lib.distributions.Normal(lib.zeros(3), lib.ones(3)).log_prob(lib.zeros(2)),
    lambda lib: lib.distributions.Categorical(lib.tensor([0.5, 0.5])).log_prob(lib.tensor(2)),
    lambda lib: lib.distributions.Categorical(lib.tensor([0.5, -0.5])),
    lambda lib: lib.distributions.Categorical(),
    lambda lib: lib.distributions.Categorical(lib.tensor(0.5)),
    lambda lib: lib.distributions.Bernoulli(lib.tensor([1.5])),
    lambda lib: lib.distributions.Uniform(1.0, 0.0),
    lambda lib: lib.distributions.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), scale_tril=lib.tensor([[1.0, 1.0], [0.0, 1.0]])),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda lib: lib.distributions.Independent(lib.distributions.Normal(0.0, 1.0), 1),
    lambda lib: lib.distributions.OneHotCategorical(lib.tensor([0.5, 0.5])).log_prob(lib.tensor([1.0, 1.0])),
])
def test_validation_errors_as_torch(fn):
    msgs = _errors(fn)
    assert len(set(msgs)) == 1, msgs


def test_validate_args_off():
    D.Normal(0.0, -1.0, validate_args=False)
    assert D.Normal(0.0, 1.0, validate_args=False).log_prob(minitorch.tensor(5.0)).item() == pytest.approx(-0.5 * 25 - 0.5 * math.log(2 * math.pi))


KL_PAIRS = [
    ("normal", "normal"), ("uniform", "uniform"), ("categorical_probs", "categorical_logits"),
    ("bernoulli_probs", "bernoulli_logits"), ("onehot", "onehot"), ("gamma", "gamma"), ("beta", "beta"),
    ("mvn_cov", "mvn_tril"), ("independent", "independent"), ("uniform", "normal"), ("beta", "normal"),
    ("gamma", "normal"), ("normal", "uniform"), ("uniform", "gamma"), ("beta", "gamma"),
]


@pytest.mark.parametrize("p,q", KL_PAIRS)
def test_kl_divergence_as_torch(p, q):
    mp, pp, _ = CASES[p]
    mq, pq, _ = CASES[q]
    if q == "mvn_tril":
        pq = [LOC3[::-1].copy(), COV[::-1].copy()]
    if (p, q) == ("uniform", "uniform"):
        pq = [LOW * 1.5, HIGH * 1.5]
    n = len(pp)

    def fn(lib, *ts):
        return lib.distributions.kl_divergence(mp(lib, *ts[:n]), mq(lib, *ts[n:]))

    same_as_torch(fn, pp + [a[::-1].copy() if q == p and q != "uniform" else a for a in pq], atol=1e-5)


def test_kl_uniform_beta_and_infinities():
    p = D.Uniform(minitorch.tensor([0.2]), minitorch.tensor([0.7]))
    q = D.Beta(minitorch.tensor([2.0]), minitorch.tensor([3.0]))
    got = D.kl_divergence(p, q).item()
    if torch is not None:
        t = torch.distributions
        want = t.kl_divergence(t.Uniform(torch.tensor([0.2]), torch.tensor([0.7])), t.Beta(torch.tensor([2.0]), torch.tensor([3.0])))
        assert got == pytest.approx(want.item(), rel=1e-5)
    assert math.isinf(D.kl_divergence(D.Normal(0.0, 1.0), D.Uniform(0.0, 1.0)).item())


def test_register_kl_and_missing_pair():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type Normal and q type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(minitorch.tensor([0.5, 0.5])))

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return minitorch.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 42.0
    assert D.kl_divergence(D.Normal(0.0, 1.0), D.Normal(0.0, 1.0)).item() == 0.0


def test_constraints_reprs_and_checks():
    c = D.constraints
    assert repr(c.positive) == "GreaterThan(lower_bound=0.0)"
    assert repr(c.real_vector) == "IndependentConstraint(Real(), 1)"
    assert repr(c.integer_interval(0, 3)) == "IntegerInterval(lower_bound=0, upper_bound=3)"
    assert c.simplex.check(minitorch.tensor([0.5, 0.5])).item()
    assert not c.lower_cholesky.check(minitorch.tensor([[1.0, 1.0], [0.0, 1.0]])).item()
    assert c.positive_definite.check(minitorch.eye(2)).item()
    assert c.is_dependent(D.Uniform.support) and not c.is_dependent(c.real)
