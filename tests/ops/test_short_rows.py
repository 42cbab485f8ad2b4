"""Issue 21: many short rows reduced at once (reduce_rows.c's tiles for sum, mean, amax and amin
along the last dim; reduce_dim.c's for max, min, argmax and argmin), the float64 -> float16 cast by
F16C, and a 1-D index_select. Against NumPy in float64 and PyTorch, at 1 and 2 threads: lengths
around a tile's 64 columns and its vectors of 16, row counts that leave a partial tile of 16 rows,
rows that are views (a row stride past the row's end), middle dims, NaN, infinities, negative zero,
ties (the first index, as PyTorch), empty tensors."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, check, raises_like_torch, torch_alike

torch = pytest.importorskip("torch")

TOL = dict(atol=1e-5, rtol=1e-5)
LENGTHS = (1, 2, 7, 15, 16, 17, 31, 50, 63, 64, 65, 130)
ROWS = (1, 15, 16, 17, 33, 1000)


def rows_of(rows, n, dtype, seed=0):
    rng = np.random.default_rng(seed + 7 * n + rows)
    if dtype.startswith("int"):
        return rng.integers(-50, 50, (rows, n)).astype(dtype)  # ties are common
    return rng.standard_normal((rows, n)).astype(dtype)


def same_as_torch(fn, a, view=lambda x: x):
    """fn(lib, view(tensor of a)) in minitorch and PyTorch: shapes, dtypes and values (NaN equal,
    the sign of a zero too), each result of a tuple."""
    got, want = fn(minitorch, view(minitorch.tensor(a))), fn(torch, view(torch.tensor(a)))
    got = tuple(got) if isinstance(got, tuple) else (got,)
    want = tuple(want) if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want, strict=True):
        assert tuple(g.shape) == tuple(w.shape)
        assert str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
        g, w = as_numpy(g), w.numpy()
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), **TOL)
        if g.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("n", LENGTHS)
def test_rows_of_every_length(threads, dtype, n):
    for rows in ROWS:
        a = rows_of(rows, n, dtype)
        check(lambda m, x: x.sum(-1), lambda x: x.sum(-1), [a], **TOL)
        check(lambda m, x: x.amax(1), lambda x: x.max(1), [a])
        check(lambda m, x: x.amin(-1), lambda x: x.min(-1), [a])
        if dtype.startswith("float"):
            check(lambda m, x: x.mean(1), lambda x: x.mean(1), [a], **TOL)
        check(lambda m, x: x.argmax(1), lambda x: x.argmax(1), [a])
        check(lambda m, x: x.argmin(-1), lambda x: x.argmin(-1), [a])
        torch_alike(lambda m, x: x.max(1), a)
        torch_alike(lambda m, x: x.min(-1), a)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_row_views_outer_and_middle_dims(threads, dtype):
    wide = rows_of(300, 100, dtype, seed=1)
    views = (lambda x: x[:, :37], lambda x: x[::3, 10:26], lambda x: x[1:, 5:6], lambda x: x[:, ::2])
    for view in views:
        for fn in (lambda m, x: x.sum(1), lambda m, x: x.amax(-1), lambda m, x: x.amin(1),
                   lambda m, x: x.max(1), lambda m, x: x.argmin(1)):
            same_as_torch(fn, wide, view)
    b = rows_of(4 * 50, 33, dtype, seed=2).reshape(4, 50, 33)
    for fn in (lambda m, x: x.sum(-1, keepdim=True), lambda m, x: x.amax(-1, keepdim=True),
               lambda m, x: x.amax((0, 2)), lambda m, x: x.max(-1, keepdim=True),
               lambda m, x: x.amin(1), lambda m, x: x.max(1), lambda m, x: x.argmax(1)):
        same_as_torch(fn, b)
    c = rows_of(64 * 16, 16, dtype, seed=3).reshape(64, 16, 16)  # a short middle dim
    for fn in (lambda m, x: x.amax(1), lambda m, x: x.max(1), lambda m, x: x.argmin(1),
               lambda m, x: x.sum(1)):
        same_as_torch(fn, c)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nan_inf_negative_zero_and_ties(threads, dtype):
    a = rows_of(40, 20, dtype, seed=4)
    a[3, 5], a[7, 19], a[9, 0] = np.nan, np.inf, -np.inf
    a[11, 2], a[11, 3] = np.inf, -np.inf
    a[12, 4], a[12, 9] = np.nan, np.nan
    a[13] = -np.inf
    a[14] = np.inf
    a[15, :] = 0.0
    a[15, ::3] = -0.0
    a[16, :] = -0.0
    a[17, :] = 1.5  # all tied
    a[18, 2], a[18, 12] = 9.0, 9.0  # tied maxima: the first index
    a[19, 1], a[19, 17] = -9.0, -9.0
    a[20, 0], a[20, 19] = np.nan, 5.0
    a[21, 19] = np.nan
    for fn in (lambda m, x: x.amax(1), lambda m, x: x.amin(1), lambda m, x: x.max(1),
               lambda m, x: x.min(1), lambda m, x: x.argmax(1), lambda m, x: x.argmin(1),
               lambda m, x: x.sum(1), lambda m, x: x.mean(1)):
        same_as_torch(fn, a)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [a], **TOL)


def test_empty_rows_and_errors(threads):
    for shape in ((0, 16), (5, 0), (0, 0)):
        a = np.zeros(shape, np.float32)
        check(lambda m, x: x.sum(1), lambda x: x.sum(1), [a])
    a = np.zeros((0, 16), np.float32)
    for fn in (lambda m, x: x.amax(1), lambda m, x: x.max(1), lambda m, x: x.argmax(1)):
        same_as_torch(fn, a)
    for fn in (lambda m, x: x.amax(1), lambda m, x: x.max(1), lambda m, x: x.argmax(1)):
        raises_like_torch(fn, np.zeros((5, 0), np.float32))


def as_bits(t):
    return t.view(torch.int16).numpy() if isinstance(t, torch.Tensor) else as_numpy(t.view(minitorch.int16))


@pytest.mark.parametrize("n", [1, 7, 8, 9, 15, 16, 17, 100, 1023, 4099])
def test_float64_to_float16_bit_for_bit(threads, n):
    rng = np.random.default_rng(n)
    d = rng.standard_normal(n) * 10.0 ** rng.integers(-9, 6, n)
    special = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 65504.0, 65520.0, 7e4, 6e-8, 3e-8,
               -1e-9, 1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -11, 2049.0, 1e300, -1e-300]
    d[: min(n, len(special))] = special[: min(n, len(special))]
    for view in (lambda x: x, lambda x: x[::2], lambda x: x[1:]):
        got, want = view(minitorch.tensor(d)).half(), view(torch.tensor(d)).half()
        assert got.dtype == minitorch.float16 and tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(as_bits(got), as_bits(want))
    # NumPy rounds a double straight to half (PyTorch through float): equal but for such ties
    ok = np.isfinite(d) & (np.abs(d) < 6e4)
    np.testing.assert_allclose(as_numpy(minitorch.tensor(d).half())[ok].astype(np.float64),
                               d[ok].astype(np.float16).astype(np.float64), rtol=1e-3, atol=6e-8)
    np.testing.assert_array_equal(as_bits(minitorch.tensor(d).to(minitorch.float16)),
                                  as_bits(torch.tensor(d).to(torch.float16)))


@pytest.mark.parametrize("idx_dtype", ["int64", "int32"])
def test_index_select_1d(threads, idx_dtype):
    rng = np.random.default_rng(5)
    v = rng.standard_normal(1 << 12).astype(np.float32)
    for k in (0, 1, 5, 4096, 10001):
        idx = rng.integers(0, v.size, k).astype(idx_dtype)
        check(lambda m, x, i: m.index_select(x, 0, i), lambda x, i: np.take(x, i), [v, idx])
        check(lambda m, x, i: m.index_select(x[::3], 0, i[::2] // 3), lambda x, i: np.take(x[::3], i[::2] // 3),
              [v, idx])
    for dt in ("float64", "int64", "int32", "bool"):
        w = (v > 0).astype(dt)
        idx = rng.integers(0, v.size, 300).astype(idx_dtype)
        check(lambda m, x, i: m.index_select(x, 0, i), lambda x, i: np.take(x, i), [w, idx])
    for bad in (np.array([0, v.size], idx_dtype), np.array([-1], idx_dtype)):
        raises_like_torch(lambda m, x, i: m.index_select(x, 0, i), v, bad)
