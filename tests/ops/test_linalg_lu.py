"""The LU family of torch.linalg against NumPy and PyTorch: lu_factor, lu_factor_ex,
lu, lu_solve (left=, adjoint=), torch.lu_unpack, the deprecated torch.lu / Tensor.lu and
torch.lu_solve / Tensor.lu_solve. Square, wide and tall matrices, batches (broadcast in lu_solve),
non-contiguous inputs, empty matrices and batches, singular matrices (info, PyTorch's errors),
gradients (PyTorch's linalg_lu_backward, lu_unpack_backward and lu_solve's formulas)."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, check, check_grad, same_as_torch, to_layout, torch_alike

try:
    import torch
except ImportError:  # the sanitizer run: minitorch's side, against NumPy where a test has it
    torch = None
L = minitorch.linalg
rng = np.random.default_rng(0)


def well_conditioned(*shape, dtype="float64"):
    """Random matrices (..., m, n) with a strong diagonal: far from singular, and their pivots
    far from ties (so LAPACK picks the same rows as PyTorch's)."""
    a = rng.standard_normal(shape)
    m, n = shape[-2:]
    a[..., range(min(m, n)), range(min(m, n))] += 2 * max(m, n) ** 0.5
    return a.astype(dtype)


def both(fn, *arrays, layout="contiguous", atol=1e-5, rtol=1e-4):
    """fn gives the same results in minitorch and PyTorch; without PyTorch, minitorch's only."""
    if torch is None:
        got = fn(minitorch, *[to_layout(a, layout) for a in arrays])
        return tuple(got) if isinstance(got, tuple) else (got,)
    return torch_alike(fn, *arrays, layout=layout, atol=atol, rtol=rtol)


def same_error(fn, *arrays):
    """fn raises in minitorch and in PyTorch (where installed): the same class name (LinAlgError
    being a RuntimeError in both) and message."""
    errors = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with pytest.raises(Exception) as e:
            fn(lib, *[lib.tensor(a) for a in arrays])
        errors.append(e.value)
    if torch is not None:
        mine, theirs = errors
        assert type(mine).__name__.lstrip("_") == type(theirs).__name__.lstrip("_"), f"{mine!r} vs {theirs!r}"
        assert str(mine) == str(theirs)


SHAPES = [(3, 3), (2, 4, 4), (2, 1, 5, 5), (1, 1), (3, 5), (5, 3), (2, 3, 2), (2, 2, 4)]
EMPTY = [(0, 0), (3, 0, 0), (0, 3, 3), (2, 0, 3), (2, 3, 0)]


# ---- values ----

@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("shape", SHAPES + EMPTY)
def test_lu_factor_and_lu_like_torch(dtype, shape):
    a = well_conditioned(*shape, dtype=dtype)
    for layout in LAYOUTS:
        lu, piv, info = both(lambda m, x: m.linalg.lu_factor_ex(x), a, layout=layout)
        assert piv.dtype == minitorch.int32 and info.dtype == minitorch.int32
        assert not info.numpy().any()
        both(lambda m, x: m.linalg.lu_factor(x), a, layout=layout)
        P, Lo, U = both(lambda m, x: m.linalg.lu(x), a, layout=layout)
        if a.size:  # A = P L U
            np.testing.assert_allclose((P @ Lo @ U).numpy(), a, atol=1e-4, rtol=1e-4)
        both(lambda m, x: m.lu_unpack(*m.linalg.lu_factor(x)), a, layout=layout)


def test_named_fields():
    a = minitorch.tensor(well_conditioned(3, 4))
    r = L.lu_factor_ex(a)
    assert r.LU is r[0] and r.pivots is r[1] and r.info is r[2]
    r = L.lu(a)
    assert (r.P is r[0], r.L is r[1], r.U is r[2]) == (True, True, True)
    r = minitorch.lu_unpack(*L.lu_factor(a))
    assert tuple(r.L.shape) == (3, 3) and tuple(r.U.shape) == (3, 4) and tuple(r.P.shape) == (3, 3)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5), (2, 5, 3)])
def test_lu_unpack_options_and_broadcast_pivots(shape):
    a = well_conditioned(*shape)
    for data in (True, False):
        for pivots in (True, False):
            both(lambda m, x: m.lu_unpack(*m.linalg.lu_factor(x), unpack_data=data, unpack_pivots=pivots), a)
    # pivots of the caller's, each row swapped with a later one
    k, m = min(shape[-2:]), shape[-2]
    piv = rng.integers(np.arange(1, k + 1), m + 1, size=shape[:-2] + (k,)).astype(np.int32)
    both(lambda m, x, p: m.lu_unpack(x, p), a, piv)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("left", (True, False))
@pytest.mark.parametrize("adjoint", (True, False))
@pytest.mark.parametrize("shapes", [((4, 4), (4, 3)), ((2, 3, 3), (2, 3, 2)), ((2, 1, 3, 3), (4, 3, 1)),
                                    ((3, 3), (5, 3, 3)), ((2, 4, 4), (4, 0)), ((0, 2, 2), (2, 2)),
                                    ((0, 0), (0, 3))])
def test_lu_solve_like_numpy_and_torch(dtype, left, adjoint, shapes):
    ashape, bshape = shapes
    a = well_conditioned(*ashape, dtype=dtype)
    b = rng.standard_normal(bshape).astype(dtype)
    if not left:
        b = np.swapaxes(b, -1, -2).copy()
    for layout in LAYOUTS:
        both(lambda m, x, y: m.linalg.lu_solve(*m.linalg.lu_factor(x), y, left=left, adjoint=adjoint), a, b,
             layout=layout, atol=1e-4)

    def ref(x, y):
        op = np.swapaxes(x, -1, -2) if adjoint else x
        if left:
            return np.linalg.solve(op, y) if y.size else np.zeros(np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
                                                                 + y.shape[-2:])
        return np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(y, -1, -2)), -1, -2)

    if a.size and b.size:
        check(lambda m, x, y: m.linalg.lu_solve(*m.linalg.lu_factor(x), y, left=left, adjoint=adjoint), ref,
              [a, b], atol=1e-4, rtol=1e-4)


def test_legacy_forms():
    a, b = well_conditioned(2, 3, 3), rng.standard_normal((2, 3, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda m, x: m.lu(x), a)
        both(lambda m, x: m.lu(x, get_infos=True), a)
        both(lambda m, x: x.lu(), a)
        both(lambda m, x: x.lu(get_infos=True), a)
        both(lambda m, x, y: m.lu_solve(y, *m.lu(x)), a, b)
        both(lambda m, x, y: y.lu_solve(*m.lu(x)), a, b)
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        minitorch.lu(minitorch.tensor(a))


# ---- singular matrices ----

def test_singular_matrices():
    s = np.array([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 0.0], [0.0, 1.0]]])
    lu, piv, info = both(lambda m, x: m.linalg.lu_factor_ex(x), s)
    assert info.tolist() == [2, 0]
    both(lambda m, x: m.linalg.lu(x), s)  # no check: P, L, U of a singular matrix
    same_error(lambda m, x: m.linalg.lu_factor(x), s)
    same_error(lambda m, x: m.linalg.lu_factor(x), s[0])
    same_error(lambda m, x: m.linalg.lu_factor_ex(x, check_errors=True), s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(lambda m, x: m.lu(x), s)  # torch.lu does not check, whatever get_infos says
        both(lambda m, x: m.lu(x, get_infos=True), s)
    same_error(lambda m, x, y: m.linalg.solve(x, y), s, np.ones((2, 2, 1)))
    z = np.zeros((3, 3))
    assert L.lu_factor_ex(minitorch.tensor(z)).info.item() == 1
    # a NaN propagates, as LAPACK's
    n = well_conditioned(3, 3)
    n[1, 1] = np.nan
    assert np.isnan(L.lu_factor_ex(minitorch.tensor(n)).LU.numpy()).any()


# ---- errors ----

def test_errors_like_torch():
    a = well_conditioned(2, 2)
    piv = np.array([1, 2], dtype=np.int32)
    same_error(lambda m, x: m.linalg.lu_factor(x), np.ones(3))
    same_error(lambda m, x: m.linalg.lu_factor(x), np.ones((2, 2), dtype=np.int64))
    same_error(lambda m, x: m.linalg.lu_factor(x, pivot=False), a)
    same_error(lambda m, x: m.linalg.lu(x, pivot=False), a)
    same_error(lambda m, x: m.linalg.lu_factor_ex(x, pivot=False), a)
    same_error(lambda m, x: m.linalg.lu_factor(x.half()), a)
    same_error(lambda m, x, p: m.lu_unpack(x, p.long()), a, piv)
    same_error(lambda m, x, p: m.lu_unpack(x, p.float()), a, piv)
    same_error(lambda m, x, p: m.lu_unpack(x[0], p), a, piv)
    same_error(lambda m, x, p: m.lu_unpack(x, p + 5), a, piv)
    same_error(lambda m, x, p: m.lu_unpack(x, p - 5), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x, p, m.ones(2, dtype=x.dtype)), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x, p, m.ones(2)), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x, p, m.ones(3, 1, dtype=x.dtype)), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x, p, m.ones(1, 3, dtype=x.dtype), left=False), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x, p, m.ones(2, 1, dtype=m.float32)), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x, p.long(), m.ones(2, 1, dtype=x.dtype)), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x, p[:1], m.ones(2, 1, dtype=x.dtype)), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x.int(), p, m.ones(2, 1, dtype=m.int32)), a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(m.ones(2, 3, dtype=x.dtype), p, m.ones(2, 1, dtype=x.dtype)),
               a, piv)
    same_error(lambda m, x, p: m.linalg.lu_solve(x.expand(3, 2, 2), p, m.ones(2, 1, dtype=x.dtype)), a, piv)


def test_lu_solve_refuses_pivots_out_of_range():
    # LAPACK's getrs reads the pivots unchecked: minitorch refuses them rather than read past the matrix
    a = minitorch.tensor(well_conditioned(3, 3))
    for bad in ([0, 1, 2], [4, 3, 3], [1, 2, -7]):
        with pytest.raises(RuntimeError, match="pivots"):
            L.lu_solve(a, minitorch.tensor(bad, dtype=minitorch.int32), minitorch.ones(3, 1, dtype=a.dtype))


# ---- gradients ----

@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (3, 5), (5, 3), (2, 2, 4), (2, 4, 2), (1, 1)])
def test_lu_gradients(shape):
    a = well_conditioned(*shape)
    check_grad(lambda m, x: m.linalg.lu_factor(x).LU, [a])
    check_grad(lambda m, x: m.linalg.lu_factor_ex(x).LU, [a], layout="transposed")
    check_grad(lambda m, x: m.linalg.lu(x).L, [a])
    check_grad(lambda m, x: m.linalg.lu(x).U, [a], layout="sliced")
    check_grad(lambda m, x: m.linalg.lu(x).L.sum(-1, keepdim=True) * m.linalg.lu(x).U.sum(-2, keepdim=True), [a])
    for data_only in (False, True):
        check_grad(lambda m, x: m.lu_unpack(x, m.linalg.lu_factor(x.detach()).pivots,
                                            unpack_pivots=not data_only).L, [a])
        check_grad(lambda m, x: m.lu_unpack(x, m.linalg.lu_factor(x.detach()).pivots,
                                            unpack_pivots=not data_only).U, [a])


@pytest.mark.parametrize("left", (True, False))
@pytest.mark.parametrize("adjoint", (True, False))
@pytest.mark.parametrize("shapes", [((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1)), ((2, 1, 3, 3), (4, 3, 2)),
                                    ((3, 3), (2, 3, 3))])
def test_lu_solve_gradients(left, adjoint, shapes):
    ashape, bshape = shapes
    a = well_conditioned(*ashape)
    b = rng.standard_normal(bshape)
    if not left:
        b = np.swapaxes(b, -1, -2).copy()

    def fn(m, x, y):
        return m.linalg.lu_solve(*m.linalg.lu_factor(x), y, left=left, adjoint=adjoint)

    check_grad(fn, [a, b])
    check_grad(fn, [a, b], layout="transposed", gradcheck=False)

    def through_lu(m, lu, y):  # the gradient of LU itself, the pivots fixed
        return m.linalg.lu_solve(lu, m.linalg.lu_factor(m.tensor(a)).pivots, y, left=left, adjoint=adjoint)

    lu = L.lu_factor(minitorch.tensor(a)).LU.numpy()
    check_grad(through_lu, [lu, b])


def test_gradient_of_an_empty_batch():
    if torch is None:
        pytest.skip("compares with PyTorch")
    same_as_torch(lambda m, x: m.linalg.lu(x).U, [np.zeros((0, 3, 3))])
    same_as_torch(lambda m, x, y: m.linalg.lu_solve(*m.linalg.lu_factor(x), y), [np.zeros((0, 3, 3)),
                                                                                 np.zeros((0, 3, 2))])


def test_double_backward_of_lu_solve():
    if torch is None:
        pytest.skip("compares with PyTorch")
    a, b = well_conditioned(3, 3), rng.standard_normal((3, 2))
    grads = []
    for lib in (minitorch, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        out = lib.linalg.lu_solve(*lib.linalg.lu_factor(x), y)
        gx, = lib.autograd.grad((out ** 2).sum(), x, create_graph=True)
        gx.sum().backward()
        grads.append((gx.detach().numpy(), y.grad.numpy()))
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)


def test_the_ops_behind_the_functions():
    a = minitorch.tensor(well_conditioned(2, 3, 3))
    b = minitorch.tensor(rng.standard_normal((2, 3, 2)))
    lu, piv, info = minitorch._C.linalg_lu_factor_ex(a)
    lu2, piv2 = minitorch._C.linalg_lu_factor(a)
    assert lu.equal(lu2) and piv.equal(piv2) and not info.numpy().any()
    P, Lo, U = minitorch._C.linalg_lu(a)
    np.testing.assert_allclose((P @ Lo @ U).numpy(), a.numpy(), atol=1e-12)
    x = minitorch._C.linalg_lu_solve(lu, piv, b)
    np.testing.assert_allclose((a @ x).numpy(), b.numpy(), atol=1e-12)
