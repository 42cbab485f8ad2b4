"""Diagonals, rearranging, joining, splitting, grids and products against NumPy (float64) and
PyTorch: diag, diagonal (a view), diag_embed, diagflat, trace, triu_indices/tril_indices, roll,
rot90, fliplr/flipud, tile, repeat_interleave, unflatten, swapaxes/swapdims (and in place),
transpose_/t_, squeeze_/unsqueeze_, narrow_copy, atleast_1d/2d/3d, hstack/vstack/row_stack/dstack/column_stack,
tensor_split/hsplit/vsplit/dsplit, meshgrid, cartesian_prod, combinations, block_diag, kron,
tensordot, cross/linalg.cross, cdist, squeeze with a tuple of dims.

Values and dtypes against NumPy and PyTorch (check), gradients against PyTorch's and finite
differences (check_grad, same_as_torch), non-contiguous inputs, views sharing memory, and bad calls
raising PyTorch's exception class with its words."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, check, check_grad, same_as_torch, same_error, to_layout, torch

RNG = np.random.default_rng(19)
LAYOUTS = ("contiguous", "transposed", "sliced")


def rand(*shape, dtype="float64"):
    a = RNG.standard_normal(shape)
    return a.astype(dtype) if dtype.startswith("float") else (a * 4).astype(dtype) if dtype != "bool" else a > 0



def shares_memory(view, base):
    return view.numel() == 0 or np.shares_memory(np.asarray(view), np.asarray(base))


# ---- diagonals ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("offset,dim1,dim2", [(0, 0, 1), (1, 0, 1), (-2, 1, 0), (2, 0, 2), (-1, -1, 0), (7, 0, 1)])
def test_diagonal_is_a_view(layout, offset, dim1, dim2):
    a = rand(3, 4, 5)
    out = check(lambda m, x: m.diagonal(x, offset, dim1, dim2), lambda x: np.diagonal(x, offset, dim1, dim2), [a],
                layout=layout)
    base = to_layout(a, layout)
    view = base.diagonal(offset=offset, dim1=dim1, dim2=dim2)
    assert shares_memory(view, base) and tuple(view.shape) == tuple(out.shape)
    check_grad(lambda m, x: x.diagonal(offset, dim1, dim2), [a], layout=layout)


def test_diagonal_grad_fn_and_write_through():
    x = minitorch.zeros(3, 3)
    x.diagonal().fill_(2)
    assert x.sum().item() == 6
    y = minitorch.ones(3, 3, requires_grad=True)
    assert y.diagonal().grad_fn.name() == "DiagonalBackward0"


@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0), (0, 1, 0)])
def test_diag_embed(offset, dim1, dim2):
    same_as_torch(lambda m, x: m.diag_embed(x, offset, dim1, dim2), [rand(2, 3)], layout="transposed")
    same_as_torch(lambda m, x: x.diag_embed(offset=offset), [rand(4)])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("k", [0, 1, -2, 5])
def test_diag_and_diagflat(dtype, k):
    v, mat = rand(4, dtype=dtype), rand(3, 5, dtype=dtype)
    check(lambda m, x: m.diag(x, k), lambda x: np.diag(x, k), [v])
    check(lambda m, x: x.diag(k), lambda x: np.diag(x, k), [mat], layout="transposed")
    check(lambda m, x: m.diagflat(x, k), lambda x: np.diagflat(x, k), [mat], layout="sliced")
    if dtype.startswith("float"):
        check_grad(lambda m, x: m.diag(x, k), [v])
        check_grad(lambda m, x: m.diag(x, k), [mat])
        check_grad(lambda m, x: x.diagflat(k), [mat], layout="transposed")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
def test_trace(dtype):
    for shape in [(3, 3), (2, 5), (4, 1), (0, 3)]:
        out = check(lambda m, x: m.trace(x), lambda x: np.trace(x), [rand(*shape, dtype=dtype)], layout="transposed")
        assert out.dtype == (minitorch.int64 if dtype.startswith("int") else getattr(minitorch, dtype))
    check_grad(lambda m, x: x.trace(), [rand(3, 4)])
    assert minitorch.ones(2, 2, requires_grad=True).trace().grad_fn.name() == "TraceBackward0"


@pytest.mark.parametrize("fn", ["triu_indices", "tril_indices"])
@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 3, 0), (3, 0, 2), (3, 4, 9), (3, 4, -9)])
def test_triangle_indices(fn, row, col, offset):
    ref = np.triu_indices if fn == "triu_indices" else np.tril_indices
    want = np.stack(ref(row, offset, col)) if row and col else np.zeros((2, 0), np.int64)
    for dt in (None, minitorch.int32):
        kw = {"dtype": dt} if dt else {}
        got = getattr(minitorch, fn)(row, col, offset, **kw)
        np.testing.assert_array_equal(as_numpy(got), want.reshape(2, -1))
        assert got.dtype == (dt or minitorch.int64) and got.is_contiguous()


def test_diagonal_errors():
    same_error(lambda m, x: m.diag(x), rand(2, 2, 2))
    same_error(lambda m, x: m.diag(x), np.array(1.0))
    same_error(lambda m, x: x.diagonal(0, 0, 0), rand(2, 3))
    same_error(lambda m, x: x.diagonal(0, 0, 2), rand(2, 3))
    same_error(lambda m, x: m.diag_embed(x, 0, 0, 3), rand(2))
    same_error(lambda m, x: m.diag_embed(x), np.array(1.0))
    same_error(lambda m, x: m.trace(x), rand(2, 2, 2))
    same_error(lambda m, x: m.trace(x), rand(2, 2, dtype="bool"))
    same_error(lambda m: m.triu_indices(-1, 3))
    same_error(lambda m: m.tril_indices(3, -3))
    same_error(lambda m: m.triu_indices(3, 3, dtype=m.float32))


# ---- roll, rot90, flips, tile, repeat_interleave ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shifts,dims", [(1, None), (-7, None), (2, 1), ((1, -2), (0, 1)), ((3, 1), (1, 1)), (5, -1)])
def test_roll(layout, shifts, dims):
    a = rand(3, 4)
    kw = {} if dims is None else {"dims": dims}
    check(lambda m, x: m.roll(x, shifts, **kw), lambda x: np.roll(x, shifts, axis=dims), [a], layout=layout)
    check_grad(lambda m, x: x.roll(shifts, **kw), [a], layout=layout)
    check(lambda m, x: m.roll(x, shifts, **kw), lambda x: np.roll(x, shifts, axis=dims), [rand(0, 3)])


@pytest.mark.parametrize("k", [-3, -1, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("dims", [None, (0, 1), (1, 0), (2, 0), (-1, -3)])
def test_rot90(k, dims):
    a = rand(2, 3, 4)
    kw = {} if dims is None else {"dims": dims}
    check(lambda m, x: m.rot90(x, k, **kw), lambda x: np.rot90(x, k, axes=dims or (0, 1)), [a], layout="transposed")
    check_grad(lambda m, x: x.rot90(k, **kw), [a])


def test_flips_and_tile():
    a = rand(2, 3, 4, dtype="int32")
    check(lambda m, x: m.fliplr(x), np.fliplr, [a], layout="sliced")
    check(lambda m, x: x.flipud(), np.flipud, [a], layout="transposed")
    for reps in [(2,), (1, 2), (2, 1, 1, 3), (), (0, 2)]:
        check(lambda m, x: m.tile(x, reps), lambda x: np.tile(x, reps), [a], layout="transposed")
    check(lambda m, x: x.tile(2, 3), lambda x: np.tile(x, (2, 3)), [rand(3)])
    check_grad(lambda m, x: x.tile((2, 1, 3)), [rand(2, 3)])
    check_grad(lambda m, x: m.fliplr(x), [rand(2, 3)])


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_repeat_interleave(dtype):
    a = rand(3, 4, dtype=dtype)
    check(lambda m, x: m.repeat_interleave(x, 2), lambda x: np.repeat(x, 2), [a], layout="transposed")
    check(lambda m, x: x.repeat_interleave(3, dim=1), lambda x: np.repeat(x, 3, 1), [a])
    check(lambda m, x: x.repeat_interleave(0, dim=0), lambda x: np.repeat(x, 0, 0), [a])
    for reps in ([1, 0, 2], [2], 3):
        r = np.array(reps)
        check(lambda m, x, y: m.repeat_interleave(x, y, dim=0), lambda x, y: np.repeat(x, y, 0), [a, r])
        check(lambda m, x, y: m.repeat_interleave(x, y, -2, output_size=int(np.repeat(np.ones(3), r).size)),
              lambda x, y: np.repeat(x, y, 0), [a, r])
    check(lambda m, x, y: x.repeat_interleave(y), lambda x, y: np.repeat(x, y), [a.ravel()[:4], np.array([1, 0, 3, 1])])
    check(lambda m, y: m.repeat_interleave(y), lambda y: np.repeat(np.arange(y.size), y), [np.array([2, 0, 1, 3])])
    check(lambda m, y: m.repeat_interleave(y), lambda y: np.repeat(np.arange(y.size), y).astype(np.int32),
          [np.array([2, 0, 1], np.int32)])
    check(lambda m, y: m.repeat_interleave(y), lambda y: y, [np.zeros(0, np.int64)])


def test_repeat_interleave_grads_and_errors():
    same_as_torch(lambda m, x: m.repeat_interleave(x, 2, dim=1), [rand(2, 3)], layout="sliced")
    same_as_torch(lambda m, x, r: x.repeat_interleave(r, dim=0), [rand(3, 2), np.array([2, 0, 1])])
    same_as_torch(lambda m, x: x.repeat_interleave(3), [np.array(1.5)])
    same_error(lambda m, x, r: m.repeat_interleave(x, r, 0), rand(2, 3), np.array([1, 2, 3]))
    same_error(lambda m, x, r: m.repeat_interleave(x, r, 0), rand(2, 3), np.array([-1, 2]))
    same_error(lambda m, x, r: m.repeat_interleave(x, r, 0), rand(2, 3), np.array([[1, 2]]))
    same_error(lambda m, x, r: m.repeat_interleave(x, r, 0), rand(2, 3), np.array([1.0, 2.0]))
    same_error(lambda m, x: m.repeat_interleave(x, -1), rand(2, 3))
    same_error(lambda m, x: m.repeat_interleave(x, 2, output_size=5), rand(2, 3))
    same_error(lambda m, r: m.repeat_interleave(r, output_size=5), np.array([1, 2]))


# ---- unflatten, swapaxes, in-place transposes, narrow_copy, squeeze ----

def test_unflatten_is_a_view():
    a = rand(2, 12, 3)
    for dim, sizes in [(1, (3, 4)), (-2, (2, -1, 3)), (0, (1, 2)), (2, (-1,))]:
        out = check(lambda m, x: x.unflatten(dim, sizes), lambda x: x.reshape(x.shape[:dim % 3] + tuple(
            np.empty(x.shape[dim]).reshape(sizes).shape) + x.shape[dim % 3 + 1:]), [a])
        base = minitorch.tensor(a)
        assert shares_memory(m_unflat := base.unflatten(dim, sizes), base) and m_unflat.shape == out.shape
        check_grad(lambda m, x: m.unflatten(x, dim, sizes), [a])
    same_error(lambda m, x: x.unflatten(1, (5, 2)), a)
    same_error(lambda m, x: x.unflatten(1, ()), a)
    same_error(lambda m, x: x.unflatten(3, (1, 12)), a)
    same_error(lambda m, x: x.unflatten(1, (-1, -1)), a)


def test_swapaxes_views_and_in_place_transposes():
    a = rand(2, 3, 4)
    for name in ("swapaxes", "swapdims"):
        check(lambda m, x: getattr(m, name)(x, 0, -1), lambda x: np.swapaxes(x, 0, -1), [a], layout="sliced")
        base = minitorch.tensor(a)
        assert shares_memory(getattr(base, name)(1, 2), base)
        check_grad(lambda m, x: getattr(x, name)(2, 0), [a])
        t = minitorch.tensor(a)
        version = t._version
        assert getattr(t, name + "_")(0, 2) is t and tuple(t.shape) == (4, 3, 2) and t._version > version
        np.testing.assert_array_equal(as_numpy(t), np.swapaxes(a, 0, 2))
    t = minitorch.tensor(rand(3, 5))
    assert t.t_() is t and tuple(t.shape) == (5, 3) and t.stride() == (1, 5)
    assert minitorch.tensor(rand(4)).t_().shape == (4,)
    u = minitorch.tensor(a)
    assert u.transpose_(0, 1).shape == (3, 2, 4)
    same_error(lambda m, x: x.t_(), rand(2, 2, 2))
    same_error(lambda m, x: x.swapdims(0, 5), a)


def test_in_place_transposes_record_their_gradient():
    w = np.arange(12.0).reshape(4, 3)
    same_as_torch(lambda m, x: (x * 1).t_() * m.tensor(w), [rand(3, 4)])
    same_as_torch(lambda m, x: (x * 1).transpose_(0, 2).sum(1), [rand(2, 3, 4)])
    same_as_torch(lambda m, x: (x + 0).swapaxes_(1, 0), [rand(2, 5)])
    same_as_torch(lambda m, x: x.t_(), [rand(2, 5)])  # a leaf that requires grad: refused
    y = (minitorch.ones(2, 3, requires_grad=True) * 1).t_()
    assert y.grad_fn.name() == "TBackward1"


def test_narrow_copy_and_squeeze_dims():
    a = rand(3, 5)
    out = check(lambda m, x: m.narrow_copy(x, 1, 1, 3), lambda x: x[:, 1:4], [a], layout="transposed")
    assert out.is_contiguous()
    check_grad(lambda m, x: x.narrow_copy(0, 1, 2), [a])  # (PyTorch's backward fails for a negative start)
    same_error(lambda m, x: m.narrow_copy(x, 0, 1, 5), a)
    b = rand(1, 3, 1, 1)
    check(lambda m, x: x.squeeze((0, 2)), lambda x: x.squeeze((0, 2)), [b])
    check(lambda m, x: m.squeeze(x, (-1, 1)), lambda x: x.squeeze(-1), [b])
    check(lambda m, x: x.squeeze(()), lambda x: x, [b])
    same_error(lambda m, x: x.squeeze((0, 0)), b)


# ---- atleast_*d, stacks, splits ----

def test_atleast():
    for shape in [(), (3,), (2, 3), (2, 3, 4, 1)]:
        a = rand(*shape)
        check(lambda m, x: m.atleast_1d(x), np.atleast_1d, [a])
        check(lambda m, x: m.atleast_2d(x), np.atleast_2d, [a])
        check(lambda m, x: m.atleast_3d(x), np.atleast_3d, [a])
    x, y = minitorch.tensor(1.0), minitorch.ones(2, 3)
    assert minitorch.atleast_1d(y) is y
    assert [t.shape for t in minitorch.atleast_3d(x, y)] == [(1, 1, 1), (2, 3, 1)]
    assert [t.shape for t in minitorch.atleast_2d([x, y])] == [(1, 1), (2, 3)]
    assert minitorch.atleast_1d() == ()
    check_grad(lambda m, x: m.atleast_3d(x), [rand(4)])


def test_stack_forms():
    a, b = rand(2, 3), rand(2, 3)
    check(lambda m, x, y: m.vstack([x, y]), lambda x, y: np.vstack([x, y]), [a, b])
    check(lambda m, x, y: m.row_stack((x, y)), lambda x, y: np.vstack([x, y]), [a, b])
    check(lambda m, x, y: m.dstack([x, y]), lambda x, y: np.dstack([x, y]), [a, b])
    check(lambda m, x, y: m.column_stack([x[0], y]), lambda x, y: np.column_stack([x[0], y]), [a, b.T.copy()])
    check(lambda m, x, y: m.swapaxes(x, 1, 0) + y.clone().swapdims_(0, 1), lambda x, y: x.T + y.T, [a, b])


@pytest.mark.parametrize("name", ["hstack", "vstack", "row_stack", "dstack", "column_stack"])
def test_stacks(name):
    ref = getattr(np, name if name != "row_stack" else "vstack")
    cases = [[rand(3), rand(3)], [rand(2, 3), rand(2, 3), rand(2, 3)]]
    if name in ("hstack", "column_stack"):
        cases.append([rand(2, 1), rand(2, 4)])
    if name == "column_stack":
        cases.append([rand(2), rand(2, 3)])
    if name == "vstack":
        cases.append([rand(3), rand(2, 3)])
    for arrs in (c for c in cases if c):
        check(lambda m, *xs: getattr(m, name)(list(xs)), lambda *xs: ref(xs), arrs, layout="transposed")
        check_grad(lambda m, *xs: getattr(m, name)(xs), arrs)
    check(lambda m, x, y: getattr(m, name)((x, y)), lambda x, y: ref((x, y)), [rand(3, dtype="int32"), rand(3)])
    same_error(lambda m: getattr(m, name)([]))


@pytest.mark.parametrize("how", [1, 2, 3, 5, [1], [2, 4], [4, 2, 7], [-1], torch.tensor(2) if torch else 2,
                                 torch.tensor([1, 3]) if torch else [1, 3]])
def test_tensor_split(how, dim=1):
    a = rand(3, 5, 2)
    got = minitorch.tensor_split(to_layout(a, "transposed"), minitorch.tensor(how.numpy()) if torch and isinstance(
        how, torch.Tensor) else how, dim)
    if torch is not None:
        want = torch.tensor_split(torch.tensor(a), how, dim)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(as_numpy(g), w.numpy())
    assert all(shares_memory(g, got[0]) or g.numel() == 0 for g in got[:1])
    if not (torch and isinstance(how, torch.Tensor)):
        pieces = minitorch.tensor(a).tensor_split(how, dim=dim)
        assert [p.shape for p in pieces] == [g.shape for g in got]
        check_grad(lambda m, x: m.cat([p * (k + 1) for k, p in enumerate(m.tensor_split(x, how, dim))], dim), [a])
    assert len(minitorch._C.tensor_split_indices(minitorch.tensor(a), [1, 2], 0)) == 3


def test_tensor_split_keywords_and_errors():
    x = minitorch.ones(4, 6)
    assert [p.shape for p in minitorch.tensor_split(x, sections=3, dim=1)] == [(4, 2)] * 3
    assert [p.shape for p in x.tensor_split(indices=[1], dim=0)] == [(1, 6), (3, 6)]
    assert len(minitorch.tensor_split(x, tensor_indices_or_sections=minitorch.tensor(2))) == 2
    same_error(lambda m, x: m.tensor_split(x, 0), rand(3))
    same_error(lambda m, x: m.tensor_split(x, 2), np.array(1.0))
    same_error(lambda m, x, i: m.tensor_split(x, i), rand(3), np.array([1.0]))
    same_error(lambda m, x, i: m.tensor_split(x, i), rand(3), np.array([[1]]))
    with pytest.raises(TypeError):
        minitorch.tensor_split(x)


@pytest.mark.parametrize("name,least", [("hsplit", 1), ("vsplit", 2), ("dsplit", 3)])
def test_hsplit_vsplit_dsplit(name, least):
    for shape in [(4,), (4, 6), (2, 4, 6)]:
        a = rand(*shape)
        for how in (2, [1, 3]):
            if len(shape) < least:
                same_error(lambda m, x: getattr(m, name)(x, how), a)
                continue
            got = getattr(minitorch.tensor(a), name)(how)
            want = getattr(np, name)(a, how)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(as_numpy(g), w)
    same_error(lambda m, x: getattr(m, name)(x, 5), rand(4, 4, 4))


# ---- grids and products ----

@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing, monkeypatch):
    arrs = [rand(3), rand(4), np.array(2.0)]
    for k in (1, 2, 3):
        xs = arrs[:k]
        got = minitorch.meshgrid(*[minitorch.tensor(a) for a in xs], indexing=indexing)
        want = np.meshgrid(*xs, indexing=indexing)
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(as_numpy(g), w)
        same_as_torch(lambda m, *t: m.stack(m.meshgrid(list(t), indexing=indexing)).sum(0), xs)
    monkeypatch.setattr(minitorch.functional, "_meshgrid_warned", False)  # once per process
    with pytest.warns(UserWarning, match="indexing argument"):
        assert len(minitorch.meshgrid(minitorch.ones(2), minitorch.ones(3))) == 2
    same_error(lambda m, x, y: m.meshgrid(x, y, indexing="ij"), rand(2), rand(3).astype("float32"))
    same_error(lambda m, x: m.meshgrid(x, x, indexing="foo"), rand(2))
    same_error(lambda m: m.meshgrid(indexing="xy"))
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor"):
        minitorch.meshgrid(minitorch.ones(2, 2), indexing="ij")


def test_cartesian_prod_and_combinations():
    import itertools

    a, b, c = rand(3), rand(2), rand(4)
    check(lambda m, x, y, z: m.cartesian_prod(x, y, z), lambda x, y, z: np.array(list(itertools.product(x, y, z))),
          [a, b, c])
    check(lambda m, x: m.cartesian_prod(x), lambda x: x, [a])
    same_as_torch(lambda m, x, y: m.cartesian_prod(x, y), [a, b])
    same_error(lambda m, x: m.cartesian_prod(x), rand(2, 2))
    same_error(lambda m: m.cartesian_prod())
    for r in (0, 1, 2, 3, 5):
        for rep in (False, True):
            fn = itertools.combinations_with_replacement if rep else itertools.combinations
            want = np.array(list(fn(c, r))).reshape(-1, r) if r else np.zeros(0)
            check(lambda m, x: m.combinations(x, r, rep), lambda x: want, [c])
    check(lambda m, x: m.combinations(x, with_replacement=True), lambda x: np.array(
        list(itertools.combinations_with_replacement(x, 2))), [np.arange(4)])
    same_as_torch(lambda m, x: m.combinations(x, 3), [c])
    same_error(lambda m, x: m.combinations(x), rand(2, 2))
    same_error(lambda m, x: m.combinations(x, -1), rand(3))


def test_block_diag():
    blocks = [rand(2, 3), rand(4), np.array(7, np.int64), rand(1, 2, dtype="int32"), np.zeros((0, 2))]
    want = np.zeros((5, 12))  # the (0, 2) block takes 2 columns and no row
    want[0:2, 0:3], want[2, 3:7], want[3, 7], want[4, 8:10] = blocks[0], blocks[1], 7, blocks[3]
    check(lambda m, *xs: m.block_diag(*xs), lambda *xs: want, blocks)
    same_as_torch(lambda m, x, y: m.block_diag(x, y), [rand(2, 2), rand(3)], layout="transposed")
    assert minitorch.block_diag().shape == (1, 0)
    same_error(lambda m, x: m.block_diag(x), rand(2, 2, 2))


@pytest.mark.parametrize("sa,sb", [((2, 3), (3, 2)), ((2,), (3, 4)), ((2, 1, 3), (2, 2)), ((), (3,))])
def test_kron(sa, sb):
    a, b = rand(*sa), rand(*sb)
    check(lambda m, x, y: m.kron(x, y), np.kron, [a, b], layout="sliced" if a.ndim and b.ndim else "contiguous")
    check_grad(lambda m, x, y: x.kron(y), [a, b])
    if a.ndim == 2:  # PyTorch's fails here (it views a product it laid out transposed); not this one
        got = minitorch.kron(minitorch.tensor(a).t(), minitorch.tensor(b))
        np.testing.assert_allclose(as_numpy(got), np.kron(a.T, b))
    check(lambda m, x, y: m.kron(x, y), np.kron, [rand(2, 2, dtype="int32"), rand(2, dtype="int64")])


@pytest.mark.parametrize("dims", [0, 1, 2, ([1, 0], [1, 2]), ([2], [0]), ([-1], [0]), [[0], [2]]])
def test_tensordot(dims):
    a, b = rand(3, 4, 2), rand(2, 4, 3) if dims != 2 else rand(4, 2, 5)
    if dims == 1:
        b = rand(2, 5)
    if dims == 0:
        b = rand(2)
    np_dims = dims if isinstance(dims, int) else tuple(dims)
    check(lambda m, x, y: m.tensordot(x, y, dims), lambda x, y: np.tensordot(x, y, np_dims), [a, b], layout="sliced")
    check_grad(lambda m, x, y: m.tensordot(x, y, dims), [a, b])


def test_tensordot_dims_forms_and_errors():
    a, b = rand(3, 4), rand(4, 3)
    check(lambda m, x, y: m.tensordot(x, y, m.tensor([[1], [0]])), lambda x, y: np.tensordot(x, y, (1, 0)), [a, b])
    check(lambda m, x, y: m.tensordot(x, y, dims=m.tensor(1)), lambda x, y: np.tensordot(x, y, 1), [a, b])
    check(lambda m, x, y: m.tensordot(x, y, ([0, 1], [1, 0])), lambda x, y: np.tensordot(x, y, ([0, 1], [1, 0])),
          [a.astype(np.int64), b.astype(np.int64)], dtype=minitorch.int64)
    same_error(lambda m, x: m.tensordot(x, x, ([0], [1])), a)
    same_error(lambda m, x: m.tensordot(x, x, ([0], [0, 1])), a)
    same_error(lambda m, x: m.tensordot(x, x, -1), a)
    same_error(lambda m, x: m.tensordot(x, x, 3), a)
    same_error(lambda m, x, y: m.tensordot(x, y, ([0], [0])), a, a.astype("float32"))
    same_error(lambda m, x: m.tensordot(x, x, ([0, 0], [0, 0])), a)
    same_error(lambda m, x: m.tensordot(x, x, "a"), a)


@pytest.mark.parametrize("sa,sb,dim", [((3,), (3,), 0), ((4, 3), (4, 3), -1), ((3, 5), (3, 1), 0),
                                       ((2, 1, 3), (1, 4, 3), 2)])
def test_cross(sa, sb, dim):
    a, b = rand(*sa), rand(*sb)
    check(lambda m, x, y: m.linalg.cross(x, y, dim=dim), lambda x, y: np.cross(x, y, axis=dim), [a, b])
    check(lambda m, x, y: x.cross(y, dim), lambda x, y: np.cross(x, y, axis=dim), [a, b])
    check(lambda m, x, y: m.cross(x.to(m.int64), y.to(m.int64), dim=dim), lambda x, y: np.cross(
        x.astype(np.int64), y.astype(np.int64), axis=dim), [a * 5, b * 5])
    check_grad(lambda m, x, y: m.linalg.cross(x, y, dim=dim), [a, b])
    assert minitorch._C.linalg_cross(minitorch.tensor(a), minitorch.tensor(b), dim=dim).shape == np.cross(
        a, b, axis=dim).shape


def test_cross_default_dim_and_errors():
    a, b = rand(2, 3, 4), rand(2, 3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda m, x, y: m.cross(x, y), lambda x, y: np.cross(x, y, axis=1), [a, b])
    same_error(lambda m, x: m.cross(x, x), rand(2, 2))
    same_error(lambda m, x: m.linalg.cross(x, x), rand(3, 2))
    same_error(lambda m, x, y: m.linalg.cross(x, y), rand(2, 3), rand(3))
    same_error(lambda m, x, y: m.linalg.cross(x, y), rand(2, 3), rand(4, 3))
    same_error(lambda m, x, y: m.linalg.cross(x, y), rand(2, 3), rand(2, 3, dtype="int64"))
    same_error(lambda m, x: m.cross(x, x, dim=0), rand(2, 3))


@pytest.mark.parametrize("p", [2.0, 1.0, 0.5, 3, 0.0, float("inf")])
@pytest.mark.parametrize("s1,s2", [((4, 3), (5, 3)), ((2, 4, 3), (5, 3)), ((2, 1, 4, 3), (3, 2, 3)), ((30, 2), (27, 2))])
def test_cdist(p, s1, s2):
    a, b = rand(*s1), rand(*s2)

    def ref(x, y):
        d = np.abs(x[..., :, None, :] - y[..., None, :, :])
        if p == 0:
            return (d != 0).sum(-1).astype(float)
        return d.max(-1) if p == float("inf") else (d ** p).sum(-1) ** (1 / p)

    check(lambda m, x, y: m.cdist(x, y, p=p), ref, [a, b], layout="transposed")
    if p not in (0.0,) and s1[0] != 30:
        same_as_torch(lambda m, x, y: m.cdist(x, y, p), [a, b], atol=1e-6)
    check(lambda m, x, y: m.cdist(x, y, p, "donot_use_mm_for_euclid_dist"), ref, [a, b])


def cdist_ref(x, y):
    return np.sqrt(((x[..., :, None, :] - y[..., None, :, :]) ** 2).sum(-1))


@pytest.mark.parametrize("s1,s2,mode", [((30, 4), (27, 4), "use_mm_for_euclid_dist_if_necessary"),
                                        ((2, 1, 31, 3), (3, 26, 3), "use_mm_for_euclid_dist_if_necessary"),
                                        ((5, 3), (4, 3), "use_mm_for_euclid_dist")])
def test_cdist_matrix_product_path(s1, s2, mode):
    """p = 2 with more than 25 rows (or use_mm): PyTorch's one matrix product, _euclidean_dist,
    values against NumPy and gradients against finite differences and PyTorch, batch dims
    broadcast."""
    a, b = rand(*s1), rand(*s2)
    check(lambda m, x, y: m.cdist(x, y, 2.0, mode), cdist_ref, [a, b], layout="transposed", atol=1e-9)
    check_grad(lambda m, x, y: m.cdist(x, y, 2.0, mode), [a, b])
    same_as_torch(lambda m, x, y: m.cdist(x, y, 2.0, mode), [a.astype(np.float32), b.astype(np.float32)],
                  atol=2e-5, rtol=1e-4)


def test_euclidean_dist_zero_distance_gradient():
    """Equal rows (integer-valued, so their distance is exactly 0): the gradient there is the
    subgradient 0, as PyTorch's EuclideanDistBackward0 gives, not NaN."""
    x = np.random.default_rng(3).integers(-3, 4, (30, 3)).astype(np.float64)
    x[5] = x[2]
    same_as_torch(lambda m, t: m.cdist(t, t), [x])
    same_as_torch(lambda m, t, u: (m._C if m is minitorch else m)._euclidean_dist(t, u), [x, x[:7]])
    out = minitorch._C._euclidean_dist(minitorch.tensor(x), minitorch.tensor(x))
    assert np.all(as_numpy(out).diagonal() == 0)
    x1 = minitorch.tensor(x, requires_grad=True)
    assert type(minitorch.cdist(x1, x1).grad_fn.next_functions[0][0]).__name__ == "EuclideanDistBackward0"


def test_cdist_errors():
    same_error(lambda m, x: m.cdist(x, x), rand(3))
    same_error(lambda m, x, y: m.cdist(x, y), rand(2, 3), rand(2, 4))
    same_error(lambda m, x: m.cdist(x, x, p=-1), rand(2, 3))
    same_error(lambda m, x: m.cdist(x, x), rand(2, 3, dtype="int64"))
    same_error(lambda m, x, y: m.cdist(x, y), rand(2, 3), rand(2, 3, dtype="float32"))
    same_error(lambda m, x, y: m.cdist(x, y), rand(4, 2, 3), rand(5, 2, 3))
    with pytest.raises(ValueError, match="not a valid value for compute_mode"):
        minitorch.cdist(minitorch.ones(2, 2), minitorch.ones(2, 2), compute_mode="x")


def test_composites_decompose_into_their_ops():
    from minitorch._journey import record

    x = minitorch.ones(3, 3)
    _, events = record(lambda t: t.diagonal(), x)
    assert [e.name for e in events if e.layer == "Op"] == ["diagonal", "as_strided"]
    _, events = record(lambda t: minitorch.roll(t, 1, 0), x)
    names = [e.name for e in events if e.layer == "Op"]
    assert names[0] == "roll" and "narrow" in names and names[-1] == "cat"


@pytest.mark.parametrize("layout", LAYOUTS)
def test_in_place_squeeze_and_unsqueeze_change_self(layout):
    a = rand(3, 1, 4, 1)
    t = to_layout(a, layout)
    version, ptr = t._version, t.data_ptr()
    assert t.squeeze_(1) is t and tuple(t.shape) == (3, 4, 1) and t._version > version
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(as_numpy(t), a.squeeze(1))
    assert t.unsqueeze_(-1) is t and tuple(t.shape) == (3, 4, 1, 1)
    np.testing.assert_array_equal(as_numpy(t), a.squeeze(1)[..., None])
    assert t.squeeze_() is t and tuple(t.shape) == (3, 4)
    assert t.unsqueeze_(0).squeeze_((0,)).shape == (3, 4)
    same_error(lambda m, x: x.unsqueeze_(5), a)
    same_error(lambda m, x: x.squeeze_(4), a)


def test_in_place_squeeze_and_unsqueeze_record_their_gradient():
    same_as_torch(lambda m, x: (x * 1).squeeze_(), [rand(3, 1, 2)])
    same_as_torch(lambda m, x: (x * 1).squeeze_(1) * 2, [rand(3, 1, 2)])
    same_as_torch(lambda m, x: (x * 1).unsqueeze_(1).sum(2), [rand(3, 2)])
    same_as_torch(lambda m, x: x.unsqueeze_(0), [rand(2, 5)])  # a leaf that requires grad: refused
    names = [(minitorch.ones(2, 1, requires_grad=True) * 1).squeeze_(*d).grad_fn.name() for d in ((), (1,))]
    assert names == ["SqueezeBackward3", "SqueezeBackward4"]
    assert (minitorch.ones(2, requires_grad=True) * 1).unsqueeze_(0).grad_fn.name() == "UnsqueezeBackward1"


def test_dropout1d_in_place_on_unbatched_input():
    x = minitorch.zeros(4, 0, dtype=minitorch.int32)
    assert minitorch.nn.functional.dropout1d(x, 0.5, False, True).shape == (4, 0)
    y = minitorch.ones(3, 5)
    assert minitorch.nn.functional.dropout1d(y, 0.5, True, True) is y and y.shape == (3, 5)
