"""take, take_along_dim, index_add(_), index_copy(_), index_fill(_), masked_scatter(_), scatter
with reduce= and scatter_reduce(_) against NumPy (float64) and PyTorch: values and dtypes, every
dtype, repeated indices, non-contiguous inputs, 0-dim tensors, gradients (PyTorch's formulas:
against PyTorch's and finite differences), and bad calls raising PyTorch's exception class with
its words."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, check, check_grad, same_as_torch, same_error, to_layout, torch

RNG = np.random.default_rng(7)
LAYOUTS = ("contiguous", "transposed", "sliced")
ALL = ("float32", "float64", "int64", "int32", "bool")


def rand(*shape, dtype="float64"):
    a = RNG.standard_normal(shape)
    if dtype == "bool":
        return a > 0
    return a.astype(dtype) if dtype.startswith("float") else np.round(a * 3).astype(dtype)


# ---- take, take_along_dim ----

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_take(dtype, layout):
    a = rand(3, 4, dtype=dtype)
    for idx in (np.array([0, 11, -1, 5, 5]), np.array([[3, -12], [0, 7]]), np.array(4), np.zeros(0, np.int64)):
        check(lambda m, x, i: m.take(x, i), lambda x, i: np.take(x, i), [a, idx], layout=layout)
    check(lambda m, x, i: x.take(i), lambda x, i: np.take(x, i), [np.array(2.5), np.array([0, 0, -1])])


def test_take_grad_and_errors():
    check_grad(lambda m, x, i: x.take(i), [rand(3, 4), np.array([[1, 1], [-1, 6]])], layout="transposed")
    assert minitorch.ones(3, requires_grad=True).take(minitorch.tensor([0])).grad_fn.name() == "TakeBackward0"
    same_error(lambda m, x, i: m.take(x, i), rand(3), np.array([3]))
    same_error(lambda m, x, i: m.take(x, i), rand(3), np.array([-4]))
    same_error(lambda m, x, i: m.take(x, i), rand(3), np.array([1], np.int32))
    same_error(lambda m, x, i: m.take(x, i), rand(0), np.array([0]))


@pytest.mark.parametrize("dtype", ALL)
def test_take_along_dim(dtype):
    a = rand(3, 4, 5, dtype=dtype)
    for dim, shape in [(0, (2, 4, 5)), (1, (3, 7, 5)), (-1, (3, 4, 1)), (2, (1, 4, 2)), (1, (3, 2, 1))]:
        idx = RNG.integers(-a.shape[dim], a.shape[dim], size=shape) % a.shape[dim]
        b = np.broadcast_shapes(a.shape[:dim % 3] + (1,) + a.shape[dim % 3 + 1:], idx.shape)

        def ref(x, i, dim=dim, b=b):
            full = list(b)
            full[dim] = x.shape[dim]
            want = list(b)
            want[dim] = i.shape[dim]
            return np.take_along_axis(np.broadcast_to(x, full), np.broadcast_to(i, want), dim)

        check(lambda m, x, i: m.take_along_dim(x, i, dim), ref, [a, idx], layout="transposed")
    flat = np.array([0, 59, 7])
    check(lambda m, x, i: x.take_along_dim(i), lambda x, i: np.take(x, i), [a, flat])


def test_take_along_dim_grad_and_errors():
    check_grad(lambda m, x, i: m.take_along_dim(x, i, 1), [rand(3, 4), np.array([[0, 0, 3]])])
    check_grad(lambda m, x, i: m.take_along_dim(x, i), [rand(3, 4), np.array([0, 5, 5])])
    same_error(lambda m, x, i: m.take_along_dim(x, i, 0), rand(2, 3), np.array([1]))
    same_error(lambda m, x, i: m.take_along_dim(x, i, 0), rand(2, 3), np.array([[1]], np.int32))
    same_error(lambda m, x, i: m.take_along_dim(x, i, 0), rand(3, 4), np.array([[1, 1]]))
    same_error(lambda m, x, i: m.take_along_dim(x.t(), i), rand(3, 4), np.array([1]))


# ---- index_add, index_copy, index_fill ----

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_add(dtype, dim):
    a = rand(3, 4, 5, dtype=dtype)
    n = a.shape[dim]
    idx = np.array([0, n - 1, 0, 1, 0])
    shape = list(a.shape)
    shape[dim] = len(idx)
    src = rand(*shape, dtype=dtype)

    def ref(x, i, s, alpha=1):
        out = x.copy()
        np.add.at(np.moveaxis(out, dim, 0), i, np.moveaxis(s, dim, 0) * alpha if dtype != "bool" else np.moveaxis(s, dim, 0))
        return out.astype(x.dtype) if dtype != "bool" else out | x

    check(lambda m, x, i, s: m.index_add(x, dim, i, s), ref, [a, idx, src], layout="transposed")
    check(lambda m, x, i, s: x.index_add(dim, i.int(), s), ref, [a, idx, src], layout="sliced")
    if dtype != "bool":
        check(lambda m, x, i, s: x.clone().index_add_(dim, i, s, alpha=3), lambda x, i, s: ref(x, i, s, 3),
              [a, idx, src])
    if dtype.startswith("float"):
        check(lambda m, x, i, s: x.index_add(dim, i, s, alpha=-0.5), lambda x, i, s: ref(x, i, s, -0.5), [a, idx, src])
        check_grad(lambda m, x, i, s: x.index_add(dim, i, s, alpha=2.0), [a, idx, src])


def test_index_add_in_place_scalars_and_errors():
    x = minitorch.zeros(3, 2)
    assert x.index_add_(0, minitorch.tensor([2, 2]), minitorch.ones(2, 2)) is x
    np.testing.assert_array_equal(as_numpy(x), [[0, 0], [0, 0], [2, 2]])
    check(lambda m, x, i, s: x.index_add(0, i, s), lambda x, i, s: x + s, [np.array(1.0), np.array([0]), np.array(2.0)])
    check(lambda m, x, i, s: x.index_add(0, i, s, alpha=2.5), lambda x, i, s: x + np.array([0, 10, 0]),
          [np.arange(3), np.array([1]), np.array([5])])  # alpha cast to int64: 2
    same_as_torch(lambda m, x, i, s: (x * 1).index_add_(1, i, s), [rand(2, 3), np.array([2, 0]), rand(2, 2)])
    z = rand(3, 4)
    same_error(lambda m, x, i, s: x.index_add(0, i, s), z, np.array([0, 2]), rand(2, 5))
    same_error(lambda m, x, i, s: x.index_add(1, i, s), z, np.array([0, 2]), rand(3))
    same_error(lambda m, x, i, s: x.index_add(2, i, s), z, np.array([0, 2]), rand(2, 4))
    same_error(lambda m, x, i, s: x.index_add(0, i, s), z, np.array([0]), rand(1, 4).astype("float32"))
    same_error(lambda m, x, i, s: x.index_add(0, i, s), z, np.array([0, 1]), rand(1, 4))
    same_error(lambda m, x, i, s: x.index_add(0, i, s), z, np.array([0.0]), rand(1, 4))
    same_error(lambda m, x, i, s: x.index_add(0, i, s), z, np.array([[0]]), rand(1, 4))
    same_error(lambda m, x, i, s: x.index_add(0, i, s), z, np.array([5]), rand(1, 4))
    same_error(lambda m, x, i, s: x.index_add(1, i, s), z, np.array([-1]), rand(3, 1))
    same_error(lambda m, x, i, s: x.index_add(0, i, s), rand(3), np.array([3]), rand(1))


@pytest.mark.parametrize("dtype", ALL)
def test_index_copy(dtype):
    a = rand(4, 3, 2, dtype=dtype)
    for dim, idx in [(0, np.array([3, 0])), (1, np.array([2, 0, 1])), (-1, np.array([1]))]:
        shape = list(a.shape)
        shape[dim] = len(idx)
        src = rand(*shape, dtype=dtype)

        def ref(x, i, s, dim=dim):
            out = x.copy()
            np.moveaxis(out, dim, 0)[i] = np.moveaxis(s, dim, 0)
            return out

        check(lambda m, x, i, s: m.index_copy(x, dim, i, s), ref, [a, idx, src], layout="transposed")
        check(lambda m, x, i, s: x.clone().index_copy_(dim, i, s), ref, [a, idx, src])
        if dtype.startswith("float"):
            check_grad(lambda m, x, i, s: x.index_copy(dim, i, s), [a, idx, src])
    check(lambda m, x, i, s: x.index_copy(0, i, s), lambda x, i, s: s, [np.array(1.0), np.array([0]), np.array(2.0)])


def test_index_copy_errors():
    z = rand(3, 4)
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([0, 2]), rand(2, 5))
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([0, 2], np.int32), rand(2, 4))
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([0, 2]), rand(3, 4))
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([[0]]), rand(1, 4))
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([0, 2]), np.array(1.0))
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([0, 2]), rand(4))
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([0, 2]), rand(2, 4).astype("float32"))
    same_error(lambda m, x, i, s: x.index_copy(0, i, s), z, np.array([5]), rand(1, 4))
    same_error(lambda m, x, i, s: x.index_copy(1, i, s), z, np.array([-1]), rand(3, 1))


@pytest.mark.parametrize("dtype", ALL)
def test_index_fill(dtype):
    a = rand(3, 4, dtype=dtype)
    for dim, idx in [(0, np.array([2, -3])), (1, np.array([-1, 1, 1])), (-1, np.array(0)), (0, np.zeros(0, np.int64))]:
        def ref(x, i, v, dim=dim):
            out = x.copy()
            np.moveaxis(out, dim, 0)[i] = v
            return out

        for value in (-2, True, 1.5):
            check(lambda m, x, i: m.index_fill(x, dim, i, value), lambda x, i: ref(x, i, np.array(value).astype(x.dtype)),
                  [a, idx], layout="transposed")
        check(lambda m, x, i, v: x.clone().index_fill_(dim, i, v), lambda x, i, v: ref(x, i, v.astype(x.dtype)),
              [a, idx, np.array(7.0)])
    check(lambda m, x, i: x.index_fill(0, i, 3), lambda x, i: np.array(3.0), [np.array(1.0), np.array([0])])


def test_index_fill_grads_and_errors():
    check_grad(lambda m, x, i: x.index_fill(1, i, 2.0), [rand(3, 4), np.array([1, 3, 1])])
    same_as_torch(lambda m, x, i, v: x.index_fill(1, i, v), [rand(3, 4), np.array([1, 3, 1]), np.array(0.5)])
    v = minitorch.tensor(0.5, requires_grad=True)
    assert minitorch.ones(2, 2).index_fill(0, minitorch.tensor([0]), v).grad_fn.name() == "IndexFillBackward1"
    z = rand(3, 4)
    same_error(lambda m, x, i: x.index_fill(0, i, 1), z, np.array([0, 2], np.int32))
    same_error(lambda m, x, i: x.index_fill(0, i, 1), z, np.array([[0]]))
    same_error(lambda m, x, i: x.index_fill(0, i, 1), z, np.array([3]))
    same_error(lambda m, x, i: x.index_fill(0, i, 1), z, np.array([-4]))
    same_error(lambda m, x, i: x.index_fill(2, i, 1), z, np.array([0]))
    same_error(lambda m, x, i, v: x.index_fill(0, i, v), z, np.array([0]), np.array([1.0, 2.0]))
    same_error(lambda m, x, i: x.index_fill(0, i, 1), np.array(1.0), np.array([1]))


# ---- masked_scatter ----

def ref(x, mk, s):
    """x and mk broadcast together, the elements where mk holds set to s's first ones in order."""
    out = np.broadcast_to(x, np.broadcast_shapes(x.shape, mk.shape)).copy()
    full = np.broadcast_to(mk, out.shape)
    out[full] = s.ravel()[: full.sum()]
    return out


@pytest.mark.parametrize("dtype", ALL)
def test_masked_scatter(dtype):
    a = rand(3, 4, dtype=dtype)
    src = rand(20, dtype=dtype)
    for mask in (rand(3, 4) > 0, np.array([True, False, False, True]), np.ones((3, 1), bool), np.zeros((3, 4), bool)):
        check(lambda m, x, mk, s: m.masked_scatter(x, mk, s), ref, [a, mask, src], layout="transposed")
        check(lambda m, x, mk, s: x.clone().masked_scatter_(mk, s.reshape(4, 5)), ref, [a, mask, src])
    check(lambda m, x, mk, s: x.masked_scatter(mk, s), ref, [np.zeros(4, dtype=dtype), rand(3, 4) > 0, src])


def test_masked_scatter_grads_and_errors():
    mask = np.array([[True, False, True], [False, False, True]])
    check_grad(lambda m, x, mk, s: x.masked_scatter(mk, s), [rand(2, 3), mask, rand(2, 4)])
    check_grad(lambda m, x, mk, s: x.masked_scatter(mk, s), [rand(3), mask, rand(5)])  # self broadcast
    same_as_torch(lambda m, x, mk, s: (x * 1).masked_scatter_(mk, s), [rand(2, 3), mask, rand(3)])
    z = rand(3, 4)
    same_error(lambda m, x, mk, s: x.masked_scatter(mk, s), z, np.ones((3, 4), bool), rand(5))
    same_error(lambda m, x, mk, s: x.masked_scatter(mk, s), z, np.ones((3, 4)), rand(12))
    same_error(lambda m, x, mk, s: x.masked_scatter(mk, s), z, np.ones(4, bool), rand(12).astype("float32"))
    same_error(lambda m, x, mk, s: x.masked_scatter(mk, s), z, np.ones((2, 4), bool), rand(12))


# ---- scatter(reduce=), scatter_reduce ----

def scatter_ref(x, dim, i, s, op, include_self=True):
    """NumPy: each x[..., i[k], ...] reduced with s[k] (and itself when include_self)."""
    out = x.copy().astype(np.float64) if x.dtype.kind == "f" else x.copy()
    hit = np.zeros(x.shape, bool)
    vals = {}
    for k in np.ndindex(*i.shape):
        pos = list(k)
        pos[dim] = i[k]
        vals.setdefault(tuple(pos), []).append(s[k])
    for pos, v in vals.items():
        v = list(v) + ([x[pos]] if include_self else [])
        hit[pos] = True
        if op == "sum":
            r = np.sum(v, dtype=out.dtype) if x.dtype != bool else any(v)
        elif op == "prod":
            r = np.prod(v, dtype=out.dtype) if x.dtype != bool else all(v)
        elif op == "mean":
            r = np.sum(v) / len(v) if x.dtype.kind == "f" else np.sum(v) // len(v)
        elif op == "amax":
            r = np.max(v)
        else:
            r = np.min(v)
        out[pos] = r
    return out


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(dtype, reduce, include_self):
    if dtype == "bool" and reduce == "mean":
        same_error(lambda m, x, i, s: x.scatter_reduce(0, i, s, "mean"), rand(3, dtype="bool"), np.array([0]),
                   rand(1, dtype="bool"))
        return
    a = rand(4, 5, dtype=dtype)
    idx = RNG.integers(0, 4, size=(3, 5))
    src = rand(3, 6, dtype=dtype)  # larger than index: its extra column is unused
    ref = (lambda x, i, s: scatter_ref(x, 0, i, s, reduce, include_self))
    check(lambda m, x, i, s: m.scatter_reduce(x, 0, i, s, reduce, include_self=include_self), ref, [a, idx, src],
          layout="transposed")
    check(lambda m, x, i, s: x.clone().scatter_reduce_(1, i, s, reduce, include_self=include_self),
          lambda x, i, s: scatter_ref(x, 1, i, s, reduce, include_self),
          [a, RNG.integers(0, 5, size=(4, 3)), rand(4, 3, dtype=dtype)], layout="sliced")


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_grads(reduce, include_self):
    idx = np.array([[0, 1, 2, 0], [2, 2, 1, 0], [0, 1, 2, 0]])
    a, src = rand(3, 4), rand(3, 4)
    check_grad(lambda m, x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self), [a, idx, src],
               gradcheck=reduce not in ("amax", "amin"))
    # ties share the gradient of an extremum; zeros in a product
    tied = np.array([[1.0, 2.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [1.0, 2.0, 3.0, 1.0]])
    same_as_torch(lambda m, x, i, s: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
                  [tied, idx, tied.copy()])
    same_as_torch(lambda m, x, i, s: (x * 1).scatter_reduce_(1, i, s, reduce, include_self=include_self),
                  [tied, idx, tied[:, ::-1].copy()])


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_scatter_with_reduce():
    a, idx, src = rand(3, 4), np.array([[0, 1, 2, 0], [2, 2, 1, 0]]), rand(2, 4)
    for reduce, op in (("add", "sum"), ("multiply", "prod")):
        check(lambda m, x, i, s: x.scatter(0, i, s, reduce=reduce), lambda x, i, s: scatter_ref(x, 0, i, s, op),
              [a, idx, src], layout="transposed")
        check(lambda m, x, i: m.scatter(x, 0, i, 2.0, reduce=reduce),
              lambda x, i: scatter_ref(x, 0, i, np.full(i.shape, 2.0), op), [a, idx])
        check(lambda m, x, i, s: x.clone().scatter_(0, i, s, reduce=reduce),
              lambda x, i, s: scatter_ref(x, 0, i, s, op), [a.astype(np.int64), idx, src.astype(np.int64)])
    same_as_torch(lambda m, x, i, s: x.scatter(0, i, s, reduce="multiply"), [a, idx, src])  # no derivative
    assert minitorch.ones(3, requires_grad=True).scatter(
        0, minitorch.tensor([0]), minitorch.tensor([2.0]), reduce="add").grad_fn.name() == "NotImplemented"
    same_error(lambda m, x, i, s: x.scatter(0, i, s, reduce="max"), a, idx, src)


def test_scatter_reduce_errors():
    a, idx, src = rand(3, 4), np.array([[0, 1, 2, 0]]), rand(1, 4)
    same_error(lambda m, x, i, s: x.scatter_reduce(0, i, s, "maximum"), a, idx, src)
    check(lambda m, x, i, s: x.scatter_reduce(0, i, s, "max"), lambda x, i, s: scatter_ref(x, 0, i, s, "amax"),
          [a, idx, src])  # PyTorch's undocumented aliases
    check(lambda m, x, i, s: x.scatter_reduce(0, i, s, "min"), lambda x, i, s: scatter_ref(x, 0, i, s, "amin"),
          [a, idx, src])
    same_error(lambda m, x, i, s: x.scatter_reduce(0, i, s, "sum"), a, idx, src.astype("float32"))
    same_error(lambda m, x, i, s: x.scatter_reduce(0, i, s, "sum"), a, idx, rand(1, 2))
    same_error(lambda m, x, i, s: x.scatter_reduce(2, i, s, "sum"), a, idx, src)
    with pytest.raises(RuntimeError, match="out of bounds"):
        minitorch.zeros(2).scatter_reduce(0, minitorch.tensor([2]), minitorch.ones(1), "amax")


def test_scatter_reduce_in_place_returns_self():
    x = minitorch.zeros(3)
    version = x._version
    assert x.scatter_reduce_(0, minitorch.tensor([1, 1]), minitorch.tensor([2.0, 5.0]), "amax") is x
    assert x.tolist() == [0.0, 5.0, 0.0] and x._version > version
    y = minitorch.zeros(3, requires_grad=True) * 1
    assert y.scatter_reduce(0, minitorch.tensor([0]), minitorch.ones(1), "sum").grad_fn.name() == "ScatterReduceBackward0"
