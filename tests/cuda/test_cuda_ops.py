"""Every CUDA kernel against the CPU result: copies both ways, fill_, elementwise ops over
contiguous, transposed and sliced inputs, sum, and the cuBLAS products."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device

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


def test_device_api():
    assert minitorch.cuda.device_count() >= 1
    assert minitorch.cuda.current_device() == 0
    assert isinstance(minitorch.cuda.get_device_name(), str)
    minitorch.cuda.set_device(0)
    minitorch.cuda.synchronize()
    x = minitorch.ones(2, 3, device="cuda")
    assert x.is_cuda and "device='cuda:0'" in repr(x)
    assert x.get_device() == 0 and minitorch.ones(1).get_device() == -1
    with minitorch.cuda.device(0), minitorch.cuda.device_of(x):
        assert minitorch.cuda.current_device() == 0 and minitorch.ones(1).cuda().get_device() == 0


@pytest.mark.skipif(minitorch.cuda.device_count() < 2, reason="needs two devices")
def test_the_current_device_is_the_users_choice_not_the_last_ops():
    """As PyTorch's device guards: an op on cuda:1 leaves the current device alone, and "cuda"
    without an index (and Tensor.cuda()) means the current device."""
    y = minitorch.ones(2, device="cuda:1") + 1
    assert y.get_device() == 1 and minitorch.cuda.current_device() == 0
    assert minitorch.ones(1, device="cuda").get_device() == 0
    with minitorch.cuda.device(1):
        assert minitorch.cuda.current_device() == 1
        assert minitorch.ones(1, device="cuda").get_device() == 1 and minitorch.ones(1).cuda().get_device() == 1
        assert minitorch.cuda.current_stream().device.index == 1
    assert minitorch.cuda.current_device() == 0
    minitorch.cuda.set_device(1)
    try:
        assert float((y * 2).sum().cpu().numpy()) == 8.0 and minitorch.cuda.current_device() == 1
    finally:
        minitorch.cuda.set_device(0)


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


def test_tensor_of_a_cuda_tensor_stays_on_its_device():
    # as PyTorch: tensor(t) copies on t's device unless device= says otherwise
    src = minitorch.arange(6.0).reshape(2, 3).cuda().t()
    with pytest.warns(UserWarning, match="To copy construct from a tensor"):
        t = minitorch.tensor(src)
        on_cpu = minitorch.tensor(src, device="cpu")
        back = minitorch.tensor(on_cpu, device="cuda")
    assert t.device == src.device and t.stride() == src.stride()  # a dense layout kept, as PyTorch's
    assert t.tolist() == src.tolist() == on_cpu.tolist() == back.tolist()
    assert on_cpu.device.type == "cpu" and back.device == src.device


def test_fill_and_factories():
    assert_same(minitorch.full((3, 4), 2.5, device="cuda"), minitorch.full((3, 4), 2.5))
    assert_same(minitorch.zeros(0, 3, device="cuda"), minitorch.zeros(0, 3))
    x = minitorch.zeros(4, 6, device="cuda")
    x[:, ::2].fill_(7)
    want = np.zeros((4, 6), np.float32)
    want[:, ::2] = 7
    np.testing.assert_array_equal(x.cpu().numpy(), want)


def test_fill_with_a_tensor_on_the_device():
    """fill_ with a 0-dim CUDA tensor copies it on the device (cast to self's dtype), also when
    it is an element of self, and on a strided or expanded self; as on the CPU."""
    base = RNG.standard_normal((4, 6)).astype(np.float32)
    for make in (lambda t: t, lambda t: t[:, ::2], lambda t: t.t()):
        for v in (minitorch.tensor(-1.75), minitorch.tensor(3, dtype=minitorch.int64)):
            got, want = minitorch.tensor(base).cuda(), minitorch.tensor(base)
            make(got).fill_(v.cuda())
            make(want).fill_(v)
            assert_same(got, want)
    got, want = minitorch.tensor(base).cuda(), minitorch.tensor(base)
    got.fill_(got[1, 2])  # the value inside self
    want.fill_(want[1, 2])
    assert_same(got, want)
    ints = minitorch.zeros(3, dtype=minitorch.int32, device="cuda")
    ints.fill_(minitorch.tensor(2.9, device="cuda"))
    assert ints.tolist() == minitorch.zeros(3, dtype=minitorch.int32).fill_(minitorch.tensor(2.9)).tolist()
    e = minitorch.zeros(1, device="cuda").expand(3, 4)
    e.fill_(minitorch.tensor(5.0, device="cuda"))
    assert e.tolist() == [[5.0] * 4] * 3
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        minitorch.zeros(2, device="cuda").fill_(minitorch.ones(2, device="cuda"))


BINARY = ["add", "sub", "mul", "div"]


@pytest.mark.parametrize("op", BINARY)
def test_binary(op):
    for name, x in layouts((33, 17)):
        y = minitorch.tensor(RNG.standard_normal((17,)).astype(np.float32))
        f = getattr(minitorch, op)
        assert_same(f(x.cuda(), y.cuda()), f(x, y))  # broadcast
        assert_same(f(x.cuda(), x.cuda()), f(x, x))
        assert_same(f(x.cuda(), 2.5), f(x, 2.5))  # a Python number
        g = x.cuda().clone()
        getattr(g, op + "_")(y.cuda())
        assert_same(g, f(x, y))
    assert_same(minitorch.add(x.cuda(), y.cuda(), alpha=3), minitorch.add(x, y, alpha=3))
    i = minitorch.arange(12).reshape(3, 4)
    assert_same(getattr(minitorch, op)(i.cuda(), i.cuda() + 1), getattr(minitorch, op)(i, i + 1))


def test_clamp_and_large():
    x = minitorch.tensor(RNG.standard_normal(1 << 20).astype(np.float32))
    assert_same(x.cuda().clamp_min(0.25), x.clamp_min(0.25))
    assert_same(x.cuda().clamp_max(-0.25), x.clamp_max(-0.25))
    assert_same(x.cuda()[3:] + x.cuda()[:-3], x[3:] + x[:-3])  # misaligned: the unvectorised path


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.int64, minitorch.bool])
def test_vectorised_elementwise_sizes_and_offsets(dtype):
    """Contiguous 32-byte-aligned operands take 4 elements a thread with vector loads; the
    n % 4 tail, sizes under one vector and offset views (the scalar path) must agree too."""
    for n in (1, 3, 4, 5, 7, 1023, 4097, (1 << 20) + 3):
        a = minitorch.tensor(RNG.standard_normal(n + 8) * 4).to(dtype)
        b = minitorch.tensor(RNG.standard_normal(n + 8) * 4).to(dtype)
        ga, gb = a.cuda(), b.cuda()
        for off in (0, 1, 4, 8):  # views both 32-byte aligned (the vector path) and not, per dtype
            x, y, gx, gy = a[off:off + n], b[off:off + n], ga[off:off + n], gb[off:off + n]
            if dtype != minitorch.bool:
                assert_same(gx + gy, x + y)
                assert_same(gx * 3, x * 3)
                assert_same(minitorch.where(gx > gy, gx, gy), minitorch.where(x > y, x, y))
            assert_same(gx == gy, x == y)
            assert_same(gx.to(minitorch.float32), x.to(minitorch.float32))
        g = ga.clone()
        if dtype != minitorch.bool:
            g.add_(gb, alpha=2)  # in place: out is an input
            assert_same(g, a + b * 2)


def test_sum():
    for name, x in layouts((300, 70)):
        assert_same(x.cuda().sum(), x.sum(), atol=1e-3, rtol=1e-4)
    i = minitorch.arange(10000, dtype=minitorch.int32)
    assert_same(i.cuda().sum(), i.sum())
    assert_same(minitorch.zeros(0, device="cuda").sum(), minitorch.zeros(0).sum())


@pytest.mark.parametrize("m,k,n", [(1, 8, 5), (7, 16, 9), (64, 33, 17)])
def test_products(m, k, n):
    a = minitorch.tensor(RNG.standard_normal((m, k)).astype(np.float32))
    b = minitorch.tensor(RNG.standard_normal((k, n)).astype(np.float32))
    c = minitorch.tensor(RNG.standard_normal((n,)).astype(np.float32))
    tol = dict(atol=1e-4, rtol=1e-4)
    assert_same(a.cuda() @ b.cuda(), a @ b, **tol)
    assert_same(a.cuda().mm(b.t().contiguous().cuda().t()), a.mm(b), **tol)
    assert_same(minitorch.addmm(c.cuda(), a.cuda(), b.cuda(), beta=0.5, alpha=2), minitorch.addmm(c, a, b, beta=0.5, alpha=2), **tol)
    assert_same(minitorch.mv(b.t().cuda(), b[:, 0].contiguous().cuda()), minitorch.mv(b.t(), b[:, 0].contiguous()), **tol)
    ba = minitorch.tensor(RNG.standard_normal((3, m, k)).astype(np.float32))
    bb = minitorch.tensor(RNG.standard_normal((3, k, n)).astype(np.float32))
    assert_same(minitorch.bmm(ba.cuda(), bb.cuda()), minitorch.bmm(ba, bb), **tol)


def test_products_from_short_lived_threads():
    """Each thread gets its own cuBLAS handle; an exiting thread's goes to a pool that the next
    threads take from (cuda/blas.c): three waves of 8 threads, every product right."""
    import threading

    a = minitorch.tensor(RNG.standard_normal((33, 20)).astype(np.float32))
    b = minitorch.tensor(RNG.standard_normal((20, 7)).astype(np.float32))
    want, ga, gb = (a @ b).numpy(), a.cuda(), b.cuda()
    results = []

    def work():
        with minitorch.cuda.stream(minitorch.cuda.Stream()):
            results.append((ga @ gb).cpu().numpy())

    for _ in range(3):
        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(results) == 24
    for r in results:
        np.testing.assert_allclose(r, want, atol=1e-4, rtol=1e-4)


def test_linear_forward_and_mixed_devices():
    lin = minitorch.nn.Linear(4, 8)
    x = minitorch.randn(3, 4)
    ref = minitorch.relu(lin(x))
    lin.to("cuda")
    assert_same(minitorch.relu(lin(x.cuda())), ref, atol=1e-5)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        x.cuda() + x


def test_cpu_scalars_join_cuda_tensors():
    """As in PyTorch, a 0-dim CPU tensor joins CUDA tensors (not as an in-place op's self); its
    gradient comes back to it on the CPU, and promotion is a 0-dim tensor's, not a number's."""
    x = minitorch.arange(6.0).reshape(2, 3)
    g = x.cuda()
    s = minitorch.tensor(2.0, requires_grad=True)
    y = g * s + minitorch.tensor(1.0)
    assert y.device.type == "cuda"
    np.testing.assert_array_equal(y.cpu().detach().numpy(), x.numpy() * 2 + 1)
    y.sum().backward()
    assert s.grad.device.type == "cpu" and s.grad.item() == 15.0
    np.testing.assert_array_equal(minitorch.where(g > 2, g, minitorch.tensor(-1.0)).cpu().numpy(),
                                  np.where(x.numpy() > 2, x.numpy(), -1.0))
    assert (minitorch.arange(3).cuda() * minitorch.tensor(1.5, dtype=minitorch.float64)).dtype == minitorch.float64
    g.add_(minitorch.tensor(1.0))
    np.testing.assert_array_equal(g.cpu().numpy(), x.numpy() + 1)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        minitorch.tensor(1.0).add_(g)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        g + minitorch.ones(1)


# ---- every elementwise op, reduction and op along a dim of the CUDA key, against the CPU ----


def values(shape, dtype=minitorch.float32, nan=False):
    a = RNG.standard_normal(shape) * 2
    if nan and a.size > 2:
        a.flat[1] = np.nan
    return minitorch.tensor(a).to(dtype)


def test_activations_and_bitwise():
    x = values((6, 9), minitorch.float64)
    check_device(minitorch.nn.functional.gelu, x)
    check_device(lambda t: minitorch.nn.functional.gelu(t, approximate="tanh"), x)
    check_device(minitorch.nn.functional.silu, x)
    g = values((6, 9), minitorch.float64)
    check_device(lambda a, b: minitorch._C.gelu_backward(a, b), g, x)
    check_device(lambda a, b: minitorch._C.gelu_backward(a, b, approximate="tanh"), g, x)
    check_device(lambda a, b: minitorch._C.silu_backward(a, b), g, x)
    check_device(lambda a, b: minitorch._C.silu_backward(a, b), g.float(), x.float())
    i = minitorch.tensor(RNG.integers(-9, 9, (4, 6)))
    j = minitorch.tensor(RNG.integers(-9, 9, (6,)))
    check_device(minitorch.bitwise_and, i, j)
    check_device(minitorch.bitwise_or, i, j)
    check_device(minitorch.bitwise_not, i)
    b = i > 0
    check_device(minitorch.bitwise_not, b)
    check_device(minitorch.bitwise_and, b, j > 0)


ALL_BINARY = ["add", "sub", "mul", "div", "true_divide", "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum",
              "logical_and", "logical_or", "pow", "remainder", "fmod", "floor_divide"]


@pytest.mark.parametrize("op", ALL_BINARY)
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.int32])
def test_every_binary(op, dtype):
    f = getattr(minitorch, op)
    x = values((5, 8), dtype, nan=dtype != minitorch.int32)
    y = values((8,), dtype)
    if op in ("remainder", "fmod", "floor_divide") and dtype == minitorch.int32:
        x, y = x * 2 + 1, y * 2 + 1  # odd, never 0: integer division by zero is not checked on the GPU
    if op == "pow":
        x, y = x.abs(), y.abs() if dtype == minitorch.int32 else y
    check_device(f, x, y, atol=1e-4, rtol=1e-4)  # broadcast
    check_device(f, x.t().contiguous().t(), x, atol=1e-4, rtol=1e-4)  # strided
    if op not in ("logical_and", "logical_or", "maximum", "minimum"):
        check_device(lambda a: f(a, 3), x, atol=1e-4, rtol=1e-4)  # a Python number
    if op not in ("logical_and", "logical_or", "maximum", "minimum", "true_divide", "div") or dtype != minitorch.int32:
        if hasattr(x, op + "_"):
            g = x.cuda()
            getattr(g, op + "_")(y.cuda())
            want = x.clone()
            getattr(want, op + "_")(y)
            assert_same(g, want, atol=1e-4, rtol=1e-4)
    check_device(lambda a, b: f(a, b), values((), dtype), y, atol=1e-4, rtol=1e-4)  # a 0-dim tensor


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_hypot(dtype):
    x, y = values((5, 8), dtype, nan=True), values((8,), dtype)
    check_device(minitorch.hypot, x, y)
    check_device(lambda a, b: a.clone().hypot_(b), x, y)


def test_division_modes_where_clamp_masked_fill():
    x = values((6, 7), minitorch.float32)
    y = values((6, 7), minitorch.float32)
    for mode in ("trunc", "floor"):
        check_device(lambda a, b: minitorch.div(a, b, rounding_mode=mode), x, y, atol=1e-4)
    check_device(lambda a: minitorch.pow(2, a), x)
    check_device(lambda a: minitorch.remainder(5, a), y)
    c = x > 0
    check_device(minitorch.where, c, x, y)
    check_device(lambda cc, a: minitorch.where(cc, a, 0.5), c, x)
    check_device(lambda a, lo, hi: minitorch.clamp(a, lo, hi), x, y - 1, y + 1)
    check_device(lambda a: minitorch.clamp(a, min=-0.5), x)
    check_device(lambda a: minitorch.clamp(a, max=0.5), x)
    check_device(lambda a: a.clamp(-0.5, 0.5), x)
    check_device(lambda a, m: a.masked_fill(m, -2.0), x, c[0])
    g = x.cuda()
    g.masked_fill_(c.cuda(), 7)
    assert_same(g, x.masked_fill(c, 7))
    i = minitorch.arange(12).reshape(3, 4)
    check_device(lambda a: minitorch.clamp(a, 2, 9), i)
    check_device(lambda a: a // 3, i)


REDUCTIONS = {
    "sum": lambda x, d, k: x.sum(d, keepdim=k),
    "mean": lambda x, d, k: x.mean(d, keepdim=k),
    "amax": lambda x, d, k: x.amax(d, keepdim=k),
    "amin": lambda x, d, k: x.amin(d, keepdim=k),
    "all": lambda x, d, k: (x > 0).all(d, keepdim=k),
    "any": lambda x, d, k: (x > 0).any(d, keepdim=k),
    "norm": lambda x, d, k: x.norm(2, d, keepdim=k),
    "norm1": lambda x, d, k: x.norm(1, d, keepdim=k),
    "norm3": lambda x, d, k: x.norm(3, d, keepdim=k),
    "norminf": lambda x, d, k: x.norm(float("inf"), d, keepdim=k),
    "var": lambda x, d, k: x.var(d, keepdim=k),
    "std": lambda x, d, k: x.std(d, keepdim=k, correction=0),
    "logsumexp": lambda x, d, k: x.logsumexp(d if d is not None else [0, 1, 2], keepdim=k),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_reductions_over_dims(name, dtype):
    f = REDUCTIONS[name]
    x = values((4, 5, 6), dtype)
    for d in (None, 0, -1, (0, 2), (1,)):
        for k in (False, True):
            if d is None and k:
                continue
            check_device(lambda t: f(t, d, k), x, atol=1e-4, rtol=1e-4)
            check_device(lambda t: f(t, d, k), x.permute(2, 0, 1), atol=1e-4, rtol=1e-4)


def test_reductions_integers_nan_empty():
    i = minitorch.tensor(RNG.integers(-5, 5, (3, 4, 5)), dtype=minitorch.int32)
    check_device(lambda t: t.sum(1), i)
    check_device(lambda t: t.prod(1), i)
    check_device(lambda t: t.prod(), i)
    check_device(lambda t: t.amax((0, 2)), i)
    check_device(lambda t: minitorch.max(t), i)
    check_device(lambda t: t.sum(dtype=minitorch.float64), i)
    x = values((5, 6), minitorch.float32, nan=True)
    for op in ("sum", "amax", "amin", "argmax", "argmin"):
        check_device(lambda t: getattr(t, op)(1), x)
    check_device(lambda t: minitorch.max(t), x)
    check_device(lambda t: minitorch.min(t, 0), x)
    check_device(lambda t: minitorch.max(t, 1, keepdim=True), x)
    check_device(lambda t: t.argmax(), x)
    check_device(lambda t: t.argmin(0, keepdim=True), x)
    ties = minitorch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    check_device(lambda t: t.argmax(1), ties)
    check_device(lambda t: minitorch.max(t, 1), ties)
    e = minitorch.zeros(0, 3)
    check_device(lambda t: t.sum(0), e)
    check_device(lambda t: t.prod(0), e)
    check_device(lambda t: t.logsumexp(0), e)
    check_device(lambda t: t.mean(), minitorch.tensor(2.5))
    big = values((3, 100000), minitorch.float32)
    check_device(lambda t: t.sum(1), big, atol=1e-3, rtol=1e-4)
    check_device(lambda t: t.sum(), big, atol=1e-2, rtol=1e-4)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "softmax", "log_softmax"])
def test_ops_along_a_dim(op):
    f = getattr(minitorch, op)
    x = values((4, 5, 3), minitorch.float32) * 0.5
    for d in (0, 1, -1):
        check_device(lambda t: f(t, d), x, atol=1e-5, rtol=1e-4)
        check_device(lambda t: f(t, d), x.permute(1, 0, 2), atol=1e-5, rtol=1e-4)
    i = minitorch.tensor(RNG.integers(-3, 4, (4, 5)))
    if op in ("cumsum", "cumprod"):
        check_device(lambda t: f(t, 1), i)
    else:
        check_device(lambda t: f(t, 1, dtype=minitorch.float64), i)


def test_host_round_trip_ops():
    x = values((2, 3, 8, 8), minitorch.float32)
    w = values((4, 3, 3, 3), minitorch.float32)
    F = minitorch.nn.functional
    check_device(lambda a, b: F.conv2d(a, b, padding=1), x, w, atol=1e-4, rtol=1e-4)
    check_device(lambda a: F.max_pool2d(a, 2), x)
    idx = minitorch.tensor([2, 0, 1])
    check_device(lambda a, i: a.index_select(1, i), x, idx)
    logits = values((5, 4), minitorch.float32)
    target = minitorch.tensor([0, 3, 1, 1, 2])
    check_device(F.cross_entropy, logits, target, atol=1e-5)
    check_device(lambda a: minitorch.sort(a, 1), logits)
    assert_same(minitorch.arange(5, device="cuda"), minitorch.arange(5))


def seed_step(device):
    minitorch.manual_seed(0)
    model = minitorch.nn.Sequential(minitorch.nn.Linear(4, 8), minitorch.nn.ReLU(), minitorch.nn.Linear(8, 2))
    model.to(device)
    rng = np.random.default_rng(1)
    x = minitorch.tensor(rng.standard_normal((5, 4)).astype(np.float32)).to(device)
    y = minitorch.tensor(rng.standard_normal((5, 2)).astype(np.float32)).to(device)
    loss = minitorch.nn.MSELoss()(model(x), y)
    loss.backward()
    return loss, [p.grad for p in model.parameters()]


def test_seed_network_backward_on_cuda():
    loss_c, grads_c = seed_step("cpu")
    loss_g, grads_g = seed_step("cuda")
    assert_same(loss_g.detach(), loss_c.detach(), atol=1e-5)
    for g, c in zip(grads_g, grads_c):
        assert_same(g, c, atol=1e-5)
