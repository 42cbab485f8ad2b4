"""The kernels' parallel forms against the CPU (and NumPy): reductions over all dims on the
grid-wide (multi-block) path, softmax and log_softmax a row per warp or per block, the block
scans, layer_norm and cross_entropy over warp-shuffle block sums, and strided elementwise ops
on 32-bit indexing with fast dividers. Sizes straddle the block (256 threads), the warp (32) and
the point where a reduction splits over blocks (1024 elements a block); NaN, inf, empty and
non-contiguous inputs."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(22)
F = minitorch.nn.functional

SIZES = [1, 255, 256, 257, 5000, (1 << 20) + 3]


def floats(shape, dtype=np.float32, scale=1.0):
    return minitorch.tensor((RNG.standard_normal(shape) * scale).astype(dtype))


@pytest.mark.parametrize("n", SIZES)
def test_reduce_all_sizes(n):
    x = floats((n,))
    tol = dict(atol=1e-3 * max(1, n) ** 0.5, rtol=1e-4)
    got = check_device(lambda t: t.sum(), x, **tol)
    np.testing.assert_allclose(got.cpu().numpy(), x.numpy().astype(np.float64).sum(), rtol=1e-4, atol=tol["atol"])
    check_device(lambda t: t.mean(), x, atol=1e-5, rtol=1e-4)
    check_device(lambda t: t.amax(), x, atol=0, rtol=0)
    check_device(lambda t: t.min(), x, atol=0, rtol=0)
    check_device(lambda t: t.argmax(), x, atol=0, rtol=0)
    if n <= 5000:
        check_device(lambda t: t.argmin(), x, atol=0, rtol=0)
        check_device(lambda t: t.norm(), x, atol=1e-4, rtol=1e-5)
        check_device(lambda t: t.norm(1), x, atol=1e-3, rtol=1e-5)
        check_device(lambda t: t.norm(float("inf")), x, atol=0, rtol=0)
        check_device(lambda t: t.norm(3.0), x, atol=1e-4, rtol=1e-5)
        check_device(lambda t: t.var(), x, atol=1e-5, rtol=1e-4)
        check_device(lambda t: t.std(), x, atol=1e-5, rtol=1e-4)
        check_device(lambda t: t.logsumexp(0), x, atol=1e-5, rtol=1e-5)
        check_device(lambda t: (1 + t / 1000).prod(), x, atol=1e-5, rtol=1e-4)
        check_device(lambda t: (t > 0).all(), x)
        check_device(lambda t: (t > 0).any(), x)
        check_device(lambda t: (t > 5).any(), x)
        i = minitorch.tensor(RNG.integers(-50, 50, n))
        check_device(lambda t: t.sum(), i)
        check_device(lambda t: t.max(), i)
        check_device(lambda t: t.argmin(), i)


def test_reduce_all_ties_nan_inf_and_layouts():
    n = 5000
    a = np.zeros(n, np.float32)
    a[[7, 3000, 4999]] = 5.0  # ties: the first position, across blocks
    x = minitorch.tensor(a)
    check_device(lambda t: t.argmax(), x)
    check_device(lambda t: minitorch.max(t, 0), x)
    check_device(lambda t: (-t).argmin(), x)
    for where in (0, 2500, n - 1):
        b = a.copy()
        b[where] = np.nan
        check_device(lambda t: t.amax(), minitorch.tensor(b), atol=0, rtol=0)
        check_device(lambda t: t.argmax(), minitorch.tensor(b))
        check_device(lambda t: t.sum(), minitorch.tensor(b))
    b = a.copy()
    b[100], b[4000] = np.inf, -np.inf
    check_device(lambda t: t.sum(), minitorch.tensor(b))
    check_device(lambda t: t.amin(), minitorch.tensor(b))
    check_device(lambda t: t.logsumexp(0), minitorch.tensor(b))
    # empty: the identity, or the CPU's error
    e = minitorch.zeros(0)
    check_device(lambda t: t.sum(), e)
    check_device(lambda t: t.prod(), e)
    check_device(lambda t: t.logsumexp(0), e)
    # non-contiguous: transposed, sliced, expanded, and a few results over many elements
    m = floats((80, 130))
    check_device(lambda t: t.t().sum(), m, atol=1e-3, rtol=1e-4)
    check_device(lambda t: t[:, ::3].amax(), m, atol=0, rtol=0)
    check_device(lambda t: t.t()[::2].argmax(), m)
    check_device(lambda t: t[:1].expand(3000, 130).sum(), m, atol=1e-2, rtol=1e-4)
    big = floats((3, 9000))
    check_device(lambda t: t.sum(1), big, atol=1e-3, rtol=1e-4)
    check_device(lambda t: t.t().sum(0), big, atol=1e-3, rtol=1e-4)
    check_device(lambda t: t.argmax(1), big)
    check_device(lambda t: t.var(1), big, atol=1e-5, rtol=1e-4)
    check_device(lambda t: t.reshape(3, 90, 100).sum((0, 2)), big, atol=1e-3, rtol=1e-4)


ROWS = [1, 31, 32, 33, 129, 1024, 5000]


@pytest.mark.parametrize("n", ROWS)
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_rows(op, n):
    f = getattr(minitorch, op)
    x = floats((6, n), scale=3.0)
    check_device(lambda t: f(t, -1), x, atol=1e-6, rtol=1e-5)
    check_device(lambda t: f(t, 1), x.double(), atol=1e-12, rtol=1e-12)
    check_device(lambda t: f(t.t(), 0).t(), x, atol=1e-6, rtol=1e-5)  # the strided form, along dim 0
    a = x.numpy().copy()
    a[1, n // 2] = np.nan
    a[2, :] = -np.inf
    a[3, 0] = np.inf
    a[4, :] = np.inf
    check_device(lambda t: f(t, -1), minitorch.tensor(a), atol=1e-6, rtol=1e-5)
    # NumPy's softmax of a finite row
    got = minitorch.softmax(x.cuda(), -1).cpu().numpy().astype(np.float64)
    z = np.exp(x.numpy() - x.numpy().max(1, keepdims=True))
    np.testing.assert_allclose(got, z / z.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_rows_gradients_and_empty(op):
    f = getattr(minitorch, op)
    for n in (33, 1024):
        x = floats((4, n))
        g = floats((4, n))
        xs = [x.clone().requires_grad_(), x.cuda().requires_grad_()]
        for t in xs:
            (f(t, -1) * g.to(t.device)).sum().backward()
        assert_same(xs[1].grad, xs[0].grad, atol=1e-6, rtol=1e-4)
    check_device(lambda t: f(t, -1), minitorch.zeros(0, 7))
    check_device(lambda t: f(t, -1), minitorch.zeros(3, 0))


@pytest.mark.parametrize("n", [1, 31, 255, 256, 257, 1000])
def test_block_scans(n):
    x = floats((3, n))
    check_device(lambda t: t.cumsum(-1), x, atol=1e-4, rtol=1e-5)
    check_device(lambda t: t.cumsum(1), x.double(), atol=1e-12, rtol=1e-12)
    check_device(lambda t: (1 + t / 100).cumprod(-1), x, atol=1e-5, rtol=1e-5)
    check_device(lambda t: t.logcumsumexp(-1), x, atol=1e-5, rtol=1e-5)
    check_device(lambda t: t.t().cumsum(0), x, atol=1e-4, rtol=1e-5)  # the lane form
    i = minitorch.tensor(RNG.integers(-3, 4, (2, n)))
    check_device(lambda t: t.cumsum(1), i)
    check_device(lambda t: t.int().cumsum(1), i)
    check_device(lambda t: t.cumprod(1), i)
    a = x.numpy().copy()
    a[0, n // 2] = np.nan
    a[1, 0] = np.inf
    a[2, -1] = -np.inf
    check_device(lambda t: t.cumsum(-1), minitorch.tensor(a), atol=1e-4, rtol=1e-5)
    check_device(lambda t: t.logcumsumexp(-1), minitorch.tensor(a), atol=1e-5, rtol=1e-5)
    got = x.cuda().cumsum(-1).cpu().numpy()
    np.testing.assert_allclose(got, np.cumsum(x.numpy().astype(np.float64), -1), atol=1e-4, rtol=1e-5)


@pytest.mark.parametrize("n", [1, 31, 33, 1024, 5000])
def test_layer_norm_and_cross_entropy_rows(n):
    x = floats((5, n))
    w, b = floats((n,)), floats((n,))
    check_device(lambda t, u, v: F.layer_norm(t, (n,), u, v), x, w, b, atol=1e-5, rtol=1e-4)
    target = minitorch.tensor(RNG.integers(0, n, 5))
    check_device(F.cross_entropy, x, target, atol=1e-5, rtol=1e-5)
    xs = [x.clone().requires_grad_(), x.cuda().requires_grad_()]
    for t in xs:
        (F.layer_norm(t, (n,)) * minitorch.arange(n, device=t.device)).sum().backward()
    assert_same(xs[1].grad, xs[0].grad, atol=1e-4, rtol=1e-4)
    xs = [x.clone().requires_grad_(), x.cuda().requires_grad_()]
    for t in xs:
        F.cross_entropy(t, target.to(t.device)).backward()
    assert_same(xs[1].grad, xs[0].grad, atol=1e-6, rtol=1e-4)


def test_strided_elementwise_32_bit_indexing():
    """Broadcast, transposed and sliced operands of up to 5 dims (each size a divider), sizes
    around powers of two, and an expanded operand whose offsets all stay small."""
    shapes = [(3, 5, 7), (2, 1, 33, 4), (257, 3), (2, 3, 4, 5, 6), (1, 1023)]
    for shape in shapes:
        a = floats(shape)
        b = floats(shape[-1:])
        check_device(lambda s, t: s.transpose(0, -1) * 2 + t[: s.shape[-1]].reshape(-1, *([1] * (len(shape) - 1))),
                     a, floats((max(shape),)))
        check_device(lambda s, t: s[..., ::2] - t[::2], a, b)
        check_device(lambda s: s.transpose(0, -1).contiguous(), a, atol=0, rtol=0)
        check_device(lambda s: s.transpose(0, -1).double(), a, atol=0, rtol=0)
        check_device(lambda s: minitorch.where(s > 0, s, s.transpose(0, -1).transpose(0, -1) * 3), a)
    e = floats((1, 300)).expand(4000, 300)  # 1.2M elements, every offset below 300
    check_device(lambda s: s * 2, e)
    check_device(lambda s: s.t() + 1, floats((700, 9)))
    z = minitorch.zeros(5, 0, 3)
    check_device(lambda s: s.transpose(0, 2) + 1, z)
