"""Issue 21: sum, mean, nansum and the p-norms over the last dim run many rows a call (reduce.c's
rows loops: the iterator hands the loop whole rows), and a run no longer than the cascade's first
level adds its blocks straight into the top sums. Against NumPy in float64 and PyTorch, at 1 and 2
threads: short and long rows around the cascade's blocks, rows that are views (a row stride past
the row's end), outer dims, NaN and infinities, and empty rows."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, check

torch = pytest.importorskip("torch")

TOL = dict(atol=1e-5, rtol=1e-5)
LENGTHS = (1, 2, 15, 16, 17, 63, 64, 65, 1023, 1024, 1025, 4096)


def pnorm(x, p, axis):
    a = np.abs(x.astype(np.float64))
    return (a != 0).sum(axis) if p == 0 else (a ** p).sum(axis) ** (1 / p)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", LENGTHS)
def test_rows_of_every_length(threads, dtype, n):
    a = np.random.default_rng(n).standard_normal((max(3, 40000 // n), n)).astype(dtype)
    check(lambda m, x: x.sum(-1), lambda x: x.sum(-1), [a], **TOL)
    check(lambda m, x: x.mean(1), lambda x: x.mean(1), [a], **TOL)
    check(lambda m, x: x.nansum(1), lambda x: x.sum(1), [a], **TOL)
    for p in (0, 1, 2, 3):
        check(lambda m, x: m.linalg.vector_norm(x, p, dim=-1), lambda x: pnorm(x, p, -1), [a], **TOL)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_row_views_outer_dims_and_integers(threads, dtype):
    wide = np.random.default_rng(1).standard_normal((300, 100)).astype(dtype)
    for view in (lambda x: x[:, :37], lambda x: x[::3, 10:90]):
        t, sub = view(minitorch.tensor(wide)), view(wide).astype(np.float64)
        np.testing.assert_allclose(as_numpy(t.sum(1)), sub.sum(1), **TOL)
        np.testing.assert_allclose(as_numpy(t.norm(dim=1)), pnorm(sub, 2, 1), **TOL)
    b = np.random.default_rng(2).standard_normal((4, 50, 33)).astype(dtype)
    check(lambda m, x: x.sum(-1, keepdim=True), lambda x: x.sum(-1, keepdims=True), [b], **TOL)
    check(lambda m, x: x.mean((0, 2)), lambda x: x.mean((0, 2)), [b], **TOL)
    i = np.random.default_rng(3).integers(-100, 100, (500, 7)).astype(np.int64)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [i])
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [i > 0])


def test_nan_inf_and_empty_rows(threads):
    a = np.random.default_rng(4).standard_normal((200, 20)).astype(np.float32)
    a[3, 5], a[7, 19], a[9, 0] = np.nan, np.inf, -np.inf
    a[11, 2], a[11, 3] = np.inf, -np.inf
    check(lambda m, x: x.sum(1), lambda x: x.astype(np.float32).sum(1), [a], **TOL)
    check(lambda m, x: x.nansum(1), lambda x: np.nansum(x.astype(np.float32), 1), [a], **TOL)
    check(lambda m, x: x.norm(dim=1), lambda x: pnorm(x, 2, 1), [a], **TOL)
    check(lambda m, x: x.sum(1), lambda x: x.sum(1), [np.zeros((5, 0), np.float32)])
    check(lambda m, x: x.norm(dim=1), lambda x: np.zeros(5), [np.zeros((5, 0), np.float32)])
