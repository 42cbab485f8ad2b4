"""Signature gaps tools/api_gap.py listed (issue 19), against PyTorch: out= of median and
nanmedian along a dim (the (values, indices) pair written and returned, PyTorch's checks of it,
and its TypeErrors without a dim or a pair), and randint_like's memory_format=."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import torch

pytestmark = pytest.mark.skipif(torch is None, reason="compared with PyTorch")

X = [[3.0, 1, 2, 5], [0, 9, float("nan"), 4], [7, 7, 1, 2]]


def _both(fn):
    """fn(lib) in minitorch and PyTorch: ("ok", result) or ("err", class name, message)"""
    out = []
    for L in (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(("ok", fn(L)))
            except Exception as e:  # noqa: BLE001 - compared with PyTorch's
                out.append(("err", type(e).__name__, str(e).split("\n")[0]))
    return out


@pytest.mark.parametrize("name", ["median", "nanmedian"])
@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), (-1, False)])
@pytest.mark.parametrize("out_shape", [(0,), (3,), (1, 4)])
def test_median_out_along_a_dim(name, dim, keepdim, out_shape):
    def run(L):
        v, i = L.full(out_shape, -1.0), L.full(out_shape, -1, dtype=L.int64)
        r = getattr(L, name)(L.tensor(X), dim, keepdim, out=(v, i))
        assert r[0] is v and r[1] is i and r.values is v and r.indices is i
        return v.tolist(), i.tolist(), tuple(v.shape)

    (_, got), (_, want) = _both(run)
    np.testing.assert_array_equal(np.array(got[0]), np.array(want[0]))
    assert got[1:] == want[1:]


OUT_ERRORS = {
    "no_dim": lambda L, x: L.median(x, out=(L.empty(0), L.empty(0, dtype=L.int64))),
    "a_tensor": lambda L, x: L.median(x, 1, out=L.empty(0)),
    "one_tensor": lambda L, x: L.nanmedian(x, 1, out=(L.empty(0),)),
    "three_tensors": lambda L, x: L.median(x, 1, out=(L.empty(0), L.empty(0), L.empty(0))),
    "values_dtype": lambda L, x: L.median(x, 1, out=(L.empty(0, dtype=L.float64), L.empty(0, dtype=L.int64))),
    "indices_dtype": lambda L, x: L.nanmedian(x, 0, out=(L.empty(0), L.empty(0, dtype=L.int32))),
    "both_dtypes": lambda L, x: L.median(x, 0, out=(L.empty(0, dtype=L.int64), L.empty(0))),
    "grad": lambda L, x: L.median(x.requires_grad_(), 0, out=(L.empty(0), L.empty(0, dtype=L.int64))),
}


@pytest.mark.parametrize("case", sorted(OUT_ERRORS))
def test_median_out_errors_as_torch(case):
    got, want = _both(lambda L: OUT_ERRORS[case](L, L.tensor(X)))
    assert got[0] == want[0] == "err"
    assert got[1:] == want[1:]


@pytest.mark.parametrize("fmt", ["preserve_format", "contiguous_format", "channels_last", None])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
def test_randint_like_memory_format(fmt, layout):
    def run(L):
        x = L.zeros(2, 3, 4, 5)
        x = x.to(memory_format=L.channels_last) if layout == "channels_last" else \
            x.transpose(1, 3) if layout == "transposed" else x
        kw = {} if fmt is None else {"memory_format": getattr(L, fmt)}
        r = L.randint_like(x, 3, 9, dtype=L.int32, **kw)
        values = np.array(r.tolist())
        assert values.min() >= 3 and values.max() < 9
        return tuple(r.shape), r.stride(), str(r.dtype).split(".")[-1]

    (_, got), (_, want) = _both(run)
    assert got == want


def test_randint_like_memory_format_errors_as_torch():
    for fn in (lambda L: L.randint_like(L.zeros(2, 3), 5, memory_format=L.channels_last),
               lambda L: L.randint_like(L.zeros(2, 3, 4, 5), 5, memory_format=L.channels_last_3d)):
        got, want = _both(fn)
        assert got[0] == want[0] == "err" and got[1:] == want[1:]
    got, want = _both(lambda L: L.randint_like(L.zeros(2), 5, memory_format=1))
    assert got[0] == want[0] == "err" and got[1] == want[1] == "TypeError"


PAD_VALUES = {
    "complex": lambda L: 1j,
    "complex_zero_imag": lambda L: 2 + 0j,
    "str": lambda L: "a",
    "list": lambda L: [1.0],
    "none": lambda L: None,
    "bool": lambda L: True,
    "int": lambda L: 2,
    "float": lambda L: 1.5,
    "numpy_float": lambda L: np.float32(1.5),
    "numpy_int": lambda L: np.int64(-3),
    "tensor_0dim": lambda L: L.tensor(2.5),
    "tensor_0dim_int": lambda L: L.tensor(3),
    "tensor_0dim_complex": lambda L: L.tensor(1j),
    "tensor_0dim_complex_real": lambda L: L.tensor(1 + 0j),
    "tensor_1dim": lambda L: L.tensor([2.0]),
}


@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64"])
@pytest.mark.parametrize("mode", ["constant", "reflect"])
@pytest.mark.parametrize("value", sorted(PAD_VALUES))
def test_pad_value_is_a_float_as_in_torch(value, mode, dtype):
    """F.pad's value is PyTorch's float?: a complex number is a TypeError, on a complex tensor too
    (constant_pad_nd, whose value is a Scalar, takes one)"""
    def run(L):
        x = L.arange(6).reshape(2, 3).to(getattr(L, dtype))
        r = L.nn.functional.pad(x, (1, 2), mode=mode, value=PAD_VALUES[value](L))
        return str(r.dtype).split(".")[-1], r.tolist()

    got, want = _both(run)
    assert got[0] == want[0]
    if got[0] == "ok":
        assert got[1][0] == want[1][0]
        np.testing.assert_array_equal(np.array(got[1][1]), np.array(want[1][1]))
    else:
        assert got[1:] == want[1:]
