"""Window functions: the top-level *_window functions and minitorch.signal.windows against PyTorch
and SciPy (values in float32 and float64, periodic/symmetric, lengths 0, 1, 2 and more, every
parameter), their dtypes, requires_grad, and errors."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy

LENGTHS = [0, 1, 2, 3, 8, 33]
TOP = {
    "hann_window": [{}],
    "hamming_window": [{}, {"alpha": 0.5, "beta": 0.5}, {"alpha": 0.6}],
    "blackman_window": [{}],
    "bartlett_window": [{}],
    "kaiser_window": [{}, {"beta": 0.0}, {"beta": 5.5}],
}
SIGNAL = {
    "cosine": [{}],
    "exponential": [{}, {"tau": 2.5}],
    "gaussian": [{}, {"std": 0.3}, {"std": 4.0}],
    "general_cosine": [{"a": [0.46, 0.23, 0.31]}, {"a": (1.0,)}],
    "general_hamming": [{}, {"alpha": 0.7}],
    "hann": [{}],
    "hamming": [{}],
    "blackman": [{}],
    "bartlett": [{}],
    "kaiser": [{}, {"beta": 0.5}],
    "nuttall": [{}],
}
DTYPES = {"float32": 1e-6, "float64": 1e-12}
SCIPY_NEEDS = {"gaussian": {"std": 1.0}, "general_hamming": {"alpha": 0.54}, "kaiser": {"beta": 12.0}}  # torch's defaults


@pytest.mark.parametrize("name", sorted(TOP))
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_top_level_windows_as_torch(name, n, periodic, dtype):
    torch = pytest.importorskip("torch")
    for kwargs in TOP[name]:
        got = getattr(minitorch, name)(n, periodic, dtype=getattr(minitorch, dtype), **kwargs)
        want = getattr(torch, name)(n, periodic, dtype=getattr(torch, dtype), **kwargs)
        assert tuple(got.shape) == (n,) and got.dtype == getattr(minitorch, dtype)
        np.testing.assert_allclose(as_numpy(got), want.numpy(), atol=DTYPES[dtype], rtol=DTYPES[dtype])


@pytest.mark.parametrize("name", sorted(SIGNAL))
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_signal_windows_as_torch_and_scipy(name, n, sym, dtype):
    torch = pytest.importorskip("torch")
    scipy_windows = pytest.importorskip("scipy.signal.windows")
    for kwargs in SIGNAL[name]:
        got = getattr(minitorch.signal.windows, name)(n, sym=sym, dtype=getattr(minitorch, dtype), **kwargs)
        want = getattr(torch.signal.windows, name)(n, sym=sym, dtype=getattr(torch, dtype), **kwargs)
        assert tuple(got.shape) == (n,) and got.dtype == getattr(minitorch, dtype)
        np.testing.assert_allclose(as_numpy(got), want.numpy(), atol=DTYPES[dtype], rtol=DTYPES[dtype])
        ref = getattr(scipy_windows, name)(n, **{**SCIPY_NEEDS.get(name, {}), **kwargs}, sym=sym)
        np.testing.assert_allclose(as_numpy(got), ref, atol=10 * DTYPES[dtype], rtol=10 * DTYPES[dtype])


def test_window_defaults_and_grad():
    minitorch.set_default_dtype(minitorch.float64)
    try:
        assert minitorch.hann_window(4).dtype == minitorch.float64
        assert minitorch.signal.windows.gaussian(4).dtype == minitorch.float64
    finally:
        minitorch.set_default_dtype(minitorch.float32)
    assert minitorch.hann_window(5).dtype == minitorch.float32
    for w in (minitorch.kaiser_window(5, requires_grad=True), minitorch.signal.windows.nuttall(5, requires_grad=True),
              minitorch.bartlett_window(1, requires_grad=True)):
        assert w.requires_grad and w.is_leaf
    center = minitorch.signal.windows.exponential(6, center=1.0, sym=False)
    np.testing.assert_allclose(as_numpy(center), np.exp(-np.abs(np.arange(6) - 1.0)), rtol=1e-6)


@pytest.mark.parametrize("call, exc, words", [
    (lambda m: m.hann_window(-1), RuntimeError, "hann_window requires non-negative window_length, got window_length=-1"),
    (lambda m: m.kaiser_window(4, dtype=m.int64), RuntimeError, "kaiser_window expects floating point dtypes"),
    (lambda m: m.signal.windows.hann(-1), ValueError, "general_cosine requires non-negative window length, got M=-1"),
    (lambda m: m.signal.windows.cosine(3, dtype=m.int64), ValueError, "cosine expects float32 or float64 dtypes"),
    (lambda m: m.signal.windows.exponential(5, center=1.0), ValueError, "Center must be None for symmetric windows"),
    (lambda m: m.signal.windows.exponential(5, tau=0), ValueError, "Tau must be positive, got: 0 instead."),
    (lambda m: m.signal.windows.gaussian(5, std=-1), ValueError, "Standard deviation must be positive, got: -1"),
    (lambda m: m.signal.windows.kaiser(5, beta=-1), ValueError, "beta must be non-negative, got: -1 instead."),
    (lambda m: m.signal.windows.general_cosine(5, a=3), TypeError, "Coefficients must be a list/tuple"),
    (lambda m: m.signal.windows.general_cosine(5, a=[]), ValueError, "Coefficients cannot be empty"),
])
def test_window_errors_as_torch(call, exc, words):
    with pytest.raises(exc, match=words.replace("(", r"\(").replace(")", r"\)")):
        call(minitorch)
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(exc, match=words.replace("(", r"\(").replace(")", r"\)")):
        call(torch)


NUMPY_WINDOWS = {
    "hann_window": lambda n: np.hanning(n),
    "hamming_window": lambda n: np.hamming(n),
    "blackman_window": lambda n: np.blackman(n),
    "bartlett_window": lambda n: np.bartlett(n),
    "kaiser_window": lambda n: np.kaiser(n, 12.0),
}


@pytest.mark.parametrize("name", sorted(NUMPY_WINDOWS))
@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("periodic", [True, False])
def test_top_level_windows_as_numpy(name, n, periodic):
    """NumPy's windows are symmetric; a periodic one is the first n points of n + 1 (no torch needed)."""
    got = getattr(minitorch, name)(n, periodic, dtype=minitorch.float64)
    want = NUMPY_WINDOWS[name](n + 1)[:n] if periodic and n > 1 else NUMPY_WINDOWS[name](n)
    np.testing.assert_allclose(as_numpy(got), want, atol=1e-12)
    sym = getattr(minitorch.signal.windows, name.replace("_window", ""))(n, sym=not periodic, dtype=minitorch.float64)
    np.testing.assert_allclose(as_numpy(sym), want, atol=1e-12)
