"""The CUDA kernels of indexing, shape ops, factories, random fills, nn layers and losses against
the CPU (cuda/ops_index.c, ops_shape.c, ops_random.c, ops_nn.c): same values, dtypes, shapes,
and the same exception class and message for bad arguments, bad indices included."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device, raises_alike, raises_device_assert

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

from test_cuda_ops import values  # noqa: E402  (tests/cuda is on sys.path under pytest)

RNG = np.random.default_rng(5)


def ints(shape, high, dtype=minitorch.int64, low=0):
    return minitorch.tensor(RNG.integers(low, high, size=shape)).to(dtype)


# ---- indexing ----

@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.int32, minitorch.int64, minitorch.bool])
def test_gather_scatter_index_select(dtype):
    x = values((4, 6, 5), dtype)
    for idt in (minitorch.int64, minitorch.int32):
        i = ints((4, 3, 5), 6, idt)
        check_device(lambda t, j: minitorch.gather(t, 1, j), x, i)
        check_device(lambda t, j: t.gather(-1, j[:, :, :2]), x, ints((4, 3, 2), 5, idt))
        check_device(lambda t, j: t.index_select(1, j), x, ints((7,), 6, idt))
        check_device(lambda t, j: t.index_select(0, j), x, minitorch.tensor(2).to(idt))
    check_device(lambda t, j: t.t().index_select(0, j), values((3, 8), dtype), ints((4,), 8))  # strided self
    # scatter: a permutation along dim, so no two writes collide
    perm = minitorch.tensor(np.stack([RNG.permutation(6) for _ in range(4 * 5)]).reshape(4, 5, 6).transpose(0, 2, 1).copy())
    src = values((4, 6, 5), dtype)
    check_device(lambda t, j, s: t.scatter(1, j, s), x, perm, src)
    check_device(lambda t, j: t.scatter(1, j, 1), x, perm)
    check_device(lambda t, j, s: t.clone().scatter_(1, j, s), x, perm, src)
    if dtype != minitorch.bool:
        check_device(lambda t, j, s: t.scatter_add(1, j, s), x, ints((4, 9, 5), 6), values((4, 9, 5), dtype), atol=1e-4)
        check_device(lambda t, j, s: t.clone().scatter_add_(0, j, s), x, ints((7, 6, 5), 4), values((7, 6, 5), dtype), atol=1e-4)
    check_device(lambda t, j: minitorch.gather(t, 0, j), values((), dtype), minitorch.tensor(0))


def test_scatter_add_collisions_sum_atomically():
    x = minitorch.zeros(3, dtype=minitorch.float64)
    i = minitorch.tensor([0, 1, 0, 2, 0] * 2000)
    s = minitorch.ones(10000, dtype=minitorch.float64)
    check_device(lambda t, j, v: t.scatter_add(0, j, v), x, i, s)
    check_device(lambda t, j, v: t.to(minitorch.int64).scatter_add(0, j, v.to(minitorch.int64)), x, i, s)
    check_device(lambda t, j, v: t.to(minitorch.float32).index_put_((j,), v.float(), accumulate=True), x, i, s)


def test_advanced_indexing():
    x = values((5, 6, 7))
    i, j = ints((3, 1), 6, low=-6), ints((4,), 7)
    check_device(lambda t, a: t[a], x, ints((2, 3), 5))
    check_device(lambda t, a, b: t[:, a, b], x, i, j)  # adjacent: in place
    check_device(lambda t, a, b: t[a, :, b], x, ints((4,), 5), j)  # apart: in front
    check_device(lambda t: t[t > 0.5], x)  # a mask (nonzero on the host round trip)
    check_device(lambda t, a: t.t()[a], values((4, 9)), ints((3,), 9))
    check_device(lambda t, a, v: t.clone().index_put_((a,), v), x, ints((3,), 5), values((6, 7)))
    check_device(lambda t, a, b, v: t.clone().index_put_((a, b), v, accumulate=True), x, ints((8,), 5), ints((8,), 6), values((8, 7)), atol=1e-4)
    y = values((6, 5)).cuda()
    y[minitorch.tensor([1, -1]).cuda()] = 3.0
    assert (y.cpu()[1] == 3).all() and (y.cpu()[5] == 3).all()


def test_indexing_a_cuda_tensor_with_host_indices():
    """As in PyTorch: lists, CPU index tensors and CPU masks index a CUDA tensor (they are copied
    to its device); a CUDA index into a CPU tensor raises IndexError."""
    x = values((5, 6))
    g = x.cuda()
    np.testing.assert_array_equal(g[[0, 2, -1]].cpu().numpy(), x[[0, 2, -1]].numpy())
    np.testing.assert_array_equal(g[minitorch.tensor([4, 1])].cpu().numpy(), x[minitorch.tensor([4, 1])].numpy())
    np.testing.assert_array_equal(g[:, minitorch.tensor([True, False] * 3)].cpu().numpy(),
                                  x[:, minitorch.tensor([True, False] * 3)].numpy())
    g[[1, 3]] = 7.0
    assert g.device.type == "cuda" and (g.cpu()[[1, 3]] == 7).all()
    # the ops themselves take them too (the index plan moves them), and autograd's index_put_
    i = minitorch.tensor([0, 4])
    g.index_put_((i,), minitorch.full((2, 6), 2.0).cuda(), accumulate=True)
    assert (g.cpu()[0] == x[0] + 2).all() and (g.cpu()[4] == x[4] + 2).all()
    np.testing.assert_array_equal(minitorch.index_put(g, (i,), minitorch.zeros(6).cuda()).cpu()[4].numpy(), np.zeros(6))
    w = x.cuda().requires_grad_()
    w[i].sum().backward()
    assert w.grad.device.type == "cuda" and w.grad.cpu().sum().item() == 12
    with pytest.raises(IndexError, match=r"indices should be either on cpu or on the same device as the indexed tensor \(cpu\)"):
        x[minitorch.tensor([0]).cuda()]


def test_embedding():
    w = values((10, 4))
    check_device(lambda a, b: minitorch.nn.functional.embedding(b, a), w, ints((3, 5), 10))
    check_device(lambda a, b: minitorch.nn.functional.embedding(b, a), w, ints((0,), 10, minitorch.int32))
    check_device(lambda a, b: minitorch.nn.functional.embedding(b, a), w.t().contiguous().t(), ints((6,), 10))


def test_index_errors_match_the_cpu():
    x = values((4, 5))
    raises_device_assert(lambda t, j: t.gather(1, j), x, minitorch.tensor([[0, 5]]))
    raises_device_assert(lambda t, j: t.gather(1, j), x, minitorch.tensor([[-1, 0]]))
    raises_alike(lambda t, j: t.gather(1, j.float()), x, minitorch.tensor([[0, 1]]))
    raises_device_assert(lambda t, j, s: t.scatter(0, j, s), x, minitorch.tensor([[4, 0]]), values((1, 2)))
    raises_device_assert(lambda t, j, s: t.scatter_add_(0, j, s), x, minitorch.tensor([[0, 9]]), values((1, 2)))
    raises_alike(lambda t, j, s: t.scatter(0, j, s), x, minitorch.tensor([[0]]), values((1, 1), minitorch.float64))
    raises_device_assert(lambda t, j: t.index_select(0, j), x, minitorch.tensor([0, 4]))
    raises_alike(lambda t, j: t.index_select(0, j), x, minitorch.tensor([[0]]))
    raises_device_assert(lambda t, j: t[j], x, minitorch.tensor([1, 4, 0]))
    raises_device_assert(lambda t, j: t[j], x, minitorch.tensor([-5]))
    raises_device_assert(lambda t, j: t[:, j], x, minitorch.tensor([5]))
    raises_device_assert(lambda t, j, v: t.index_put_((j,), v), x, minitorch.tensor([7]), values((5,)))
    raises_alike(lambda t, j, v: t.index_put_((j,), v), x, minitorch.tensor([1]), values((4,)))
    raises_device_assert(lambda t, j: minitorch.nn.functional.embedding(j, t), x, minitorch.tensor([0, 4]))
    raises_device_assert(lambda t, j: minitorch.nn.functional.embedding(j, t), x, minitorch.tensor([-1]))
    # as PyTorch's CUDA kernels: the call does not wait for the check, the next synchronisation
    # (here the copy to the host) raises, once; the kernel skipped the bad index only
    y = values((4, 5)).cuda()
    before = y.cpu().numpy().copy()
    y.scatter_(0, minitorch.tensor([[0, 1, 2, 3, 4]]).cuda(), 9.0)
    with pytest.raises(RuntimeError, match="^CUDA error: device-side assert triggered\n.*index 4 is out of bounds for size 4"):
        y.cpu()
    after = y.cpu().numpy()
    np.testing.assert_array_equal(after[[0, 1, 2, 3], [0, 1, 2, 3]], 9.0)
    np.testing.assert_array_equal(after[:, 4], before[:, 4])


# ---- random fills (Philox on the device): the distribution, not the CPU's numbers ----

@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_random_fills_have_the_right_distribution(dtype):
    n = 200_000
    x = minitorch.empty(n, dtype=dtype, device="cuda")
    u = x.uniform_(-2, 3).cpu().numpy()
    assert u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.03 and abs(u.std() - 5 / 12 ** 0.5) < 0.03
    g = minitorch.empty(400, 500, dtype=dtype, device="cuda").t().normal_(1.5, 2.0).cpu().numpy()  # strided
    assert abs(g.mean() - 1.5) < 0.03 and abs(g.std() - 2.0) < 0.03
    b = x.bernoulli_(0.3).cpu().numpy()
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.01
    r = minitorch.empty(n, dtype=minitorch.int64, device="cuda").random_(3, 10).cpu().numpy()
    assert r.min() == 3 and r.max() == 9 and abs(r.mean() - 6) < 0.05
    assert set(np.unique(minitorch.empty(1000, dtype=minitorch.bool, device="cuda").random_().cpu().numpy())) == {False, True}


def test_random_fills_follow_manual_seed_and_advance():
    minitorch.manual_seed(7)
    a = minitorch.empty(1000, device="cuda").uniform_().cpu().numpy()
    b = minitorch.empty(1000, device="cuda").uniform_().cpu().numpy()
    minitorch.manual_seed(7)
    a2 = minitorch.empty(1000, device="cuda").uniform_().cpu().numpy()
    assert (a == a2).all() and not (a == b).all()
    d = minitorch.nn.functional.dropout(minitorch.ones(10000, device="cuda"), 0.5).cpu().numpy()
    assert set(np.unique(d)) <= {0.0, 2.0} and 0.45 < (d > 0).mean() < 0.55


def test_random_fill_errors_match_the_cpu():
    x = values((3,))
    raises_alike(lambda t: t.uniform_(2, 1), x)
    raises_alike(lambda t: t.normal_(0, -1), x)
    raises_alike(lambda t: t.bernoulli_(1.5), x)
    raises_alike(lambda t: t.random_(5, 5), x)
    with pytest.raises(NotImplementedError, match="uniform_kernel_cuda"):
        minitorch.zeros(3, dtype=minitorch.int64, device="cuda").uniform_()


# ---- factories and shape kernels ----

def test_factories():
    for args, kw in [((5,), {}), ((2, 11, 3), {}), ((0.5, 3.2, 0.25), {}), ((10, 2, -3), {}),
                     ((4,), {"dtype": minitorch.float64}), ((1, 6), {"dtype": minitorch.int32}),
                     ((0.0, 5.5, 1.5), {"dtype": minitorch.int64})]:  # (0.0, 2.5, 0.5): step 0 as int64
        assert_same(minitorch.arange(*args, device="cuda", **kw), minitorch.arange(*args, **kw))
    for steps in (0, 1, 2, 7, 100):
        assert_same(minitorch.linspace(-1.5, 3, steps, device="cuda"), minitorch.linspace(-1.5, 3, steps))
        assert_same(minitorch.linspace(0, 10, steps, dtype=minitorch.int64, device="cuda"), minitorch.linspace(0, 10, steps, dtype=minitorch.int64))
        assert_same(minitorch.logspace(-2, 2, steps, base=2.0, dtype=minitorch.float64, device="cuda"),
                    minitorch.logspace(-2, 2, steps, base=2.0, dtype=minitorch.float64), rtol=1e-12)
    for n, m in [(3, None), (2, 5), (4, 1), (0, 3)]:
        assert_same(minitorch.eye(n, m, device="cuda"), minitorch.eye(n, m))
    assert_same(minitorch.eye(3, dtype=minitorch.bool, device="cuda"), minitorch.eye(3, dtype=minitorch.bool))
    x = minitorch.arange(4.0, device="cuda", requires_grad=True)
    assert x.requires_grad and x.is_cuda


def test_factory_errors_match_the_cpu():
    calls = [lambda d: minitorch.arange(0, 5, 0, device=d), lambda d: minitorch.arange(5, 0, 1, device=d),
             lambda d: minitorch.linspace(0, 1, -1, device=d), lambda d: minitorch.eye(-1, device=d),
             lambda d: minitorch.eye(2, -3, device=d)]
    for fn in calls:
        errs = []
        for dev in ("cpu", "cuda"):
            with pytest.raises(Exception) as e:
                fn(dev)
            errs.append((type(e.value), str(e.value)))
        assert errs[0] == errs[1]


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.int64, minitorch.bool])
def test_shape_kernels(dtype):
    for name, x in [("c", values((3, 5, 6), dtype)), ("t", values((6, 5), dtype).t()), ("s", values((4, 8), dtype)[:, ::3])]:
        for k in (-7, -1, 0, 2, 9):
            check_device(lambda t: minitorch.tril(t, k), x)
            check_device(lambda t: t.triu(k), x)
            check_device(lambda t: t.clone().tril_(k), x)
            check_device(lambda t: t.clone().triu_(k), x)
        check_device(lambda t: t.flip([0]), x)
        check_device(lambda t: t.flip([-1, 0]), x)
        check_device(lambda t: t.flip([]), x)
        check_device(lambda t, u: minitorch.cat([t, u, t], 0), x, x)
        check_device(lambda t, u: minitorch.cat([t, u], -1), x, x)
    y = values((3, 4), dtype)
    g = y.cuda()
    g.t().tril_(1)  # in place through a strided view
    assert_same(g, y.clone().t().tril_(1).t())
    check_device(lambda t: t.flip([0]), values((), dtype))
    # the legacy empty (0,) input is skipped, but it must be on the device too (PyTorch's
    # device check takes every input)
    check_device(lambda a, z, b: minitorch.cat([a, z, b]), values((2, 3)), minitorch.zeros(0), values((1, 3)))
    check_device(lambda a, b: minitorch.cat([a, b], 1), values((2, 3), minitorch.int32), values((2, 2), minitorch.float64))


def test_one_hot():
    F = minitorch.nn.functional
    check_device(lambda t: F.one_hot(t), ints((4, 5), 7))
    check_device(lambda t: F.one_hot(t, 9), ints((10,), 9))
    check_device(lambda t: F.one_hot(t, 3), ints((0,), 3))
    check_device(lambda t: F.one_hot(t[:, ::2]), ints((3, 6), 4))


def test_shape_errors_match_the_cpu():
    F = minitorch.nn.functional
    raises_alike(lambda t: t.tril(), values((3,)))
    raises_alike(lambda t: t.flip([0, 0]), values((3, 2)))
    raises_alike(lambda a, b: minitorch.cat([a, b]), values((2, 3)), values((2, 4)))
    raises_alike(lambda a, b: minitorch.cat([a, b]), values((2, 3)), values((3,)))
    raises_device_assert(lambda t: F.one_hot(t, 3), minitorch.tensor([0, 3]))
    raises_device_assert(lambda t: F.one_hot(t, 3), minitorch.tensor([1, -1]))
    raises_alike(lambda t: F.one_hot(t), minitorch.tensor([], dtype=minitorch.int64))
    raises_alike(lambda t: F.one_hot(t), minitorch.tensor([1.0]))


# ---- nn layers ----

@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_layer_norm(dtype):
    F = minitorch.nn.functional
    x = values((4, 3, 300), dtype)
    w, b = values((300,), dtype), values((300,), dtype)
    check_device(lambda t: F.layer_norm(t, (300,)), x, atol=1e-5)
    check_device(lambda t, u, v: F.layer_norm(t, (300,), u, v, eps=1e-3), x, w, b, atol=1e-5)
    check_device(lambda t, u: F.layer_norm(t, (3, 300), u), x, values((3, 300), dtype), atol=1e-5)
    check_device(lambda t: F.layer_norm(t.transpose(0, 1), (4,)), values((5, 4), dtype).t(), atol=1e-5)
    check_device(lambda t: F.layer_norm(t, (7,)), values((0, 7), dtype))


def test_layer_norm_errors_match_the_cpu():
    F = minitorch.nn.functional
    raises_alike(lambda t: F.layer_norm(t, (5,)), values((3, 4)))
    raises_alike(lambda t, u: F.layer_norm(t, (4,), u), values((3, 4)), values((3,)))
    raises_alike(lambda t: F.layer_norm(t, (4,)), values((3, 4), minitorch.int64))


def probs(shape, dtype=minitorch.float32):
    return minitorch.tensor(RNG.uniform(0, 1, size=shape)).to(dtype)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_binary_cross_entropy(dtype):
    F = minitorch.nn.functional
    x, t, w = probs((6, 5), dtype), probs((6, 5), dtype), probs((5,), dtype)
    for red in ("mean", "sum", "none"):
        check_device(lambda a, b: F.binary_cross_entropy(a, b, reduction=red), x, t)
        check_device(lambda a, b, c: F.binary_cross_entropy(a, b, weight=c, reduction=red), x, t, w)
        check_device(lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction=red), values((6, 5), dtype), t)
        check_device(lambda a, b, c: F.binary_cross_entropy_with_logits(a, b, weight=c, pos_weight=c * 3, reduction=red),
                     values((6, 5), dtype), t, w)
    check_device(lambda a, b: F.binary_cross_entropy(a.t(), b.t()), x, t)
    edge = minitorch.tensor([0.0, 1.0, 0.5]).to(dtype)
    check_device(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), edge, minitorch.tensor([1.0, 0.0, 0.5]).to(dtype))
    check_device(lambda a, b: F.binary_cross_entropy_with_logits(a * 100, b), values((9,), dtype), probs((9,), dtype))


def test_binary_cross_entropy_errors_match_the_cpu():
    F = minitorch.nn.functional
    raises_device_assert(lambda a, b: F.binary_cross_entropy(a, b), minitorch.tensor([0.5, 1.5]), probs((2,)))
    raises_device_assert(lambda a, b: F.binary_cross_entropy(a, b), probs((2,)), minitorch.tensor([-0.5, 0.5]))
    raises_alike(lambda a, b: F.binary_cross_entropy(a, b), probs((2,)), probs((2,), minitorch.float64))


@pytest.mark.parametrize("scale", [False, True])
def test_embedding_dense_backward(scale):
    for dtype in (minitorch.float32, minitorch.float64):
        g, i = values((3, 4, 5), dtype), ints((3, 4), 6)
        for pad in (-1, 2):
            check_device(lambda a, b: minitorch._C.embedding_dense_backward(a, b, 6, pad, scale), g, i, atol=1e-5)
    raises_device_assert(lambda a, b: minitorch._C.embedding_dense_backward(a, b, 6, -1, scale), values((2, 5)), minitorch.tensor([0, 6]))
    w = values((6, 5)).cuda().requires_grad_()
    minitorch.nn.functional.embedding(ints((7,), 6).cuda(), w).sum().backward()
    assert w.grad.is_cuda and float(w.grad.sum().cpu().item()) == pytest.approx(35.0)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_nll_loss(dtype):
    F = minitorch.nn.functional
    x, t, w = values((6, 4), dtype), ints((6,), 4), probs((4,), dtype)
    for red in ("mean", "sum", "none"):
        check_device(lambda a, b: F.nll_loss(a, b, reduction=red), x, t, atol=1e-5)
        check_device(lambda a, b, c: F.nll_loss(a, b, weight=c, reduction=red, ignore_index=2), x, t, w, atol=1e-5)
        check_device(lambda a, b: F.nll_loss(a, b, reduction=red), values((3, 4, 2, 5), dtype), ints((3, 2, 5), 4), atol=1e-5)
    check_device(lambda a, b: F.nll_loss(a, b), values((4,), dtype), ints((), 4))
    check_device(lambda a, b: F.cross_entropy(a, b), x, t, atol=1e-5)


def test_nll_loss_errors_match_the_cpu():
    F = minitorch.nn.functional
    raises_device_assert(lambda a, b: F.nll_loss(a, b), values((3, 4)), minitorch.tensor([0, 4, 1]))
    raises_device_assert(lambda a, b: F.nll_loss(a, b), values((3, 4)), minitorch.tensor([0, -3, 9]))
    raises_alike(lambda a, b: F.nll_loss(a, b), values((3, 4)), minitorch.tensor([0, 1]))
    raises_alike(lambda a, b: F.nll_loss(a, b), values((3, 4)), minitorch.tensor([0.0, 1.0, 2.0]))
