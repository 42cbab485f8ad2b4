"""The shape and indexing ops on the CUDA device against the CPU: scatter_reduce and
scatter(reduce=) (kernels: index.cu's multiply, maximum and minimum moves, atomic where indices
repeat) and the composites (index_add, index_copy, index_fill, masked_scatter, take,
take_along_dim, repeat_interleave, roll, diagonals, grids, products), which run on the device
through their parts: same values, dtypes, shapes, errors."""
import numpy as np
import pytest

import minitorch
from helpers import check_device, raises_alike, raises_device_assert

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(19)
DTYPES = [minitorch.float32, minitorch.float64, minitorch.int32, minitorch.int64, minitorch.bool]


def values(shape, dtype=minitorch.float32):
    return minitorch.tensor(np.round(RNG.standard_normal(shape) * 3, 1)).to(dtype)


def ints(shape, high, low=0):
    return minitorch.tensor(RNG.integers(low, high, size=shape))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce(dtype, reduce):
    if dtype == minitorch.bool and reduce == "mean":
        raises_alike(lambda x, i, s: x.scatter_reduce(0, i, s, "mean"), values((3,), dtype), ints((2,), 3),
                     values((2,), dtype))
        return
    x, i, s = values((5, 6), dtype), ints((40, 6), 5), values((40, 6), dtype)  # many collisions
    for include_self in (True, False):
        check_device(lambda a, j, b: a.scatter_reduce(0, j, b, reduce, include_self=include_self), x, i, s, atol=1e-4)
        check_device(lambda a, j, b: a.clone().scatter_reduce_(1, j, b, reduce, include_self=include_self),
                     x, ints((5, 9), 6), values((5, 9), dtype), atol=1e-4)


def test_scatter_reduce_nan_and_grad():
    x = minitorch.tensor([0.0, 1.0, 2.0])
    s = minitorch.tensor([float("nan"), 3.0, -1.0, 5.0])
    i = minitorch.tensor([0, 0, 1, 1])
    for reduce in ("amax", "amin", "prod"):
        check_device(lambda a, j, b: a.scatter_reduce(0, j, b, reduce), x, i, s)

    def grads(a, j, b):
        a, b = a.detach().requires_grad_(True), b.detach().requires_grad_(True)
        a.scatter_reduce(0, j, b, "amax", include_self=False).sum().backward()
        return minitorch.cat([a.grad, b.grad])

    check_device(grads, values((4,), minitorch.float64), ints((6,), 4), values((6,), minitorch.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_with_reduce(dtype):
    x, i, s = values((4, 5), dtype), ints((30, 5), 4), values((30, 5), dtype)
    for reduce in ("add", "multiply"):
        check_device(lambda a, j, b: a.scatter(0, j, b, reduce=reduce), x, i, s, atol=1e-3, rtol=1e-3)
        check_device(lambda a, j: a.clone().scatter_(0, j, 2, reduce=reduce), x, i)


def test_index_family():
    x = values((5, 4), minitorch.float64)
    i = minitorch.tensor([4, 0, 4, 1])
    check_device(lambda a, j, b: a.index_add(0, j, b, alpha=0.5), x, i, values((4, 4), minitorch.float64))
    check_device(lambda a, j, b: a.clone().index_add_(1, j % 4, b), x, i, values((5, 4), minitorch.float64))
    check_device(lambda a, j, b: a.index_copy(0, j, b), x, minitorch.tensor([3, 0]), values((2, 4), minitorch.float64))
    # int32 indices, a 0-dim self and source, and a column source along dim 1
    check_device(lambda a, j, b: a.index_add(1, j, b, alpha=2), x, minitorch.tensor([3, 3], dtype=minitorch.int32),
                 values((5, 2), minitorch.float64))
    check_device(lambda a, j, b: a.index_add(0, j, b), values((), minitorch.float64), minitorch.tensor([0]),
                 values((), minitorch.float64))
    check_device(lambda a, j, b: a.index_copy(1, j, b), x, minitorch.tensor([2]), values((5, 1), minitorch.float64))
    check_device(lambda a, j, b: a.index_copy(0, j, b), values((), minitorch.float64), minitorch.tensor(0),
                 values((), minitorch.float64))
    check_device(lambda a, j: a.index_fill(1, j, -1.5), x, minitorch.tensor([-1, 0]))
    check_device(lambda a, j, v: a.clone().index_fill_(0, j, v), x, minitorch.tensor([2]), minitorch.tensor(3.0))

    def grads(op):
        def run(a, j, b):
            a, b = a.detach().requires_grad_(True), b.detach().requires_grad_(True)
            out = op(a, j, b)
            (out * out).sum().backward()
            return minitorch.cat([a.grad.flatten(), b.grad.flatten()])
        return run

    check_device(grads(lambda a, j, b: a.index_add(1, j, b, alpha=-2)), x, minitorch.tensor([1, 1, 3]),
                 values((5, 3), minitorch.float64))
    check_device(grads(lambda a, j, b: a.index_copy(0, j, b)), x, minitorch.tensor([4, 1]), values((2, 4), minitorch.float64))
    m = minitorch.tensor(RNG.standard_normal((5, 4)) > 0)
    check_device(lambda a, k, b: a.masked_scatter(k, b), x, m, values((30,), minitorch.float64))
    check_device(lambda a, k, b: a.clone().masked_scatter_(k[0], b), x, m, values((30,), minitorch.float64))
    check_device(lambda a, j: a.take(j), x, ints((3, 2), 20, -20))
    check_device(lambda a, j: minitorch.take_along_dim(a, j, 1), x, ints((5, 7), 4))
    # a bad index: found by the kernel on the device, as PyTorch's CUDA kernels (nothing waits)
    raises_device_assert(lambda a, j: a.take(j), x, minitorch.tensor([20]))
    raises_device_assert(lambda a, j, b: a.index_add(0, j, b), x, minitorch.tensor([5]), values((1, 4), minitorch.float64))
    raises_device_assert(lambda a, j, b: a.index_add(1, j, b), x, minitorch.tensor([-1], dtype=minitorch.int32),
                         values((5, 1), minitorch.float64))
    raises_device_assert(lambda a, j, b: a.index_copy(0, j, b), x, minitorch.tensor([-1]), values((1, 4), minitorch.float64))
    raises_device_assert(lambda a, j: a.index_fill(1, j, 2.0), x, minitorch.tensor([-5]))
    raises_device_assert(lambda a, k, b: a.masked_scatter(k, b), x, m, values((2,), minitorch.float64))
    raises_alike(lambda a, k, b: a.masked_scatter(k, b), x, m, values((0,), minitorch.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_scatter_layouts(dtype):
    """On the device the k-th masked element takes source[k] through a running count, without
    reading the count back: broadcast masks, transposed targets, exact and spare sources."""
    x = values((4, 6), dtype)
    m = minitorch.tensor(RNG.standard_normal((4, 6)) > 0.3)
    ones = int(m.sum())
    check_device(lambda a, k, b: a.masked_scatter(k, b), x, m, values((ones,), dtype))
    check_device(lambda a, k, b: a.masked_scatter(k, b), x, m, values((3, 9), dtype))
    check_device(lambda a, k, b: a.t().clone().t().masked_scatter_(k, b), x, m, values((30,), dtype))
    check_device(lambda a, k, b: a.clone().masked_scatter_(k[:, :1], b), x, m, values((30,), dtype))
    check_device(lambda a, k, b: a.masked_scatter(k, b), x, m & False, values((0,), dtype))
    check_device(lambda a, k, b: a.masked_scatter(k, b), x, m | True, values((24,), dtype))
    if dtype.is_floating_point:
        def grads(a, k, b):
            a, b = a.detach().requires_grad_(True), b.detach().requires_grad_(True)
            out = a.masked_scatter(k, b)
            (out * out).sum().backward()
            return minitorch.cat([a.grad.flatten(), b.grad.flatten()])
        check_device(grads, x, m, values((30,), dtype))


def test_rearranging_and_diagonals():
    x = values((3, 4, 5))
    check_device(lambda a: a.roll((1, -2), (0, 2)), x)
    check_device(lambda a: a.roll(7), x)
    check_device(lambda a: a.rot90(1, (2, 0)), x)
    check_device(lambda a: a.diagonal(1, 2, 0).clone(), x)
    check_device(lambda a: minitorch.diag_embed(a, -1), x)
    check_device(lambda a: a[0].trace(), x)
    check_device(lambda a: a.tile((2, 1, 1, 2)), x)
    check_device(lambda a, r: a.repeat_interleave(r, dim=1), x, minitorch.tensor([2, 0, 1, 3]))
    check_device(lambda r: minitorch.repeat_interleave(r), minitorch.tensor([2, 0, 1, 3], dtype=minitorch.int32))
    check_device(lambda a: a.repeat_interleave(2, dim=0), x)
    t = minitorch.triu_indices(4, 5, 1, device="cuda")
    assert t.device.type == "cuda"
    np.testing.assert_array_equal(t.cpu().numpy(), minitorch.triu_indices(4, 5, 1).numpy())


def test_grids_and_products():
    a, b = values((3,)), values((4,))
    check_device(lambda p, q: minitorch.stack(minitorch.meshgrid(p, q, indexing="xy")), a, b)
    check_device(lambda p, q: minitorch.cartesian_prod(p, q), a, b)
    check_device(lambda p: minitorch.combinations(p, 2), b)
    check_device(lambda p, q: minitorch.block_diag(p, q.reshape(2, 2)), a, b)
    check_device(lambda p, q: minitorch.kron(p, q.reshape(2, 2)), a, b)
    check_device(lambda p, q: minitorch.tensordot(p.reshape(3, 1), q.reshape(1, 4), 1), a, b)
    check_device(lambda p, q: minitorch.linalg.cross(p.reshape(1, 3), q[:3].reshape(1, 3)), a, b)
    check_device(lambda p, q: minitorch.cdist(p, q, p=1.5), values((5, 3)), values((4, 3)))
    check_device(lambda p, q: minitorch.hstack([p, q]), a, b)
