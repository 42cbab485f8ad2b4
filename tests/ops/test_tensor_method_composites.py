"""Tensor methods PyTorch has that are composites here (minitorch/_tensor_methods.py): unfold,
sum_to_size, select_scatter/slice_scatter, renorm_, vdot, cholesky_solve/cholesky_inverse,
triangular_solve, apply_/map_, nonzero_static, subtract/sgn, pin_memory/is_pinned, Tensor.new and
the layout predicates, against PyTorch: values, gradients, non-contiguous inputs and errors."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch, same_error, torch

rng = np.random.default_rng(3)
A = rng.standard_normal((4, 6))
V = rng.standard_normal(10)
LAYOUTS = ["contiguous", "transposed", "sliced"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("args", [(0, 2, 1), (1, 3, 2), (-1, 6, 1), (1, 1, 4), (0, 4, 3), (1, 0, 1)])
def test_unfold_as_torch(layout, args):
    same_as_torch(lambda lib, x: x.unfold(*args) * 2, [A], layout=layout)


def test_unfold_is_a_view_and_0d():
    t = minitorch.arange(10.0)
    u = t.unfold(0, 3, 2)
    u[0, 0] = 100.0
    assert t[0].item() == 100.0
    same_as_torch(lambda lib, x: x.unfold(0, 1, 1) * 3, [np.array(5.0)])


@pytest.mark.parametrize("args", [(0, 11, 1), (0, 3, 0), (1, 2, 1), (0, 3, -1)])
def test_unfold_errors(args):
    same_error(lambda lib, x: x.unfold(*args), V)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("size", [(1, 6), (6,), (4, 1), (1, 1), (4, 6), ((1, 6),)])
def test_sum_to_size_as_torch(layout, size):
    same_as_torch(lambda lib, x: x.sum_to_size(*size), [A], layout=layout)


@pytest.mark.parametrize("size", [(3, 6), (2, 4, 6), (5,)])
def test_sum_to_size_errors(size):
    same_error(lambda lib, x: x.sum_to_size(*size), A)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim,index", [(0, 1), (1, -1), (-2, 3)])
def test_select_scatter_as_torch(layout, dim, index):
    src = rng.standard_normal(A.shape[1] if dim in (0, -2) else A.shape[0])
    same_as_torch(lambda lib, x, s: lib.select_scatter(x, s, dim, index), [A, src], layout=layout)
    same_as_torch(lambda lib, x, s: x.select_scatter(s, dim, index), [A, src], layout=layout)


def test_select_scatter_errors():
    same_error(lambda lib, x, s: lib.select_scatter(x, s, 1, 7), A, np.zeros(4))
    same_error(lambda lib, x, s: lib.select_scatter(x, s, 1, 0), A, np.zeros(3))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kw,shape", [({}, (4, 6)), ({"start": 1, "step": 2}, (2, 6)), ({"dim": 1, "start": 2, "end": 5},
                                     (4, 3)), ({"dim": 1, "start": -4, "end": None, "step": 3}, (4, 2))])
def test_slice_scatter_as_torch(layout, kw, shape):
    src = rng.standard_normal(shape)
    same_as_torch(lambda lib, x, s: lib.slice_scatter(x, s, **kw), [A, src], layout=layout)


def test_slice_scatter_errors():
    same_error(lambda lib, x, s: lib.slice_scatter(x, s, 0, 1, 3), A, np.zeros((3, 6)))


def test_renorm_inplace_as_torch():
    same_as_torch(lambda lib, x: x.clone().renorm_(2, 0, 1.5), [A])


@pytest.mark.parametrize("layout", ["contiguous", "sliced"])
def test_vdot_as_torch(layout):
    same_as_torch(lambda lib, x, y: lib.vdot(x, y), [V, V[::-1].copy()], layout=layout)
    same_as_torch(lambda lib, x, y: x.vdot(y), [V, V[::-1].copy()], layout=layout)
    same_error(lambda lib, x, y: lib.vdot(x, y), A, V)


SPD = (lambda m: m @ m.T + 4 * np.eye(4))(rng.standard_normal((4, 4)))
SPD_BATCH = np.stack([SPD, SPD * 2 + np.eye(4)])
B = rng.standard_normal((4, 3))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("spd", [SPD, SPD_BATCH])
def test_cholesky_solve_and_inverse_as_torch(upper, spd):
    def factor(lib, a):
        lo = lib.linalg.cholesky(a)
        return lo.mT if upper else lo

    same_as_torch(lambda lib, b, a: lib.cholesky_solve(b, factor(lib, a), upper=upper), [B, spd], atol=1e-8)
    same_as_torch(lambda lib, a: lib.cholesky_inverse(factor(lib, a), upper=upper), [spd], atol=1e-8)
    same_as_torch(lambda lib, a: factor(lib, a).cholesky_inverse(upper), [spd], atol=1e-8)


def test_cholesky_solve_errors():
    same_error(lambda lib, b, a: lib.cholesky_solve(b, a), V, SPD)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_triangular_solve_as_torch(upper, transpose, unitriangular):
    tri = np.triu(SPD) if upper else np.tril(SPD)

    def fn(lib, b, a):
        x, m = lib.triangular_solve(b, a, upper=upper, transpose=transpose, unitriangular=unitriangular)
        y, n = b.triangular_solve(a, upper, transpose, unitriangular)
        return lib.cat([x, m, y - x, n - m], 1)

    same_as_torch(fn, [B, tri], atol=1e-8)


def test_apply_and_map_as_torch():
    same_as_torch(lambda lib, x: x.clone().apply_(lambda v: v * v - 1), [A], grad=False)
    same_as_torch(lambda lib, x, y: x.clone().map_(y, lambda a, b: a * 10 + b), [A, A[:1].copy()], grad=False)
    same_error(lambda lib, x, y: x.clone().map_(y, lambda a, b: a + b), A, V)


@pytest.mark.parametrize("size,fill", [(0, -1), (1, -1), (2, 5), (9, -1)])
def test_nonzero_static_as_torch(size, fill):
    M = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]])
    same_as_torch(lambda lib, x: lib.nonzero_static(x, size=size, fill_value=fill), [M], grad=False)
    same_as_torch(lambda lib, x: x.nonzero_static(size=size, fill_value=fill), [M[0]], grad=False)


def test_subtract_and_sgn_as_torch():
    same_as_torch(lambda lib, x, y: lib.subtract(x, y, alpha=2), [A, A[0]])
    same_as_torch(lambda lib, x, y: x.subtract(y), [A, A[0]])
    same_as_torch(lambda lib, x, y: x.clone().subtract_(y, alpha=0.5), [A, A[0]])
    same_as_torch(lambda lib, x: lib.sgn(x) + x.sgn(), [np.array([-2.0, 0.0, 3.0, np.nan])], grad=False)


def test_pin_memory_and_predicates_as_torch():
    pytest.importorskip("torch")
    same_error(lambda lib, x: x.pin_memory(), V)
    for lib in (minitorch, torch):
        t = lib.tensor(V)
        assert t.is_pinned() is False
        assert (t.is_meta, t.is_sparse_csr, t.is_quantized, t.is_mkldnn) == (False, False, False, False)


def test_legacy_new_as_torch():
    for lib in (minitorch,) + ((torch,) if torch is not None else ()):
        t = lib.zeros(2, dtype=lib.float64)
        assert t.new(3, 2).shape == (3, 2) and t.new(3, 2).dtype == lib.float64
        assert t.new([1, 2]).tolist() == [1.0, 2.0] and t.new([1, 2]).dtype == lib.float64
        assert t.new(lib.Size([4])).shape == (4,) and t.new().shape == (0,)
        other = lib.ones(3, dtype=lib.float64)
        alias = t.new(other)
        alias[0] = 5
        assert other[0].item() == 5
        with pytest.raises(TypeError):
            t.new(1.5)
        with pytest.raises(TypeError):
            t.new(lib.ones(2, dtype=lib.float32))
