"""The CPU kernels of issue 21's reductions, gather and casts, at 1 and 2 threads (the `threads`
fixture), against NumPy in float64 and PyTorch, values and gradients: the float cascade of sum and
mean (its error against a float64 reference no worse than PyTorch's), amax/amin by lanes with a
probe for NaN, prod's simd product, logsumexp's vectorised exp, gather's unrolled take loop, and
the casts built for AVX-512 and AVX2. Lengths straddle the kernels' blocks (64 floats, 32
doubles) and tails; layouts are contiguous, transposed and sliced; NaN, infinities and empty
tensors are covered."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, check, check_grad, raises_like_torch, same_as_torch

torch = pytest.importorskip("torch")

# around the cascade's block (64 floats, 32 doubles), its whole-vector tail and its single tail
LENGTHS = (1, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 1000, 4097)
TOL = dict(atol=1e-5, rtol=1e-5)


def rng(seed=21):
    return np.random.default_rng(seed)


def max_error(got, ref):
    return float(np.max(np.abs(np.asarray(got, np.float64) - ref), initial=0.0))


def no_worse_than_torch(fn, a, ref):
    """fn(lib, tensor)'s error against the float64 reference `ref` is at most twice PyTorch's, plus
    one unit in the last place of the float32 result (the rounding of the result itself)."""
    ours = max_error(as_numpy(fn(minitorch, minitorch.from_numpy(a))), ref)
    theirs = max_error(fn(torch, torch.from_numpy(a)).double().numpy(), ref)
    ulp = float(np.max(np.spacing(np.abs(ref).astype(np.float32)), initial=0.0))
    assert ours <= 2 * theirs + ulp, f"error {ours:.3g}, PyTorch's {theirs:.3g} (ulp {ulp:.3g})"


# ---- sum and mean: the float cascade ----

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_full_sum_of_16m_is_as_accurate_as_pytorch(threads, seed):
    # standard normal: the sum is about 4000 while the terms add up to 13M in magnitude, so the
    # accumulation's error shows above the rounding of the result
    a = rng(seed).standard_normal(1 << 24).astype(np.float32)
    ref = a.astype(np.float64).sum()
    no_worse_than_torch(lambda m, x: x.sum(), a, ref)
    no_worse_than_torch(lambda m, x: x.mean(), a, ref / a.size)


@pytest.mark.parametrize("shape, dim", [((4, 1 << 21), -1), ((64, 100003), -1), ((3, 999_999), 1),
                                        ((1000, 1000), 0), ((2, 4096, 257), (0, 2))])
def test_long_rows_are_as_accurate_as_pytorch(threads, shape, dim):
    for seed in (0, 1):
        a = (rng(seed).standard_normal(shape) + 0.25).astype(np.float32)
        ref = a.astype(np.float64).sum(axis=dim)
        no_worse_than_torch(lambda m, x: x.sum(dim), a, ref)
        no_worse_than_torch(lambda m, x: x.mean(dim), a, ref / (a.size // ref.size))
        no_worse_than_torch(lambda m, x: x.nansum(dim), a, ref)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", LENGTHS)
def test_sum_mean_rows_of_every_length(threads, dtype, n):
    a = rng(n).standard_normal((5, n)).astype(dtype)
    for layout in LAYOUTS:
        check(lambda m, x: x.sum(-1), lambda x: x.sum(-1), [a], layout=layout, **TOL)
        check(lambda m, x: x.mean(1, keepdim=True), lambda x: x.mean(1, keepdims=True), [a], layout=layout,
              **TOL)
        check(lambda m, x: x.sum(), lambda x: x.sum(), [a], layout=layout, **TOL)
        check(lambda m, x: m.sum(x, 0), lambda x: x.sum(0), [a], layout=layout, **TOL)


def test_sum_of_many_short_rows_and_across_threads(threads):
    # rows shorter than a vector (each a tail alone), and a 2-D sum the threads split by rows
    a = rng().standard_normal((40000, 3)).astype(np.float32)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [a], **TOL)
    b = rng().standard_normal((300, 700)).astype(np.float32)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [b], **TOL)
    check(lambda m, x: x.mean(), lambda x: x.mean(), [b], **TOL)


def test_sum_nan_inf_and_empty(threads):
    a = rng().standard_normal((6, 200)).astype(np.float32)
    a[0, 5] = np.nan
    a[1, 199] = np.inf            # in the single-element tail
    a[2, 70] = -np.inf            # in a whole vector after the block
    a[3, 10], a[3, 150] = np.inf, -np.inf
    a[4, :] = np.float32(3e38)    # overflows float: inf, as PyTorch's float sum
    check(lambda m, x: x.sum(1), lambda x: x.astype(np.float32).sum(1, dtype=np.float32), [a], **TOL)
    check(lambda m, x: x.nansum(1), lambda x: np.nansum(x.astype(np.float32), 1, dtype=np.float32), [a], **TOL)
    check(lambda m, x: x.sum(), lambda x: np.float32(np.nan), [a])
    empty = np.zeros((3, 0), np.float32)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [empty])
    check(lambda m, x: x.mean(1), lambda x: np.full(3, np.nan), [empty])


# reduce_rows.c's float32 rows of 16 to 511: each row's vectors added into one, 16 rows' vectors
# folded together; lengths around a vector, two vectors and the bound (512: a row's cascade)
ROWS_BY_VECTORS = (16, 17, 24, 31, 32, 33, 47, 48, 50, 63, 100, 255, 256, 257, 511, 512)


@pytest.mark.parametrize("n", ROWS_BY_VECTORS)
def test_sum_mean_of_many_rows_by_vectors(threads, n):
    # 37 rows: two whole blocks of 16 rows and 5 more; the rows contiguous, and slices of wider
    # rows (row i at 7 + i * (n + 7)); each sum no less accurate than PyTorch's
    a = (rng(n).standard_normal((37, n + 7)) + 0.25).astype(np.float32)
    check(lambda m, x: x.sum(-1), lambda x: x.sum(-1), [a[:, :n].copy()], **TOL)
    check(lambda m, x: x[:, 7:].sum(1), lambda x: x[:, 7:].sum(1), [a], **TOL)
    check(lambda m, x: x[:, :n].mean(-1, keepdim=True), lambda x: x[:, :n].mean(-1, keepdims=True), [a], **TOL)
    check(lambda m, x: x.reshape(37, 1, n).sum(-1), lambda x: x.reshape(37, 1, n).sum(-1), [a[:, :n].copy()],
          **TOL)
    ref = a[:, :n].astype(np.float64).sum(-1)
    no_worse_than_torch(lambda m, x: x[:, :n].sum(-1), a, ref)
    half = a[:, :n].astype(np.float16)
    same_as_torch(lambda m, x: x.sum(-1), [half], grad=False, atol=1e-2, rtol=1e-3)
    same_as_torch(lambda m, x: x.sum(-1), [a[:, :n]], layout="transposed", **TOL)


@pytest.mark.parametrize("n", (16, 50, 100, 257))
def test_many_rows_by_vectors_nan_inf_and_empty(threads, n):
    a = rng(n).standard_normal((40, n)).astype(np.float32)
    a[0, n - 1] = np.nan          # in the last vector's lanes that count
    a[1, n - 16] = np.nan         # the last vector's first lane (counted there when n % 16)
    a[2, 0] = np.inf              # in the first vector
    a[17, 3], a[17, n - 2] = np.inf, -np.inf
    a[33, :] = np.float32(3e38)   # overflows float: inf, as PyTorch's float sum
    with np.errstate(over="ignore", invalid="ignore"):
        check(lambda m, x: x.sum(1), lambda x: x.astype(np.float32).sum(1, dtype=np.float32), [a], **TOL)
    same_as_torch(lambda m, x: x.sum(1), [a], grad=False, **TOL)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [np.zeros((0, n), np.float32)])
    check(lambda m, x: x.mean(-1), lambda x: x.mean(-1), [np.ones((3, n), np.float32)])


# the same kernel for float64 (8 doubles a vector: lengths around 8, 16 and 24) and for nansum
# (the NaN lanes cleared before the adds), both dtypes; 8-15 floats go through a tile
ROWS_BY_VECTORS_F64 = (5, 7, 8, 9, 12, 15, 16, 17, 24, 25, 50, 100, 511, 512)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", sorted(set(ROWS_BY_VECTORS + ROWS_BY_VECTORS_F64)))
def test_sum_nansum_of_many_rows_by_vectors_both_dtypes(threads, dtype, n):
    # 37 rows: whole blocks of 16 (8) rows and a partial one; contiguous rows and slices of wider
    # rows (row i at 7 + i * (n + 7)); NaN in the first and the last element, in the lane before
    # the last vector's (counted in that vector's masked lanes only when n is no multiple of the
    # vector), in every 5th element, a row of NaN only, infinities (inf - inf: nansum's NaN)
    lanes = 16 if dtype == "float32" else 8
    a = (rng(n).standard_normal((37, n + 7)) + 0.25).astype(dtype)
    b = a[:, :n].copy()
    b[0, n - 1], b[1, 0], b[2, max(n - lanes - 1, 0)] = np.nan, np.nan, np.nan
    b[3, ::5], b[4, :] = np.nan, np.nan
    b[20, n // 2], b[21, 0], b[21, n - 1] = np.inf, -np.inf, np.inf
    b[36, n - 1] = np.nan
    wide = a.copy()
    wide[:, 7:] = b
    with np.errstate(invalid="ignore"):
        for layout in ("contiguous", "transposed"):
            check(lambda m, x: x.nansum(-1), lambda x: np.nansum(x, -1), [b], layout=layout, **TOL)
            check(lambda m, x: x.sum(-1), lambda x: x.sum(-1), [a[:, :n].copy()], layout=layout, **TOL)
        check(lambda m, x: x[:, 7:].nansum(1), lambda x: np.nansum(x[:, 7:], 1), [wide], **TOL)
        check(lambda m, x: x[:, 7:].sum(1), lambda x: x[:, 7:].sum(1), [a], **TOL)
        check(lambda m, x: x[:, :n].mean(-1), lambda x: x[:, :n].mean(-1), [a], **TOL)
        check(lambda m, x: m.nanmean(x, -1), lambda x: np.nanmean(x, -1), [b[5:20]], **TOL)
        same_as_torch(lambda m, x: x.nansum(-1), [b], grad=False, **TOL)
        same_as_torch(lambda m, x: x.sum(-1), [b], grad=False, **TOL)  # NaN and inf as PyTorch's
    got = as_numpy(minitorch.from_numpy(b).nansum(-1))
    assert np.isnan(got[21]) and got[4] == 0 and np.isinf(got[20])
    # no less accurate than PyTorch against float64 (float64 rows: an ulp of float64)
    finite = np.delete(np.arange(37), [20, 21])
    for fn, src in ((lambda m, x: x.nansum(-1), b[finite]), (lambda m, x: x.sum(-1), a[finite, :n])):
        src = src.copy()
        ref = np.nansum(src.astype(np.float64), -1)
        ours = max_error(as_numpy(fn(minitorch, minitorch.from_numpy(src))), ref)
        theirs = max_error(fn(torch, torch.from_numpy(src)).double().numpy(), ref)
        assert ours <= 2 * theirs + float(np.max(np.spacing(np.abs(ref).astype(dtype)))), (ours, theirs)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nansum_rows_by_vectors_gradients(threads, dtype):
    a = rng(5).standard_normal((19, 37)).astype(dtype)
    a[2, 3], a[7, 36] = np.nan, np.nan
    for layout in LAYOUTS:
        same_as_torch(lambda m, x: x.nansum(1), [a], layout=layout, **TOL)
        same_as_torch(lambda m, x: m.nanmean(x, -1), [a], layout=layout, **TOL)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sum_mean_nansum_gradients(threads, layout):
    a = rng().standard_normal((3, 130))
    check_grad(lambda m, x: x.sum(-1), [a], layout=layout)
    check_grad(lambda m, x: x.mean(), [a], layout=layout)
    same_as_torch(lambda m, x: x.nansum(1), [a.astype(np.float32)], layout=layout, **TOL)


# ---- nansum: the cascade with NaN lanes cleared; nanmean over it ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", LENGTHS)
def test_nansum_nanmean_rows_of_every_length(threads, dtype, n):
    """NaNs in the cascade's blocks, its whole-vector tail and its single tail, and a row of
    nothing but NaN (0, and nanmean's 0 / 0)."""
    a = rng(n).standard_normal((5, n)).astype(dtype)
    a[0, ::7] = np.nan
    a[1, -1] = np.nan
    a[2, :] = np.nan
    a[3, n // 2] = np.inf
    for layout in LAYOUTS:
        check(lambda m, x: x.nansum(-1), lambda x: np.nansum(x, -1), [a], layout=layout, **TOL)
        check(lambda m, x: m.nansum(x, 0, keepdim=True), lambda x: np.nansum(x, 0, keepdims=True), [a],
              layout=layout, **TOL)
        check(lambda m, x: x.nansum(), lambda x: np.nansum(x), [a], layout=layout, **TOL)
        with warnings.catch_warnings():  # NumPy's "Mean of empty slice" for the row of NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            check(lambda m, x: m.nanmean(x, 1), lambda x: np.nanmean(x, 1), [a], layout=layout, **TOL)


def test_nansum_across_threads_and_dtypes(threads):
    """A full nansum the threads split (their partial sums folded as sums: inf + -inf in two halves
    is NaN, as PyTorch's), nansum into an integer dtype (the NaNs skipped, each term converted
    toward zero), integer and bool inputs, and empty ones."""
    a = rng().standard_normal(1 << 20).astype(np.float32)
    a[::101] = np.nan
    no_worse_than_torch(lambda m, x: x.nansum(), a, np.nansum(a.astype(np.float64)))
    b = a.copy()
    b[10], b[-10] = np.inf, -np.inf
    check(lambda m, x: x.nansum(), lambda x: np.float64(np.nan), [b])
    c = np.array([[1.5, np.nan, 2.7, -0.5], [np.nan, np.nan, 3.9, -1.9]], np.float32)
    check(lambda m, x: x.nansum(1, dtype=m.int64), lambda x: np.array([3, 2]), [c])
    check(lambda m, x: x.nansum(dtype=m.float64), lambda x: np.nansum(x), [c], **TOL)
    ints = rng().integers(-9, 9, (7, 300))
    check(lambda m, x: x.nansum(0), lambda x: x.sum(0), [ints])
    check(lambda m, x: x.nansum(), lambda x: x.sum(), [ints > 0])
    check(lambda m, x: x.nansum(1), lambda x: np.zeros(3), [np.zeros((3, 0), np.float32)])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "bool"])
@pytest.mark.parametrize("src", [np.float32, np.float64])
def test_nansum_into_integers_converts_each_element_first(threads, dtype, src):
    """nansum(x, dtype=<integer>) of floats converts each element to that dtype before adding, as
    PyTorch does: an infinity or an out-of-range value becomes that dtype's conversion of it
    (INT64_MIN for int64 on x86) and the integer sum wraps ([inf, -inf, 3.9] is 3); a sum in
    double converted once gave INT64_MIN. Long rows, so the threads split them."""
    inf, nan = np.inf, np.nan
    rows = [[1.5, inf, 2.7, nan], [-inf, 1.0, -2.5, 0.25], [inf, inf, nan, 1.0], [inf, -inf, 3.9, nan],
            [1e19, 1.0, -1e19, 7.9], [-2.5, 3e18, 3e18, 3e18], [3e9, -3e9, 300.7, -0.5], [0.5, 0, 0, 0]]
    a = np.tile(np.array(rows, src), (1, 2000))
    a[:, 4::7] = nan
    for layout in ("contiguous", "transposed"):
        same_as_torch(lambda m, x: x.nansum(1, dtype=getattr(m, dtype)), [a], layout=layout, grad=False)
        same_as_torch(lambda m, x: m.nansum(x, dtype=getattr(m, dtype)), [a], layout=layout, grad=False)
    same_as_torch(lambda m, x: x.nansum(0, dtype=getattr(m, dtype)), [a[:, :64]], grad=False)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nansum_nanmean_gradients(threads, layout):
    """NansumBackward0: the gradient is 0 where the input is NaN (NaN where an infinite gradient
    meets one, as PyTorch's product)."""
    a = rng().standard_normal((4, 130))
    a[0, 3], a[2, 129], a[3, :] = np.nan, np.nan, np.nan
    same_as_torch(lambda m, x: x.nansum(1), [a.astype(np.float32)], layout=layout, **TOL)
    same_as_torch(lambda m, x: (m.nansum(x, 0) * m.arange(130.0)).sum(), [a], layout=layout, **TOL)
    same_as_torch(lambda m, x: m.nanmean(x, 1).nansum(), [a], layout=layout, **TOL)
    x = minitorch.tensor(a, requires_grad=True)
    y = x.nansum(1)
    assert y.grad_fn.name() == "NansumBackward0"
    y.backward(minitorch.tensor([1.0, np.inf, 2.0, 3.0], dtype=minitorch.float64))
    xt = torch.tensor(a, requires_grad=True)
    xt.nansum(1).backward(torch.tensor([1.0, np.inf, 2.0, 3.0], dtype=torch.float64))
    np.testing.assert_array_equal(as_numpy(x.grad), xt.grad.numpy())


# ---- amax, amin: lanes, and the probe for NaN ----

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("n", LENGTHS)
def test_amax_amin_rows_of_every_length(threads, dtype, n):
    a = rng(n).standard_normal((4, n)) * 1000
    a = a.astype(dtype)
    for layout in LAYOUTS:
        check(lambda m, x: x.amax(-1), lambda x: x.max(-1), [a], layout=layout, atol=0, rtol=0)
        check(lambda m, x: m.amin(x, 1, True), lambda x: x.min(1, keepdims=True), [a], layout=layout, atol=0,
              rtol=0)
        check(lambda m, x: x.amax(), lambda x: x.max(), [a], layout=layout, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_extremes(threads, dtype):
    info = np.iinfo(dtype)
    a = rng().integers(-5, 5, (3, 200)).astype(dtype)
    a[0, 7], a[1, 199], a[2, 64] = info.max, info.min, info.max
    check(lambda m, x: x.amax(1), lambda x: x.max(1), [a])
    check(lambda m, x: x.amin(1), lambda x: x.min(1), [a])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_amax_amin_nan_and_inf_anywhere(threads, dtype):
    n = 150  # two blocks of floats and an overlapping final one
    for where in (0, 1, 63, 64, 70, 85, 100, 149):
        a = rng(where).standard_normal((5, n)).astype(dtype)
        a[0, where] = np.nan              # NaN wins
        a[1, where] = np.inf              # an infinity trips the probe, yet is no NaN
        a[2, where] = -np.inf
        a[3, :] = -np.inf                 # all -inf
        a[4, where], a[4, n - 1 - where] = np.nan, np.inf
        check(lambda m, x: x.amax(1), lambda x: x.max(1), [a], atol=0, rtol=0)
        check(lambda m, x: x.amin(1), lambda x: x.min(1), [a], atol=0, rtol=0)
    big = np.full((2, 100), np.finfo(dtype).max, dtype)  # the probe's sum overflows: still no NaN
    check(lambda m, x: x.amax(1), lambda x: x.max(1), [big], atol=0, rtol=0)
    check(lambda m, x: x.amin(), lambda x: x.min(), [big], atol=0, rtol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("n", (1, 15, 16, 17, 65, 1000))
def test_amax_amin_over_the_first_dim(threads, dtype, n):
    """A reduced outer dim: rows of x into the row of extrema, NaN winning, infinities kept."""
    a = rng(n).standard_normal((7, n)) * 1000
    if dtype.startswith("float"):
        a[2, ::3], a[4, 1::5], a[5, 2::7] = np.nan, np.inf, -np.inf
    a = a.astype(dtype)
    for layout in LAYOUTS:
        check(lambda m, x: x.amax(0), lambda x: x.max(0), [a], layout=layout, atol=0, rtol=0)
        check(lambda m, x: m.amin(x, 0, True), lambda x: x.min(0, keepdims=True), [a], layout=layout,
              atol=0, rtol=0)


def test_amax_across_threads_and_empty(threads):
    a = rng().standard_normal((1000, 300)).astype(np.float32)
    a[123, 45] = np.nan
    check(lambda m, x: x.amax(), lambda x: x.max(), [a], atol=0, rtol=0)
    check(lambda m, x: x.amax(1), lambda x: x.max(1), [a], atol=0, rtol=0)
    check(lambda m, x: x.amin(0), lambda x: x.min(0), [a], atol=0, rtol=0)
    raises_like_torch(lambda m, x: x.amax(1), np.zeros((3, 0), np.float32))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_amax_amin_gradients(threads, layout):
    a = rng().permutation(3 * 130).reshape(3, 130).astype(np.float64) / 7  # distinct: one max a row
    check_grad(lambda m, x: x.amax(-1), [a], layout=layout)
    check_grad(lambda m, x: x.amin(), [a], layout=layout)
    tied = np.ones((2, 70))  # ties share the gradient evenly, as PyTorch's
    same_as_torch(lambda m, x: x.amax(1), [tied], layout=layout)


# ---- prod: the simd product of a contiguous run ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_prod_rows(threads, dtype):
    for n in LENGTHS:
        a = (1 + rng(n).standard_normal((4, n)) / 20).astype(dtype)  # near 1: no overflow
        for layout in LAYOUTS:
            check(lambda m, x: x.prod(-1), lambda x: x.prod(-1), [a], layout=layout, atol=0, rtol=1e-5)
            check(lambda m, x: x.prod(), lambda x: x.prod(), [a[:, :40]], layout=layout, atol=0, rtol=1e-5)
    b = np.ones((5, 100), dtype)
    b[0, 3], b[1, 99], b[2, 50], b[3, 10], b[3, 90], b[4, 20] = np.nan, np.inf, 0, 0, np.inf, -np.inf
    check(lambda m, x: x.prod(1), lambda x: x.prod(1), [b], atol=0, rtol=0)
    check(lambda m, x: x.prod(1), lambda x: x.prod(1), [np.zeros((3, 0), dtype)])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_prod_gradients(threads, layout):
    a = 1 + rng().standard_normal((3, 70)) / 20
    check_grad(lambda m, x: x.prod(1), [a], layout=layout)
    a[1, 7] = 0  # one zero in a row: PyTorch's gradient there is the product of the others
    same_as_torch(lambda m, x: x.prod(1), [a], layout=layout, **TOL)


# ---- logsumexp: the float rows' vectorised exp ----

def _logsumexp(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.squeeze(np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m, axis)


def test_logsumexp_rows(threads):
    for n in LENGTHS:
        a = (rng(n).standard_normal((4, n)) * 30).astype(np.float32)
        for layout in LAYOUTS:
            check(lambda m, x: x.logsumexp(1), lambda x: _logsumexp(x, 1), [a], layout=layout, atol=1e-5,
                  rtol=1e-6)
    b = rng().standard_normal((5, 90)).astype(np.float32)
    b[0, 3], b[1, 89], b[2, :], b[3, 40], b[4, 0] = np.nan, np.inf, -np.inf, -np.inf, 88.0
    check(lambda m, x: x.logsumexp(1), lambda x: _logsumexp(x, 1), [b], atol=1e-5, rtol=1e-6)


@pytest.mark.parametrize("n", (1, 15, 16, 17, 65, 1000))
def test_logsumexp_over_the_first_dim(threads, n):
    """A reduced outer dim: rows of x into each column's sum of exp about its max, NaN, infinities
    and columns of -inf among them; and over every dim."""
    a = (rng(n).standard_normal((9, n)) * 30).astype(np.float32)
    a[1, ::3], a[4, 1::5], a[6, 2::7] = np.nan, np.inf, -np.inf
    a[:, 3::11] = -np.inf  # whole columns of -inf: -inf
    a[:, 4::13] = 1e30  # large magnitudes about their own max
    for layout in LAYOUTS:
        check(lambda m, x: x.logsumexp(0), lambda x: _logsumexp(x, 0), [a], layout=layout, atol=1e-5,
              rtol=1e-6)
        check(lambda m, x: m.logsumexp(x, (0, 1), True), lambda x: _logsumexp(x[None, None], (2, 3)), [a[[0, 2]]],
              layout=layout, atol=1e-5, rtol=1e-6)


@pytest.mark.parametrize("shape", [(1024, 1024), (4096, 300)])
def test_logsumexp_over_the_first_dim_is_as_accurate_as_pytorch(threads, shape):
    a = (rng(shape[1]).standard_normal(shape) * 10).astype(np.float32)
    for dim in (0, 1, (0, 1)):
        ref = _logsumexp(a.astype(np.float64), dim)
        no_worse_than_torch(lambda lib, x: lib.logsumexp(x, dim), a, ref)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_logsumexp_gradients(threads, layout):
    a = rng().standard_normal((3, 70)).astype(np.float32)
    same_as_torch(lambda m, x: x.logsumexp(-1), [a], layout=layout, **TOL)
    check_grad(lambda m, x: x.logsumexp(1), [a.astype(np.float64)], layout=layout)


# ---- gather: the unrolled take loop ----

@pytest.mark.parametrize("n", (1, 7, 8, 9, 100, 513))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_gather_rows(threads, n, layout):
    a = rng(n).standard_normal((6, n)).astype(np.float32)
    idx = rng(n + 1).integers(0, n, (6, n + 3))
    take = lambda x, i: np.take_along_axis(x, i, 1)  # noqa: E731
    check(lambda m, x, i: m.gather(x, 1, i), take, [a, idx], layout=layout)
    check(lambda m, x, i: m.gather(x, 1, i), take, [a.astype(np.float64), idx[:, :n]], layout=layout)
    check(lambda m, x, i: x.gather(0, i), lambda x, i: np.take_along_axis(x, i, 0),
          [a, rng().integers(0, 6, (4, n))], layout=layout)
    for dt in ("int64", "int32", "bool"):
        check(lambda m, x, i: m.gather(x, 1, i), take, [(a * 10).astype(dt), idx], layout=layout)


def test_gather_gradient_and_bad_index(threads):
    a = rng().standard_normal((4, 300))
    idx = rng().integers(0, 300, (4, 500))
    check_grad(lambda m, x, i: m.gather(x, 1, i), [a, idx])
    same_as_torch(lambda m, x, i: m.gather(x, 1, i), [a.astype(np.float32), idx], layout="transposed")
    bad = idx.copy()
    bad[2, 400] = 300
    raises_like_torch(lambda m, x, i: m.gather(x, 1, i), a, bad)
    bad[2, 400] = -1
    raises_like_torch(lambda m, x, i: m.gather(x, 1, i), a, bad)
    check(lambda m, x, i: m.gather(x, 1, i), lambda x, i: np.zeros((4, 0)), [a, idx[:, :0]])


# ---- casts: the loops built for AVX-512 and AVX2 ----

CASTS = ["float32", "float64", "int32", "int64", "bool", "uint8", "int8", "int16", "float16"]


@pytest.mark.parametrize("to", CASTS)
@pytest.mark.parametrize("src", ["float32", "float64", "int64", "int32"])
def test_casts_of_every_length(threads, src, to):
    for n in (1, 15, 16, 17, 63, 64, 65, 1000):
        a = rng(n).standard_normal((3, n)) * 100
        a[0, :: 3] = 0
        if to in ("uint8", "int8"):
            a = np.clip(a, 0 if to == "uint8" else -128, 127)  # in range: PyTorch and NumPy agree
        a = a.astype(src)
        for layout in LAYOUTS:
            check(lambda m, x: x.to(getattr(m, to)), lambda x: x.astype(to), [a.astype(src)], layout=layout,
                  atol=0, rtol=0)


def test_casts_of_nan_inf_and_large_values(threads):
    a = np.array([np.nan, np.inf, -np.inf, 1e300, -1e-300, 0.5, -0.0, 2.5, 3.4e38] * 30)
    check(lambda m, x: x.float(), lambda x: x.astype(np.float32), [a], atol=0, rtol=0)
    check(lambda m, x: x.float().double(), lambda x: x.astype(np.float32).astype(np.float64), [a], atol=0,
          rtol=0)
    check(lambda m, x: x.bool(), lambda x: x != 0, [a])
    big = np.array([2.0 ** 40, -2.0 ** 40, 2.0 ** 62, 1.5, -1.5, 0.0] * 20)
    check(lambda m, x: x.long(), lambda x: x.astype(np.int64), [big])
    check(lambda m, x: x.long().float(), lambda x: x.astype(np.int64).astype(np.float32), [big], atol=0, rtol=0)
    b = np.array([0, 1] * 70, bool)
    check(lambda m, x: x.double(), lambda x: x.astype(np.float64), [b])
    check(lambda m, x: x.to(m.bfloat16).float(), lambda x: x.astype(np.float32),
          [np.arange(-200, 200, dtype=np.float32)], atol=0, rtol=0)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_cast_gradients(threads, layout):
    a = rng().standard_normal((3, 70))
    check_grad(lambda m, x: x.float().double() * 2, [a], layout=layout, gradcheck=False, atol=1e-6)
    same_as_torch(lambda m, x: x.double().sum(1), [a.astype(np.float32)], layout=layout, **TOL)
