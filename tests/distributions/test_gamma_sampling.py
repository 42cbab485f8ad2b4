"""Gamma, Chi2, Beta and Dirichlet draws (_standard_gamma, _sample_dirichlet) and their
reparameterised gradients (_standard_gamma_grad, _dirichlet_grad) against PyTorch: with the same
seed the CPU draws are PyTorch's bit for bit (the same stream and algorithm), the gradients
PyTorch's to rounding; moments over many draws against the formulas."""
import numpy as np
import pytest

import minitorch
from helpers import torch

D = minitorch.distributions
needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")

# concentrations across sample_gamma's branches: 0, boosted (< 1), small, large
ALPHAS = np.array([0.0, 1e-3, 0.05, 0.3, 0.999, 1.0, 1.5, 2.5, 7.0, 30.0, 1e3, 1e6])


def draws(lib, fn, seed=7):
    lib.manual_seed(seed)
    return fn(lib)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [1, 12, 1000])
def test_standard_gamma_is_torchs_stream(dtype, n):
    a = np.resize(ALPHAS, n).astype(dtype)
    got = draws(minitorch, lambda lib: lib._standard_gamma(lib.tensor(a)))
    want = draws(torch, lambda lib: lib._standard_gamma(lib.tensor(a)))
    assert str(got.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # the generator is left where PyTorch leaves it
    np.testing.assert_array_equal(minitorch.rand(5).numpy(), torch.rand(5).numpy())


@needs_torch
@pytest.mark.parametrize("layout", ["transposed", "expanded", "empty", "scalar", "nan"])
def test_standard_gamma_layouts(layout):
    base = np.resize(ALPHAS, 12).reshape(3, 4)

    def make(lib):
        if layout == "transposed":
            return lib.tensor(base).t()
        if layout == "expanded":
            return lib.tensor(base[:1]).expand(5, 4)
        if layout == "empty":
            return lib.ones(0, 3)
        if layout == "scalar":
            return lib.tensor(0.4)
        return lib.tensor([1.0, float("nan"), -2.0, float("inf"), 2.0])

    got = draws(minitorch, lambda lib: lib._standard_gamma(make(lib)))
    want = draws(torch, lambda lib: lib._standard_gamma(make(lib)))
    assert tuple(got.shape) == tuple(want.shape) and got.is_contiguous()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@needs_torch
def test_generator_argument():
    a = np.full(50, 0.7)
    g, tg = minitorch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
    np.testing.assert_array_equal(minitorch._standard_gamma(minitorch.tensor(a), generator=g).numpy(),
                                  torch._standard_gamma(torch.tensor(a), generator=tg).numpy())


def grid(dtype):
    # (alpha, x) over standard_gamma_grad_one's branches: x < 0.8, alpha > 8 near and far
    # from x = alpha, and the rational approximation
    alpha = np.array([0.05, 0.5, 1.0, 3.0, 7.9, 8.5, 20.0, 300.0])
    x = np.array([1e-4, 0.1, 0.79, 0.81, 2.0, 7.0, 9.0, 19.0, 21.0, 250.0, 310.0, 400.0])
    return np.meshgrid(alpha, x, indexing="ij")[0].astype(dtype), np.meshgrid(alpha, x, indexing="ij")[1].astype(dtype)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_grad_as_torch(dtype):
    alpha, x = grid(dtype)
    got = minitorch._standard_gamma_grad(minitorch.tensor(alpha), minitorch.tensor(x)).numpy()
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == "float32" else 1e-13, atol=0)
    # output broadcasts to self's shape
    got = minitorch._standard_gamma_grad(minitorch.tensor(alpha), minitorch.tensor(x[:1])).numpy()
    want = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x[:1])).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_grad_as_torch(dtype):
    # dirichlet_grad_one's branches: x near 0, x near 1, both concentrations large, the rest
    x = np.array([1e-3, 0.05, 0.3, 0.5, 0.7, 0.95, 0.999])
    alpha = np.array([0.3, 1.0, 2.0, 7.0, 20.0])
    total = np.array([1.5, 4.0, 15.0, 50.0])
    X, A, T = np.meshgrid(x, alpha, total, indexing="ij")
    keep = T > A
    X, A, T = (v[keep].astype(dtype) for v in (X, A, T))
    got = minitorch._dirichlet_grad(minitorch.tensor(X), minitorch.tensor(A), minitorch.tensor(T)).numpy()
    want = torch._dirichlet_grad(torch.tensor(X), torch.tensor(A), torch.tensor(T)).numpy()
    np.testing.assert_allclose(got, want, rtol=2e-5 if dtype == "float32" else 1e-12, atol=1e-30)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 2), (0, 3), (2, 37), (1, 300)])
def test_sample_dirichlet_is_torchs_stream(dtype, shape):
    a = np.resize(np.array([0.1, 0.5, 1.0, 2.0, 9.0, 40.0]), shape).astype(dtype)
    got = draws(minitorch, lambda lib: lib._sample_dirichlet(lib.tensor(a)))
    want = draws(torch, lambda lib: lib._sample_dirichlet(lib.tensor(a)))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("op, args, msg", [
    ("_standard_gamma", 1, "\"gamma_cpu\" not implemented for 'Long'"),
    ("_sample_dirichlet", 1, "\"dirichlet\" not implemented for 'Long'"),
])
def test_integer_concentrations_refused(op, args, msg):
    with pytest.raises(NotImplementedError, match=msg):
        getattr(minitorch, op)(minitorch.tensor([1, 2]))
    if torch is not None:
        with pytest.raises(NotImplementedError, match=msg):
            getattr(torch, op)(torch.tensor([1, 2]))


def test_standard_gamma_grad_has_no_derivative():
    a = minitorch.tensor([2.0], requires_grad=True)
    out = minitorch._standard_gamma_grad(a, minitorch.tensor([1.0]))
    with pytest.raises(NotImplementedError, match="_standard_gamma_grad"):
        out.sum().backward()


# distribution -> (make(lib, *params), params)
DISTS = {
    "gamma": (lambda lib, c, r: lib.distributions.Gamma(c, r), [np.array([0.4, 1.0, 3.0, 12.0]), np.array([0.5, 1.0, 2.0, 4.0])]),
    "chi2": (lambda lib, df: lib.distributions.Chi2(df), [np.array([0.5, 1.0, 3.0, 20.0])]),
    "beta": (lambda lib, a, b: lib.distributions.Beta(a, b), [np.array([0.3, 1.0, 2.0, 9.0]), np.array([2.0, 0.6, 2.0, 9.0])]),
    "dirichlet": (lambda lib, c: lib.distributions.Dirichlet(c), [np.array([[0.3, 1.0, 4.0], [2.0, 2.0, 2.0]])]),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(DISTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsample_values_and_gradients_as_torch(name, dtype):
    make, params = DISTS[name]
    results = {}
    for lib in (minitorch, torch):
        ps = [lib.tensor(p.astype(dtype), requires_grad=True) for p in params]
        lib.manual_seed(11)
        x = make(lib, *ps).rsample((6,))
        assert x.requires_grad
        (x * lib.arange(x.numel(), dtype=x.dtype).reshape(x.shape).sin()).sum().backward()
        results[lib] = (x.detach().numpy(), [p.grad.numpy() for p in ps])
    (gx, gg), (tx, tg) = results[minitorch], results[torch]
    np.testing.assert_array_equal(gx, tx)
    for a, b in zip(gg, tg):
        np.testing.assert_allclose(a, b, rtol=1e-4 if dtype == "float32" else 1e-10, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("name", sorted(DISTS))
def test_sample_is_torchs_and_detached(name):
    make, params = DISTS[name]
    got = draws(minitorch, lambda lib: make(lib, *[lib.tensor(p) for p in params]).sample((3,)))
    want = draws(torch, lambda lib: make(lib, *[lib.tensor(p) for p in params]).sample((3,)))
    assert not got.requires_grad and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_moments_over_many_draws():
    minitorch.manual_seed(0)
    for d in (D.Gamma(minitorch.tensor([0.3, 2.0, 50.0]), minitorch.tensor([1.0, 3.0, 0.5])),
              D.Chi2(minitorch.tensor([1.0, 7.0])),
              D.Beta(minitorch.tensor([0.5, 3.0]), minitorch.tensor([0.5, 1.5])),
              D.Dirichlet(minitorch.tensor([0.2, 1.0, 5.0]))):
        x = d.sample((40000,)).double()
        mean, var = d.mean.double(), d.variance.double()
        np.testing.assert_allclose(x.mean(0).numpy(), mean.numpy(), rtol=0.03, atol=1e-3)
        np.testing.assert_allclose(x.var(0).numpy(), var.numpy(), rtol=0.08, atol=1e-3)
    s = D.Dirichlet(minitorch.tensor([0.2, 1.0, 5.0])).sample((100,))
    np.testing.assert_allclose(s.sum(-1).numpy(), 1.0, rtol=1e-6)


def test_reparameterised_gradient_matches_finite_differences():
    # d E[f(x)] / d alpha by the reparameterised gradient against a finite difference of the
    # exact mean: E[x] = alpha / rate, so the gradient of the mean of many draws is 1 / rate
    c = minitorch.tensor([0.5, 2.0, 9.0], dtype=minitorch.float64, requires_grad=True)
    minitorch.manual_seed(1)
    D.Gamma(c, 2.0).rsample((20000,)).mean(0).sum().backward()
    np.testing.assert_allclose(c.grad.numpy(), 0.5, rtol=0.05)


@needs_torch
def test_dirichlet_properties_as_torch():
    c = np.array([[0.3, 1.0, 4.0], [2.0, 2.0, 2.0], [0.5, 0.2, 0.9]])
    for what in ("mean", "variance", "mode", "entropy"):
        got = getattr(D.Dirichlet(minitorch.tensor(c)), what)
        got = got() if callable(got) else got
        want = getattr(torch.distributions.Dirichlet(torch.tensor(c)), what)
        want = want() if callable(want) else want
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, err_msg=what)
    v = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8], [0.6, 0.3, 0.1]])
    np.testing.assert_allclose(D.Dirichlet(minitorch.tensor(c)).log_prob(minitorch.tensor(v)).numpy(),
                               torch.distributions.Dirichlet(torch.tensor(c)).log_prob(torch.tensor(v)).numpy(), rtol=1e-10)
    with pytest.raises(ValueError, match="at least one-dimensional"):
        D.Dirichlet(minitorch.tensor(1.0))
    e = D.Dirichlet(minitorch.tensor(c[0])).expand((4,))
    assert tuple(e.batch_shape) == (4,) and tuple(e.sample().shape) == (4, 3)
    assert isinstance(D.Chi2(3.0).expand((2,)), D.Chi2)


@needs_torch
@pytest.mark.parametrize("call", [
    lambda t: t._standard_gamma_grad(t.ones(3), t.ones(2)),
    lambda t: t._standard_gamma_grad(t.ones(3), t.ones(3, dtype=t.float64)),
    lambda t: t._dirichlet_grad(t.ones(3), t.ones(3), t.ones(3, dtype=t.int64)),
    lambda t: t._standard_gamma(t.ones(3, dtype=t.bool)),
    lambda t: t._dirichlet_grad(t.full((3,), 0.5), t.ones(2, 3) * 2, t.full((3,), 3.0)),
    lambda t: t._standard_gamma_grad(t.full((2, 1), 2.0), t.full((3,), 0.5)),
    lambda t: t._sample_dirichlet(t.tensor(2.0)),
])
def test_edge_shapes_and_errors_as_torch(call):
    import warnings

    out = []
    for lib in (minitorch, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = call(lib)
            out.append(("ok", tuple(r.shape), str(r.dtype).split(".")[-1], r.numpy().tolist()))
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1]


@needs_torch
def test_kl_dirichlet_and_chi2_as_torch():
    from helpers import same_as_torch

    a = np.array([[0.3, 1.0, 4.0], [2.0, 2.0, 2.0]])
    b = np.array([[1.0, 1.5, 0.5], [0.7, 3.0, 1.2]])
    same_as_torch(lambda lib, x, y: lib.distributions.kl_divergence(lib.distributions.Dirichlet(x),
                                                                    lib.distributions.Dirichlet(y)), [a, b],
                  atol=1e-10, rtol=1e-9)
    same_as_torch(lambda lib, x, y: lib.distributions.kl_divergence(lib.distributions.Chi2(x),
                                                                    lib.distributions.Chi2(y)), [a[0], b[0]],
                  atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gamma_family_refuses_low_precision_on_the_cpu_as_pytorch(dtype):
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        x = lib.ones(3, dtype=getattr(lib, dtype))
        calls = (lambda: lib._standard_gamma(x), lambda: lib._sample_dirichlet(x),
                 lambda: lib._standard_gamma_grad(x, x), lambda: lib._dirichlet_grad(x, x, x))
        for call in calls:
            with pytest.raises(NotImplementedError, match="not implemented for"):
                call()
