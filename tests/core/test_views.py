"""View ops: view, reshape, t, transpose, permute, as_strided, expand, squeeze, unsqueeze, flatten,
contiguous, detach, and the geometry queries (stride, storage_offset, is_contiguous).

Each view is checked for the shape, strides, storage offset and values PyTorch gives on the same
input (NumPy where the strides have a NumPy equivalent, so most checks run without PyTorch), and
for really being a view: its data pointer is the base's plus its offset, and a write through it
shows in the base exactly where it does in PyTorch's."""
import gc
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import raises_like_torch, shapes, to_layout, torch_layout

LAYOUTS = ("contiguous", "transposed", "sliced")




def base_array(shape, dtype="float64"):
    """Distinct values 1..n, so any mix-up of elements shows."""
    return (np.arange(int(np.prod(shape))) + 1).astype(dtype).reshape(shape)


def np_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def long_strides(t):
    """The strides of the dims longer than 1: the only ones that say where elements are."""
    return tuple(s for n, s in zip(t.shape, t.stride()) if n > 1)


def assert_views_base(view, base):
    """view's data pointer is base's moved by the difference of their offsets."""
    delta = (view.storage_offset() - base.storage_offset()) * view.element_size()
    assert view.data_ptr() == base.data_ptr() + delta


def assert_shares_memory(view, base):
    """A write through view changes base (the version counter, one per storage, moves too)."""
    if view.numel() == 0:
        return
    before = base._version
    view.fill_(-7)
    assert base._version > before
    assert -7 in np.asarray(base).ravel().tolist()


# ---- one table of view calls, compared to PyTorch on three layouts ----

# (id, base shape, fn(lib, t))
VIEW_CASES = [
    ("view_2x3_to_3x2", (2, 3), lambda L, t: t.view(3, 2)),
    ("view_infer", (2, 3, 4), lambda L, t: t.view(-1, 4)),
    ("view_flat", (2, 3, 4), lambda L, t: t.view(-1)),
    ("view_tuple", (2, 3), lambda L, t: t.view((6,))),
    ("view_list", (2, 3), lambda L, t: t.view([3, 1, 2])),
    ("view_split_dim", (6, 4), lambda L, t: t.view(2, 3, 4)),
    ("view_add_ones", (2, 3), lambda L, t: t.view(1, 2, 1, 3, 1)),
    ("view_empty", (0, 3), lambda L, t: t.view(3, 0)),
    ("view_empty_infer", (0, 3), lambda L, t: t.view(-1)),
    ("reshape_view", (2, 3, 4), lambda L, t: t.reshape(6, 4)),
    ("reshape_infer", (2, 3, 4), lambda L, t: t.reshape(4, -1)),
    ("reshape_flat", (2, 3, 4), lambda L, t: t.reshape(-1)),
    ("reshape_fn", (2, 3), lambda L, t: L.reshape(t, (3, 2))),
    ("reshape_same", (2, 3), lambda L, t: t.reshape(2, 3)),
    ("reshape_last_dim", (3, 4), lambda L, t: t.reshape(3, 2, 2)),
    ("t_2d", (2, 3), lambda L, t: t.t()),
    ("t_1d", (4,), lambda L, t: t.t()),
    ("t_fn", (2, 3), lambda L, t: L.t(t)),
    ("transpose_01", (2, 3, 4), lambda L, t: t.transpose(0, 1)),
    ("transpose_neg", (2, 3, 4), lambda L, t: t.transpose(-1, 0)),
    ("transpose_same", (2, 3, 4), lambda L, t: t.transpose(1, 1)),
    ("transpose_fn", (2, 3, 4), lambda L, t: L.transpose(t, 2, 1)),
    ("permute_201", (2, 3, 4), lambda L, t: t.permute(2, 0, 1)),
    ("permute_tuple", (2, 3, 4), lambda L, t: t.permute((1, 2, 0))),
    ("permute_neg", (2, 3, 4), lambda L, t: t.permute(-1, -3, -2)),
    ("permute_identity", (2, 3), lambda L, t: t.permute(0, 1)),
    ("permute_fn", (2, 3), lambda L, t: L.permute(t, (1, 0))),
    ("mT", (2, 3, 4), lambda L, t: t.mT),
    ("T", (2, 3, 4), lambda L, t: t.T),
    ("T_2d", (2, 3), lambda L, t: t.T),
    ("T_0d", (), lambda L, t: t.T),
    ("mT_0d", (), lambda L, t: t.mT),
    ("expand_new_dims", (3,), lambda L, t: t.expand(2, 4, 3)),
    ("expand_ones", (3, 1), lambda L, t: t.expand(3, 5)),
    ("expand_minus_one", (3, 1), lambda L, t: t.expand(-1, 4)),
    ("expand_same", (2, 3), lambda L, t: t.expand(2, 3)),
    ("expand_to_zero", (1, 3), lambda L, t: t.expand(0, 3)),
    ("expand_tuple", (1, 3), lambda L, t: t.expand((2, 2, 3))),
    ("squeeze_all", (1, 3, 1, 2), lambda L, t: t.squeeze()),
    ("squeeze_dim", (1, 3, 1, 2), lambda L, t: t.squeeze(2)),
    ("squeeze_neg_dim", (1, 3, 1, 2), lambda L, t: t.squeeze(-4)),
    ("squeeze_non_one", (1, 3, 1, 2), lambda L, t: t.squeeze(1)),
    ("squeeze_dims", (1, 3, 1, 2), lambda L, t: t.squeeze((0, 2))),
    ("squeeze_fn", (1, 3, 1), lambda L, t: L.squeeze(t)),
    ("unsqueeze_front", (2, 3), lambda L, t: t.unsqueeze(0)),
    ("unsqueeze_mid", (2, 3), lambda L, t: t.unsqueeze(1)),
    ("unsqueeze_end", (2, 3), lambda L, t: t.unsqueeze(2)),
    ("unsqueeze_neg", (2, 3), lambda L, t: t.unsqueeze(-1)),
    ("unsqueeze_fn", (2, 3), lambda L, t: L.unsqueeze(t, -3)),
    ("flatten_all", (2, 3, 4), lambda L, t: t.flatten()),
    ("flatten_from_1", (2, 3, 4), lambda L, t: t.flatten(1)),
    ("flatten_0_1", (2, 3, 4), lambda L, t: t.flatten(0, 1)),
    ("flatten_neg", (2, 3, 4), lambda L, t: t.flatten(-2, -1)),
    ("flatten_one_dim", (2, 3, 4), lambda L, t: t.flatten(1, 1)),
    ("flatten_fn", (2, 3, 4), lambda L, t: L.flatten(t, 0, -2)),
    ("as_strided", (2, 3, 4), lambda L, t: t.as_strided((2, 2), (1, 2))),
    ("as_strided_offset", (2, 3, 4), lambda L, t: t.as_strided((3, 2), (4, 1), 5)),
    ("as_strided_overlap", (6,), lambda L, t: t.as_strided((3, 3), (1, 1))),
    ("as_strided_zero_stride", (6,), lambda L, t: t.as_strided((2, 3), (0, 1), 2)),
    ("as_strided_scalar", (6,), lambda L, t: t.as_strided((), (), 4)),
    ("as_strided_fn", (6,), lambda L, t: L.as_strided(t, (2,), (2,), 1)),
    ("detach", (2, 3), lambda L, t: t.detach()),
    ("detach_fn", (2, 3), lambda L, t: L.detach(t)),
    ("chain_t_view", (4, 6), lambda L, t: t.t().unsqueeze(1).expand(6, 2, 4).transpose(1, 2)),
    ("chain_flatten_of_permute", (2, 3, 4), lambda L, t: t.permute(0, 2, 1).flatten(1)),
]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name, shape, fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_matches_torch(name, shape, fn, layout):
    torch = pytest.importorskip("torch")
    a = base_array(shape)
    mt_base, th_base = to_layout(a, layout), torch_layout(torch, a, layout)
    try:
        expected = fn(torch, th_base)
    except Exception as e:  # noqa: BLE001 - e.g. view of a layout it cannot view
        with pytest.raises(type(e)):
            fn(minitorch, mt_base)
        return
    out = fn(minitorch, mt_base)
    assert tuple(out.shape) == tuple(expected.shape)
    assert out.dtype == mt_base.dtype
    np.testing.assert_array_equal(np.asarray(out), expected.numpy())
    if out.numel():  # empty tensors: test_empty_tensor_is_contiguous
        assert out.is_contiguous() == expected.is_contiguous()
    if expected.untyped_storage().data_ptr() == th_base.untyped_storage().data_ptr():  # a view
        if out.numel():
            assert out.stride() == expected.stride()
            assert out.storage_offset() == expected.storage_offset()
        assert_views_base(out, mt_base)
    # Writes through the result land where PyTorch's land (nowhere, if PyTorch copied).
    out.fill_(-7)
    expected.fill_(-7)
    np.testing.assert_array_equal(np.asarray(mt_base), th_base.numpy())


@pytest.mark.parametrize("name, shape, fn", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_view_shares_memory(name, shape, fn):
    if name.startswith(("view_empty", "expand_to_zero")):
        pytest.skip("empty views have nothing to write")
    if name == "chain_flatten_of_permute":
        pytest.skip("flattening permuted dims needs a copy (test_reshape_of_unviewable_layout_copies)")
    t = minitorch.tensor(base_array(shape))
    out = fn(minitorch, t)
    assert_views_base(out, t)
    assert_shares_memory(out, t)


# ---- explicit geometry, no PyTorch needed ----

@pytest.mark.parametrize(
    "shape, fn, size, stride, offset",
    [
        ((2, 3), lambda t: t.t(), (3, 2), (1, 3), 0),
        ((2, 3, 4), lambda t: t.permute(2, 0, 1), (4, 2, 3), (1, 12, 4), 0),
        ((2, 3, 4), lambda t: t.transpose(0, 2), (4, 3, 2), (1, 4, 12), 0),
        ((3, 1), lambda t: t.expand(3, 4), (3, 4), (1, 0), 0),
        ((3,), lambda t: t.expand(2, 3), (2, 3), (0, 1), 0),
        ((), lambda t: t.expand(2, 3), (2, 3), (0, 0), 0),
        ((2, 3), lambda t: t.unsqueeze(1), (2, 1, 3), (3, 3, 1), 0),
        ((2, 3), lambda t: t.unsqueeze(2), (2, 3, 1), (3, 1, 1), 0),
        ((2, 3), lambda t: t.t().unsqueeze(0), (1, 3, 2), (3, 1, 3), 0),
        ((2, 0), lambda t: t.unsqueeze(1), (2, 1, 0), (1, 0, 1), 0),
        ((), lambda t: t.unsqueeze(0), (1,), (1,), 0),
        ((1, 3, 1, 2), lambda t: t.squeeze(-2), (1, 3, 2), (6, 2, 1), 0),
        ((2, 3, 4), lambda t: t.flatten(-2, -1), (2, 12), (12, 1), 0),
        ((3, 4), lambda t: t[:, 1:3].view(3, 1, 2), (3, 1, 2), (4, 2, 1), 1),
        ((2, 3, 4), lambda t: t.transpose(0, 1).view(3, 2, 2, 2), (3, 2, 2, 2), (4, 12, 2, 1), 0),
        ((2, 3, 4), lambda t: t.permute(2, 0, 1).reshape(4, 6), (4, 6), (1, 4), 0),
        ((24,), lambda t: t.as_strided((3,), (2,), 4), (3,), (2,), 4),
        ((24,), lambda t: t[3:].as_strided((3,), (2,)), (3,), (2,), 3),
        ((0,), lambda t: t.view(2, 0, 5), (2, 0, 5), (0, 5, 1), 0),
        ((2, 3), lambda t: t.t().contiguous(), (3, 2), (2, 1), 0),
        ((3, 1), lambda t: t.expand(3, 4).contiguous(), (3, 4), (4, 1), 0),
    ],
)
def test_geometry(shape, fn, size, stride, offset):
    a = base_array(shape)
    out = fn(minitorch.tensor(a))
    assert tuple(out.shape) == size
    if out.numel():
        assert out.stride() == stride
    assert out.storage_offset() == offset


@pytest.mark.parametrize(
    "shape, fn, expected",
    [
        ((2, 3), lambda t: t, True),
        ((2, 3), lambda t: t.t(), False),
        ((1, 6), lambda t: t.t(), True),               # size-1 dims' strides do not matter
        ((3, 1), lambda t: t.expand(3, 4), False),
        ((2, 3, 4), lambda t: t[1:], True),
        ((2, 3, 4), lambda t: t[:, 1:2], False),
        ((2, 3, 4), lambda t: t[:, :, ::2], False),
        ((6,), lambda t: t.as_strided((2, 1, 3), (3, 77, 1)), True),
        ((), lambda t: t, True),
    ],
    ids=["contiguous", "t", "t_of_row", "expand", "slice_dim0", "slice_dim1", "step", "size1_stride", "0d"],
)
def test_is_contiguous(shape, fn, expected):
    assert fn(minitorch.tensor(base_array(shape))).is_contiguous() is expected


@pytest.mark.parametrize(
    "make", [lambda: minitorch.zeros(0, 6)[:, ::2], lambda: minitorch.zeros(2, 0, 3).transpose(0, 2)],
    ids=["sliced", "transposed"],
)
def test_empty_tensor_is_contiguous(make):
    # PyTorch: a tensor with no elements is contiguous whatever its strides.
    assert make().is_contiguous()


def test_stride_and_size_with_dim():
    t = minitorch.zeros(2, 3, 4)
    assert t.stride() == (12, 4, 1)
    assert [t.stride(d) for d in (0, 1, 2, -1, -3)] == [12, 4, 1, 1, 12]
    with pytest.raises(IndexError):
        t.stride(3)
    with pytest.raises(IndexError):
        t.stride(-4)


@pytest.mark.parametrize("query", ["stride", "size"])
def test_dim_query_of_0d_raises(query):
    with pytest.raises(IndexError, match="no dimensions"):
        getattr(minitorch.tensor(5.0), query)(0)


def test_contiguous_returns_self_when_contiguous():
    t = minitorch.zeros(2, 3)
    assert t.contiguous() is t


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
@pytest.mark.parametrize("shape", [(2, 3), (3, 1, 4), (5,)])
def test_contiguous_copies_a_strided_tensor(shape, layout):
    a = base_array(shape)
    t = to_layout(a, layout)
    assert not t.is_contiguous() or len(shape) == 1  # a transposed 1-D tensor is contiguous
    c = t.contiguous()
    assert c.is_contiguous()
    if c is t:
        return
    assert c.stride() == np_strides(np.ascontiguousarray(a))
    np.testing.assert_array_equal(np.asarray(c), a)
    c.fill_(0)  # a copy: the original keeps its values
    np.testing.assert_array_equal(np.asarray(t), a)


def test_detach_shares_memory_and_drops_grad():
    t = minitorch.ones(2, 3, requires_grad=True)
    d = t.detach()
    assert d is not t
    assert not d.requires_grad
    assert d.data_ptr() == t.data_ptr() and d.stride() == t.stride()
    d[0, 0] = 5
    assert t.detach()[0, 0].item() == 5


def test_detach_of_strided_view_keeps_geometry():
    t = minitorch.arange(24.0).view(2, 3, 4)[:, 1:, ::2]
    d = t.detach()
    assert (d.shape, d.stride(), d.storage_offset(), d.data_ptr()) == (
        t.shape, t.stride(), t.storage_offset(), t.data_ptr())


# ---- reshape: a view when the layout allows, else a copy ----

@pytest.mark.parametrize(
    "make, new_shape",
    [
        (lambda: minitorch.arange(6.0).view(2, 3).t(), (6,)),
        (lambda: minitorch.arange(24.0).view(2, 3, 4).transpose(0, 1), (3, 8)),
        (lambda: minitorch.arange(12.0).view(3, 4)[:, 1:3], (6,)),
        (lambda: minitorch.arange(12.0).view(3, 4)[::2], (8,)),
        (lambda: minitorch.arange(3.0).view(3, 1).expand(3, 4), (12,)),
    ],
)
def test_reshape_of_unviewable_layout_copies(make, new_shape):
    t = make()
    expected = np.asarray(t).reshape(new_shape).copy()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        t.view(new_shape)
    r = t.reshape(new_shape)
    assert tuple(r.shape) == new_shape
    assert r.is_contiguous()
    np.testing.assert_array_equal(np.asarray(r), expected)
    before = np.asarray(t).copy()
    r.fill_(-1)
    np.testing.assert_array_equal(np.asarray(t), before)


@pytest.mark.parametrize(
    "make, new_shape",
    [
        (lambda: minitorch.arange(24.0).view(2, 3, 4), (6, 4)),
        (lambda: minitorch.arange(24.0).view(2, 3, 4).transpose(0, 1), (3, 2, 2, 2)),
        (lambda: minitorch.arange(12.0).view(3, 4)[:, ::2], (6,)),
        (lambda: minitorch.arange(12.0).view(3, 4)[1:], (2, 2, 2)),
    ],
)
def test_reshape_of_viewable_layout_is_a_view(make, new_shape):
    t = make()
    r = t.reshape(new_shape)
    assert_views_base(r, t)
    assert_shares_memory(r, t)


# ---- 0-dim tensors ----

@pytest.mark.parametrize(
    "fn, shape",
    [
        (lambda t: t.view(()), ()),
        (lambda t: t.view(1), (1,)),
        (lambda t: t.view(-1), (1,)),
        (lambda t: t.view(1, 1), (1, 1)),
        (lambda t: t.reshape(1), (1,)),
        (lambda t: t.reshape(-1), (1,)),
        (lambda t: t.flatten(), (1,)),
        (lambda t: t.unsqueeze(0), (1,)),
        (lambda t: t.squeeze(), ()),
        (lambda t: t.squeeze(0), ()),
        (lambda t: t.t(), ()),
        (lambda t: t.transpose(0, -1), ()),
        (lambda t: t.expand(2, 3), (2, 3)),
        (lambda t: t[None, None], (1, 1)),
    ],
    ids=["view_scalar", "view_1", "view_-1", "view_1x1", "reshape_1", "reshape_-1", "flatten",
         "unsqueeze", "squeeze", "squeeze_0", "t", "transpose", "expand", "none_index"],
)
def test_views_of_0d(fn, shape):
    t = minitorch.tensor(5.0)
    out = fn(t)
    assert tuple(out.shape) == shape
    assert np.asarray(out).ravel().tolist() == [5.0] * max(1, int(np.prod(shape)))


@pytest.mark.parametrize("attr, shape, warns", [("T", (), "deprecated on 0-D"), ("mT", (), "deprecated on 0-D"),
                                                 ("T", (3,), "dimension other than 2"),
                                                 ("T", (2, 3, 4), "dimension other than 2"), ("T", (2, 3), None),
                                                 ("mT", (2, 3), None)])
def test_T_and_mT_warn_like_torch(attr, shape, warns):
    # .T and .mT of a 0-d tensor raised (permute() with no dims; transpose(-2, -1)); PyTorch
    # returns the tensor with a deprecation warning, as it warns for .T of other than 2 dims
    # (once per process, so only the shapes are compared with it).
    for lib in (minitorch, pytest.importorskip("torch")):
        t = lib.zeros(shape)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(t, attr)
        want = tuple(reversed(shape)) if attr == "T" else shape[:-2] + shape[:-3:-1]
        assert tuple(out.shape) == want
        if lib is minitorch:
            messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
            assert any(warns in m for m in messages) if warns else not messages, messages


def test_mT_of_1d_raises_like_torch():
    raises_like_torch(lambda m, x: x.mT, np.zeros(3, np.float32))
    with pytest.raises(RuntimeError, match="tensor.mT is only supported on matrices or batches of matrices. Got 1-D"):
        minitorch.zeros(3).mT


CLONE_LAYOUTS = [
    lambda L: L.arange(6.0).reshape(2, 3).t(),
    lambda L: L.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1),
    lambda L: L.arange(120.0).reshape(3, 4, 10)[..., ::2].permute(2, 0, 1),
    lambda L: L.arange(240.0).reshape(2, 3, 4, 10)[..., ::2].permute(0, 2, 3, 1),
    lambda L: L.arange(4.0).reshape(4, 1).expand(4, 3).t(),
    lambda L: L.arange(12.0).reshape(3, 4).t()[1:],
    lambda L: L.arange(4.0).reshape(4, 1)[::2],
    lambda L: L.arange(12.0).reshape(3, 4)[:, ::2],
    lambda L: L.arange(60.0).reshape(3, 4, 5).permute(1, 0, 2),
    lambda L: L.ones(0, 4).t(),
    lambda L: L.ones(2, 0, 3).permute(2, 0, 1),
    lambda L: L.tensor(1.0),
    lambda L: L.arange(6.0).reshape(1, 6).expand(4, 6).t()[::2],
    lambda L: L.arange(30.0).reshape(5, 6)[::2, ::3].t(),
]


@pytest.mark.parametrize("make", CLONE_LAYOUTS)
def test_clone_preserves_layout_like_torch(make):
    # clone() made every copy row-major; PyTorch's (memory_format=preserve_format) keeps the strides
    # of a dense layout (a transposed matrix stays transposed) and orders the strides of any other
    # like the source's. contiguous() and reshape's copy stay row-major.
    torch = pytest.importorskip("torch")
    t, r = make(minitorch), make(torch)
    c = t.clone()
    assert c.stride() == r.clone().stride()
    assert c.tolist() == t.tolist() and c.data_ptr() != t.data_ptr()
    assert t.contiguous().is_contiguous() and t.contiguous().tolist() == t.tolist()
    assert t.reshape(-1).tolist() == r.reshape(-1).tolist()


@given(shape_and_perm_and_step=st.data())
def test_clone_preserves_random_layouts_like_torch(shape_and_perm_and_step):
    torch = pytest.importorskip("torch")
    data = shape_and_perm_and_step
    shape = data.draw(shapes(min_dims=1, max_dims=4, max_side=4))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    steps = tuple(data.draw(st.integers(1, 2)) for _ in shape)
    idx = tuple(slice(None, None, s) for s in steps)
    t, r = (L.arange(float(np.prod(shape))).reshape(shape)[idx].permute(*perm) for L in (minitorch, torch))
    assert t.clone().stride() == r.clone().stride()
    np.testing.assert_array_equal(t.clone().numpy(), r.numpy())


# ---- hypothesis: random shapes, permutations and reshapes against NumPy (and PyTorch) ----

@st.composite
def shape_and_perm(draw):
    shape = draw(shapes(min_dims=1, max_dims=5, max_side=4))
    return shape, tuple(draw(st.permutations(range(len(shape)))))


@given(shape_and_perm(), st.sampled_from(LAYOUTS))
def test_permute_random(sp, layout):
    shape, perm = sp
    a = base_array(shape)
    t = to_layout(a, layout)
    p = t.permute(*perm)
    expected = a.transpose(perm)
    assert tuple(p.shape) == expected.shape
    assert p.stride() == tuple(t.stride(d) for d in perm)
    assert p.storage_offset() == t.storage_offset()
    np.testing.assert_array_equal(np.asarray(p), expected)
    assert_views_base(p, t)
    if layout == "contiguous":
        assert p.stride() == np_strides(np.arange(a.size).reshape(shape).transpose(perm)) or a.size == 0


@given(shape_and_perm())
def test_permute_back_is_identity(sp):
    shape, perm = sp
    t = minitorch.tensor(base_array(shape))
    inverse = tuple(np.argsort(perm))
    back = t.permute(*perm).permute(*inverse)
    assert back.shape == t.shape and back.stride() == t.stride()


@st.composite
def shape_and_two_dims(draw):
    shape = draw(shapes(min_dims=1, max_dims=4, max_side=4))
    n = len(shape)
    return shape, draw(st.integers(-n, n - 1)), draw(st.integers(-n, n - 1))


@given(shape_and_two_dims(), st.sampled_from(LAYOUTS))
def test_transpose_random(sd, layout):
    shape, d0, d1 = sd
    a = base_array(shape)
    t = to_layout(a, layout)
    out = t.transpose(d0, d1)
    np.testing.assert_array_equal(np.asarray(out), np.swapaxes(a, d0, d1))
    strides = list(t.stride())
    strides[d0], strides[d1] = strides[d1], strides[d0]
    assert out.stride() == tuple(strides)


@st.composite
def shape_and_new_shape(draw):
    """A shape and another with as many elements (a random regrouping of its prime factors)."""
    shape = draw(shapes(min_dims=1, max_dims=4, min_side=1, max_side=6))  # 0-dim: test_views_of_0d
    n = int(np.prod(shape))
    factors = []
    m, p = n, 2
    while m > 1:
        while m % p == 0:
            factors.append(p)
            m //= p
        p += 1
    factors = draw(st.permutations(factors))
    ndim = draw(st.integers(1, 4))
    new = [1] * ndim
    for f in factors:
        new[draw(st.integers(0, ndim - 1))] *= f
    if draw(st.booleans()):
        new[draw(st.integers(0, ndim - 1))] = -1
    return shape, tuple(new)


@given(shape_and_new_shape(), st.sampled_from(LAYOUTS))
def test_reshape_random(sn, layout):
    shape, new = sn
    a = base_array(shape)
    t = to_layout(a, layout)
    r = t.reshape(new)
    expected = a.reshape(new)
    assert tuple(r.shape) == expected.shape
    np.testing.assert_array_equal(np.asarray(r), expected)
    if layout == "contiguous":  # always a view of a contiguous tensor
        assert_views_base(r, t)
        assert long_strides(r) == tuple(s for n, s in zip(expected.shape, np_strides(np.ascontiguousarray(expected))) if n > 1)


@given(shape_and_new_shape(), st.sampled_from(LAYOUTS))
def test_reshape_random_matches_torch(sn, layout):
    torch = pytest.importorskip("torch")
    shape, new = sn
    a = base_array(shape)
    t, tt = to_layout(a, layout), torch_layout(torch, a, layout)
    r, tr = t.reshape(new), tt.reshape(new)
    assert r.shape == tuple(tr.shape)
    is_view = tr.untyped_storage().data_ptr() == tt.untyped_storage().data_ptr()
    r.fill_(-3)
    tr.fill_(-3)
    # A view in PyTorch is a view here (the base changed the same way), a copy is a copy.
    np.testing.assert_array_equal(np.asarray(t), tt.numpy())
    if is_view:  # (the stride of a size-1 dim means nothing, and is left out)
        assert long_strides(r) == long_strides(tr)
    try:
        tv = tt.view(new)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            t.view(new)
    else:
        assert long_strides(t.view(new)) == long_strides(tv)


@st.composite
def shape_and_expansion(draw):
    shape = draw(shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    target = list(lead)
    for s in shape:
        if s == 1:
            target.append(draw(st.sampled_from([1, 2, 4, -1])))
        else:
            target.append(draw(st.sampled_from([s, -1])))
    return shape, tuple(target)


@given(shape_and_expansion())
def test_expand_random(se):
    shape, target = se
    a = base_array(shape)
    t = minitorch.tensor(a)
    out = t.expand(target)
    lead = len(target) - len(shape)
    full = tuple(shape[i - lead] if s == -1 else s for i, s in enumerate(target))
    expected = np.broadcast_to(a, full)
    assert tuple(out.shape) == full
    np.testing.assert_array_equal(np.asarray(out), expected)
    for d, size in enumerate(full):
        if d < lead or (shape[d - lead] == 1 and size != 1):
            assert out.stride(d) == 0
        else:
            assert out.stride(d) == t.stride(d - lead)
    assert_views_base(out, t)


@given(shapes(min_dims=0, max_dims=5, max_side=3), st.data())
def test_squeeze_unsqueeze_random(shape, data):
    a = base_array(shape)
    t = minitorch.tensor(a)
    assert tuple(t.squeeze().shape) == np.squeeze(a).shape
    if shape:
        d = data.draw(st.integers(-len(shape), len(shape) - 1))
        expected = np.squeeze(a, d) if shape[d] == 1 else a
        assert tuple(t.squeeze(d).shape) == expected.shape
    d = data.draw(st.integers(-len(shape) - 1, len(shape)))
    u = t.unsqueeze(d)
    assert tuple(u.shape) == np.expand_dims(a, d).shape
    np.testing.assert_array_equal(np.asarray(u), np.expand_dims(a, d))
    assert u.squeeze(d).shape == t.shape and u.squeeze(d).stride() == t.stride()


@given(shapes(min_dims=1, max_dims=4, max_side=4), st.data(), st.sampled_from(LAYOUTS))
def test_flatten_random(shape, data, layout):
    n = len(shape)
    start = data.draw(st.integers(-n, n - 1))
    end = data.draw(st.integers(-n, n - 1))
    if start % n > end % n:
        with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
            minitorch.zeros(shape).flatten(start, end)
        return
    a = base_array(shape)
    s, e = start % n, end % n
    expected = a.reshape(shape[:s] + (int(np.prod(shape[s:e + 1])),) + shape[e + 1:])
    out = to_layout(a, layout).flatten(start, end)
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert tuple(out.shape) == expected.shape


@st.composite
def strided_geometry(draw):
    """Sizes, strides and an offset that stay inside a storage of n elements."""
    n = draw(st.integers(1, 30))
    ndim = draw(st.integers(0, 3))
    sizes = draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim))
    strides = draw(st.lists(st.integers(0, 6), min_size=ndim, max_size=ndim))
    span = sum((s - 1) * st_ for s, st_ in zip(sizes, strides))
    if span >= n:
        n = span + 1
    offset = draw(st.integers(0, n - 1 - span))
    return n, tuple(sizes), tuple(strides), offset


@given(strided_geometry())
def test_as_strided_random(geom):
    n, sizes, strides, offset = geom
    base = np.arange(n, dtype=np.float64) + 1
    t = minitorch.tensor(base)
    out = t.as_strided(sizes, strides, offset)
    expected = np.lib.stride_tricks.as_strided(base[offset:], sizes, [s * 8 for s in strides])
    assert tuple(out.shape) == sizes
    assert out.stride() == strides and out.storage_offset() == offset
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert_views_base(out, t)


def test_as_strided_out_of_bounds_raises():
    t = minitorch.arange(24)
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        t.as_strided((5,), (6,))
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        t.as_strided((5,), (1,), 20)
    with pytest.raises(RuntimeError):
        t.as_strided((2,), (1,), -1)
    with pytest.raises(RuntimeError, match="Negative strides"):
        t.as_strided((2,), (-1,))
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        t.as_strided((2,), (1, 1))


def test_as_strided_of_view_is_relative_to_storage():
    t = minitorch.arange(24).view(2, 3, 4)
    assert t[1].as_strided((2,), (1,)).tolist() == [12, 13]  # the view's own offset by default
    assert t[1].as_strided((2,), (1,), 0).tolist() == [0, 1]  # an explicit offset is absolute


def test_views_see_later_writes_to_base():
    t = minitorch.zeros(3, 4)
    v = t.t()[1:]
    t[2, 3] = 9
    assert v[2, 2].item() == 9
    e = t[0].expand(5, 4)
    t[0, 1] = 4
    assert e[:, 1].tolist() == [4.0] * 5


def test_view_outlives_its_base():
    v = minitorch.arange(12.0).view(3, 4).t()[1:]
    gc.collect()
    assert v.tolist() == [[1.0, 5.0, 9.0], [2.0, 6.0, 10.0], [3.0, 7.0, 11.0]]


# ---- select, slice and alias: the views indexing is made of ----

@pytest.mark.parametrize(
    "dim, index, shape, stride, offset",
    [(0, 1, (4,), (1,), 4), (1, -1, (3,), (4,), 3), (-2, 0, (4,), (1,), 0), (-1, 2, (3,), (4,), 2)],
)
def test_select(dim, index, shape, stride, offset):
    a = base_array((3, 4))
    t = minitorch.tensor(a)
    for out in (t.select(dim, index), minitorch.select(t, dim, index)):
        assert (tuple(out.shape), out.stride(), out.storage_offset()) == (shape, stride, offset)
        np.testing.assert_array_equal(np.asarray(out), np.take(a, index, axis=dim))
        assert_views_base(out, t)


def test_select_errors():
    with pytest.raises(IndexError, match=r"select\(\): index 3 out of range for tensor of size \[3\] at dimension 0"):
        minitorch.zeros(3).select(0, 3)
    with pytest.raises(IndexError, match=r"select\(\): index -4 out of range"):
        minitorch.zeros(3).select(0, -4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minitorch.zeros(3).select(1, 0)
    with pytest.raises(IndexError, match="select\\(\\) cannot be applied to a 0-dim tensor"):
        minitorch.zeros(()).select(0, 0)


@pytest.mark.parametrize(
    "args, expected",
    [((0, 1, None, 3), [1, 4, 7]), ((0, None, 4), [0, 1, 2, 3]), ((0, -3), [7, 8, 9]), ((0, 2, 100, 1), list(range(2, 10))),
     ((0, 5, 2), []), ((0, -100, 2), [0, 1])],
)
def test_slice_function(args, expected):
    t = minitorch.arange(10)
    out = minitorch.slice(t, *args)
    assert out.tolist() == expected
    if expected:
        assert_views_base(out, t)


def test_slice_function_errors():
    with pytest.raises(ValueError, match="step must be greater than zero"):
        minitorch.slice(minitorch.arange(5), 0, None, None, 0)
    with pytest.raises(IndexError):
        minitorch.slice(minitorch.zeros(()), 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        minitorch.slice(minitorch.zeros(3), 1)


def test_alias():
    t = minitorch.arange(6.0).view(2, 3).t()
    a = minitorch.alias(t)
    assert a is not t
    assert (a.shape, a.stride(), a.storage_offset(), a.data_ptr()) == (t.shape, t.stride(), t.storage_offset(), t.data_ptr())
    a[0, 1] = 9
    assert t[0, 1].item() == 9


@pytest.mark.parametrize(
    "shape, fn",
    [((1, 2), lambda t: t.squeeze((0, 0))), ((1, 2), lambda t: t.squeeze((0, -2))),
     ((1, 2, 1), lambda t: t.squeeze([0, 2, -3])), ((), lambda t: t.squeeze((0, 0))),
     ((), lambda t: t.sum((0, -1))), ((), lambda t: t.flip((0, 0)))],
)
def test_dim_named_twice_raises_like_torch(shape, fn):
    # squeeze accepted a dim named twice, and a 0-d tensor's sum and flip did too
    assert raises_like_torch(lambda m, x: fn(x), np.zeros(shape, np.float32)) is RuntimeError
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        fn(minitorch.zeros(shape))
