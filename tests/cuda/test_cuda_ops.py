"""Every CUDA kernel against the CPU result: copies both ways, fill_, elementwise ops over
contiguous, transposed and sliced inputs, sum, and the cuBLAS products."""
import numpy as np
import pytest

import minitorch

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(0)


def layouts(shape):
    """(name, CPU tensor) in three layouts with the same values."""
    a = RNG.standard_normal(shape).astype(np.float32)
    yield "contiguous", minitorch.tensor(a)
    yield "transposed", minitorch.tensor(np.ascontiguousarray(a.T)).t() if a.ndim == 2 else minitorch.tensor(a)
    big = minitorch.tensor(RNG.standard_normal((shape[0] * 2,) + tuple(shape[1:])).astype(np.float32))
    yield "sliced", big[::2]


def same(gpu, cpu, atol=1e-5, rtol=1e-5):
    assert gpu.device == minitorch.device("cuda:0")
    assert gpu.dtype == cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape)
    np.testing.assert_allclose(gpu.cpu().numpy(), cpu.numpy(), atol=atol, rtol=rtol)


def test_device_api():
    assert minitorch.cuda.device_count() >= 1
    assert minitorch.cuda.current_device() == 0
    assert isinstance(minitorch.cuda.get_device_name(), str)
    minitorch.cuda.set_device(0)
    minitorch.cuda.synchronize()
    x = minitorch.ones(2, 3, device="cuda")
    assert x.is_cuda and "device='cuda:0'" in repr(x)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.int32, minitorch.int64, minitorch.bool])
def test_round_trip_and_casts(dtype):
    x = minitorch.tensor(RNG.standard_normal((5, 7)) * 3).to(dtype)
    for name, t in [("c", x), ("t", x.t()), ("s", x[:, 1::2])]:
        g = t.cuda()
        assert g.is_cuda
        np.testing.assert_array_equal(g.cpu().numpy(), t.numpy(), err_msg=name)
        np.testing.assert_array_equal(g.to(minitorch.float64).cpu().numpy(), t.to(minitorch.float64).numpy())
    out = minitorch.zeros(7, 5, dtype=dtype, device="cuda")
    out.copy_(x.t())
    np.testing.assert_array_equal(out.cpu().numpy(), x.t().numpy())
    host = minitorch.zeros(7, 5, dtype=dtype).t()
    host.copy_(x.cuda())
    np.testing.assert_array_equal(host.numpy(), x.numpy())


def test_fill_and_factories():
    same(minitorch.full((3, 4), 2.5, device="cuda"), minitorch.full((3, 4), 2.5))
    same(minitorch.zeros(0, 3, device="cuda"), minitorch.zeros(0, 3))
    x = minitorch.zeros(4, 6, device="cuda")
    x[:, ::2].fill_(7)
    want = np.zeros((4, 6), np.float32)
    want[:, ::2] = 7
    np.testing.assert_array_equal(x.cpu().numpy(), want)


BINARY = ["add", "sub", "mul", "div"]
UNARY = ["neg", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "abs", "reciprocal", "relu"]


@pytest.mark.parametrize("op", BINARY)
def test_binary(op):
    for name, x in layouts((33, 17)):
        y = minitorch.tensor(RNG.standard_normal((17,)).astype(np.float32))
        f = getattr(minitorch, op)
        same(f(x.cuda(), y.cuda()), f(x, y))  # broadcast
        same(f(x.cuda(), x.cuda()), f(x, x))
        same(f(x.cuda(), 2.5), f(x, 2.5))  # a Python number
        g = x.cuda().clone()
        getattr(g, op + "_")(y.cuda())
        same(g, f(x, y))
    same(minitorch.add(x.cuda(), y.cuda(), alpha=3), minitorch.add(x, y, alpha=3))
    i = minitorch.arange(12).reshape(3, 4)
    same(getattr(minitorch, op)(i.cuda(), i.cuda() + 1), getattr(minitorch, op)(i, i + 1))


@pytest.mark.parametrize("op", UNARY)
def test_unary(op):
    for name, x in layouts((40, 9)):
        x = x.abs() + 0.1 if op in ("log", "sqrt", "rsqrt") else x
        same(getattr(minitorch, op)(x.cuda()), getattr(minitorch, op)(x), atol=1e-5, rtol=1e-5)


def test_clamp_and_large():
    x = minitorch.tensor(RNG.standard_normal(1 << 20).astype(np.float32))
    same(x.cuda().clamp_min(0.25), x.clamp_min(0.25))
    same(x.cuda().clamp_max(-0.25), x.clamp_max(-0.25))
    same(x.cuda()[3:] + x.cuda()[:-3], x[3:] + x[:-3])  # misaligned: the unvectorised path


def test_sum():
    for name, x in layouts((300, 70)):
        same(x.cuda().sum(), x.sum(), atol=1e-3, rtol=1e-4)
    i = minitorch.arange(10000, dtype=minitorch.int32)
    same(i.cuda().sum(), i.sum())
    same(minitorch.zeros(0, device="cuda").sum(), minitorch.zeros(0).sum())


@pytest.mark.parametrize("m,k,n", [(1, 8, 5), (7, 16, 9), (64, 33, 17)])
def test_products(m, k, n):
    a = minitorch.tensor(RNG.standard_normal((m, k)).astype(np.float32))
    b = minitorch.tensor(RNG.standard_normal((k, n)).astype(np.float32))
    c = minitorch.tensor(RNG.standard_normal((n,)).astype(np.float32))
    tol = dict(atol=1e-4, rtol=1e-4)
    same(a.cuda() @ b.cuda(), a @ b, **tol)
    same(a.cuda().mm(b.t().contiguous().cuda().t()), a.mm(b), **tol)
    same(minitorch.addmm(c.cuda(), a.cuda(), b.cuda(), beta=0.5, alpha=2), minitorch.addmm(c, a, b, beta=0.5, alpha=2), **tol)
    same(minitorch.mv(b.t().cuda(), b[:, 0].contiguous().cuda()), minitorch.mv(b.t(), b[:, 0].contiguous()), **tol)
    ba = minitorch.tensor(RNG.standard_normal((3, m, k)).astype(np.float32))
    bb = minitorch.tensor(RNG.standard_normal((3, k, n)).astype(np.float32))
    same(minitorch.bmm(ba.cuda(), bb.cuda()), minitorch.bmm(ba, bb), **tol)


def test_linear_forward_and_mixed_devices():
    lin = minitorch.nn.Linear(4, 8)
    x = minitorch.randn(3, 4)
    ref = minitorch.relu(lin(x))
    lin.to("cuda")
    same(minitorch.relu(lin(x.cuda())), ref, atol=1e-5)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x.cuda() + x
