"""Shape ops against NumPy (float64) and PyTorch: cat/concat/concatenate, stack, split,
split_with_sizes, chunk, unbind, narrow, movedim/moveaxis, expand_as, view_as, reshape_as, repeat,
flip, tril/triu and their in-place forms.

Hypothesis draws shapes (empty and 0-dim where PyTorch allows them), layouts and dtypes; the views
(narrow, split, chunk, unbind, view_as, expand_as) are checked to share memory with their base;
bad calls raise PyTorch's exception class, with its words."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, as_numpy, check, layouts, raises_like_torch, shapes, to_layout, torch
from minitorch._journey import record

ALL = ("float32", "float64", "int64", "int32", "bool")


def dim_of(data, ndim):
    """A dim in PyTorch's accepted range for an ndim-dim tensor, negative ones included."""
    n = max(ndim, 1)
    return data.draw(st.integers(-n, n - 1))


def check_pieces(fn, ref, a, layout):
    """fn(lib, x) returns a tuple of tensors; each must equal ref(a)'s piece (and PyTorch's), and
    there must be as many as NumPy's and PyTorch's."""
    pieces = fn(minitorch, to_layout(a, layout))
    assert isinstance(pieces, tuple)
    expected = ref(a.astype(np.float64) if a.dtype.kind == "f" else a)
    assert len(pieces) == len(expected)
    if torch is not None:
        assert len(fn(torch, torch.tensor(a))) == len(pieces)
    for k in range(len(pieces)):
        check(lambda m, x: fn(m, x)[k], lambda x: ref(x)[k], [a], layout=layout)
    return pieces


def assert_shares_memory(view, base):
    """view's elements are base's memory, and a write through view bumps base's version."""
    if view.numel() == 0:
        return
    assert np.shares_memory(np.asarray(view), np.asarray(base))
    before = base._version
    view.fill_(1)
    assert base._version > before


def split_points(size, split_size):
    """Where PyTorch's split(split_size) cuts a dim of `size`."""
    return list(range(split_size, size, split_size)) if split_size else []


# ---- cat, concat, concatenate, stack ----

@given(data=st.data(), layout=layouts)
def test_cat(data, layout):
    base = data.draw(shapes(min_dims=1, max_dims=4))
    dim = dim_of(data, len(base))
    n = data.draw(st.integers(1, 4))
    dtype = data.draw(st.sampled_from(ALL))
    arrs = []
    for _ in range(n):
        shape = list(base)
        shape[dim] = data.draw(st.integers(0, 4))
        arrs.append(data.draw(arrays(dtype, tuple(shape))))
    op = data.draw(st.sampled_from(["cat", "concat", "concatenate"]))
    check(lambda m, *xs: getattr(m, op)(xs, dim), lambda *xs: np.concatenate(xs, axis=dim), arrs,
          layout=layout, dtype=minitorch.tensor(arrs[0]).dtype)


@pytest.mark.parametrize("d1,d2,want", [
    ("float32", "int64", minitorch.float32), ("int32", "int64", minitorch.int64),
    ("bool", "int32", minitorch.int32), ("float32", "float64", minitorch.float64),
    ("bool", "bool", minitorch.bool),
])
def test_cat_promotes_dtypes_like_torch(d1, d2, want):
    a = np.arange(6).reshape(2, 3).astype(d1)
    b = np.arange(3).reshape(1, 3).astype(d2)
    check(lambda m, x, y: m.cat([x, y]), lambda x, y: np.concatenate([x, y]), [a, b], dtype=want)
    check(lambda m, x, y: m.cat((y, x), dim=-2), lambda x, y: np.concatenate([y, x]), [a, b], dtype=want)


def test_cat_skips_legacy_empty_1d_tensors():
    a = np.arange(6.0).reshape(2, 3)
    e = np.zeros(0, dtype=np.float64)
    check(lambda m, x, y: m.cat([y, x, y], 1), lambda x, y: x, [a, e], dtype=minitorch.float64)
    # the empty tensor still takes part in type promotion, as in PyTorch
    out = minitorch.cat([minitorch.zeros(0, dtype=minitorch.float64), minitorch.ones(2, 3)])
    assert out.dtype == minitorch.float64 and out.shape == (2, 3)
    # all skipped: a 1-D empty result, and the dim is not checked
    out = minitorch.cat([minitorch.zeros(0), minitorch.zeros(0, dtype=minitorch.int64)], 5)
    assert out.shape == (0,) and out.dtype == minitorch.float32
    assert minitorch.cat([minitorch.zeros(0), minitorch.zeros(0, 2)], 1).shape == (0, 2)


def test_cat_of_one_tensor_is_a_copy_and_a_3d_mix():
    x = minitorch.arange(6.0).reshape(2, 3)
    y = minitorch.cat([x])
    y.fill_(0)
    assert x.sum().item() == 15
    a, b = np.ones((2, 0, 4)), np.arange(24.0).reshape(2, 3, 4)
    check(lambda m, x, y: m.cat([x, y, x, y], 1), lambda x, y: np.concatenate([x, y, x, y], 1), [a, b],
          layout="transposed")


@given(data=st.data(), layout=layouts)
def test_stack(data, layout):
    shape = data.draw(shapes(max_dims=3))
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    dtype = data.draw(st.sampled_from(ALL))
    arrs = [data.draw(arrays(dtype, shape)) for _ in range(data.draw(st.integers(1, 3)))]
    check(lambda m, *xs: m.stack(list(xs), dim=dim), lambda *xs: np.stack(xs, axis=dim), arrs,
          layout=layout if len(shape) else "contiguous")


def test_stack_promotes_and_decomposes_into_unsqueeze_and_cat():
    check(lambda m, x, y: m.stack([x, y], 1), lambda x, y: np.stack([x, y], 1),
          [np.ones((2, 3), np.float32), np.arange(6).reshape(2, 3)], dtype=minitorch.float32)
    _, events = record(minitorch.stack, [minitorch.ones(2), minitorch.ones(2)])
    names = [e.name for e in events if e.layer == "Op"]
    assert names[0] == "stack" and names.count("unsqueeze") == 2 and names[-1] == "cat"
    _, events = record(minitorch.concat, [minitorch.ones(2)])
    assert [e.name for e in events if e.layer == "Op"] == ["concat", "cat"]


# ---- split, split_with_sizes, chunk, unbind, narrow ----

@given(data=st.data(), layout=layouts)
def test_split(data, layout):
    shape = data.draw(shapes(min_dims=1, max_dims=3))
    dim = dim_of(data, len(shape))
    size = shape[dim]
    split_size = data.draw(st.integers(0 if size == 0 else 1, 6))
    a = data.draw(arrays(data.draw(st.sampled_from(ALL)), shape))
    form = data.draw(st.sampled_from(["method", "function"]))
    fn = (lambda m, x: x.split(split_size, dim)) if form == "method" else (
        lambda m, x: m.split(x, split_size, dim=dim))
    pieces = check_pieces(fn, lambda x: np.split(x, split_points(size, split_size), axis=dim), a, layout)
    base = to_layout(a, layout)
    for piece in base.split(split_size, dim):
        assert_shares_memory(piece, base)


@given(data=st.data(), layout=layouts)
def test_split_with_sizes(data, layout):
    shape = data.draw(shapes(min_dims=1, max_dims=3))
    dim = dim_of(data, len(shape))
    cuts = sorted(data.draw(st.lists(st.integers(0, shape[dim]), max_size=3)))
    sizes = [b - a for a, b in zip([0] + cuts, cuts + [shape[dim]])]
    a = data.draw(arrays("float32", shape))
    form = data.draw(st.sampled_from(["split", "split_with_sizes", "function"]))
    fns = {"split": lambda m, x: x.split(sizes, dim), "split_with_sizes": lambda m, x: x.split_with_sizes(sizes, dim),
           "function": lambda m, x: m.split(x, tuple(sizes), dim)}
    check_pieces(fns[form], lambda x: np.split(x, cuts, axis=dim), a, layout)


@given(data=st.data(), layout=layouts)
def test_chunk(data, layout):
    shape = data.draw(shapes(min_dims=1, max_dims=3, max_side=7))
    dim = dim_of(data, len(shape))
    chunks = data.draw(st.integers(1, 8))
    size = shape[dim]
    a = data.draw(arrays(data.draw(st.sampled_from(ALL)), shape))

    def ref(x):  # PyTorch's chunk: pieces of ceil(size / chunks); an empty dim gives `chunks` pieces
        if size == 0:
            return [x] * chunks
        return np.split(x, split_points(size, -(-size // chunks)), axis=dim)

    pieces = check_pieces(lambda m, x: m.chunk(x, chunks, dim), ref, a, layout)
    assert len(pieces) <= chunks or size == 0
    base = to_layout(a, layout)
    for piece in base.chunk(chunks, dim=dim):
        assert_shares_memory(piece, base)


@given(data=st.data(), layout=layouts)
def test_unbind(data, layout):
    shape = data.draw(shapes(min_dims=1, max_dims=3))
    dim = dim_of(data, len(shape))
    a = data.draw(arrays(data.draw(st.sampled_from(ALL)), shape))
    check_pieces(lambda m, x: m.unbind(x, dim), lambda x: [np.take(x, k, axis=dim) for k in range(shape[dim])],
                 a, layout)
    base = to_layout(a, layout)
    for piece in base.unbind(dim):
        assert_shares_memory(piece, base)


@given(data=st.data(), layout=layouts)
def test_narrow(data, layout):
    shape = data.draw(shapes(min_dims=1, max_dims=3))
    dim = dim_of(data, len(shape))
    size = shape[dim]
    start = data.draw(st.integers(-size, size))
    length = data.draw(st.integers(0, size - (start % size if size and start < size else size)))
    a = data.draw(arrays(data.draw(st.sampled_from(ALL)), shape))
    s = start + size if start < 0 else start
    ref = lambda x: np.take(x, range(s, s + length), axis=dim)  # noqa: E731
    out = check(lambda m, x: m.narrow(x, dim, start, length), ref, [a], layout=layout)
    assert out.shape[dim] == length
    base = to_layout(a, layout)
    assert_shares_memory(base.narrow(dim, start, length), base)


def test_split_and_chunk_decompose_into_narrow_views():
    x = minitorch.arange(10.0)
    _, events = record(lambda t: t.split(4), x)
    names = [e.name for e in events if e.layer == "Op"]
    assert names[0] == "split" and names.count("narrow") == 3 and "as_strided" in names
    y = x.chunk(3)[1]
    assert y.storage_offset() == 4 and y.data_ptr() == x.data_ptr() + 16


# ---- movedim, expand_as, view_as, reshape_as, repeat, flip ----

@given(data=st.data(), layout=layouts)
def test_movedim(data, layout):
    shape = data.draw(shapes(max_dims=4))
    n = max(len(shape), 1)
    src = data.draw(st.lists(st.integers(-n, n - 1), unique_by=lambda d: d % n, max_size=n))
    dst = data.draw(st.lists(st.integers(-n, n - 1), unique_by=lambda d: d % n, min_size=len(src),
                             max_size=len(src)))
    a = data.draw(arrays("float64", shape))
    op = data.draw(st.sampled_from(["movedim", "moveaxis"]))
    if len(src) == 1 and data.draw(st.booleans()):
        src, dst = src[0], dst[0]  # one int each
    check(lambda m, x: getattr(m, op)(x, src, dst),
          lambda x: np.moveaxis(x, src, dst) if len(shape) else x, [a], layout=layout if len(shape) else "contiguous")
    base = to_layout(a, "contiguous")
    assert_shares_memory(base.movedim(src, dst), base)


def test_expand_as_view_as_reshape_as():
    a = np.arange(3.0)
    out = check(lambda m, x: x.expand_as(m.ones(2, 4, 3)), lambda x: np.broadcast_to(x, (2, 4, 3)), [a])
    assert out.stride() == (0, 0, 1)
    b = np.arange(12).reshape(3, 4)
    check(lambda m, x: x.view_as(m.ones(2, 6)), lambda x: x.reshape(2, 6), [b])
    check(lambda m, x: x.reshape_as(m.ones(6, 2)), lambda x: x.reshape(6, 2), [b], layout="transposed")
    base = minitorch.tensor(b)
    assert_shares_memory(base.view_as(minitorch.ones(12)), base)
    t = minitorch.tensor(b).t()
    assert t.reshape_as(minitorch.ones(12)).data_ptr() != t.data_ptr()  # a copy when no view fits


@given(data=st.data(), layout=layouts)
def test_repeat(data, layout):
    shape = data.draw(shapes(max_dims=3, max_side=3))
    reps = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=4))
    a = data.draw(arrays(data.draw(st.sampled_from(ALL)), shape))
    spread = data.draw(st.booleans()) and len(reps) > 0
    fn = (lambda m, x: x.repeat(*reps)) if spread else (lambda m, x: x.repeat(reps))
    out = check(fn, lambda x: np.tile(x, reps) if reps else x, [a], layout=layout if len(shape) else "contiguous")
    assert out.is_contiguous()


@given(data=st.data(), layout=layouts)
def test_flip(data, layout):
    shape = data.draw(shapes(max_dims=4))
    n = max(len(shape), 1)
    dims = data.draw(st.lists(st.integers(-n, n - 1), unique_by=lambda d: d % n, max_size=n))
    a = data.draw(arrays(data.draw(st.sampled_from(ALL)), shape))
    ref = (lambda x: np.flip(x, axis=tuple(dims))) if len(shape) else (lambda x: x)
    form = data.draw(st.sampled_from(["method", "function"]))
    fn = (lambda m, x: x.flip(dims)) if form == "method" else (lambda m, x: m.flip(x, dims=dims))
    out = check(fn, ref, [a], layout=layout if len(shape) else "contiguous")
    assert out.is_contiguous()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_cat_of_large_tensors_on_threads(threads, dtype, dim):
    """Contiguous inputs of one dtype are copied row by row (threads splitting inside a chunk);
    an empty piece, a mixed dtype or a transposed input take the general copy."""
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(threads)
    try:
        rng = np.random.default_rng(dim + 5)
        shapes = [[5, 70, 33], [5, 70, 33], [5, 70, 33]]
        for k, extra in enumerate((1, 0, 7)):
            shapes[k][dim] = extra
        arrays = [(rng.standard_normal(s) * 50).astype(dtype) for s in shapes]
        ref = lambda *xs: np.concatenate(xs, dim)
        out = check(lambda m, *xs: m.cat(list(xs), dim), ref, arrays)
        assert out.is_contiguous()
        big = [(rng.standard_normal((40, 50, 61)) * 50).astype(dtype) for _ in range(3)]
        check(lambda m, *xs: m.cat(list(xs), dim), ref, big)
        check(lambda m, *xs: m.cat(list(xs), dim), ref, big, layout="transposed")
        mixed = [big[0], big[1].astype("float64")]
        check(lambda m, *xs: m.cat(list(xs), dim), ref, mixed)
    finally:
        minitorch.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool", "complex128"])
@pytest.mark.parametrize("dims", [(0, 1, 2, 3), (3,), (0, 1), (1, 2), (0, 2)])
def test_flip_of_a_large_tensor_on_threads(threads, dtype, dims):
    """Large enough to split its rows between threads; runs of flipped and kept dims merge."""
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(threads)
    try:
        rng = np.random.default_rng(len(dims))
        a = rng.standard_normal((3, 70, 5, 67)) + (1j * rng.standard_normal((3, 70, 5, 67)) if dtype == "complex128" else 0)
        a = (a > 0) if dtype == "bool" else (a * 100).astype(dtype)
        for layout in ("contiguous", "transposed", "sliced"):
            out = check(lambda m, x: m.flip(x, dims), lambda x: np.flip(x, dims), [a], layout=layout)
            assert out.is_contiguous()
    finally:
        minitorch.set_num_threads(before)


def test_flip_spreads_its_dims_in_the_method_form_only():
    x = minitorch.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(as_numpy(x.flip(0, 1)), np.arange(6).reshape(2, 3)[::-1, ::-1])
    raises_like_torch(lambda m, x: m.flip(x, 1), np.ones((2, 3)))


# ---- tril, triu ----

@pytest.mark.parametrize("name", ["tril", "triu"])
@given(data=st.data(), layout=layouts)
def test_tril_triu(name, data, layout):
    shape = data.draw(shapes(min_dims=2, max_dims=4))
    k = data.draw(st.integers(-6, 6))
    a = data.draw(arrays(data.draw(st.sampled_from(ALL)), shape))
    ref = getattr(np, name)
    form = data.draw(st.sampled_from(["method", "function", "default"]))
    fn = {"method": lambda m, x: getattr(x, name)(k), "function": lambda m, x: getattr(m, name)(x, diagonal=k),
          "default": lambda m, x: getattr(m, name)(x)}[form]
    check(fn, (lambda x: ref(x, 0)) if form == "default" else (lambda x: ref(x, k)), [a], layout=layout)


@pytest.mark.parametrize("name", ["tril_", "triu_"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("k", [-2, 0, 1, 9])
def test_tril_triu_in_place(name, layout, k):
    a = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4) + 1
    x = to_layout(a, layout)
    version = x._version
    assert getattr(x, name)(k) is x
    assert x._version > version
    np.testing.assert_array_equal(as_numpy(x), getattr(np, name[:-1])(a, k))
    if torch is not None:
        from helpers import torch_layout
        t = torch_layout(torch, a, layout)
        getattr(t, name)(k)
        np.testing.assert_array_equal(as_numpy(x), t.numpy())


def test_tril_triu_spelled_out():
    x = minitorch.ones(3, 3)
    assert minitorch.triu(x).sum().item() == 6 and minitorch.tril(x, -1).sum().item() == 3
    assert x.tril_(1).sum().item() == 8 and x.triu_(1).sum().item() == 2
    assert minitorch.concat([x, x]).shape == minitorch.concatenate([x, x], dim=1).shape[::-1]


# ---- bad calls: PyTorch's exception classes and words ----

def error_of(fn, *arrays):
    """The class and message of what fn(minitorch, *tensors) raises (the class as PyTorch's)."""
    raises_like_torch(fn, *arrays)
    try:
        fn(minitorch, *[minitorch.tensor(a) for a in arrays])
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)


M23, M24, M3 = np.ones((2, 3)), np.ones((2, 4)), np.ones(3)
ERRORS = [
    (lambda m, x, y: m.cat([x, y]), (M23, M24), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for tensor number "
     "1 in the list."),
    (lambda m, x, y: m.cat([x, y.t()], 1), (M23, M24), RuntimeError,
     "Sizes of tensors must match except in dimension 1. Expected size 2 but got size 4 for tensor number "
     "1 in the list."),
    (lambda m: m.cat([]), (), ValueError, "torch.cat(): expected a non-empty list of Tensors"),
    (lambda m, x: m.cat([x, 1]), (M23,), TypeError, "expected Tensor as element 1 in argument 0, but got int"),
    (lambda m, x: m.stack((x, None)), (M23,), TypeError,
     "expected Tensor as element 1 in argument 0, but got NoneType"),
    (lambda m, x: m.cat(x), (M23,), TypeError,
     "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor"),
    (lambda m, x: m.cat(t for t in [x]), (M23,), TypeError,
     "cat(): argument 'tensors' (position 1) must be tuple of Tensors, not generator"),
    (lambda m, x: m.cat([x, x], 2), (M23,), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda m, x, y: m.cat([x, y]), (M23, M3), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 1"),
    (lambda m, x, y: m.cat([x, y]), (M23, np.float32(1)), RuntimeError,
     "zero-dimensional tensor (at position 1) cannot be concatenated"),
    (lambda m: m.stack([]), (), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda m, x, y: m.stack([x, y]), (M23, M24), RuntimeError,
     "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [2, 4] at entry 1"),
    (lambda m, x: m.stack([x, x], 3), (M23,), IndexError,
     "Dimension out of range (expected to be in range of [-3, 2], but got 3)"),
    (lambda m, x: x.split(0), (M3,), RuntimeError,
     "split_size can only be 0 if dimension size is 0, but got dimension size of 3"),
    (lambda m, x: x.split(-1), (M3,), RuntimeError, "split expects split_size be non-negative, but got split_size=-1"),
    (lambda m, x: x.split(1), (np.float32(1),), RuntimeError, "split expects at least a 1-dimensional tensor"),
    (lambda m, x: x.split(1, 1), (M3,), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
    (lambda m, x: x.split([1, 1]), (M3,), RuntimeError,
     "split_with_sizes expects split_sizes to sum exactly to 3 (input tensor's size at dimension 0), but "
     "got split_sizes=[1, 1]"),
    (lambda m, x: x.split([4, -1]), (M3,), RuntimeError,
     "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=[4, -1]"),
    (lambda m, x: x.split(1.5), (M3,), TypeError,
     "split_with_sizes(): argument 'split_sizes' (position 2) must be tuple of ints, not float"),
    (lambda m, x: x.chunk(0), (M3,), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda m, x: x.chunk(2), (np.float32(1),), RuntimeError, "chunk expects at least a 1-dimensional tensor"),
    (lambda m, x: x.unbind(), (np.float32(1),), IndexError, "Dimension specified as 0 but tensor has no dimensions"),
    (lambda m, x: x.unbind(2), (M23,), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda m, x: x.narrow(1, 2, 2), (M23,), RuntimeError, "start (2) + length (2) exceeds dimension size (3)."),
    (lambda m, x: x.narrow(1, -4, 0), (M23,), IndexError,
     "start out of range (expected to be in range of [-3, 3], but got -4)"),
    (lambda m, x: x.narrow(1, 0, -1), (M23,), RuntimeError, "narrow(): length must be non-negative."),
    (lambda m, x: x.narrow(0, 0, 1), (np.float32(1),), RuntimeError, "narrow() cannot be applied to a 0-dim tensor."),
    (lambda m, x: x.flip([0, -2]), (M23,), RuntimeError, "dim 0 appears multiple times in the list of dims"),
    (lambda m, x: x.flip(2), (M23,), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda m, x: x.repeat(2), (M23,), RuntimeError,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"),
    (lambda m, x: x.repeat(1, -1), (M23,), RuntimeError, "Trying to create tensor with negative dimension -3: [2, -3]"),
    (lambda m, x: x.repeat(), (M23,), TypeError, 'repeat() missing 1 required positional arguments: "repeats"'),
    (lambda m, x: x.tril(), (M3,), RuntimeError, "tril: input tensor must have at least 2 dimensions"),
    (lambda m, x: x.triu_(), (M3,), RuntimeError, "triu: input tensor must have at least 2 dimensions"),
    (lambda m, x: m.movedim(x, (0, 1), (1,)), (M23,), RuntimeError,
     "movedim: Invalid source or destination dims: source ([0, 1] dims) should contain the same number of dims as "
     "destination ([1] dims)"),
    (lambda m, x: m.movedim(x, (0, -2), (0, 1)), (M23,), RuntimeError, "movedim: repeated dim in `source` ([0, -2])"),
    (lambda m, x: m.movedim(x, (0, 1), (1, 1)), (M23,), RuntimeError,
     "movedim: repeated dim in `destination` ([1, 1])"),
    (lambda m, x: x.movedim(2, 0), (M23,), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda m, x, y: x.expand_as(y), (M3, M24), RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton dimension 1.  "
     "Target sizes: [2, 4].  Tensor sizes: [3]"),
    (lambda m, x, y: x.view_as(y), (M23, M3), RuntimeError, "shape '[3]' is invalid for input of size 6"),
    (lambda m, x: x.view_as(1), (M23,), TypeError, "view_as(): argument 'other' (position 1) must be Tensor, not int"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_bad_calls_raise_like_torch(case):
    fn, arrs, cls, msg = ERRORS[case]
    assert error_of(fn, *arrs) == (cls, msg)


def test_cat_of_many_tensors_and_a_list_kept_alive_by_the_call():
    parts = [minitorch.full((1, 2), float(k)) for k in range(100)]
    out = minitorch.cat(parts)
    np.testing.assert_array_equal(as_numpy(out)[:, 0], np.arange(100.0))
    assert len(minitorch.arange(40).unbind()) == 40 and len(minitorch.ones(0).chunk(5)) == 5
