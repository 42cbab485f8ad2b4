"""Issue 21: sum and mean over an outer dim (x.sum(0) of a row-major matrix) add whole rows into
a row of sums, a block of 64 rows at a time in the input's float type, four rows pairwise
(cpu/reduce_columns.c), in tiles of 1024 columns. Against NumPy in float64 and PyTorch, at 1 and
2 threads (the threads split the rows): sizes around the blocks and tiles, rows that are views
(a row stride past the row's end), dims around the reduced one, NaN, infinities, overflow,
negative zero and empty tensors, and the error against a float64 reference no worse than
PyTorch's."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, check, check_grad

torch = pytest.importorskip("torch")

TOL = dict(atol=1e-5, rtol=1e-5)
# rows around the four-row step and the 64-row block, columns around a vector and the tile
SHAPES = [(1, 7), (2, 16), (3, 17), (4, 1), (5, 33), (63, 64), (64, 65), (65, 1023), (67, 1024),
          (130, 1025), (257, 2049), (1000, 3)]


def rng(seed=21):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", SHAPES)
def test_sum_mean_over_the_first_dim(threads, dtype, shape):
    a = rng(shape[0] * 7 + shape[1]).standard_normal(shape).astype(dtype)
    check(lambda m, x: x.sum(0), lambda x: x.sum(0), [a], **TOL)
    check(lambda m, x: x.mean(0, keepdim=True), lambda x: x.mean(0, keepdims=True), [a], **TOL)
    check(lambda m, x: m.sum(x, -2), lambda x: x.sum(-2), [a], **TOL)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rows_that_are_views_and_outer_dims(threads, dtype):
    wide = rng().standard_normal((131, 2 * 1030)).astype(dtype)
    for view in (lambda x: x[:, :1030], lambda x: x[::2, 5:1035], lambda x: x[1:, 1:4]):
        t, sub = view(minitorch.tensor(wide)), view(wide).astype(np.float64)
        np.testing.assert_allclose(as_numpy(t.sum(0)), sub.sum(0), **TOL)
        np.testing.assert_allclose(as_numpy(t.mean(0)), sub.mean(0), **TOL)
    # a middle dim reduced: the column sums of each outer index, and the outer dims kept apart
    b = rng(1).standard_normal((3, 70, 37)).astype(dtype)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [b], **TOL)
    check(lambda m, x: x.sum((0, 1)), lambda x: x.sum((0, 1)), [b], **TOL)
    check(lambda m, x: x.mean(0), lambda x: x.mean(0), [b], **TOL)
    c = rng(2).standard_normal((2, 5, 67, 300)).astype(dtype)
    check(lambda m, x: x.sum(2), lambda x: x.sum(2), [c], **TOL)
    # expanded rows (row stride 0): the same row added 90 times
    row = rng(3).standard_normal(40).astype(dtype)
    t = minitorch.tensor(row).expand(90, 40)
    np.testing.assert_allclose(as_numpy(t.sum(0)), 90 * row.astype(np.float64), **TOL)


def test_out_and_integers(threads):
    a = rng().standard_normal((300, 2048)).astype(np.float32)
    out = minitorch.full((2048,), 7.0)
    minitorch.sum(minitorch.tensor(a), 0, out=out)
    np.testing.assert_allclose(as_numpy(out), a.astype(np.float64).sum(0), **TOL)
    # integers and bool keep their int64 loops
    i = rng().integers(-1000, 1000, (130, 70)).astype(np.int32)
    check(lambda m, x: x.sum(0), lambda x: x.sum(0), [i])
    check(lambda m, x: x.sum(0), lambda x: x.sum(0), [i > 0])


def test_nan_inf_overflow_negative_zero_and_empty(threads):
    a = rng().standard_normal((130, 9)).astype(np.float32)
    a[3, 0] = np.nan            # in a four-row step
    a[129, 1] = np.nan          # in the rows after the last whole step
    a[10, 2], a[100, 2] = np.inf, -np.inf   # in two blocks: inf - inf
    a[70, 3] = -np.inf
    a[:, 4] = np.float32(3e38)  # overflows float32, as PyTorch's float sum does
    a[:, 5] = -0.0              # a sum of negative zeros is +0, as NumPy's and PyTorch's
    got = check(lambda m, x: x.sum(0), lambda x: x.astype(np.float32).sum(0, dtype=np.float32), [a], **TOL)
    assert not np.signbit(as_numpy(got)[5])
    check(lambda m, x: x.mean(0), lambda x: x.astype(np.float32).mean(0, dtype=np.float32), [a], **TOL)
    for shape in ((0, 5), (5, 0), (0, 0), (3, 0, 4)):
        e = np.zeros(shape, np.float32)
        check(lambda m, x: x.sum(0), lambda x: x.sum(0), [e])


@pytest.mark.parametrize("shape", [(100_000, 33), (4097, 1025), (3000, 2, 300)])
def test_as_accurate_as_pytorch(threads, shape):
    """The error against a float64 reference at most twice PyTorch's plus one ulp of the
    result (tests/ops/test_reduce_kernels.py's rule), terms of one sign so that it shows."""
    a = (rng(len(shape)).standard_normal(shape) + 0.25).astype(np.float32)
    ref = a.astype(np.float64).sum(0)
    ours = np.abs(as_numpy(minitorch.tensor(a).sum(0)).astype(np.float64) - ref).max()
    theirs = np.abs(torch.tensor(a).sum(0).double().numpy() - ref).max()
    ulp = np.spacing(np.abs(ref).astype(np.float32)).max()
    assert ours <= 2 * theirs + ulp, f"error {ours:.3g}, PyTorch's {theirs:.3g} (ulp {ulp:.3g})"


def test_gradients(threads):
    a = rng().standard_normal((70, 19)).astype(np.float32)
    check_grad(lambda m, x: x.sum(0), [a])
    check_grad(lambda m, x: x.mean(0), [a])
