"""The CPU FFT kernel (csrc/cpu/fft.c, cpu/fft_impl.h, cpu/fft_long_impl.h) on each of its paths:
blocks of lines through radix-4/2/odd Stockham stages (lengths with primes up to 53), Bluestein's
convolution (larger primes), the four-step split of long lines (and Bluestein's over it), r2c and
c2r through the half-length transform (even n) or the full one (odd n), every dim of a
multi-dim transform, strided inputs, the plan cache and the threads.

float32 and complex64 transforms compute in float, as PyTorch's pocketfft does: each result is
held to PyTorch's own error against NumPy's float64 transform, |ours - ref| <= 2 |torch - ref|
plus one float32 ulp of the largest value (the result's own rounding). float64 results are
compared with NumPy directly."""
import numpy as np
import pytest

import minitorch
from tests.helpers import as_numpy, to_layout, torch_layout

torch = pytest.importorskip("torch")

NORMS = (None, "ortho", "forward")
# primes, powers of two, 1, odd and mixed lengths; 97 and 127 go through Bluestein
SIZES = (1, 2, 3, 4, 5, 7, 8, 11, 12, 16, 31, 49, 60, 97, 100, 121, 127, 128, 243, 1000, 1024, 4096)
# four-step (2^15; 3^10, odd), Bluestein over four-step (65537 is prime), a split with a prime part
LONG = (32768, 59049, 65537, 2 * 40009)


def _np(t):
    return as_numpy(t.resolve_conj() if hasattr(t, "resolve_conj") else t)


def _within_torch_error(got, want, ref, what):
    got, want, ref = (np.asarray(a, dtype=np.complex128) for a in (got, want, ref))
    assert got.shape == ref.shape, what
    ours = np.max(np.abs(got - ref), initial=0.0)
    theirs = np.max(np.abs(want - ref), initial=0.0)
    tiny = np.finfo(np.float32).eps * np.max(np.abs(ref), initial=0.0)
    assert ours <= 2 * theirs + tiny, f"{what}: max error {ours:.3g}, PyTorch's {theirs:.3g}"


def _signal(shape, complex_, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(np.complex64 if complex_ else np.float32)


def _compare(name, a, layout="contiguous", **kw):
    """minitorch.fft.<name> and torch.fft.<name> on a (float32 or complex64), against NumPy's
    float64 transform of the same values."""
    got = getattr(minitorch.fft, name)(to_layout(a, layout), **kw)
    want = getattr(torch.fft, name)(torch_layout(torch, a, layout), **kw)
    axes = "axes" if name.endswith(("n", "2")) else "axis"
    npkw = {(axes if k == "dim" else k): v for k, v in kw.items()}
    wide = a.astype(np.complex128 if np.iscomplexobj(a) else np.float64)
    ref = getattr(np.fft, name)(wide, **npkw)
    assert got.dtype == {"float32": minitorch.float32, "complex64": minitorch.complex64}[str(want.dtype)[6:]]
    _within_torch_error(_np(got), want.resolve_conj().numpy(), ref, f"{name} {a.shape} {layout} {kw}")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "ihfft", "irfft", "hfft"])
def test_1d_float32_within_torch_error(n, name):
    lines = max(2, 4096 // n)  # the largest error over many values, not a few
    if name in ("irfft", "hfft"):
        a = _signal((lines, n // 2 + 1), True, n)
        for norm in NORMS:
            _compare(name, a, n=n, norm=norm)
        return
    a = _signal((lines, n), name in ("fft", "ifft"), n)
    for norm in NORMS:
        _compare(name, a, norm=norm)


@pytest.mark.parametrize("n", [5, 16, 33])
def test_n_pads_and_truncates_float32(n):
    a = _signal((40, n), False, n)
    c = _signal((40, n), True, n + 1)
    for m in (1, n - 2, n + 3, 2 * n):
        _compare("rfft", a, n=m)
        _compare("fft", c, n=m, norm="ortho")
        _compare("irfft", c, n=m)
        _compare("hfft", c, n=m, norm="forward")


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("shape, dim", [((6, 5, 8), (0, 2)), ((4, 7, 9), (1, 0)), ((3, 16, 17), (-1, -2, 0)),
                                        ((64, 64), (-2, -1)), ((2, 97, 6), (1,)), ((512, 2), (0,))])
def test_nd_dims_float32_within_torch_error(layout, shape, dim):
    a = _signal(shape, False, len(shape))
    c = _signal(shape, True, sum(shape))
    for norm in NORMS:
        _compare("rfftn", a, layout, dim=dim, norm=norm)
        _compare("fftn", c, layout, dim=dim, norm=norm)
        _compare("ifftn", c, layout, dim=dim, norm=norm)
    s = [shape[d] for d in dim]
    half = np.fft.rfftn(a.astype(np.float64), axes=dim).astype(np.complex64)
    _compare("irfftn", half, layout, s=s, dim=dim)
    _compare("irfftn", half, layout, dim=dim, norm="ortho")


@pytest.mark.parametrize("n", LONG)
def test_long_lines(n):
    """One and two long lines, along the last dim and along a strided first dim."""
    a = _signal((2, n), False, n)
    _compare("rfft", a)
    _compare("fft", a[:1])
    _compare("irfft", _signal((1, n // 2 + 1), True, 3), n=n)
    _compare("ifft", _signal((n, 2), True, 4), dim=0)
    _compare("rfft", np.ascontiguousarray(a.T), dim=0, norm="ortho")
    x = np.random.default_rng(n).standard_normal((2, n))
    for name, ref in (("fft", np.fft.fft), ("rfft", np.fft.rfft), ("ihfft", np.fft.ihfft)):
        got = _np(getattr(minitorch.fft, name)(minitorch.tensor(x)))
        np.testing.assert_allclose(got, ref(x), atol=1e-12 * np.sqrt(n) * np.log2(n), rtol=0, err_msg=name)
    h = np.fft.rfft(x)
    np.testing.assert_allclose(_np(minitorch.fft.irfft(minitorch.tensor(h), n=n)), x, atol=1e-13)


def test_exact_zeros_and_round_trips():
    """Twiddles exact at multiples of pi/4, so a constant's transform is exactly 0 off bin 0."""
    assert minitorch.fft.rfft(minitorch.ones(4)).tolist() == [4, 0, 0]
    for n in (4, 8, 16, 1024):
        got = _np(minitorch.fft.fft(minitorch.ones(n, dtype=minitorch.float64)))
        assert got[0] == n and np.all(got[1:] == 0), n
    got = _np(minitorch.fft.irfft(minitorch.tensor(np.array([8, 0, 0, 0, 0], dtype=np.complex64))))
    assert np.all(got == 1)


def test_nan_and_inf_like_torch():
    """A NaN spoils its own line and no other; an infinite sample gives PyTorch's pattern of
    infinities for complex inputs and odd lengths."""
    x = np.zeros((3, 12), np.float32)
    x[1, 5] = np.nan
    for name in ("fft", "rfft"):
        got = _np(getattr(minitorch.fft, name)(minitorch.tensor(x)))
        assert np.isnan(got[1]).all() and not np.isnan(got[[0, 2]]).any(), name
    for a in ([np.inf, 0, 0, 0], [0, np.inf, 0, 0, 0], [1, 2, np.inf, 3, 4, 5, 6]):
        for arr in (np.array(a, np.float32), np.array(a, np.complex64)):
            got = _np(minitorch.fft.fft(minitorch.tensor(arr)))
            want = torch.fft.fft(torch.tensor(arr)).numpy()
            assert np.array_equal(np.isnan(got), np.isnan(want)), (a, arr.dtype)
            assert np.array_equal(np.isinf(got), np.isinf(want)), (a, arr.dtype)


def test_threads_give_the_same_bits():
    """Lines are split among the threads, never a line: the result does not depend on their count."""
    saved = minitorch.get_num_threads()
    a = minitorch.tensor(_signal((256, 384), False, 7))
    v = minitorch.tensor(_signal((1 << 16,), True, 8))
    try:
        minitorch.set_num_threads(1)
        one = [_np(minitorch.fft.rfft2(a)), _np(minitorch.fft.fft(v)), _np(minitorch.fft.irfft2(minitorch.fft.rfft2(a)))]
        minitorch.set_num_threads(2)
        two = [_np(minitorch.fft.rfft2(a)), _np(minitorch.fft.fft(v)), _np(minitorch.fft.irfft2(minitorch.fft.rfft2(a)))]
    finally:
        minitorch.set_num_threads(saved)
    for x, y in zip(one, two):
        assert np.array_equal(x, y)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [16, 62, 63, 64, 66])
def test_last_dim_blocks_of_many_lines(threads, n):
    """Many short lines along the last dim (a Fourier Neural Operator's activations): full blocks
    of lines go through the in-register tile transposes (whole tiles and a remainder of
    elements), the last block of a row is partial, and each block asks for the next one's
    memory; rfft, irfft, fft, ifft and hfft, 1-D and 2-D, at one and two threads."""
    saved = minitorch.get_num_threads()
    a = _signal((3, 7, 5, n), False, n)
    c = _signal((3, 7, 5, n), True, n + 1)
    half = _signal((3, 7, 5, n // 2 + 1), True, n + 2)
    try:
        minitorch.set_num_threads(threads)
        for norm in NORMS:
            _compare("rfft", a, norm=norm)
            _compare("fft", c, norm=norm)
            _compare("irfft", half, n=n, norm=norm)
        _compare("ifft", c, "transposed")
        _compare("hfft", half, n=n)
        _compare("rfft2", a, "sliced")
        _compare("irfft2", half, s=(5, n))
        x = np.random.default_rng(n).standard_normal((3, 7, 5, n))
        z = x + 1j * np.random.default_rng(n + 1).standard_normal((3, 7, 5, n))
        tol = 1e-13 * np.log2(n)
        np.testing.assert_allclose(_np(minitorch.fft.rfft(minitorch.tensor(x))), np.fft.rfft(x), atol=tol, rtol=0)
        np.testing.assert_allclose(_np(minitorch.fft.ifft(minitorch.tensor(z), norm="ortho")),
                                   np.fft.ifft(z, norm="ortho"), atol=tol, rtol=0)
        np.testing.assert_allclose(_np(minitorch.fft.irfft(minitorch.tensor(np.fft.rfft(x)), n=n)), x, atol=tol, rtol=0)
    finally:
        minitorch.set_num_threads(saved)


def test_plan_cache_evicts_and_reuses():
    """More lengths than the cache keeps (16), twice over, each still right."""
    rng = np.random.default_rng(3)
    lengths = list(range(40, 64))
    for n in lengths + lengths[::-1]:
        x = rng.standard_normal((3, n))
        np.testing.assert_allclose(_np(minitorch.fft.fft(minitorch.tensor(x))), np.fft.fft(x), atol=1e-12)
        np.testing.assert_allclose(_np(minitorch.fft.rfft(minitorch.tensor(x.astype(np.float32)))),
                                   np.fft.rfft(x.astype(np.float32)), atol=2e-5)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("lines, n", [(32768, 64), (32771, 72), (33000, 60), (16384, 128)])
def test_large_results_stream_past_the_caches(threads, lines, n):
    """A result of 16 MiB or more, written by an out-of-place last pass, goes by non-temporal
    stores (AVX-512, whole tiles of 64-byte aligned lines): fft/ifft with each norm, complex64
    and complex128, rfft with 64 kept entries a line, irfft; lines of 60 (not aligned) and a
    partial last block take the cached stores beside them; fft2's in-place last pass does not
    stream. Each against PyTorch's error and NumPy's float64 transform."""
    saved = minitorch.get_num_threads()
    c = _signal((lines, n), True, n)
    try:
        minitorch.set_num_threads(threads)
        for norm in NORMS:
            _compare("fft", c, norm=norm)
        _compare("ifft", c, "sliced", norm="ortho")
        _compare("fft2", c[:2048])
        _compare("rfft", _signal((lines, 2 * n - 2), False, n + 1))
        _compare("irfft", _signal((2 * lines, n // 2 + 1), True, n + 2), n=n, norm="forward")
        z = c[: lines // 2].astype(np.complex128)
        np.testing.assert_allclose(_np(minitorch.fft.fft(minitorch.tensor(z))), np.fft.fft(z),
                                   atol=1e-13 * np.log2(n) * np.sqrt(n), rtol=0)
    finally:
        minitorch.set_num_threads(saved)
