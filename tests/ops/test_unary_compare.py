"""Unary math, comparisons, logical and bitwise ops, maximum/minimum and where, against NumPy
(float64) and PyTorch: shapes (empty and 0-dim included), layouts, dtypes, broadcasting, NaN
and inf, in-place forms, operators and bad calls."""
import math
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitorch
from helpers import MT_DTYPES, arrays, broadcastable_pair, check, layouts, raises_like_torch, shapes, to_layout
from unary_table import ALL, FLOATS, NEEDS_SCIPY, UNARY, nn_or_top, special

INTEGRAL = ("int64", "int32", "bool")


def check_nan(fn, ref, arrays_):
    """check() on inputs holding NaN and inf: exact agreement with NumPy and PyTorch."""
    return check(fn, ref, arrays_, atol=0, rtol=0)


def rows(names):
    """pytest params of the table's rows (or their in-place forms), those on SciPy's references
    skipped without SciPy."""
    no_scipy = pytest.mark.skipif(special is None, reason="needs scipy")
    return [pytest.param(n, marks=no_scipy) if n.removesuffix("_") in NEEDS_SCIPY else n for n in names]


@pytest.mark.parametrize("name", rows(UNARY))
@given(data=st.data(), layout=layouts)
def test_unary(name, data, layout):
    """Every row of the unary table (tests/unary_table.py): values against its NumPy/SciPy
    reference and PyTorch, every layout, and its result dtype."""
    row = UNARY[name]
    low, high = row.domain
    dtype = data.draw(st.sampled_from(row.dtypes))
    if dtype.startswith("int"):
        low, high = math.ceil(low), math.floor(high)
    a = data.draw(arrays(dtype, shapes(), low=low, high=high))
    out = check(row.fn, row.ref, [a], layout=layout if a.ndim else "contiguous", atol=1e-5, rtol=row.rtol)
    assert out.dtype == MT_DTYPES[row.result(dtype)]


def test_unary_result_dtypes():
    i = minitorch.tensor([1, 4], dtype=minitorch.int32)
    b = minitorch.tensor([True, False])
    assert i.exp().dtype == minitorch.float32 and b.sqrt().dtype == minitorch.float32
    assert minitorch.abs(i).dtype == minitorch.int32 and i.sign().dtype == minitorch.int32
    assert b.sign().dtype == minitorch.bool
    assert minitorch.sigmoid(minitorch.tensor([1.0], dtype=minitorch.float64)).dtype == minitorch.float64
    assert i.square().dtype == minitorch.int32 and b.square().dtype == minitorch.int64
    assert i.reciprocal().dtype == minitorch.float32 and minitorch.exp2(b).dtype == minitorch.float32
    assert minitorch.log10(minitorch.tensor([10.0], dtype=minitorch.float64)).dtype == minitorch.float64


def test_reciprocal_of_zero_is_inf():
    assert minitorch.tensor([0.0, -0.0]).reciprocal().tolist() == [math.inf, -math.inf]
    assert minitorch.tensor([0]).reciprocal().tolist() == [math.inf]


SPECIALS = [float("inf"), -float("inf"), float("nan"), 0.0, -0.0, 1.0, -1.0, 30.0, -30.0, 1e30, -1e30]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_nan_and_inf_like_torch(name, dtype):
    torch = pytest.importorskip("torch")
    values = SPECIALS
    if name.startswith("gelu"):
        # PyTorch's vectorised GELU gives NaN for +inf, its scalar path (and the formula) inf.
        values = [v for v in SPECIALS if v != float("inf")]
    a = np.array(values, dtype=dtype)
    fn = UNARY[name].fn
    got = np.array(fn(minitorch, minitorch.tensor(a)).tolist(), dtype=np.float64)
    want = fn(torch, torch.tensor(a)).double().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-30)  # NaN where PyTorch has NaN


def test_sigmoid_is_stable_and_sign_of_nan_is_zero():
    x = minitorch.tensor([-1000.0, 1000.0, -88.8, 88.8], dtype=minitorch.float32)
    assert x.sigmoid().tolist()[:2] == [0.0, 1.0]
    assert not x.sigmoid().isnan().tolist()[2]
    assert minitorch.tensor([float("nan"), -0.0, -3.0]).sign().tolist() == [0.0, 0.0, -1.0]


def test_unary_empty_and_zero_dim():
    e = minitorch.empty(0, 3)
    assert e.exp().shape == (0, 3) and minitorch.gelu(e).shape == (0, 3)
    z = minitorch.tensor(4.0)
    assert z.sqrt().shape == () and z.sqrt().item() == 2.0
    assert minitorch.silu(minitorch.tensor(0.0)).item() == 0.0


# ---- in-place forms ----

# The unary table's in-place forms, and the comparisons' and logical ones.
INPLACE = {name + "_": (row.inplace, row.ref) for name, row in UNARY.items() if row.inplace}
INPLACE |= {
    "eq_": (lambda x: x.eq_(2.0), lambda x: x == 2.0),
    "ne_": (lambda x: x.ne_(minitorch.tensor([2.0, 1.0, 0.5])), lambda x: x != [2.0, 1.0, 0.5]),
    "lt_": (lambda x: x.lt_(1), lambda x: x < 1),
    "le_": (lambda x: x.le_(1), lambda x: x <= 1),
    "gt_": (lambda x: x.gt_(0.5), lambda x: x > 0.5),
    "ge_": (lambda x: x.ge_(0.5), lambda x: x >= 0.5),
    "logical_and_": (lambda x: x.logical_and_(minitorch.tensor([1, 0, 1])), lambda x: (x != 0) & [1, 0, 1]),
    "logical_or_": (lambda x: x.logical_or_(minitorch.tensor([0.0, 1.0, 0.0])), lambda x: (x != 0) | [0, 1, 0]),
    "logical_not_": (lambda x: x.logical_not_(), lambda x: x == 0),
}


@pytest.mark.parametrize("name", rows(INPLACE))
@given(layout=layouts)
def test_inplace_forms_write_self_and_return_it(name, layout):
    fn, ref = INPLACE[name]
    a = np.array([[0.5, 2.0, 1.0], [4.0, 0.25, 2.0]], np.float32)
    x = to_layout(a, layout)
    v0 = x._version
    assert fn(x) is x
    assert x.dtype == minitorch.float32 and x._version == v0 + 1
    np.testing.assert_allclose(x.numpy() if x.is_contiguous() else np.array(x.tolist()),
                               ref(a.astype(np.float64)).astype(np.float64), rtol=1e-6)


BITWISE_INPLACE = {
    "bitwise_and_": (lambda x: x.bitwise_and_(6), lambda x: x & 6),
    "bitwise_or_": (lambda x: x.bitwise_or_(minitorch.tensor([1, 2, 4])), lambda x: x | [1, 2, 4]),
    "bitwise_not_": (lambda x: x.bitwise_not_(), np.invert),
    "op&=": (lambda x: operator.iand(x, 3), lambda x: x & 3),
    "op|=": (lambda x: operator.ior(x, minitorch.tensor([8])), lambda x: x | 8),
}


@pytest.mark.parametrize("name", BITWISE_INPLACE)
@pytest.mark.parametrize("dtype", ("int32", "int64"))
def test_bitwise_inplace_forms(name, dtype):
    fn, ref = BITWISE_INPLACE[name]
    a = np.array([[5, -2, 7], [0, 12, -9]], dtype)
    x = minitorch.tensor(a)
    assert fn(x) is x and x.dtype == minitorch.tensor(a).dtype
    np.testing.assert_array_equal(x.numpy(), ref(a))


def test_inplace_comparison_keeps_self_dtype_like_torch():
    x = minitorch.tensor([1, 2, 3])
    x.eq_(2.0)
    assert x.dtype == minitorch.int64 and x.tolist() == [0, 1, 0]
    b = minitorch.tensor([True, False])
    b.logical_not_()
    assert b.tolist() == [False, True]


# ---- comparisons ----

COMPARE = {
    "eq": (lambda m, x, y: m.eq(x, y), np.equal),
    "ne": (lambda m, x, y: x.ne(y), np.not_equal),
    "lt": (lambda m, x, y: m.lt(x, y), np.less),
    "le": (lambda m, x, y: x.le(y), np.less_equal),
    "gt": (lambda m, x, y: m.gt(x, y), np.greater),
    "ge": (lambda m, x, y: x.ge(y), np.greater_equal),
    "op==": (lambda m, x, y: x == y, np.equal),
    "op!=": (lambda m, x, y: x != y, np.not_equal),
    "op<": (lambda m, x, y: x < y, np.less),
    "op<=": (lambda m, x, y: x <= y, np.less_equal),
    "op>": (lambda m, x, y: x > y, np.greater),
    "op>=": (lambda m, x, y: x >= y, np.greater_equal),
}


@pytest.mark.parametrize("name", COMPARE)
@given(data=st.data(), dtype=st.sampled_from(ALL), layout=layouts)
def test_compare(name, dtype, data, layout):
    fn, ref = COMPARE[name]
    sa, sb = data.draw(broadcastable_pair())
    # small integer-valued ranges make equal elements common
    a = data.draw(arrays(dtype, sa, low=-3, high=3))
    b = data.draw(arrays(dtype, sb, low=-3, high=3))
    check(fn, ref, [a, b], layout=layout if a.ndim and b.ndim else "contiguous", dtype=minitorch.bool)


@pytest.mark.parametrize("name", COMPARE)
@pytest.mark.parametrize("dtype", ALL)
def test_compare_with_python_numbers(name, dtype):
    fn, ref = COMPARE[name]
    a = np.array([[0, 1, 2], [-1, 3, 2]]).astype(dtype)
    for scalar in (2, 1.5, True, -1):
        check(fn, ref, [a], scalars=[scalar], dtype=minitorch.bool)


def test_reflected_comparison_operators():
    x = minitorch.tensor([1.0, 2.0, 3.0])
    assert (2 < x).tolist() == [False, False, True]
    assert (2 >= x).tolist() == [True, True, False]
    assert (2.0 == x).tolist() == [False, True, False]


@pytest.mark.parametrize("dtype_a", ALL)
@pytest.mark.parametrize("dtype_b", ALL)
def test_compare_promotes_operands_first(dtype_a, dtype_b):
    a = np.array([[1, 0, 3]]).astype(dtype_a)
    b = np.array([[1], [0]]).astype(dtype_b)
    check(lambda m, x, y: m.eq(x, y), np.equal, [a, b], dtype=minitorch.bool)
    check(lambda m, x, y: m.lt(x, y), np.less, [a, b], dtype=minitorch.bool)


def test_compare_in_the_promoted_dtype_like_torch():
    # 2**24 + 1 is not a float32: compared as float32 (PyTorch's promotion) it equals 2**24.
    x = minitorch.tensor([16777217])
    y = minitorch.tensor([16777216.0])
    assert minitorch.eq(x, y).tolist() == [True]
    assert minitorch.eq(x, minitorch.tensor([16777216.0], dtype=minitorch.float64)).tolist() == [False]


def test_compare_nan():
    x = minitorch.tensor([float("nan"), 1.0])
    assert (x == x).tolist() == [False, True]
    assert (x != x).tolist() == [True, False]
    assert (x < float("inf")).tolist() == [False, True]


def test_compare_empty_and_zero_dim():
    assert (minitorch.empty(0, 2) == 1).shape == (0, 2)
    assert (minitorch.empty(3, 0) < minitorch.ones(1)).shape == (3, 0)
    z = minitorch.tensor(2.0) > minitorch.tensor(1)
    assert z.shape == () and z.item() is True and z.dtype == minitorch.bool


def test_tensors_stay_hashable_by_identity():
    x, y = minitorch.ones(2), minitorch.ones(2)
    assert hash(x) == hash(x) and hash(x) != hash(y)
    assert {x: 1, y: 2}[y] == 2 and len({x, y, x}) == 2
    assert (x == "a") is False and (x != None) is True  # noqa: E711 - NotImplemented falls back to identity
    p = minitorch.nn.Parameter(minitorch.ones(2))
    assert p in {p}


# ---- logical, bitwise, isnan, isinf ----

LOGICAL = {
    "logical_and": (lambda m, x, y: m.logical_and(x, y), np.logical_and),
    "logical_or": (lambda m, x, y: x.logical_or(y), np.logical_or),
}


@given(data=st.data(), dtype=st.sampled_from(ALL), layout=layouts)
def test_logical_not_isnan_isinf(dtype, data, layout):
    a = data.draw(arrays(dtype, shapes(), low=-1, high=1))
    lay = layout if a.ndim else "contiguous"
    check(lambda m, x: m.logical_not(x), np.logical_not, [a], layout=lay, dtype=minitorch.bool)
    check(lambda m, x: x.isnan(), np.isnan, [a], layout=lay, dtype=minitorch.bool)
    check(lambda m, x: m.isinf(x), np.isinf, [a], layout=lay, dtype=minitorch.bool)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logical_nan_inf_values(dtype):
    a = np.array([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5], dtype)
    check_nan(lambda m, x: m.isnan(x), np.isnan, [a])
    check_nan(lambda m, x: m.isinf(x), np.isinf, [a])
    check_nan(lambda m, x: m.logical_not(x), np.logical_not, [a])  # NaN is true
    check_nan(lambda m, x: m.logical_and(x, x), lambda x: np.logical_and(x, x), [a])


BITWISE = {
    "bitwise_and": (lambda m, x, y: m.bitwise_and(x, y), np.bitwise_and),
    "bitwise_or": (lambda m, x, y: x.bitwise_or(y), np.bitwise_or),
    "op&": (lambda m, x, y: x & y, np.bitwise_and),
    "op|": (lambda m, x, y: x | y, np.bitwise_or),
}


@given(data=st.data(), dtype=st.sampled_from(INTEGRAL), layout=layouts)
def test_bitwise_not(dtype, data, layout):
    a = data.draw(arrays(dtype, shapes(), low=-20, high=20))
    lay = layout if a.ndim else "contiguous"
    check(lambda m, x: ~x, np.invert, [a], layout=lay)
    check(lambda m, x: m.bitwise_not(x), np.invert, [a], layout=lay)


@pytest.mark.parametrize(
    "dtype_a, dtype_b, scalar",
    [("bool", "bool", True), ("bool", "int32", 3), ("int32", "int64", 6), ("int64", "bool", False)],
)
def test_bitwise_promotion_and_scalars(dtype_a, dtype_b, scalar):
    a = np.array([[1, 0, 5]]).astype(dtype_a)
    b = np.array([[3], [0]]).astype(dtype_b)
    check(lambda m, x, y: x & y, np.bitwise_and, [a, b])
    check(lambda m, x, y: x | y, np.bitwise_or, [a, b])
    check(lambda m, x, s: x & s, lambda x, s: np.bitwise_and(x, s), [a], scalars=[scalar])
    check(lambda m, x, s: s | x, lambda x, s: np.bitwise_or(s, x), [a], scalars=[scalar])


# ---- maximum, minimum, where ----

MINMAX = {
    "maximum": (lambda m, x, y: m.maximum(x, y), np.maximum),
    "minimum": (lambda m, x, y: x.minimum(y), np.minimum),
}


# The broadcasting binary ops against NumPy: name -> (table, dtypes, value range, result dtype)
BINARY = {
    **{name: (LOGICAL, ALL, 1, minitorch.bool) for name in LOGICAL},
    **{name: (BITWISE, INTEGRAL, 20, None) for name in BITWISE},
    **{name: (MINMAX, ALL, 10, None) for name in MINMAX},
}


@pytest.mark.parametrize("name", BINARY)
@given(data=st.data(), layout=layouts)
def test_broadcast_binary(name, data, layout):
    table, dtypes, bound, result = BINARY[name]
    fn, ref = table[name]
    dtype = data.draw(st.sampled_from(dtypes))
    sa, sb = data.draw(broadcastable_pair())
    a = data.draw(arrays(dtype, sa, low=-bound, high=bound))
    b = data.draw(arrays(dtype, sb, low=-bound, high=bound))
    check(fn, ref, [a, b], layout=layout if a.ndim and b.ndim else "contiguous", dtype=result)


@pytest.mark.parametrize("name", MINMAX)
@pytest.mark.parametrize("dtype", FLOATS)
def test_maximum_minimum_propagate_nan(name, dtype):
    nan, inf = float("nan"), float("inf")
    a = np.array([nan, 1.0, nan, -inf, 0.0, inf], dtype)
    b = np.array([2.0, nan, nan, 1.0, -0.0, 3.0], dtype)
    check_nan(MINMAX[name][0], MINMAX[name][1], [a, b])


@given(data=st.data(), dtype=st.sampled_from(FLOATS), layout=layouts)
def test_hypot(dtype, data, layout):
    sa, sb = data.draw(broadcastable_pair())
    a, b = data.draw(arrays(dtype, sa)), data.draw(arrays(dtype, sb))
    check(lambda m, x, y: m.hypot(x, y), np.hypot, [a, b], layout=layout if a.ndim and b.ndim else "contiguous")
    c = data.draw(arrays(dtype, sa))
    check(lambda m, x, y: x.clone().hypot_(y), np.hypot, [a, c])


def test_maximum_promotes_like_torch():
    a = np.array([1, 5, -2], np.int32)
    b = np.array([0.5, 6.5, -3.0], np.float32)
    check(lambda m, x, y: m.maximum(x, y), np.maximum, [a, b], dtype=minitorch.float32)
    check(lambda m, x, y: m.minimum(x, y), np.minimum, [a, b.astype(np.float64)], dtype=minitorch.float64)


@given(data=st.data(), dtype=st.sampled_from(ALL), layout=layouts)
def test_where(dtype, data, layout):
    shapes3 = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=4))
    sc, sx, sy = shapes3.input_shapes
    c = data.draw(arrays("bool", sc))
    x = data.draw(arrays(dtype, sx))
    y = data.draw(arrays(dtype, sy))
    lay = layout if c.ndim and x.ndim and y.ndim else "contiguous"
    check(lambda m, c, x, y: m.where(c, x, y), np.where, [c, x, y], layout=lay)
    check(lambda m, c, x, y: x.where(c, y), np.where, [c, x, y], layout=lay)  # the method: self is input


@pytest.mark.parametrize(
    "dtype, s1, s2",
    [("float32", 0.0, 1.5), ("int64", 2, -1), ("int32", 0.5, 7), ("bool", True, False), ("float64", 1, 2)],
)
def test_where_scalars_and_promotion(dtype, s1, s2):
    c = np.array([[True, False, True]])
    x = np.array([[1], [0]]).astype(dtype)
    check(lambda m, c, x, s: m.where(c, x, s), lambda c, x, s: np.where(c, x, s), [c, x], scalars=[s2])
    check(lambda m, c, x, s: m.where(c, s, x), lambda c, x, s: np.where(c, s, x), [c, x], scalars=[s1])
    check(lambda m, c, s, t: m.where(c, s, t), lambda c, s, t: np.where(c, s, t), [c], scalars=[s1, s2])
    check(lambda m, c, x, y: m.where(c, x, y), np.where, [c, x, x.astype(np.float64)])


def test_where_of_condition_alone_is_nonzero():
    c = np.array([[True, False, True], [False, False, True]])
    got = minitorch.where(minitorch.tensor(c))
    assert isinstance(got, tuple) and [g.tolist() for g in got] == [list(i) for i in np.nonzero(c)]


def test_where_empty_and_zero_dim():
    assert minitorch.where(minitorch.ones(0, 2).bool(), 1.0, 0.0).shape == (0, 2)
    z = minitorch.where(minitorch.tensor(True), minitorch.tensor(3), minitorch.tensor([1, 2]))
    assert z.tolist() == [3, 3]


# ---- bad calls ----

F32 = np.ones((2, 2), np.float32)
I64 = np.ones((2, 2), np.int64)
BOOL = np.ones((2, 2), bool)


@pytest.mark.parametrize(
    "fn, arrays_",
    [
        (lambda m, x: ~x, [F32]),                                      # ~ on floats: TypeError
        (lambda m, x: x & x, [F32]),                                   # & on floats
        (lambda m, x: x | 1, [F32]),                                   # | on floats
        (lambda m, x: m.bitwise_not(x), [F32]),
        (lambda m, x: x.bitwise_and_(x), [F32]),
        (lambda m, x: m.abs(x), [BOOL]),                               # abs of bool
        (lambda m, x: nn_or_top(m, "gelu")(x), [I64]),                 # gelu of ints
        (lambda m, x: nn_or_top(m, "silu")(x), [I64]),
        (lambda m, x: x.exp_(), [I64]),                                # float result into ints
        (lambda m, x: x.sqrt_(), [BOOL]),
        (lambda m, x: x.abs_(), [BOOL]),
        (lambda m, x: m.where(x, x, x), [I64]),                        # non-bool condition
        (lambda m, x: m.where(x.bool(), m.ones(3), m.ones(2)), [F32]),  # shapes do not broadcast
        (lambda m, x: m.eq(m.ones(2, 3), m.ones(4)), [F32]),
        (lambda m, x: m.ones(3).lt_(m.ones(2, 3)), [F32]),             # in-place grows self
        (lambda m, x: m.maximum(x, 1.0), [F32]),                       # maximum takes tensors only
        (lambda m, x: m.logical_and(x, True), [F32]),
        (lambda m, x: x < "a", [F32]),
        (lambda m, x: x.bitwise_or_(1.5), [I64]),                      # float into ints
    ],
)
def test_bad_calls_raise_like_torch(fn, arrays_):
    raises_like_torch(fn, *arrays_)
