"""The CPU FFT's blocks of lines (csrc/cpu/fft_impl.h) where their results are large: a result of
16 MiB or more streams past the caches, and lines along the last dim that are not 64-byte
aligned one by one (63 complex entries: 504 bytes) are transposed into a buffer in L1 and
streamed on from there as one run (F(staged)); a line whose length is not a multiple of L / 2
entries ends with one more tile over its last L / 2 (some written twice). The odd radices' sine
and cosine tables (F(bfp)) are checked on 3, 5, 7, 11 and larger primes; the few lines left
after a c2c pass's blocks, side by side in 32-byte vectors (F(narrow)), on column passes. Lengths on either side
of the buffer's limit (256 entries, complex64 and complex128), odd, prime and mixed; every
norm; n= padding and cropping; lines that lie apart in the input; batched dims; one and two
threads. complex64 is held to PyTorch's own error against NumPy's float64 transform
(test_fft_paths' rule), complex128 to NumPy's pocketfft."""
import numpy as np
import pytest

import minitorch
from tests.ops.test_fft_paths import NORMS, _compare, _np, _signal

pytest.importorskip("torch")

BIG = 17 << 20  # bytes of a result that streams (FFT_STREAM_BYTES is 16 MiB)


def _lines(n, entry_bytes):
    """How many lines of n entries make a result past BIG."""
    return BIG // (n * entry_bytes) + 3


def _threads(k):
    saved = minitorch.get_num_threads()
    minitorch.set_num_threads(k)
    return saved


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n", [9, 63, 255, 300])
def test_large_complex64_within_torch_error(n, threads):
    """63 and 255 (3 5 17) go through the buffer; 9 too, with a tile over its last 8; 300 is past
    the buffer's limit: streamed where aligned, else stored in place (its tail tile too)."""
    saved = _threads(threads)
    try:
        c = _signal((_lines(n, 8), n), True, n)
        _compare("fft", c)
        _compare("ifft", c, norm="ortho")
    finally:
        minitorch.set_num_threads(saved)


@pytest.mark.parametrize("norm", NORMS)
def test_large_irfft_126(norm):
    """irfft of 64 bins to 126 reals (a Fourier neural operator's (20, 32, 64, 64) case): the
    complex transform of 63 pairs, its result staged; n= cropping (70 bins) and padding (40),
    a batched input whose lines lie apart."""
    lines = _lines(126, 4)
    h = _signal((lines, 64), True, 1)
    _compare("irfft", h, norm=norm)
    _compare("irfft", _signal((lines, 70), True, 2), n=126, norm=norm)
    _compare("irfft", _signal((lines, 40), True, 3), n=126, norm=norm)
    apart = _signal((2, lines // 2 + 1, 2, 64), True, 4)[:, :, 0]
    _compare("irfft", apart, norm=norm)
    _compare("rfft", _signal((_lines(64, 8), 126), False, 5), norm=norm)


@pytest.mark.parametrize("n", [11, 63, 125, 257])
def test_large_complex128_like_numpy(n):
    """complex128's blocks of 8 lines: a tile is 4 entries; 257 (a prime: Bluestein's) is past
    the buffer's limit."""
    rng = np.random.default_rng(n)
    lines = _lines(n, 16)
    z = rng.standard_normal((lines, n)) + 1j * rng.standard_normal((lines, n))
    tol = 1e-15 * np.sqrt(n) * 8
    for norm in NORMS:
        for name in ("fft", "ifft"):
            got = _np(getattr(minitorch.fft, name)(minitorch.tensor(z), norm=norm))
            want = getattr(np.fft, name)(z, norm=norm)
            np.testing.assert_allclose(got, want, atol=tol * np.abs(want).max(), rtol=0, err_msg=name)
    h = np.fft.rfft(rng.standard_normal((_lines(2 * n, 8), 2 * n)))
    got = _np(minitorch.fft.irfft(minitorch.tensor(h), n=2 * n))
    want = np.fft.irfft(h, n=2 * n)
    np.testing.assert_allclose(got, want, atol=tol * np.abs(want).max(), rtol=0)


@pytest.mark.parametrize("n", [3, 5, 7, 11, 13, 15, 21, 35, 45, 49, 53, 77, 105, 143])
def test_odd_radices_small(n):
    """Each odd radix of the stages (up to 53; 13 and up by the generic butterfly), alone and
    mixed, in cache: c2c, r2c and c2r of 2n, complex64 against PyTorch's error."""
    c = _signal((37, 3, n), True, n)
    for norm in NORMS:
        _compare("fft", c, norm=norm)
    _compare("ifft", c)
    _compare("fft2", c, norm="forward")
    a = _signal((37, 2 * n), False, n + 1)
    _compare("rfft", a)
    _compare("irfft", _signal((37, n + 1), True, n + 2), n=2 * n, norm="ortho")


@pytest.mark.parametrize("n", [2, 4, 8, 64, 512, 1024, 2048])
def test_columns_left_over_complex64(n):
    """A c2c pass across rows (dim 0): the columns past the last block of 16 go side by side in
    32-byte vectors when at most 4 are left and n is a power of two up to 1024 (F(narrow)), else
    in a block; 1 to 5 left, and rfft2 / irfft2 of n x n (n / 2 + 1 columns: one left over)."""
    for cols in (1, 2, 3, 4, 5, 17, 20, 21):
        c = _signal((n, cols), True, n + cols)
        _compare("fft", c, dim=0)
        _compare("ifft", c, dim=0, norm="ortho")
        _compare("fft", c, layout="sliced", dim=0, norm="forward")
    a = _signal((3, n, n), False, n)
    _compare("rfft2", a)
    _compare("irfft2", _signal((n, n // 2 + 1), True, n + 1), s=(n, n), norm="ortho")


@pytest.mark.parametrize("threads", [1, 2])
def test_columns_left_over_complex128_like_numpy(threads):
    """complex128's 32-byte vectors hold 2 entries: 1 or 2 columns left over go side by side."""
    saved = _threads(threads)
    try:
        rng = np.random.default_rng(threads)
        for n in (2, 16, 256, 1024):
            for cols in (1, 2, 3, 9, 10):
                z = rng.standard_normal((n, cols)) + 1j * rng.standard_normal((n, cols))
                tol = 1e-15 * np.sqrt(n) * 8 * np.abs(z).max() * np.sqrt(n)
                for norm in NORMS:
                    for name in ("fft", "ifft"):
                        got = _np(getattr(minitorch.fft, name)(minitorch.tensor(z), dim=0, norm=norm))
                        want = getattr(np.fft, name)(z, axis=0, norm=norm)
                        np.testing.assert_allclose(got, want, atol=tol, rtol=0, err_msg=(name, n, cols))
    finally:
        minitorch.set_num_threads(saved)
