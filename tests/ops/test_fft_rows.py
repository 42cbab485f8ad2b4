"""The CPU FFT's short-line path (csrc/cpu/fft_row_impl.h, fft_row_vec.h): contiguous lines of a
power of two up to 1024 entries, each transformed where it lies in vectors of its own (re, im)
pairs; r2c and c2r of even n as the complex transform of n / 2 pairs. The lengths cross the
path's edges (below V^2 entries for the vector widths, past 1024: the blocks of lines), the
lines start unaligned or lie apart (a sliced batch dim), every norm, one and two threads,
complex64 held to PyTorch's own error against NumPy's float64 transform (test_fft_paths'
rule), complex128 against NumPy's pocketfft."""
import numpy as np
import pytest

import minitorch
from tests.ops.test_fft_paths import NORMS, _compare, _np, _signal

pytest.importorskip("torch")

POW2 = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048)


def _layouts(a):
    """a, its lines each starting one element on (unaligned), every other line of twice as many."""
    wide = np.zeros(a.shape[:-1] + (a.shape[-1] + 1,), a.dtype)
    wide[..., 1:] = a
    apart = np.zeros((2 * a.shape[0],) + a.shape[1:], a.dtype)
    apart[::2] = a
    return {"contiguous": a, "unaligned": wide[..., 1:], "apart": apart[::2]}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", POW2)
def test_rows_float32_within_torch_error(n, threads):
    saved = minitorch.get_num_threads()
    lines = max(3, 2048 // n)
    try:
        minitorch.set_num_threads(threads)
        for layout, c in _layouts(_signal((lines, 2, n), True, n)).items():
            for norm in NORMS:
                _compare("fft", c, norm=norm)
                _compare("ifft", c, norm=norm)
            _compare("fft2", c, norm="ortho")
        for layout, a in _layouts(_signal((lines, 2, n), False, n + 1)).items():
            for norm in NORMS:
                _compare("rfft", a, norm=norm)
            _compare("ihfft", a)
            _compare("rfft2", a, norm="forward")
        for layout, h in _layouts(_signal((lines, 2, n // 2 + 1), True, n + 2)).items():
            for norm in NORMS:
                _compare("irfft", h, n=n, norm=norm)
            _compare("hfft", h, n=n)
            _compare("irfft2", h, s=(2, n))
    finally:
        minitorch.set_num_threads(saved)


@pytest.mark.parametrize("n", POW2)
def test_rows_float64_like_numpy(n):
    rng = np.random.default_rng(n)
    x = rng.standard_normal((5, 3, n))
    z = x + 1j * rng.standard_normal((5, 3, n))
    h = np.fft.rfft(rng.standard_normal((5, 3, n)))
    tol = 1e-15 * max(1, np.log2(n)) * np.sqrt(n) * 4
    for layout, zz in _layouts(z).items():
        for norm in NORMS:
            for name in ("fft", "ifft"):
                got = _np(getattr(minitorch.fft, name)(minitorch.tensor(zz), norm=norm))
                want = getattr(np.fft, name)(zz, norm=norm)
                np.testing.assert_allclose(got, want, atol=tol * np.abs(want).max(), rtol=0, err_msg=(name, layout))
    for layout, xx in _layouts(x).items():
        for norm in NORMS:
            want = np.fft.rfft(xx, norm=norm)
            got = _np(minitorch.fft.rfft(minitorch.tensor(xx), norm=norm))
            np.testing.assert_allclose(got, want, atol=tol * np.abs(want).max(), rtol=0, err_msg=("rfft", layout))
    for layout, hh in _layouts(h).items():
        for norm in NORMS:
            want = np.fft.irfft(hh, n=n, norm=norm)
            got = _np(minitorch.fft.irfft(minitorch.tensor(hh), n=n, norm=norm))
            np.testing.assert_allclose(got, want, atol=tol * np.abs(want).max(), rtol=0, err_msg=("irfft", layout))
    assert _np(minitorch.fft.fft(minitorch.tensor(z), dim=-1)).dtype == np.complex128


def test_rows_empty_and_exact():
    """No lines; and a constant line, whose transform is exactly 0 off bin 0 on this path too."""
    for n in (16, 64, 256):
        assert minitorch.fft.fft(minitorch.zeros(0, n, dtype=minitorch.complex64)).shape == (0, n)
        assert minitorch.fft.rfft(minitorch.zeros(0, 3, n)).shape == (0, 3, n // 2 + 1)
        assert minitorch.fft.irfft(minitorch.zeros(0, n // 2 + 1, dtype=minitorch.complex64)).shape == (0, n)
        for dtype in (minitorch.float32, minitorch.float64):
            got = _np(minitorch.fft.rfft(minitorch.ones(2, n, dtype=dtype)))
            assert (got[:, 0] == n).all() and (got[:, 1:] == 0).all()
            got = _np(minitorch.fft.fft(minitorch.ones(2, n, dtype=dtype)))
            assert (got[:, 0] == n).all() and (got[:, 1:] == 0).all()
