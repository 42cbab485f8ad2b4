"""binomial (the op) and distributions.Binomial against PyTorch: after the same seed the CPU draws
are PyTorch's bit for bit (ATen's sample_binomial: inversion below count * p = 10, BTRS from
there, on the generator's uniform doubles), and the generator is left where PyTorch leaves it;
PyTorch's dtypes, broadcasting, errors and gradient (none: a NotImplemented node)."""
import numpy as np
import pytest

import minitorch
from helpers import torch

needs_torch = pytest.mark.skipif(torch is None, reason="needs PyTorch")

# counts and probabilities across sample_binomial's branches: inversion and BTRS, on p and on
# 1 - p, p at and beyond the edges, counts that are no integers, 0 and below, huge and infinite
COUNTS = np.array([0.0, 1.0, 2.5, 7.0, 19.0, 20.0, 40.0, 100.5, 1e3, 1e6, 3e9, -3.0, np.inf])
PROBS = np.array([0.0, 1e-30, 0.02, 0.1, 0.3, 0.5, 0.5000001, 0.7, 0.93, 1.0, 1.5, -0.5, np.nan])


def same_draws(make, seed):
    got = []
    for lib in (minitorch, torch):
        lib.manual_seed(seed)
        r = make(lib)
        got.append((r, lib.rand(4)))
    (a, an), (b, bn) = got
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype)[-7:] == str(b.dtype)[-7:]
    assert a.is_contiguous()
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(an.numpy(), bn.numpy())  # the stream is left as PyTorch's


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", [0, 1, 7, 123, 2024])
def test_binomial_is_torchs_stream(dtype, seed):
    n, p = np.meshgrid(COUNTS, PROBS, indexing="ij")
    n, p = n.astype(dtype), p.astype(dtype)
    same_draws(lambda lib: lib.binomial(lib.tensor(n), lib.tensor(p)), seed)


@needs_torch
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("shape", [(1000,), (30, 40), (0, 3)])
def test_binomial_random_parameters(seed, shape):
    rng = np.random.default_rng(seed)
    n = np.floor(rng.exponential(60.0, shape)).astype(np.float32)
    p = rng.uniform(0, 1, shape).astype(np.float32)
    same_draws(lambda lib: lib.binomial(lib.tensor(n), lib.tensor(p)), seed)


@needs_torch
@pytest.mark.parametrize("layout", ["broadcast", "count_broadcast", "transposed", "expanded", "scalar"])
def test_binomial_layouts(layout):
    base_n = np.array([[5.0, 40.0, 300.0], [12.0, 1.0, 77.0]])
    base_p = np.array([[0.2, 0.5, 0.9], [0.6, 0.4, 0.05]])

    def make(lib):
        n, p = lib.tensor(base_n), lib.tensor(base_p)
        if layout == "broadcast":
            return lib.binomial(n, p[:1])
        if layout == "count_broadcast":  # PyTorch resizes count's shape to the broadcast one
            return lib.binomial(n[:1], p)
        if layout == "transposed":
            return lib.binomial(n.t(), p.t())
        if layout == "expanded":
            return lib.binomial(n[:1].expand(4, 3), p[1:].expand(4, 3))
        return lib.binomial(lib.tensor(50.0), lib.tensor(0.3))

    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's warning on resizing its output
        same_draws(make, 5)


@needs_torch
def test_generator_argument():
    n, p = np.full(200, 60.0), np.full(200, 0.35)
    draws = []
    for lib in (minitorch, torch):
        g = lib.Generator().manual_seed(11)
        draws.append(lib.binomial(lib.tensor(n), lib.tensor(p), generator=g).numpy())
    np.testing.assert_array_equal(draws[0], draws[1])


@needs_torch
@pytest.mark.parametrize("seed", [0, 3])
def test_distribution_sample_is_torchs(seed):
    def make(lib):
        d = lib.distributions
        a = d.Binomial(lib.tensor([5.0, 40.0, 1000.0]), lib.tensor([0.3, 0.6, 0.5])).sample((20,))
        b = d.Binomial(10, logits=lib.tensor([-1.0, 0.0, 2.0])).sample((3,))
        return lib.cat([a.flatten(), b.flatten()])

    same_draws(make, seed)


def test_binomial_moments():
    minitorch.manual_seed(0)
    n = minitorch.tensor([8.0, 30.0, 200.0, 5000.0], dtype=minitorch.float64)
    p = minitorch.tensor([0.3, 0.8, 0.45, 0.02], dtype=minitorch.float64)
    draws = minitorch.binomial(n.expand(20000, 4), p.expand(20000, 4)).numpy()
    mean, var = n.numpy() * p.numpy(), n.numpy() * p.numpy() * (1 - p.numpy())
    assert np.all(draws == np.floor(draws)) and np.all((draws >= 0) & (draws <= n.numpy()))
    np.testing.assert_allclose(draws.mean(0), mean, rtol=0.02)
    np.testing.assert_allclose(draws.var(0), var, rtol=0.05)


def test_nan_count_is_nan():
    # PyTorch's inversion never ends on a NaN count with p in (0, 1); here it is NaN
    r = minitorch.binomial(minitorch.tensor([float("nan")] * 2), minitorch.tensor([0.3, 0.7]))
    assert np.isnan(r.numpy()).all()


def _outcome(fn, lib):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return type(e).__name__, str(e)
    return "ok", tuple(r.shape)


@needs_torch
@pytest.mark.parametrize("fn", [
    lambda lib: lib.binomial(lib.tensor([3]), lib.tensor([0.5])),
    lambda lib: lib.binomial(lib.tensor([3.0]), lib.tensor([1])),
    lambda lib: lib.binomial(lib.tensor([3.0]), lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.binomial(lib.tensor([3.0], dtype=lib.float16), lib.tensor([0.5], dtype=lib.float16)),
    lambda lib: lib.binomial(lib.tensor([3.0], dtype=lib.bfloat16), lib.tensor([0.5])),
    lambda lib: lib.binomial(lib.tensor([3.0], dtype=lib.complex64), lib.tensor([0.5])),
    lambda lib: lib.binomial(lib.ones(2, 3), lib.ones(4, 3)),
    lambda lib: lib.binomial(3.0, lib.tensor([0.5])),
    lambda lib: lib.binomial(lib.tensor([3.0])),
])
def test_errors_as_torch(fn):
    assert _outcome(fn, minitorch) == _outcome(fn, torch)


@needs_torch
def test_gradient_as_torch():
    outs = []
    for lib in (minitorch, torch):
        n = lib.tensor([10.0, 20.0], requires_grad=True)
        r = lib.binomial(n, lib.tensor([0.5, 0.5]))
        assert r.requires_grad and type(r.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError) as e:
            r.sum().backward()
        outs.append(str(e.value))
    assert outs[0] == outs[1]
