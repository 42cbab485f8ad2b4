"""Python ints at and beyond int64's ends beside tensors, against PyTorch 2.13: an int from 2^63 to
2^64 - 1 is PyTorch's uint64 Scalar, which an integer tensor's arithmetic and comparisons take as
its int64 bits (wrapping, as C does), a float tensor as a float, a bool tensor not at all (its
promotion error); where, clamp and the fills convert a number checked into the dtype it goes to
("value cannot be converted to type int8_t without overflow"), pow's exponent into int64; from
2^64 on (or below -2^63) Python's OverflowError; storing such an int into an int64 tensor
(z[0] = 2**63 + 5, tensor(), full()) PyTorch's errors. Each case runs in both libraries: the same
result (values, dtype, shape) or the same exception class and message."""
import warnings

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

BIG = [2**62 * 3, 2**63, 2**63 + 5, 2**64 - 1, 2**63 - 1, -(2**63), 2**62, 2**64, -(2**63) - 1]
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "uint16",
          "uint32", "uint64"]

# (case, dtype) pairs that differ from PyTorch for reasons that are not the Python int's: left out
# here, each with its reason
NOT_THE_INTS = {
    # the bitwise ops' message names float16's computing dtype (Float), PyTorch's Half
    ("and", "float16"): "kernel name", ("xor", "float16"): "kernel name",
    # dispatch/shell.c names clamp's kernel clamp_scalar_cpu whatever bounds are given, and
    # index_fill's index_fill (PyTorch: clamp_min_scalar_cpu / clamp_max_scalar_cpu, index_fill_cpu)
    **{(c, d): "kernel name" for c in ("clamp", "clamp_min", "index_fill") for d in ("uint16", "uint32", "uint64")},
}

# name -> f(lib, x, v): x a (2, 3) tensor of the dtype under test, v the Python int
CASES = {
    "add": lambda m, x, v: x + v,
    "radd": lambda m, x, v: v + x,
    "add_fn": lambda m, x, v: m.add(x, v),
    "add_alpha": lambda m, x, v: x.add(v, alpha=2),
    "sub": lambda m, x, v: x - v,
    "rsub": lambda m, x, v: v - x,
    "mul": lambda m, x, v: x * v,
    "rmul": lambda m, x, v: v * x,
    "div": lambda m, x, v: x / v,
    "div_floor": lambda m, x, v: m.div(x, v, rounding_mode="floor"),
    "floordiv": lambda m, x, v: x // v,
    "remainder": lambda m, x, v: x % v,
    "eq": lambda m, x, v: x == v,
    "ne": lambda m, x, v: x != v,
    "lt": lambda m, x, v: x < v,
    "ge_fn": lambda m, x, v: m.ge(x, v),
    "and": lambda m, x, v: x & v,
    "xor": lambda m, x, v: x ^ v,
    "pow": lambda m, x, v: x ** v,
    "rpow": lambda m, x, v: v ** x,
    "iadd": lambda m, x, v: x.clone().add_(v),
    "imul": lambda m, x, v: x.clone().mul_(v),
    "clamp": lambda m, x, v: x.clamp(max=v),
    "clamp_min": lambda m, x, v: m.clamp(x, min=v),
    "masked_fill": lambda m, x, v: x.masked_fill(x == x, v),
    "index_fill": lambda m, x, v: x.index_fill(0, m.tensor([0]), v),
    "fill_": lambda m, x, v: x.clone().fill_(v),
    "full": lambda m, x, v: m.full((2,), v, dtype=x.dtype),
    "where_other": lambda m, x, v: m.where(x == x, x, v),
    "where_input": lambda m, x, v: m.where(x == x, v, x),
    "result_type": lambda m, x, v: m.result_type(x, v),
    "result_type_0d": lambda m, x, v: m.result_type(x[0, 0], v),
}


def run(lib, case, dtype, v):
    x = lib.tensor([[1, 0, 3], [7, 2, 5]]).to(getattr(lib, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return CASES[case](lib, x, v), None
        except Exception as e:  # noqa: BLE001 - the class and the words are compared
            return None, e


def same(case, dtype, v):
    got, err = run(minitorch, case, dtype, v)
    want, terr = run(torch, case, dtype, v)
    if terr is not None or err is not None:
        assert err is not None and terr is not None, f"minitorch {got!r} {err!r}, torch {want!r} {terr!r}"
        assert type(err).__name__ == type(terr).__name__, f"{err!r} vs {terr!r}"
        assert str(err) == str(terr).split("\nException raised")[0]
        return
    if case.startswith("result_type"):
        assert str(got).split(".")[-1] == str(want).split(".")[-1]
        return
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    if want.dtype == torch.uint64:  # NumPy takes it, but tolist is exact everywhere
        assert got.tolist() == want.tolist()
    else:
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("v", BIG, ids=str)
@pytest.mark.parametrize("case", ["add", "sub", "rsub", "mul", "eq", "lt", "and", "pow", "rpow", "iadd",
                                  "clamp", "masked_fill", "fill_", "full", "where_other",
                                  "where_input", "div", "floordiv"])
def test_int64_tensor_beside_big_ints(case, v):
    same(case, "int64", v)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_uint64_range_number_beside_each_dtype(case, dtype):
    if (case, dtype) in NOT_THE_INTS:
        pytest.skip(NOT_THE_INTS[case, dtype])
    same(case, dtype, 2**63 + 5)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "bool", "float32"])
@pytest.mark.parametrize("case", ["clamp", "clamp_min", "masked_fill", "index_fill", "where_other",
                                  "where_input", "add", "fill_"])
@pytest.mark.parametrize("v", [300, -129, -1, 70000, 2**31, 2**40])
def test_checked_scalar_slots(case, dtype, v):
    """where, clamp's bounds and the fills convert the number checked into their dtype; the
    arithmetic takes it as it is and wraps (int8 + 300)."""
    same(case, dtype, v)


def test_reflected_and_mixed_operands():
    for f in (lambda m: m.tensor(True) * 2**63,  # a bool 0-dim tensor: the promotion error
              lambda m: m.tensor([1, 2]) + m.tensor(1.5) + 2**63,  # a float 0-dim tensor wins
              lambda m: m.tensor([1, 2], dtype=m.uint32) - 2**63,
              lambda m: 2**63 - m.tensor([1, 2], dtype=m.uint32),
              lambda m: m.where(m.tensor([True]), 2**63, 2),  # two numbers: uint64 with int64
              lambda m: m.result_type(2**63, 2),
              lambda m: m.result_type(2**63, 2.5),
              lambda m: m.tensor([3, -4]).sub(1, alpha=2**63),
              lambda m: m.pow(2**63, m.tensor([1, 2])),
              lambda m: m.tensor([1.0, 2.0]) ** (2**63)):
        results = []
        for lib in (minitorch, torch):
            try:
                r = f(lib)
                results.append(("ok", str(r.dtype).split(".")[-1] if hasattr(r, "dtype") else None,
                                r.tolist() if hasattr(r, "tolist") else str(r).split(".")[-1]))
            except Exception as e:  # noqa: BLE001
                results.append((type(e).__name__, str(e)))
        assert results[0] == results[1]


@pytest.mark.parametrize("v", [2**63 + 5, 2**64, -(2**63) - 1, 2**63 - 1, -(2**63)], ids=str)
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "uint64"])
def test_setitem_and_tensor(v, dtype):
    """z[0] = v (an int beyond int64 stored into a tensor: PyTorch's ValueError 'Overflow when
    unpacking long long'), and tensor(v) with and without a dtype."""
    for f in (lambda m: m.zeros(3, dtype=getattr(m, dtype)).__setitem__(0, v),
              lambda m: m.tensor(v),
              lambda m: m.tensor([v], dtype=getattr(m, dtype))):
        results = []
        for lib in (minitorch, torch):
            try:
                r = f(lib)
                results.append(("ok", None if r is None else r.tolist()))
            except Exception as e:  # noqa: BLE001
                results.append((type(e).__name__, str(e)))
        assert results[0] == results[1]
