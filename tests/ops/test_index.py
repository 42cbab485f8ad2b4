"""Indexing, selection and sorting ops against NumPy (float64) and PyTorch: index_select,
gather, scatter(_add)(_), masked_fill(_), masked_select, nonzero/argwhere, sort, argsort, topk,
unique, index_put_. Shapes (empty and 0-dim included), layouts, dtypes, negative indices,
NaN ordering, method and function forms, and bad calls raising PyTorch's exception class."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, broadcastable_pair, check, layouts, raises_like_torch, same_as_torch, shapes, to_layout

ALL = ("float32", "float64", "int64", "int32", "bool")
NUMERIC = ("float32", "float64", "int64", "int32")
INDEX = ("int64", "int32")


def rng_of(data):
    return np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))


@st.composite
def array_and_dim(draw, dtypes=ALL, min_dims=1):
    dtype = draw(st.sampled_from(dtypes))
    a = draw(arrays(dtype, shapes(min_dims=min_dims)))
    dim = draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    return a, dim


def lay(a, layout):
    return layout if a.ndim else "contiguous"


# ---- index_select ----

@given(ad=array_and_dim(min_dims=0), layout=layouts, data=st.data())
def test_index_select(ad, layout, data):
    a, dim = ad
    size = a.shape[dim] if a.ndim else 1
    n = data.draw(st.integers(0, 6)) if size else 0
    idx = rng_of(data).integers(0, max(size, 1), n).astype(data.draw(st.sampled_from(INDEX)))
    if a.ndim == 0:
        idx = idx[:1] if len(idx) else np.zeros(1, np.int64)
        check(lambda m, x, i: m.index_select(x, dim, i), lambda x, i: x, [a, idx])
        return
    check(lambda m, x, i: m.index_select(x, dim, i), lambda x, i: np.take(x, i, axis=dim), [a, idx],
          layout=lay(a, layout))
    check(lambda m, x, i: x.index_select(dim, i), lambda x, i: np.take(x, i, axis=dim), [a, idx])


@pytest.mark.parametrize("row", [0, 1])
def test_index_select_and_embedding_with_an_index_that_is_a_view_with_an_offset(row):
    # A contiguous int64 index is used in place: its storage offset counts (a row of a (2, n)
    # COO index matrix once selected row 0's values instead of row 1's).
    rows = np.array([[0, 1, 0], [3, 4, 2]])
    x = np.arange(10.0).reshape(5, 2)
    idx = minitorch.tensor(rows)[row]
    assert idx.is_contiguous() and idx.storage_offset() == 3 * row
    np.testing.assert_array_equal(minitorch.tensor(x).index_select(0, idx).numpy(), x[rows[row]])
    np.testing.assert_array_equal(minitorch.nn.functional.embedding(idx, minitorch.tensor(x)).numpy(), x[rows[row]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "float16", "complex64"])
@pytest.mark.parametrize("index_dtype", INDEX)
def test_index_select_many_indices_from_any_layout(dtype, index_dtype):
    # index_plan.c's select_rows: the positions checked once and stepped along dim by its stride
    # (no tensor of byte offsets); 4096 indices, repeated, into a vector, a strided vector and
    # along each dim of a transposed matrix; a strided index; an empty one
    rng = np.random.default_rng(21)
    v = (rng.standard_normal(1000) * 10).astype(dtype)
    idx = rng.integers(0, 500, 4096).astype(index_dtype)
    t = minitorch.tensor(v)
    np.testing.assert_array_equal(t.index_select(0, minitorch.tensor(idx)).numpy(), v[idx])
    np.testing.assert_array_equal(t[::2].index_select(0, minitorch.tensor(idx)).numpy(), v[::2][idx])
    np.testing.assert_array_equal(t.index_select(0, minitorch.tensor(idx)[::3]).numpy(), v[idx[::3]])
    assert t.index_select(0, minitorch.tensor(idx[:0])).shape == (0,)
    m = (rng.standard_normal((600, 7)) * 10).astype(dtype)
    tm = minitorch.tensor(np.ascontiguousarray(m.T)).t()
    for dim in (0, 1):
        i = idx % m.shape[dim]
        np.testing.assert_array_equal(tm.index_select(dim, minitorch.tensor(i)).numpy(), np.take(m, i, axis=dim))
    empty = minitorch.tensor(np.zeros((0, 3), dtype))
    assert empty.index_select(1, minitorch.tensor(idx[:5] % 3)).shape == (0, 5)


def test_index_select_many_indices_same_as_torch():
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 300, 4096)
    same_as_torch(lambda m, x, i: m.index_select(x, 0, i), [rng.standard_normal(300).astype(np.float32), idx])
    same_as_torch(lambda m, x, i: m.index_select(x, 1, i), [rng.standard_normal((3, 300)), idx], layout="transposed")
    same_as_torch(lambda m, x, i: m.index_select(x, 0, i), [rng.standard_normal(300), np.array([0, 300])],
                  grad=False)  # out of range: both raise
    v = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    same_as_torch(lambda m, x, i: m.index_select(x, 0, i), [v, rng.integers(0, 4, 100)])
    # embedding selects rows through the same path, with an index of any shape
    same_as_torch(lambda m, i, w: m.nn.functional.embedding(i, w),
                  [idx.reshape(64, 4, 16), rng.standard_normal((300, 5)).astype(np.float32)])


def test_index_select_0d_index_keeps_the_dim():
    check(lambda m, x, i: x.index_select(1, i), lambda x, i: x[:, [1]],
          [np.arange(6.0).reshape(2, 3), np.array(1)])


@pytest.mark.parametrize("shape, dim, index", [
    ((3,), 0, [3]), ((3,), 0, [-1]), ((2, 3), 1, [[0]]), ((2, 3), 2, [0]), ((), 0, [0, 0]),
], ids=["out_of_range", "negative", "2d_index", "bad_dim", "0d_two_values"])
def test_index_select_errors(shape, dim, index):
    raises_like_torch(lambda m, x, i: m.index_select(x, dim, i), np.zeros(shape), np.array(index))


def test_index_select_float_index():
    raises_like_torch(lambda m, x, i: m.index_select(x, 0, i), np.zeros(3), np.array([0.0]))


# ---- gather, scatter, scatter_add ----

@st.composite
def scatter_case(draw, dtypes=ALL, distinct=True):
    """(self array, dim, index array no larger than self apart from dim, src array no smaller
    than index); with distinct, no two index entries of one column along dim are equal."""
    a, dim = draw(array_and_dim(dtypes, min_dims=1))
    d = dim % a.ndim
    shape = tuple(draw(st.integers(0, s)) if k != d else s for k, s in enumerate(a.shape))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    size = a.shape[d]
    if distinct:
        n = draw(st.integers(0, size))
        keys = rng.random(shape[:d] + (size,) + shape[d + 1:])
        index = np.argsort(keys, axis=d).take(np.arange(n), axis=d)
    else:
        n = draw(st.integers(0, 4)) if size else 0
        index = rng.integers(0, max(size, 1), shape[:d] + (n,) + shape[d + 1:])
    src_shape = tuple(s + draw(st.integers(0, 1)) for s in index.shape)
    src = draw(arrays(str(a.dtype), src_shape))
    return a, dim, index.astype(draw(st.sampled_from(INDEX))), src


def positions(index, dim):
    """The full NumPy index of each element of index: index itself along dim."""
    pos = list(np.indices(index.shape))
    pos[dim % index.ndim] = index.astype(np.int64)
    return tuple(pos)


@given(case=scatter_case(), layout=layouts)
def test_gather(case, layout):
    a, dim, index, _ = case
    # np.take_along_axis needs index's shape apart from dim, so cut self down to it
    cut = tuple(slice(0, s) if k != dim % a.ndim else slice(None) for k, s in enumerate(index.shape))
    check(lambda m, x, i: m.gather(x, dim, i), lambda x, i: np.take_along_axis(x[cut], i.astype(np.int64), dim),
          [a, index], layout=layout)
    check(lambda m, x, i: x.gather(dim, i), lambda x, i: np.take_along_axis(x[cut], i.astype(np.int64), dim),
          [a, index])


def test_gather_0d():
    check(lambda m, x, i: m.gather(x, 0, i), lambda x, i: np.full(2, x), [np.array(5.0), np.array([0, 0])])
    check(lambda m, x, i: m.gather(x, 0, i), lambda x, i: x[1], [np.array([5.0, 6.0]), np.array(1)])


def scatter_ref(x, dim, i, s, add=False):
    out = x.copy()
    src = s[tuple(slice(0, n) for n in i.shape)]
    if add:
        np.add.at(out, positions(i, dim), src)
    else:
        cut = tuple(slice(0, n) if k != dim % x.ndim else slice(None) for k, n in enumerate(i.shape))
        np.put_along_axis(out[cut], i.astype(np.int64), src, dim)  # out[cut] is a view of out
    return out


@given(case=scatter_case(), layout=layouts)
def test_scatter(case, layout):
    a, dim, index, src = case
    check(lambda m, x, i, s: m.scatter(x, dim, i, s), lambda x, i, s: scatter_ref(x, dim, i, s),
          [a, index, src], layout=layout)
    check(lambda m, x, i, s: x.clone().scatter_(dim, i, s), lambda x, i, s: scatter_ref(x, dim, i, s),
          [a, index, src])


@given(case=scatter_case(NUMERIC, distinct=False), layout=layouts)
def test_scatter_add(case, layout):
    a, dim, index, src = case
    check(lambda m, x, i, s: m.scatter_add(x, dim, i, s), lambda x, i, s: scatter_ref(x, dim, i, s, add=True),
          [a, index, src], layout=layout, atol=1e-4)
    check(lambda m, x, i, s: x.clone().scatter_add_(dim, i, s),
          lambda x, i, s: scatter_ref(x, dim, i, s, add=True), [a, index, src], atol=1e-4)


@pytest.mark.parametrize("dtype, value", [("float32", 2.5), ("int64", 7.9), ("int32", -3), ("bool", True)])
def test_scatter_value(dtype, value):
    a = np.zeros((3, 4), dtype)
    index = np.array([[0, 2], [1, 0]])
    expected = scatter_ref(a, 1, index, np.full(index.shape, value).astype(dtype))
    check(lambda m, x, i: m.scatter(x, 1, i, value), lambda x, i: expected, [a, index])
    check(lambda m, x, i: x.clone().scatter_(1, i, value), lambda x, i: expected, [a, index])
    # PyTorch's scatter.value overload names the number value= (the Transforms page's one-hot)
    check(lambda m, x, i: m.scatter(x, 1, i, value=value), lambda x, i: expected, [a, index])
    check(lambda m, x, i: x.clone().scatter_(1, i, value=value), lambda x, i: expected, [a, index])


def test_scatter_value_keyword_is_scatter_s_only():
    """value= names scatter's number as PyTorch's scatter.value overload does; both src= and
    value=, or value= for scatter_add_, are refused."""
    x = minitorch.zeros(3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'value'"):
        x.scatter_(0, minitorch.tensor([1]), src=minitorch.ones(1), value=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'value'"):
        x.scatter_add_(0, minitorch.tensor([1]), value=2)


def test_scatter_in_place_returns_self_and_bumps_the_version():
    x = minitorch.zeros(3)
    v = x._version
    assert x.scatter_(0, minitorch.tensor([1]), minitorch.tensor([5.0])) is x
    assert x.scatter_add_(0, minitorch.tensor([1, 1]), minitorch.ones(2)) is x
    assert x.tolist() == [0.0, 7.0, 0.0] and x._version == v + 2


def test_scatter_src_sharing_self_memory():
    x = minitorch.arange(4.0)
    x.scatter_(0, minitorch.tensor([1, 2, 3, 0]), x)
    assert x.tolist() == [3.0, 0.0, 1.0, 2.0]


@pytest.mark.parametrize("fn, arrays_", [
    (lambda m, x, i: m.gather(x, 0, i), [np.zeros((3, 4)), np.array([[3]])]),
    (lambda m, x, i: m.gather(x, 0, i), [np.zeros((3, 4)), np.array([[-1]])]),
    (lambda m, x, i: m.gather(x, 0, i), [np.zeros((3, 4)), np.array([0])]),
    (lambda m, x, i: m.gather(x, 0, i), [np.zeros((3, 4)), np.zeros((2, 5), np.int64)]),
    (lambda m, x, i: m.gather(x, 2, i), [np.zeros((3, 4)), np.zeros((2, 4), np.int64)]),
    (lambda m, x, i: m.gather(x, 0, i), [np.zeros((3, 4)), np.zeros((2, 4))]),
    (lambda m, x, i, s: m.scatter(x, 0, i, s), [np.zeros((3, 4)), np.array([[5]]), np.ones((1, 1))]),
    (lambda m, x, i, s: m.scatter(x, 0, i, s), [np.zeros((3, 4)), np.array([[0]]), np.ones((1, 1), np.int64)]),
    (lambda m, x, i, s: m.scatter(x, 0, i, s), [np.zeros((3, 4)), np.zeros((2, 5), np.int64), np.ones((2, 5))]),
    (lambda m, x, i, s: m.scatter(x, 0, i, s), [np.zeros((3, 4)), np.zeros((2, 2), np.int64), np.ones((1, 2))]),
    (lambda m, x, i, s: m.scatter(x, 0, i, s), [np.zeros((3, 4)), np.zeros(2, np.int64), np.ones(2)]),
    (lambda m, x, i, s: m.scatter(x, 0, i, s), [np.zeros((3, 4)), np.zeros((1, 2), np.int64), np.array(3.0)]),
    (lambda m, x, i, s: m.scatter(x, 0, i, s), [np.zeros(3), np.zeros(1), np.ones(1)]),
    (lambda m, x, i, s: m.scatter_add(x, 0, i, s), [np.zeros(3), np.array([3]), np.ones(1)]),
    (lambda m, x, i, s: m.scatter_add(x, 0, i, s), [np.zeros(3, np.float32), np.array([0]), np.ones(1)]),
    (lambda m, x, i, s: x.scatter_add_(0, i, s), [np.zeros(3), np.array([-1]), np.ones(1)]),
], ids=["gather_oob", "gather_negative", "gather_rank", "gather_size", "gather_dim", "gather_float_index",
        "scatter_oob", "scatter_dtype", "scatter_self_size", "scatter_src_size", "scatter_rank",
        "scatter_0d_src", "scatter_float_index", "scatter_add_oob", "scatter_add_dtype", "scatter_add__negative"])
def test_gather_scatter_errors(fn, arrays_):
    raises_like_torch(fn, *arrays_)


def test_gather_scatter_error_messages():
    x = minitorch.zeros(3, 4)
    with pytest.raises(RuntimeError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x.gather(0, minitorch.tensor([[5]]))
    with pytest.raises(RuntimeError, match=r"scatter\(\): Expected self.dtype to be equal to src.dtype"):
        x.scatter(0, minitorch.tensor([[0]]), minitorch.tensor([[1]]))
    before = x.tolist()
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.scatter_(1, minitorch.tensor([[0, 9]]), minitorch.ones(1, 2))
    assert x.tolist() == before, "a bad index must leave self untouched"


# ---- masked_fill, masked_select ----

@st.composite
def masked_case(draw, dtypes=ALL):
    dtype = draw(st.sampled_from(dtypes))
    sa, sm = draw(broadcastable_pair())
    return draw(arrays(dtype, sa)), draw(arrays("bool", sm))


def fill_value(dtype):
    return {"bool": True, "int32": -7, "int64": 9}.get(dtype, 2.5)


@given(case=masked_case(), layout=layouts)
def test_masked_fill(case, layout):
    a, mask = case
    v = fill_value(str(a.dtype))
    ref = lambda x, k: np.where(k, np.asarray(v).astype(x.dtype), x)  # noqa: E731
    out = check(lambda m, x, k: m.masked_fill(x, k, v), ref, [a, mask], layout=layout if a.ndim and mask.ndim else "contiguous")
    assert out.dtype == minitorch.tensor(a).dtype
    check(lambda m, x, k: x.masked_fill(k, m.tensor(v)), ref, [a, mask])
    if np.broadcast_shapes(a.shape, mask.shape) == a.shape:
        check(lambda m, x, k: x.clone().masked_fill_(k, v), ref, [a, mask])


def test_masked_fill_casts_the_value():
    check(lambda m, x, k: x.masked_fill(k, 2.7), lambda x, k: np.where(k, 2, x),
          [np.zeros(3, np.int64), np.array([True, False, True])])
    check(lambda m, x, k: x.masked_fill(k, m.tensor(1.5, dtype=m.float64)), lambda x, k: np.where(k, 1.5, x),
          [np.zeros(3, np.float32), np.array([True, False, True])])


def test_masked_fill_in_place():
    x = minitorch.zeros(2, 3)
    v = x._version
    assert x.masked_fill_(minitorch.tensor([True, False, True]), 1.0) is x
    assert x.tolist() == [[1.0, 0.0, 1.0]] * 2 and x._version == v + 1


@pytest.mark.parametrize("fn, arrays_", [
    (lambda m, x, k: x.masked_fill(k, 0), [np.zeros(3), np.ones(3)]),
    (lambda m, x, k: x.masked_fill(k, 0), [np.zeros(3), np.ones(3, np.int64)]),
    (lambda m, x, k: x.masked_fill(k, m.tensor([1.0])), [np.zeros(3), np.ones(3, bool)]),
    (lambda m, x, k: x.masked_fill(k, 0), [np.zeros(3), np.ones(4, bool)]),
    (lambda m, x, k: x.masked_fill_(k, 0), [np.zeros(3), np.ones((2, 3), bool)]),
    (lambda m, x, k: x.masked_fill(k, float("inf")), [np.zeros(3, np.int64), np.ones(3, bool)]),
    (lambda m, x, k: x.masked_fill(k, 2**40), [np.zeros(3, np.int32), np.ones(3, bool)]),
    (lambda m, x, k: m.masked_select(x, k), [np.zeros(3), np.ones(3)]),
    (lambda m, x, k: m.masked_select(x, k), [np.zeros(3), np.ones(4, bool)]),
], ids=["float_mask", "long_mask", "1d_value", "shape", "in_place_broadcast", "inf_into_int", "overflow",
        "select_float_mask", "select_shape"])
def test_mask_errors(fn, arrays_):
    raises_like_torch(fn, *arrays_)


def test_mask_error_messages():
    x = minitorch.zeros(3)
    with pytest.raises(RuntimeError, match="only supports boolean masks, but got mask with dtype long int"):
        x.masked_fill(minitorch.tensor([1, 0, 1]), 0)
    with pytest.raises(RuntimeError, match=r"0-dimensional value tensor, but got tensor with 1 dimension\(s\)"):
        x.masked_fill(x > 0, minitorch.tensor([1.0]))
    with pytest.raises(RuntimeError, match="expected BoolTensor for mask"):
        x.masked_select(x)


@given(case=masked_case(), layout=layouts)
def test_masked_select(case, layout):
    a, mask = case
    ref = lambda x, k: np.broadcast_arrays(x, k)[0][np.broadcast_arrays(x, k)[1]]  # noqa: E731
    check(lambda m, x, k: m.masked_select(x, k), ref, [a, mask], layout=layout if a.ndim and mask.ndim else "contiguous")
    check(lambda m, x, k: x.masked_select(k), ref, [a, mask])


# ---- nonzero, argwhere ----

@pytest.mark.parametrize("dtype", ALL)
@given(data=st.data(), layout=layouts)
def test_nonzero(dtype, data, layout):
    a = data.draw(arrays(dtype, shapes(), low=-2, high=2))
    out = check(lambda m, x: m.nonzero(x), np.argwhere, [a], layout=lay(a, layout), dtype=minitorch.int64)
    assert out.shape == (np.count_nonzero(a), a.ndim)
    check(lambda m, x: x.argwhere(), np.argwhere, [a])
    check(lambda m, x: m.argwhere(x), np.argwhere, [a])
    got = minitorch.nonzero(to_layout(a, lay(a, layout)), as_tuple=True)
    expected = np.nonzero(np.atleast_1d(a))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.dtype == minitorch.int64
        np.testing.assert_array_equal(np.asarray(g), e)


def test_nonzero_nan_and_0d():
    check(lambda m, x: x.nonzero(), np.argwhere, [np.array([0.0, math.nan, -0.0, 1.0])])
    assert minitorch.tensor(3.0).nonzero().shape == (1, 0)
    assert [t.tolist() for t in minitorch.tensor(3.0).nonzero(as_tuple=True)] == [[0]]
    assert [t.tolist() for t in minitorch.tensor(0.0).nonzero(as_tuple=True)] == [[]]


# ---- sort, argsort, topk ----

def sort_ref(x, dim, descending):
    """NumPy's stable argsort, descending by sorting the reversed order keys (NaN-free input)."""
    keys = x.astype(np.float64)
    return np.argsort(-keys if descending else keys, axis=dim, kind="stable")


@given(ad=array_and_dim(min_dims=0), layout=layouts, descending=st.booleans())
def test_sort(ad, layout, descending):
    a, dim = ad
    take = lambda x, i: np.take_along_axis(x, i, dim) if x.ndim else x  # noqa: E731
    idx = lambda x: sort_ref(x, dim, descending) if x.ndim else np.array(0)  # noqa: E731
    check(lambda m, x: m.sort(x, dim=dim, descending=descending, stable=True).values, lambda x: take(x, idx(x)), [a],
          layout=lay(a, layout))
    check(lambda m, x: x.sort(dim=dim, descending=descending, stable=True).indices, idx, [a],
          layout=lay(a, layout), dtype=minitorch.int64)
    check(lambda m, x: m.argsort(x, dim=dim, descending=descending, stable=True), idx, [a], dtype=minitorch.int64)
    # unstable: the values are the same; the indices may order ties otherwise but must point at them
    values, indices = to_layout(a, lay(a, layout)).sort(dim, descending=descending)
    np.testing.assert_array_equal(np.asarray(values), take(a, idx(a)))
    x = minitorch.tensor(a)
    np.testing.assert_array_equal(np.asarray(x.gather(dim, indices) if a.ndim else x), np.asarray(values))


def test_sort_nan_is_largest():
    a = np.array([1.0, math.nan, -1.0, math.inf, math.nan, -math.inf])
    check(lambda m, x: m.sort(x).values, lambda x: [-math.inf, -1, 1, math.inf, math.nan, math.nan], [a])
    check(lambda m, x: m.sort(x, stable=True).indices, lambda x: [5, 2, 0, 3, 1, 4], [a])
    check(lambda m, x: m.sort(x, descending=True, stable=True).values,
          lambda x: [math.nan, math.nan, math.inf, 1, -1, -math.inf], [a])
    check(lambda m, x: m.sort(x, descending=True, stable=True).indices, lambda x: [1, 4, 3, 0, 2, 5], [a])
    check(lambda m, x: m.argsort(x, descending=True, stable=True), lambda x: [1, 4, 3, 0, 2, 5], [a])


def test_sort_named_tuple():
    r = minitorch.sort(minitorch.tensor([3, 1, 2]))
    assert type(r).__name__ == "sort"
    values, indices = r
    assert values.tolist() == [1, 2, 3] and indices.tolist() == [1, 2, 0]
    assert r.values.dtype == minitorch.int64 and r.indices.dtype == minitorch.int64
    assert "minitorch.return_types.sort(" in repr(r)


def test_named_tuple_repr_is_pytorchs():
    """Printed results read as PyTorch's: one field a line after the type's name, str() the same;
    only the package name differs."""
    torch = pytest.importorskip("torch")
    calls = [lambda m: m.max(m.tensor([[1.0, 2.0], [4.0, 3.0]]), 1),
             lambda m: m.sort(m.tensor([[2, 1], [0, 3]])),
             lambda m: m.tensor([1.0, 3.0, 2.0]).topk(2),
             lambda m: m.linalg.slogdet(m.eye(2)),
             lambda m: m.aminmax(m.tensor([1, 5]))]
    for call in calls:
        got, want = call(minitorch), call(torch)
        assert repr(got).replace("minitorch.", "torch.") == repr(want)
        assert str(got) == repr(got)


@st.composite
def distinct_array(draw, dtypes=NUMERIC):
    """An array with no repeated values (so that topk's order is unique)."""
    dtype = draw(st.sampled_from(dtypes))
    shape = draw(shapes(min_dims=0))
    n = int(np.prod(shape))
    a = np.random.default_rng(draw(st.integers(0, 2**32 - 1))).permutation(n) - n // 2
    return a.reshape(shape).astype(dtype)


@given(a=distinct_array(), layout=layouts, data=st.data())
def test_topk(a, layout, data):
    dim = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    size = a.shape[dim] if a.ndim else 1
    k = data.draw(st.integers(0, size))
    largest = data.draw(st.booleans())
    if a.ndim == 0:
        check(lambda m, x: m.topk(x, k, dim, largest).values, lambda x: x, [a])
        return
    order = lambda x: sort_ref(x, dim, largest).take(np.arange(k), axis=dim)  # noqa: E731
    check(lambda m, x: m.topk(x, k, dim, largest).values, lambda x: np.take_along_axis(x, order(x), dim), [a],
          layout=layout)
    check(lambda m, x: x.topk(k, dim=dim, largest=largest, sorted=True).indices, order, [a],
          layout=layout, dtype=minitorch.int64)
    values, indices = minitorch.topk(minitorch.tensor(a), k, dim, largest, sorted=False)
    np.testing.assert_array_equal(np.sort(np.asarray(values), axis=dim),
                                  np.sort(np.take_along_axis(a, order(a), dim), axis=dim))


@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 12), largest=st.booleans(),
       dtype=st.sampled_from([np.float32, np.float64, np.int32, np.int64]), dim=st.integers(0, 1))
def test_topk_small_k_is_sorts_prefix(seed, k, largest, dtype, dim):
    # k * 8 < n takes the heap; it must give exactly sort's first k, ties and NaN in the same order
    rng = np.random.default_rng(seed)
    a = rng.integers(-5, 6, (120, 130)).astype(dtype)  # many ties
    if dtype == np.float32:
        a.flat[rng.integers(0, a.size, 40)] = math.nan
        a.flat[rng.integers(0, a.size, 40)] = -math.inf
    x = minitorch.tensor(a)
    values, indices = minitorch.topk(x, k, dim, largest)
    sv, si = minitorch.sort(x, dim, descending=largest)
    np.testing.assert_array_equal(values.numpy(), sv.numpy().take(np.arange(k), axis=dim))
    np.testing.assert_array_equal(indices.numpy(), si.numpy().take(np.arange(k), axis=dim))


def test_topk_nan_and_ties():
    check(lambda m, x: m.topk(x, 2).values, lambda x: [math.nan, 3.0], [np.array([1.0, math.nan, 3.0])])
    check(lambda m, x: m.topk(x, 2, largest=False).values, lambda x: [1.0, 3.0], [np.array([1.0, math.nan, 3.0])])
    values, indices = minitorch.topk(minitorch.tensor([1, 2, 2, 2, 0]), 2)
    assert values.tolist() == [2, 2] and all(i in (1, 2, 3) for i in indices.tolist())
    assert type(minitorch.topk(minitorch.tensor([1.0]), 1)).__name__ == "topk"


@pytest.mark.parametrize("fn, a", [
    (lambda m, x: m.sort(x, 1), np.ones(3)),
    (lambda m, x: m.sort(x, 5), np.array(1.0)),
    (lambda m, x: m.argsort(x, -2), np.ones(3)),
    (lambda m, x: m.topk(x, 4), np.ones(3)),
    (lambda m, x: m.topk(x, -1), np.ones(3)),
    (lambda m, x: m.topk(x, 1), np.ones(3, bool)),
    (lambda m, x: m.topk(x, 1, 2), np.ones((2, 2))),
    (lambda m, x: m.sort(x, 0, True, True), np.ones(3)),
], ids=["sort_dim", "sort_0d_dim", "argsort_dim", "topk_k_big", "topk_k_negative", "topk_bool", "topk_dim",
        "sort_stable_positional"])
def test_sort_errors(fn, a):
    raises_like_torch(fn, a)


# ---- unique ----

@pytest.mark.parametrize("dtype", ALL)
@given(data=st.data(), layout=layouts)
def test_unique(dtype, data, layout):
    a = data.draw(arrays(dtype, shapes(), low=-3, high=3))
    lay_ = lay(a, layout)
    check(lambda m, x: m.unique(x), np.unique, [a], layout=lay_)
    check(lambda m, x: x.unique(sorted=False, return_inverse=True)[1],
          lambda x: np.unique(x, return_inverse=True)[1].reshape(x.shape), [a], layout=lay_, dtype=minitorch.int64)
    check(lambda m, x: m.unique(x, return_counts=True)[1], lambda x: np.unique(x, return_counts=True)[1], [a],
          layout=lay_, dtype=minitorch.int64)
    out, inverse, counts = minitorch.unique(to_layout(a, lay_), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(np.asarray(out)[np.asarray(inverse)], a)
    assert int(counts.sum()) == a.size


def test_unique_nan_and_private_form():
    a = np.array([math.nan, 1.0, math.nan, 1.0])
    check(lambda m, x: m.unique(x), lambda x: np.unique(x, equal_nan=False), [a])
    check(lambda m, x: m.unique(x, return_counts=True)[1], lambda x: [2, 1, 1], [a])
    output, inverse, counts = minitorch._unique2(minitorch.tensor([3, 1, 3]))
    assert output.tolist() == [1, 3] and inverse.shape == (0,) and counts.shape == (0,)
    assert minitorch.unique(minitorch.tensor([2, 1, 2]), dim=0).tolist() == [1, 2]  # more in test_stats.py


UNIQUE_INPUTS = [[3, 1, 3, 2, 1, 1], [1.0, math.nan, math.nan, 1.0], [True, False, True], 5.0, [],
                 [[2, 1], [1, 2]], [[0.5] * 3] * 4]


@pytest.mark.parametrize("data", UNIQUE_INPUTS, ids=range(len(UNIQUE_INPUTS)))
def test_unique_results_are_sized_by_their_data(data):
    """_unique2's distinct values and counts are allocated once counted, as PyTorch's: their
    storage holds exactly their elements (not a buffer sized by the input); the inverse has the
    input's shape; the results not asked for are empty. unique_dim's likewise."""
    torch = pytest.importorskip("torch")
    for flags in [(False, False), (True, False), (False, True), (True, True)]:
        got = minitorch._unique2(minitorch.tensor(data).t(), True, *flags)
        want = torch._unique2(torch.tensor(data).t(), True, *flags)
        for g, w in zip(got, want):
            assert (tuple(g.shape), g.stride(), g.untyped_storage().nbytes(), g._version) == \
                (tuple(w.shape), w.stride(), w.untyped_storage().nbytes(), 0), (data, flags)
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    x = minitorch.tensor([[1, 2], [1, 2], [0, 5], [1, 2]])
    for dim, sizes in [(0, [(2, 2), (4,), (2,)]), (1, [(4, 2), (2,), (2,)])]:
        got = minitorch._C.unique_dim(x, dim, True, True, True)
        assert [tuple(g.shape) for g in got] == sizes
        assert [g.untyped_storage().nbytes() for g in got] == [8 * g.numel() for g in got]


# ---- index and index_put_: the ops behind t[idx] and t[idx] = v (more in tests/core/test_indexing.py) ----

def test_index_op():
    x = np.arange(24.0).reshape(2, 3, 4)
    check(lambda m, t, i: (m._C.index if m is minitorch else m.ops.aten.index)(t, [None, i]),
          lambda t, i: t[:, i], [x, np.array([2, 0, -1])])
    check(lambda m, t, k: (m._C.index if m is minitorch else m.ops.aten.index)(t, [k]),
          lambda t, k: t[k], [x, np.arange(6).reshape(2, 3) % 2 == 0])


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", NUMERIC)
def test_index_put_(accumulate, dtype):
    a = np.arange(5).astype(dtype)
    idx, v = np.array([0, 3, 0, -1]), np.array([1, 2, 3, 4]).astype(dtype)

    def ref(x, i, v):
        out = x.copy()
        if accumulate:
            np.add.at(out, i, v)
        else:
            out[i] = v  # (the later of two writes to one place wins, in order)
        return out

    check(lambda m, x, i, v: x.clone().index_put_((i,), v, accumulate=accumulate), ref, [a, idx, v])
    check(lambda m, x, i, v: m.index_put(x, (i,), v, accumulate), ref, [a, idx, v])
    check(lambda m, x, i, v: x.index_put([i], v, accumulate=accumulate), ref, [a, idx, v])
    x = minitorch.tensor(a)
    ver = x._version
    assert x.index_put_([minitorch.tensor(idx)], minitorch.tensor(v), accumulate) is x and x._version == ver + 1


@pytest.mark.parametrize("fn, arrays_", [
    (lambda m, x, i, v: x.index_put_((i,), v), [np.zeros(5), np.array([7]), np.ones(1)]),
    (lambda m, x, i, v: x.index_put_((i,), v), [np.zeros(5, np.float32), np.array([0]), np.ones(1, np.int64)]),
    (lambda m, x, i, v: x.index_put_((i,), v), [np.zeros(5), np.array([0, 1]), np.ones(3)]),
    (lambda m, x, i, v: x.index_put_((i, i), v), [np.zeros(5), np.array([0, 1]), np.ones(2)]),
    (lambda m, x, i, v: x.index_put_((i,), v), [np.zeros(5), np.array([0.0]), np.ones(1)]),
], ids=["out_of_range", "dtype", "value_shape", "too_many", "float_index"])
def test_index_put_errors(fn, arrays_):
    raises_like_torch(fn, *arrays_)


def test_index_put_reports_a_shape_mismatch_before_an_index_out_of_bounds():
    """PyTorch's order: the values' shape is checked against self[indices]'s before any index
    is read, so a call wrong in both raises the shape's RuntimeError on every device."""
    x = np.zeros(5, dtype=np.float32)

    def put(lib, t):
        return t.index_put_((lib.tensor([7]),), lib.ones(3))

    assert raises_like_torch(put, x) is RuntimeError
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\]"):
        minitorch.zeros(5).index_put_((minitorch.tensor([7]),), minitorch.ones(3))
    with pytest.raises(IndexError, match="index 7 is out of bounds for dimension 0 with size 5"):
        minitorch.zeros(5).index_put_((minitorch.tensor([7]),), minitorch.ones(1))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_large_scatters_and_puts_on_threads(threads, layout):
    """Puts into a dense self split its rows between threads (cpu/index.c); many repeated
    positions must still all be added, and a self that is not dense (sliced) runs serially."""
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(threads)
    try:
        rng = np.random.default_rng(11)
        src = rng.standard_normal((300, 400))
        idx = rng.integers(0, 50, (300, 400))  # ~8 repeats of each position per row
        base = rng.standard_normal((300, 50))
        want = base.copy()
        np.add.at(want, (np.arange(300)[:, None], idx), src)
        got = to_layout(base, layout).scatter_add_(1, minitorch.tensor(idx), minitorch.tensor(src))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
        perm = np.argsort(rng.random((300, 50)), axis=1)  # unique positions per row: a plain put
        want = base.copy()
        want[np.arange(300)[:, None], perm] = src[:, :50]
        got = to_layout(base, layout).scatter_(1, minitorch.tensor(perm), minitorch.tensor(src[:, :50]))
        np.testing.assert_array_equal(got.numpy(), want)
        rows = rng.integers(0, 300, 2000)  # index_put_ accumulating whole rows, repeated
        want = rng.standard_normal((300, 400))
        got = to_layout(want, layout)
        vals = rng.standard_normal((2000, 400))
        np.add.at(want, rows, vals)
        got.index_put_((minitorch.tensor(rows),), minitorch.tensor(vals), accumulate=True)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    finally:
        minitorch.set_num_threads(before)
