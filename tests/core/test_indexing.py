"""Indexing, reading and assignment, against NumPy (values and shapes) and PyTorch (strides,
offsets, errors).

Basic indexing (ints, negative ints, slices with steps, None, ...): every read is a view, its data
pointer the base's plus its offset, and a write through it lands where NumPy's `a[index] = v`
lands. Advanced indexing (integer tensors, lists, NumPy arrays, bool masks, Python bools, mixed
with basic items): reads are copies with NumPy's shapes (broadcast index dims in place when
adjacent, else in front), assignment is index_put_. Assignment bumps the version counter once."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, shapes, to_layout, torch_layout

DTYPES = ("float32", "float64", "int64", "int32", "bool")


def base_array(shape, dtype="float64"):
    return (np.arange(int(np.prod(shape))) + 1).astype(dtype).reshape(shape)




def long_strides(t):
    """The strides of the dims longer than 1: the only ones that say where elements are."""
    return tuple(s for n, s in zip(t.shape, t.stride()) if n > 1)


def assert_views_base(view, base):
    delta = (view.storage_offset() - base.storage_offset()) * view.element_size()
    assert view.data_ptr() == base.data_ptr() + delta


# ---- a hypothesis strategy for basic index tuples ----

@st.composite
def slices(draw, size):
    bound = st.one_of(st.none(), st.integers(-size - 2, size + 2))
    return slice(draw(bound), draw(bound), draw(st.one_of(st.none(), st.integers(1, 3))))


@st.composite
def basic_index(draw, shape):
    """An index of ints (in range), slices, None and at most one Ellipsis for an array of shape."""
    ndim = len(shape)
    ellipsis = draw(st.booleans())
    n_front = draw(st.integers(0, ndim))
    n_back = draw(st.integers(0, ndim - n_front)) if ellipsis else 0
    dims = list(range(n_front)) + list(range(ndim - n_back, ndim))

    def item(d):
        size = shape[d]
        if size and draw(st.booleans()):
            return draw(st.integers(-size, size - 1))
        return draw(slices(size))

    items = [item(d) for d in dims]
    if ellipsis:
        items.insert(n_front, Ellipsis)
    for _ in range(draw(st.integers(0, 2))):
        items.insert(draw(st.integers(0, len(items))), None)
    if len(items) == 1 and draw(st.booleans()):
        return items[0]  # a bare index, not a tuple
    return tuple(items)


@st.composite
def indexed(draw, max_dims=4):
    shape = draw(shapes(min_dims=0, max_dims=max_dims, max_side=5))
    return shape, draw(basic_index(shape))


# ---- reading ----

@given(indexed(), st.sampled_from(("contiguous", "transposed", "sliced")), st.sampled_from(DTYPES))
def test_getitem_matches_numpy(si, layout, dtype):
    shape, index = si
    a = base_array(shape, dtype)
    t = to_layout(a, layout)
    version = t._version
    r = t[index]
    expected = np.asarray(a[index])
    assert tuple(r.shape) == expected.shape
    assert r.dtype == t.dtype
    np.testing.assert_array_equal(np.asarray(r), expected)
    assert t._version == version, "reading must not bump the version counter"
    assert_views_base(r, t)


@given(indexed(), st.sampled_from(("contiguous", "transposed", "sliced")))
def test_getitem_writes_through(si, layout):
    shape, index = si
    a = base_array(shape)
    t = to_layout(a, layout)
    r = t[index]
    r.fill_(-1)
    a[index] = -1
    np.testing.assert_array_equal(np.asarray(t), a)


@given(indexed(), st.sampled_from(("contiguous", "transposed", "sliced")))
def test_getitem_geometry_matches_torch(si, layout):
    torch = pytest.importorskip("torch")
    shape, index = si
    a = base_array(shape)
    t = to_layout(a, layout)
    tt = torch_layout(torch, a, layout)
    r, tr = t[index], tt[index]
    assert r.shape == tuple(tr.shape)
    if r.numel():  # (the stride of a size-1 dim means nothing, and is left out)
        assert long_strides(r) == long_strides(tr)
        # (An empty slice keeps its offset inside the storage, where PyTorch's may point past it.)
        assert r.storage_offset() == tr.storage_offset()


@pytest.mark.parametrize(
    "index, shape",
    [
        (0, (4,)),
        (-1, (4,)),
        ((1, 2), ()),
        ((-2, -1), ()),
        (slice(1, 3), (2, 4)),
        (slice(None, None, 2), (2, 4)),
        ((slice(None), slice(1, None, 2)), (3, 2)),
        ((Ellipsis, 0), (3,)),
        ((0, Ellipsis), (4,)),
        ((None, 0), (1, 4)),
        ((0, None, slice(None), None), (1, 4, 1)),
        ((None, Ellipsis, None), (1, 3, 4, 1)),
        ((slice(-100, 100),), (3, 4)),
        ((slice(5, None),), (0, 4)),
        ((slice(2, 1),), (0, 4)),
        ((), (3, 4)),
        (Ellipsis, (3, 4)),
        ((1, slice(None), Ellipsis), (4,)),
    ],
)
def test_getitem_cases(index, shape):
    a = base_array((3, 4))
    r = minitorch.tensor(a)[index]
    assert tuple(r.shape) == shape
    np.testing.assert_array_equal(np.asarray(r), a[index])


@pytest.mark.parametrize(
    "index",
    [np.int64(1), np.int32(1), minitorch.tensor(1), minitorch.tensor(1, dtype=minitorch.int32), np.array(1)],
    ids=["np.int64", "np.int32", "tensor_int64", "tensor_int32", "np_0d_array"],
)
def test_integer_like_indices(index):
    t = minitorch.arange(6).view(2, 3)
    assert t[index].tolist() == [3, 4, 5]
    assert t[:, index].tolist() == [1, 4]


def test_slice_bounds_can_be_integer_likes():
    t = minitorch.arange(6)
    assert t[np.int64(1):minitorch.tensor(5):np.int32(2)].tolist() == [1, 3]


@pytest.mark.parametrize("index", [Ellipsis, slice(None), ()], ids=["ellipsis", "colon", "empty_tuple"])
def test_full_index_is_a_new_view(index):
    t = minitorch.arange(6.0).view(2, 3)
    v = t[index]
    assert v is not t
    assert v.shape == t.shape and v.stride() == t.stride() and v.data_ptr() == t.data_ptr()


def test_index_of_0d_tensor():
    t = minitorch.tensor(5.0)
    assert t[None].shape == (1,)
    assert t[...].shape == () and t[()].shape == ()
    assert t[None, ..., None].shape == (1, 1)
    with pytest.raises(IndexError):
        t[0]
    with pytest.raises(IndexError):
        t[:]


# ---- read errors ----

@pytest.mark.parametrize(
    "shape, index, message",
    [
        ((3,), 5, "index 5 is out of bounds for dimension 0 with size 3"),
        ((3,), -4, "index -4 is out of bounds for dimension 0 with size 3"),
        ((3,), 3, "index 3 is out of bounds for dimension 0 with size 3"),
        ((3, 4), (slice(None), 4), "index 4 is out of bounds for dimension 1 with size 4"),
        ((3, 4), (Ellipsis, -5), "index -5 is out of bounds for dimension 1 with size 4"),
        ((3,), (None, 3), "index 3 is out of bounds for dimension 1 with size 3"),
        ((0,), 0, "index 0 is out of bounds for dimension 0 with size 0"),
        ((3, 4), (1, 4), "index 4 is out of bounds for dimension 1 with size 4"),
        ((2, 3, 4), (0, 0, 9), "index 9 is out of bounds for dimension 2 with size 4"),
    ],
)
def test_out_of_range_index(shape, index, message):
    t = minitorch.zeros(shape)
    with pytest.raises(IndexError) as e:
        t[index]
    assert str(e.value) == message
    with pytest.raises(IndexError) as e:
        t[index] = 1
    assert str(e.value) == message


@pytest.mark.parametrize("shape, index", [((0, 2), lambda i: i), ((3, 0), lambda i: (slice(None), i)),
                                          ((2, 0, 4), lambda i: (0, i, i))])
def test_a_tensor_index_into_an_empty_dim(shape, index):
    """PyTorch's check before any kernel: no value indexes a dim of size 0 (on CUDA it comes
    before the view of the result, which the device's range check would reach too late)."""
    t = minitorch.zeros(shape)
    i = minitorch.tensor([0])
    with pytest.raises(IndexError, match="^index is out of bounds for dimension with size 0$"):
        t[index(i)]
    with pytest.raises(IndexError, match="^index is out of bounds for dimension with size 0$"):
        t[index(i)] = 1.0
    empty = t[index(minitorch.tensor([], dtype=minitorch.int64))]  # no index at all: fine
    assert empty.numel() == 0


@pytest.mark.parametrize(
    "shape, index, message",
    [
        ((3,), (0, 0), "too many indices for tensor of dimension 1"),
        ((2, 3), (0, slice(None), None, 1), "too many indices for tensor of dimension 2"),
        ((2, 3), (Ellipsis, 0, 0, 0), "too many indices for tensor of dimension 2"),
    ],
)
def test_too_many_indices(shape, index, message):
    with pytest.raises(IndexError, match=message):
        minitorch.zeros(shape)[index]


@pytest.mark.parametrize(
    "index, message",
    [
        (slice(None, None, 0), "slice step cannot be zero"),
        ((slice(None), slice(None, None, 0)), "slice step cannot be zero"),
        (slice(None, None, -1), "step must be greater than zero"),
        ((0, slice(3, 0, -2)), "step must be greater than zero"),
    ],
)
def test_bad_steps_raise_value_error(index, message):
    t = minitorch.zeros(2, 3)
    with pytest.raises(ValueError, match=message):
        t[index]
    with pytest.raises(ValueError, match=message):
        t[index] = 0


@pytest.mark.parametrize("index", [1.0, object(), {}], ids=["float", "object", "dict"])
def test_other_index_types(index):
    with pytest.raises(IndexError, match="only integers, slices"):
        minitorch.zeros(2, 3)[index]


def test_str_index_is_a_type_error_as_in_pytorch():
    # PyTorch reads a str as data for an index tensor: TypeError "new(): invalid data type 'str'"
    with pytest.raises(TypeError, match="invalid data type 'str'"):
        minitorch.zeros(2, 3)["a"]


def test_huge_int_index_raises():
    with pytest.raises(Exception) as e:  # noqa: PT011 - the class is checked in test_errors.py
        minitorch.zeros(3)[2**70]
    assert isinstance(e.value, (IndexError, ValueError, OverflowError))


# ---- assignment ----

@st.composite
def value_for(draw, target_shape, dtype):
    """A scalar, or an array broadcastable to target_shape (no extra leading dims)."""
    kind = draw(st.sampled_from(["int", "float", "bool", "array"]))
    if kind == "int":
        return draw(st.integers(-10, 10))
    if kind == "float":
        return draw(st.floats(-10, 10, width=32))
    if kind == "bool":
        return draw(st.booleans())
    keep = len(target_shape) - draw(st.integers(0, len(target_shape)))
    shape = tuple(s if draw(st.booleans()) else 1 for s in target_shape[len(target_shape) - keep:])
    return draw(arrays(draw(st.sampled_from(DTYPES)) if draw(st.booleans()) else dtype, shape))


@given(indexed(), st.sampled_from(("contiguous", "transposed", "sliced")), st.sampled_from(DTYPES), st.data())
def test_setitem_matches_numpy(si, layout, dtype, data):
    shape, index = si
    a = base_array(shape, dtype)
    t = to_layout(a, layout)
    value = data.draw(value_for(np.asarray(a[index]).shape, dtype))
    version = t._version
    t[index] = minitorch.tensor(value) if isinstance(value, np.ndarray) else value
    expected = a.copy()
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and a.dtype.kind in "iub":
        value = value.astype(a.dtype)  # NumPy's same_kind casting refuses float->int; the cast truncates
    expected[index] = value
    np.testing.assert_array_equal(np.asarray(t), expected)
    assert t._version == version + 1


@pytest.mark.parametrize(
    "index, value, expected",
    [
        (0, 5, [[5, 5, 5, 5], [4, 5, 6, 7], [8, 9, 10, 11]]),
        ((slice(None), 1), -1, [[0, -1, 2, 3], [4, -1, 6, 7], [8, -1, 10, 11]]),
        ((slice(None, None, 2), slice(None, None, 3)), 7, [[7, 1, 2, 7], [4, 5, 6, 7], [7, 9, 10, 7]]),
        (1, [9, 8, 7, 6], [[0, 1, 2, 3], [9, 8, 7, 6], [8, 9, 10, 11]]),
        (slice(None), [1, 2, 3, 4], [[1, 2, 3, 4]] * 3),
        ((slice(None), slice(None, 2)), [[1], [2], [3]], [[1, 1, 2, 3], [2, 2, 6, 7], [3, 3, 10, 11]]),
        ((-1, -1), 99, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 99]]),
        ((Ellipsis, 0), 0.9, [[0, 1, 2, 3], [0, 5, 6, 7], [0, 9, 10, 11]]),
        (0, 2.7, [[2, 2, 2, 2], [4, 5, 6, 7], [8, 9, 10, 11]]),
        (0, True, [[1, 1, 1, 1], [4, 5, 6, 7], [8, 9, 10, 11]]),
        (0, np.int64(3), [[3, 3, 3, 3], [4, 5, 6, 7], [8, 9, 10, 11]]),
        (0, [1.5, 2.5, -3.5, 4.5], [[1, 2, -3, 4], [4, 5, 6, 7], [8, 9, 10, 11]]),
        (None, 1, [[1] * 4] * 3),
        (slice(1, 1), 5, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]),
    ],
)
def test_setitem_cases(index, value, expected):
    t = minitorch.arange(12).view(3, 4).clone()
    t[index] = minitorch.tensor(value) if isinstance(value, list) else value
    assert t.tolist() == expected


def test_setitem_0d_tensor_value():
    t = minitorch.zeros(2, 3, dtype=minitorch.int64)
    t[0] = minitorch.tensor(3.9)
    assert t.tolist() == [[3, 3, 3], [0, 0, 0]]


def test_setitem_from_overlapping_view_of_itself():
    t = minitorch.arange(9.0).view(3, 3)
    t[:] = t.t()
    assert t.tolist() == [[0.0, 3.0, 6.0], [1.0, 4.0, 7.0], [2.0, 5.0, 8.0]]


def test_setitem_through_expanded_view():
    base = minitorch.zeros(3, 1)
    t = base.expand(3, 4)
    t[1] = 1
    assert base.tolist() == [[0.0], [1.0], [0.0]]


def test_setitem_writes_into_view_base():
    base = minitorch.zeros(4, 4)
    v = base.t()[1:, ::2]
    v[0] = 5
    assert base[:, 1].tolist() == [5.0, 0.0, 5.0, 0.0]
    assert base._version == v._version


@pytest.mark.parametrize("value_shape", [(1, 4), (1, 1, 4)])
def test_setitem_value_with_leading_ones(value_shape):
    t = minitorch.zeros(3, 4)
    t[0] = minitorch.ones(value_shape)
    assert t.tolist()[0] == [1.0] * 4


def test_setitem_shape_mismatch():
    t = minitorch.zeros(3, 4)
    with pytest.raises(RuntimeError, match="must match the existing size"):
        t[0] = minitorch.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError):
        t[0] = minitorch.zeros(2, 4)


@pytest.mark.parametrize(
    "value, message",
    [("a", "can't assign a str to a minitorch.LongTensor"),
     (None, "can't assign a NoneType to a minitorch.LongTensor"),
     ([1, 2, 3, 4], "can't assign a list to a minitorch.LongTensor"),
     (object(), "can't assign a object to a minitorch.LongTensor")],
    ids=["str", "None", "list", "object"],
)
def test_setitem_bad_value_type(value, message):
    t = minitorch.zeros(3, 4, dtype=minitorch.int64)
    with pytest.raises(TypeError, match=message):
        t[0] = value
    assert t.tolist() == [[0] * 4] * 3


def test_delitem_raises():
    t = minitorch.zeros(3)
    with pytest.raises(TypeError, match="does not support deleting"):
        del t[0]


@pytest.mark.parametrize(
    "dtype, value",
    [
        (minitorch.int64, 2**70),
        (minitorch.int32, 2**40),
        (minitorch.int64, float("nan")),
    ],
)
def test_setitem_out_of_range_scalar_raises(dtype, value):
    t = minitorch.zeros(2, dtype=dtype)
    with pytest.raises((ValueError, RuntimeError, OverflowError)):
        t[0] = value


# ---- the version counter ----

def test_version_counter_counts_in_place_writes():
    t = minitorch.zeros(3, 4)
    v0 = t._version
    _ = t[0] + 1
    _ = t[1:, ::2]
    assert t._version == v0
    t[0] = 1
    assert t._version == v0 + 1
    t[:, 1] = minitorch.ones(3)
    assert t._version == v0 + 2
    view = t[1]
    view.fill_(2)
    assert t._version == view._version == v0 + 3
    t.add_(1)
    assert t._version == v0 + 4
    t += 1
    assert t._version == v0 + 5
    t[1:1] = 5  # an empty target still counts, as in PyTorch
    assert t._version == v0 + 6


def test_version_counter_unchanged_by_failed_setitem():
    t = minitorch.zeros(3)
    v0 = t._version
    with pytest.raises(IndexError):
        t[5] = 1
    with pytest.raises(TypeError):
        t[0] = "a"
    assert t._version == v0


def test_version_counter_is_shared_with_views_not_copies():
    t = minitorch.zeros(3, 4)
    v, c = t.t(), t.clone()
    v[0] = 1
    assert t._version == v._version
    before = c._version
    t[1] = 2
    assert c._version == before


@pytest.mark.parametrize("make", [lambda: minitorch.zeros(3), lambda: minitorch.ones(3), lambda: minitorch.full((3,), 2.0)],
                         ids=["zeros", "ones", "full"])
def test_fresh_tensor_version_is_zero(make):
    assert make()._version == 0


# ---- copy_ and zero_: the in-place writes assignment is made of ----

@pytest.mark.parametrize("dst_layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("src_shape", [(3, 4), (4,), (1, 4), (3, 1), ()])
def test_copy_broadcasts_into_any_layout(src_shape, dst_layout):
    dst = to_layout(np.zeros((3, 4)), dst_layout)
    src = np.arange(int(np.prod(src_shape)), dtype=np.float64).reshape(src_shape) + 1
    version = dst._version
    out = dst.copy_(minitorch.tensor(src))
    assert out is dst
    np.testing.assert_array_equal(np.asarray(dst), np.broadcast_to(src, (3, 4)))
    assert dst._version == version + 1


@pytest.mark.parametrize("src_dtype", DTYPES)
@pytest.mark.parametrize("dst_dtype", DTYPES)
def test_copy_converts_dtype(src_dtype, dst_dtype):
    src = np.array([[0.0, 1.5], [-2.5, 3.0]]).astype(src_dtype)
    dst = minitorch.zeros(2, 2, dtype=getattr(minitorch, dst_dtype))
    dst.copy_(minitorch.tensor(src).t())
    np.testing.assert_array_equal(np.asarray(dst), src.T.astype(dst_dtype))
    assert dst.dtype == getattr(minitorch, dst_dtype)


def test_copy_errors():
    with pytest.raises(RuntimeError, match="must match the existing size"):
        minitorch.zeros(2, 3).copy_(minitorch.zeros(3, 2))
    with pytest.raises(RuntimeError):
        minitorch.zeros(2, 3).copy_(minitorch.zeros(1, 2, 3))
    # a number is a source, as in PyTorch (copy_(3) fills with 3); anything else is refused
    with pytest.raises(TypeError, match="must be Tensor"):
        minitorch.zeros(3).copy_("3")
    assert minitorch.zeros(3).copy_(3).tolist() == [3.0, 3.0, 3.0]


def test_copy_from_overlapping_source():
    t = minitorch.arange(5.0)
    t[1:].copy_(t[:-1])
    assert t.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_(dtype):
    t = minitorch.ones(3, 4, dtype=getattr(minitorch, dtype))
    version = t._version
    out = t.t()[1:].zero_()
    assert out.shape == (3, 3)
    expected = np.ones((3, 4), dtype=dtype)
    expected[:, 1:] = 0
    np.testing.assert_array_equal(np.asarray(t), expected)
    assert t._version == version + 1
    assert t.zero_() is t and not np.asarray(t).any()


def test_fill_():
    t = minitorch.zeros(2, 3, dtype=minitorch.int32)
    assert t[:, ::2].fill_(7) is not None
    assert t.tolist() == [[7, 0, 7], [7, 0, 7]]
    assert t.fill_(2.9).tolist() == [[2, 2, 2], [2, 2, 2]]


# ---- advanced indexing: integer tensors, lists, arrays, bool masks ----

@st.composite
def advanced_index(draw, shape):
    """An index spec for an array of shape: slices and integer arrays broadcasting together, or
    one bool mask over some consecutive dims among slices; maybe an Ellipsis or a None. Arrays are
    ("int", array, form) or ("mask", array, form), form saying how build() passes them."""
    ndim = len(shape)
    forms = st.sampled_from(["int64", "int32", "list", "numpy"])
    items = []
    sized = [d for d in range(ndim) if shape[d]]
    if draw(st.booleans()) or not sized:
        start = draw(st.integers(0, ndim - 1))
        k = draw(st.integers(1, ndim - start))
        mask = draw(arrays("bool", shape[start:start + k]))
        items = [draw(slices(shape[d])) for d in range(start)] + [("mask", mask, draw(forms))]
        items += [draw(slices(s)) for s in shape[start + k:]]
    else:
        bshape = draw(shapes(min_dims=1, max_dims=2, min_side=0, max_side=3))
        picked = draw(st.sets(st.sampled_from(sized), min_size=1))
        for d in range(ndim):
            if d in picked:
                idx = draw(arrays("int64", bshape, low=-shape[d], high=shape[d] - 1))
                items.append(("int", idx, draw(forms)))
            else:
                items.append(draw(slices(shape[d])))
    while items and isinstance(items[-1], slice) and draw(st.booleans()):
        items.pop()  # trailing dims left out
    if draw(st.booleans()):
        items.insert(draw(st.integers(0, len(items))), None)
    if draw(st.booleans()):
        # an Ellipsis standing for the slices it replaces
        at = draw(st.integers(0, len(items)))
        end = at
        while end < len(items) and isinstance(items[end], slice) and items[end] == slice(None):
            end += 1
        items[at:end] = [Ellipsis]
    return tuple(items)


def build(spec, lib):
    """The index spec for minitorch, torch or NumPy (lib=np: plain NumPy arrays)."""
    out = []
    for item in spec:
        if not isinstance(item, tuple):
            out.append(item)
            continue
        _, arr, form = item
        if lib is np or form == "numpy":
            out.append(arr)
        elif form == "list":
            out.append(arr.tolist() if arr.size else lib.tensor(arr))  # ([] would be a float list)
        else:
            out.append(lib.tensor(arr.astype(form) if arr.dtype != bool else arr))
    return tuple(out)


@st.composite
def advanced_case(draw):
    """(NumPy array, the same as a tensor in some layout, an advanced index spec for them)."""
    shape = draw(shapes(min_dims=1, max_dims=4, max_side=4))
    a = base_array(shape, draw(st.sampled_from(DTYPES)))
    return a, to_layout(a, draw(st.sampled_from(("contiguous", "transposed", "sliced")))), draw(advanced_index(shape))


@given(advanced_case())
def test_advanced_getitem_matches_numpy(case):
    a, t, spec = case
    version = t._version
    r = t[build(spec, minitorch)]
    expected = a[build(spec, np)]
    assert tuple(r.shape) == expected.shape and r.dtype == t.dtype
    np.testing.assert_array_equal(np.asarray(r), expected)
    assert t._version == version
    if r.numel():
        assert r.data_ptr() != t.data_ptr() or t.numel() == 0, "advanced indexing copies"


@given(advanced_case(), st.data())
def test_advanced_setitem_matches_numpy(case, data):
    a, t, spec = case
    target = np.arange(a.size).reshape(a.shape)[build(spec, np)]
    expected = a.copy()
    if np.unique(target).size == target.size and data.draw(st.booleans()):
        # an array value (no element written twice, so the order of writes does not matter)
        keep = data.draw(st.integers(0, target.ndim))
        vshape = tuple(s if data.draw(st.booleans()) else 1 for s in target.shape[target.ndim - keep:])
        value = data.draw(arrays(str(a.dtype), vshape))
        t[build(spec, minitorch)] = minitorch.tensor(value)
    else:
        value = data.draw(st.sampled_from([0, 1, True, -2]))
        t[build(spec, minitorch)] = value
    expected[build(spec, np)] = value
    np.testing.assert_array_equal(np.asarray(t), expected)


@pytest.mark.parametrize(
    "index",
    [
        lambda L: [0, 1],
        lambda L: [[0, 1], [1, 0]],  # a list of sequences reads as a tuple, as in PyTorch
        lambda L: [0, slice(None)],
        lambda L: [],
        lambda L: L.tensor([1, 0], dtype=L.int32),
        lambda L: np.array([1, 0]),
        lambda L: [True, False],
        lambda L: [True, 0],
        lambda L: [1.0, 0.0],
        lambda L: True,
        lambda L: False,
        lambda L: (None, True, 0),
        lambda L: L.tensor(True),
        lambda L: L.tensor(False),
        lambda L: ([0, 1], slice(None), [1, 2]),
        lambda L: (slice(None), [0, 1], [1, 2]),
        lambda L: (0, slice(None), [1, 2]),  # the int is a select first: shape (3, 2), not NumPy's (2, 3)
        lambda L: ([0], slice(None), 1),
        lambda L: (L.ones(2, 3, dtype=L.bool), 1),
        lambda L: (1, L.tensor([True, False, True])),
        lambda L: (Ellipsis, [0, 1]),
        lambda L: ([0], Ellipsis, [0]),
        lambda L: ([0], None, [0]),
        lambda L: (L.tensor(1), slice(None), [0, 1]),
        lambda L: (L.tensor([[0], [1]]), slice(1, None), L.tensor([0, 3, 2])),
        lambda L: L.arange(24).reshape(2, 3, 4) > 10,
        lambda L: (slice(None), L.tensor([[0, 2], [1, 1]]), slice(None, None, 2)),
        lambda L: (L.tensor([-1, -2]),),
    ],
)
def test_advanced_getitem_cases_match_torch(index):
    torch = pytest.importorskip("torch")
    a = base_array((2, 3, 4))
    for layout in ("contiguous", "transposed"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # PyTorch's about a list read as a tuple
            expected = torch_layout(torch, a, layout)[index(torch)]
        r = to_layout(a, layout)[index(minitorch)]
        assert tuple(r.shape) == tuple(expected.shape)
        np.testing.assert_array_equal(np.asarray(r), expected.numpy())
        t, tt = to_layout(a, layout), torch_layout(torch, a, layout)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # PyTorch's about a list read as a tuple
            tt[index(torch)] = -1
        t[index(minitorch)] = -1
        np.testing.assert_array_equal(np.asarray(t), tt.numpy())


def test_advanced_0d_and_empty():
    t = minitorch.tensor(5.0)
    assert t[True].tolist() == [5.0] and t[minitorch.tensor(False)].shape == (0,)
    e = minitorch.zeros(0, 3)
    assert e[minitorch.tensor([], dtype=minitorch.int64)].shape == (0, 3)
    assert e[:, [0, 2]].shape == (0, 2)
    assert e[e > 0].shape == (0,)
    e[e > 0] = 1.0
    e[:, [1]] = 2.0


def test_mask_assignment_and_index_put_dispatch():
    t = minitorch.tensor([[1.0, -2.0], [-3.0, 4.0]])
    version = t._version
    t[t < 0] = 0
    assert t.tolist() == [[1.0, 0.0], [0.0, 4.0]] and t._version == version + 1
    t[[0, 1], [1, 0]] = minitorch.tensor([7.0, 8.0])
    assert t.tolist() == [[1.0, 7.0], [8.0, 4.0]]
    t[minitorch.tensor([1])] = minitorch.tensor([[5.0, 6.0]])
    assert t.tolist()[1] == [5.0, 6.0]
    t[0, [0, 0]] = minitorch.tensor([1.0, 2.0])  # the later write wins, as in PyTorch on the CPU
    assert t.tolist()[0][0] == 2.0
    _, events = __import__("minitorch._journey", fromlist=["record"]).record(lambda: t[t > 1])
    assert "index" in [e.name for e in events if e.layer == "Op"]


@pytest.mark.parametrize(
    "index",
    [
        lambda L: L.tensor([5]),
        lambda L: (slice(None), L.tensor([-5])),
        lambda L: L.tensor([0.0]),
        lambda L: L.ones(3, dtype=L.bool),
        lambda L: L.ones(2, 4, dtype=L.bool),
        lambda L: (L.tensor([0, 1]), L.tensor([0, 1, 2])),
        lambda L: L.ones(2, 3, 4, 5, dtype=L.bool),
        lambda L: (0, 0, 0, [0]),
        lambda L: (L.tensor([[0, 1]]), L.tensor([0, 1]), 0, [0]),
    ],
    ids=["out_of_range", "negative_out_of_range", "float_tensor", "mask_shape",
         "mask_2d_shape", "broadcast", "mask_too_many", "too_many", "too_many_mixed"],
)
def test_advanced_index_errors_match_torch(index):
    torch = pytest.importorskip("torch")
    a = base_array((2, 3, 4))
    for read in (True, False):
        with pytest.raises(Exception) as ours:  # noqa: PT011 - the class is compared with PyTorch's
            t = minitorch.tensor(a)
            if read:
                t[index(minitorch)]
            else:
                t[index(minitorch)] = 1.0
        with pytest.raises(Exception) as theirs:  # noqa: PT011
            tt = torch.tensor(a)
            if read:
                tt[index(torch)]
            else:
                tt[index(torch)] = 1.0
        assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)


def test_advanced_index_error_messages():
    t = minitorch.zeros(2, 3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 2"):
        t[minitorch.tensor([5])]
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        t[minitorch.tensor([0.0])]
    with pytest.raises(IndexError, match=r"The shape of the mask \[3\] at index 0 does not match the shape of "
                                         r"the indexed tensor \[2, 3, 4\] at index 0"):
        t[minitorch.ones(3, dtype=minitorch.bool)]
    with pytest.raises(IndexError, match=r"could not be broadcast together with shapes \[2\], \[3\]"):
        t[[0, 1], [0, 1, 2]]
    with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match, got "
                                           "Float for the destination and Long for the source."):
        t[[0]] = minitorch.zeros(1, 3, 4, dtype=minitorch.int64)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] cannot be broadcast to "
                                           r"indexing result of shape \[2, 3, 4\]"):
        t[[0, 1]] = minitorch.zeros(3)
    before = t.clone()
    with pytest.raises(IndexError):
        t[[0, 7]] = 1.0
    assert t.tolist() == before.tolist(), "a bad index must leave the tensor untouched"


@pytest.mark.parametrize(
    "element, expected",
    [(2, True), (5, False), (2.0, True), (2.5, False), (True, True), (np.int64(3), True),
     ("tensor1", True), ("tensor_row", True), ("tensor_missing", False)],
)
def test_in_operator_like_torch(element, expected):
    # `x in t` had no __contains__: Python iterated the rows and compared each with x (a row of a
    # 2-D tensor compared elementwise, and bool() of it raised); PyTorch tests (x == t).any().
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        t = lib.tensor([[1, 2], [3, 4]])
        x = {"tensor1": lib.tensor(4), "tensor_row": lib.tensor([3, 4]),
             "tensor_missing": lib.tensor([9])}.get(element, element) if isinstance(element, str) else element
        assert (x in t) is expected


def test_in_operator_refuses_other_types_like_torch():
    for lib in (minitorch, pytest.importorskip("torch")):
        with pytest.raises(RuntimeError, match="Tensor.__contains__ only supports Tensor or scalar, but you passed "
                                               "in a <class 'str'>."):
            "a" in lib.tensor([1, 2])  # noqa: B015 - the membership test is what raises


# ---- every index form, drawn by hypothesis: against PyTorch, and NumPy where it agrees ----
# Items of an index spec: ("int", i), ("npint", np scalar), ("t0", i) a 0-dim int tensor,
# ("slice", s), ("range", r), ("list", ints), ("tuple", ints), ("nested", 2-D ints),
# ("boollist", bools), ("nparr", array), ("mask", bool array), ("bool", b), None, Ellipsis.

INT_LIKE = {"int", "npint", "t0"}
ADVANCED = {"range", "list", "tuple", "nested", "boollist", "nparr", "mask", "bool"}


@st.composite
def index_item(draw, shape, d, length):
    """One item for dim d of shape (advanced ones of `length` positions), and the dims it uses."""
    size = shape[d]
    kinds = ["slice", "None", "bool"] + (["int", "npint", "t0", "range", "list", "tuple", "nested", "nparr"]
                                          if size else []) + ["boollist", "mask"]
    kind = draw(st.sampled_from(kinds))
    ints = st.integers(-size, size - 1) if size else st.just(0)
    if kind == "slice":
        return ("slice", draw(slices(size))), 1
    if kind == "None":
        return None, 0
    if kind == "bool":
        return ("bool", draw(st.booleans())), 0
    if kind == "int":
        return ("int", draw(ints)), 1
    if kind == "npint":
        return ("npint", draw(st.sampled_from([np.int64, np.int32, np.int16, np.uint8]))(draw(st.integers(0, size - 1)))), 1
    if kind == "t0":
        return ("t0", draw(ints)), 1
    if kind == "range":
        start = draw(st.integers(-size, size - 1))
        step = draw(st.sampled_from([1, 2, -1]))
        stop = start + step * draw(st.integers(0, 3))
        r = range(start, stop, step)
        return ("range", r if all(-size <= v < size for v in r) else range(0)), 1
    if kind in ("list", "tuple"):
        return (kind, draw(st.lists(ints, min_size=length, max_size=length))), 1
    if kind == "nested":
        return ("nested", [draw(st.lists(ints, min_size=length, max_size=length)) for _ in range(2)]), 1
    if kind == "nparr":
        dt = draw(st.sampled_from(["int64", "int32", "int16"]))
        return ("nparr", np.array(draw(st.lists(ints, min_size=length, max_size=length)), dtype=dt)), 1
    if kind == "boollist":
        return ("boollist", draw(st.lists(st.booleans(), min_size=size, max_size=size))), 1
    k = draw(st.integers(1, max(1, min(2, len(shape) - d))))
    return ("mask", draw(arrays("bool", shape[d:d + k]))), k


@st.composite
def index_spec(draw, max_dims=4):
    """(shape, spec, bare): items for a tensor of shape, maybe one Ellipsis; bare: the index is
    the single item itself, not a tuple of it."""
    shape = draw(shapes(min_dims=1, max_dims=max_dims, max_side=4))
    length = draw(st.integers(1, 3))  # the positions every int list of this index has
    items, d, ellipsis = [], 0, False
    while d < len(shape) and draw(st.integers(0, 4)) > 0:
        if not ellipsis and draw(st.integers(0, 5)) == 0:
            items.append(Ellipsis)
            ellipsis = True
            d = len(shape) - draw(st.integers(0, len(shape) - d))
            continue
        item, used = draw(index_item(shape, d, length))
        items.append(item)
        d += used
    bare = len(items) == 1 and draw(st.booleans())
    return shape, items, bare


def build_index(items, bare, lib):
    """The index for lib (minitorch, torch or np) from a spec."""
    out = []
    for item in items:
        if item is None or item is Ellipsis:
            out.append(item)
            continue
        kind, v = item
        if kind == "t0":
            v = np.int64(v) if lib is np else lib.tensor(v)
        elif kind == "tuple" and lib is np:
            v = list(v)
        out.append(v)
    return out[0] if bare else tuple(out)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - the class is compared
        return type(e), None


def numpy_agrees(items, bare):
    """Whether NumPy's rules give PyTorch's answer: no int with advanced items (PyTorch selects
    the int first, NumPy counts it advanced), and no bare list of sequences (PyTorch reads it as
    a tuple)."""
    kinds = {item[0] for item in items if isinstance(item, tuple)}
    if kinds & INT_LIKE and kinds & ADVANCED:
        return False
    return not (bare and kinds & {"nested", "tuple", "list"} and isinstance(build_index(items, bare, np), list))


@given(index_spec(), st.sampled_from(("contiguous", "transposed", "sliced")))
def test_every_index_form_reads_as_torch_and_numpy(spec, layout):
    torch = pytest.importorskip("torch")
    shape, items, bare = spec
    a = base_array(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's about a list read as a tuple
        theirs = outcome(lambda: torch_layout(torch, a, layout)[build_index(items, bare, torch)])
    ours = outcome(lambda: to_layout(a, layout)[build_index(items, bare, minitorch)])
    assert ours[0] == theirs[0], (items, ours, theirs)
    if ours[0] != "ok":
        return
    assert tuple(ours[1].shape) == tuple(theirs[1].shape)
    np.testing.assert_array_equal(np.asarray(ours[1]), theirs[1].numpy())
    if numpy_agrees(items, bare):
        np.testing.assert_array_equal(np.asarray(ours[1]), a[build_index(items, bare, np)])


@given(index_spec(), st.sampled_from(("scalar", "float", "tensor", "float64_tensor", "bool")), st.data())
def test_every_index_form_writes_as_torch(spec, kind, data):
    torch = pytest.importorskip("torch")
    shape, items, bare = spec
    a = base_array(shape).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        target = outcome(lambda: torch.tensor(a)[build_index(items, bare, torch)])
    if target[0] != "ok":
        return  # a bad index: the read test compares the errors
    tshape = tuple(target[1].shape)
    keep = data.draw(st.integers(0, len(tshape)))
    vshape = tuple(s if data.draw(st.booleans()) else 1 for s in tshape[len(tshape) - keep:])
    varr = data.draw(arrays("float32", vshape))

    def value(lib):
        if kind == "scalar":
            return 3
        if kind == "float":
            return -1.5
        if kind == "bool":
            return True
        return lib.tensor(varr.astype("float64" if kind == "float64_tensor" else "float32"))

    tt, t = torch.tensor(a), minitorch.tensor(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = outcome(lambda: tt.__setitem__(build_index(items, bare, torch), value(torch)))
    ours = outcome(lambda: t.__setitem__(build_index(items, bare, minitorch), value(minitorch)))
    assert ours[0] == theirs[0], (items, kind, ours, theirs)
    # (an element indexed twice takes the last write in both, on the CPU)
    np.testing.assert_array_equal(np.asarray(t), tt.numpy())


@pytest.mark.parametrize("index", [np.bool_(True), np.float64(1.0), np.float32(1.0)],
                         ids=["np_bool", "np_float64", "np_float32"])
def test_numpy_non_integer_scalars_are_refused_as_torch(index):
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        with pytest.raises(IndexError, match="only integers, slices"):
            lib.zeros(2, 3)[index]


def test_numpy_integer_arrays_of_any_width_and_byte_masks():
    torch = pytest.importorskip("torch")
    a = base_array((3, 4))
    for dt in ("int8", "int16", "uint16", "uint32", "uint64", "float16"):
        idx = np.array([2, 0], dtype=dt)
        assert minitorch.tensor(a)[idx].tolist() == torch.tensor(a)[idx].tolist() == a[idx.astype(np.int64)].tolist()
    mask = np.array([1, 0, 1], dtype=np.uint8)  # PyTorch's deprecated byte mask
    with pytest.warns(UserWarning, match="indexing with dtype torch.uint8 is now deprecated"):
        got = minitorch.tensor(a)[mask]
    assert got.tolist() == a[mask.astype(bool)].tolist()


@pytest.mark.parametrize("value", [np.float32(2.5), np.bool_(True), np.array(2.5), [1.0, 2.0]],
                         ids=["np_float32", "np_bool", "np_0d", "list"])
def test_setitem_values_torch_refuses(value):
    torch = pytest.importorskip("torch")
    msgs = []
    for lib in (minitorch, torch):
        with pytest.raises(TypeError) as e:
            lib.zeros(3)[0] = value
        msgs.append(str(e.value).replace(" torch.", " minitorch."))
    assert msgs[0] == msgs[1]


def test_setitem_mask_with_a_one_element_value_of_another_dtype():
    """PyTorch's index_put_ fills through masked_fill_ there, so the value's dtype is free."""
    torch = pytest.importorskip("torch")
    a = base_array((2, 3)).astype(np.float32)
    for lib in (minitorch, torch):
        t = lib.tensor(a)
        t[lib.tensor(a > 2)] = lib.tensor(0.25, dtype=lib.float64)
        t[:, lib.tensor([True, False, True])] = lib.tensor([7], dtype=lib.int64)
        assert t.dtype == lib.float32
        assert t.tolist() == [[7.0, 2.0, 7.0], [7.0, 0.25, 7.0]]
        with pytest.raises(RuntimeError, match="Index put requires the source and destination dtypes match"):
            t[[0, 1]] = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)
