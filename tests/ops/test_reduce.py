"""sum against NumPy and PyTorch: all dims, one dim, tuples of dims, keepdim, dtype."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, check, layouts, raises_like_torch, shapes


@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "int32", "bool"))
@given(data=st.data(), layout=layouts, keepdim=st.booleans())
def test_sum(dtype, data, layout, keepdim):
    a = data.draw(arrays(dtype, shapes()))
    lay = layout if a.ndim else "contiguous"
    check(lambda m, x: x.sum(), lambda x: np.sum(x), [a], layout=lay, atol=1e-4)
    if a.ndim == 0:
        return
    dims = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=a.ndim,
                              unique_by=lambda d: d % a.ndim))
    check(lambda m, x: m.sum(x, dims[0], keepdim), lambda x: np.sum(x, axis=dims[0], keepdims=keepdim),
          [a], layout=lay, atol=1e-4)
    check(lambda m, x: x.sum(dim=tuple(dims), keepdim=keepdim),
          lambda x: np.sum(x, axis=tuple(dims), keepdims=keepdim), [a], layout=lay, atol=1e-4)


@pytest.mark.parametrize("dtype, out", [("int32", minitorch.int64), ("bool", minitorch.int64),
                                        ("float64", minitorch.float64), ("float32", minitorch.float32)])
def test_sum_result_dtype(dtype, out):
    check(lambda m, x: x.sum(), np.sum, [np.ones((2, 3), dtype)], dtype=out)


def test_sum_dtype_argument():
    check(lambda m, x: x.sum(dtype=m.float64), np.sum, [np.arange(6, dtype=np.int64)], dtype=minitorch.float64)
    check(lambda m, x: x.sum(0, dtype=m.int32), lambda x: np.sum(x, 0), [np.ones((3, 2), np.int64)],
          dtype=minitorch.int32)


def test_sum_float32_is_accurate():
    # 1e6 ones plus small values: a naive float32 running sum loses the small ones.
    a = np.full(1_000_003, 0.1, np.float32)
    got = minitorch.from_numpy(a).sum().item()
    assert abs(got - np.sum(a.astype(np.float64))) < 1e-2


def test_sum_of_empty_is_zero():
    assert minitorch.zeros(0, 3).sum().item() == 0
    assert minitorch.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("fn", [lambda m, x: x.sum(2), lambda m, x: x.sum((0, 0)), lambda m, x: x.sum(-3),
                                lambda m, x: x.sum("a")])
def test_sum_bad_dims(fn):
    raises_like_torch(fn, np.ones((2, 3), np.float32))
