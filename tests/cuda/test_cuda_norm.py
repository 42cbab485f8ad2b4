"""The CUDA kernels of batch_norm and of the backward ops of layer_norm, batch_norm and nll_loss
(cuda/ops_norm.c, norm.cu) against the CPU: same values, dtypes and shapes, running statistics
updated alike, the same errors; and a small model's gradients on CUDA against the CPU's."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, on_device, raises_alike, raises_device_assert

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

C_ = minitorch._C
F = minitorch.nn.functional
RNG = np.random.default_rng(11)
DTYPES = [minitorch.float32, minitorch.float64]


def atol(dtype):
    return 1e-4 if dtype == minitorch.float32 else 1e-10


def values(shape, dtype=minitorch.float32, layout="contiguous"):
    """A CPU tensor of the shape in a layout: contiguous, permuted (the dims reversed) or sliced."""
    if layout == "permuted":
        return minitorch.tensor(RNG.standard_normal(tuple(reversed(shape))) * 2 + 1).to(dtype).permute(
            *reversed(range(len(shape))))
    if layout == "sliced":
        return minitorch.tensor(RNG.standard_normal((shape[0] * 2,) + tuple(shape[1:])) * 2 + 1).to(dtype)[::2]
    return minitorch.tensor(RNG.standard_normal(shape) * 2 + 1).to(dtype)


def clones(t):
    """A CPU and a CUDA copy of t (None stays None), for ops that write into it."""
    return (None, None) if t is None else (t.clone(), t.cuda())


# (N, C), (N, C, L), (N, C, H, W), N = 1, and channels or planes that need several blocks
SHAPES = [(5, 3), (1, 4, 7), (6, 3, 10), (2, 3, 5, 4), (4, 3, 40, 40), (8, 700), (3, 300, 2, 2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_batch_norm_training(shape, dtype):
    C = shape[1]
    for layout in ("contiguous", "permuted", "sliced"):
        x = values(shape, dtype, layout)
        w, b = values((C,), dtype), values((C,), dtype)
        for affine, stats, momentum in [(True, True, 0.1), (False, True, 0.7), (True, False, 0.1),
                                        (False, False, 1.0)]:
            rm_c, rm_g = clones(values((C,), dtype) if stats else None)
            rv_c, rv_g = clones(values((C,), dtype).abs() if stats else None)
            args = (w, b) if affine else (None, None)
            cpu = C_.batch_norm(x, *args, rm_c, rv_c, True, momentum, 1e-5, True)
            gpu = C_.batch_norm(x.cuda(), *map(on_device, args), rm_g, rv_g, True, momentum, 1e-5, True)
            assert_same(gpu, cpu, atol=atol(dtype), rtol=1e-5)
            if stats:
                assert_same(rm_g, rm_c, atol=atol(dtype), rtol=1e-5)
                assert_same(rv_g, rv_c, atol=atol(dtype), rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm_running_stats_in_place(dtype):
    """running_mean and running_var strided views: written through, versions bumped."""
    x = values((6, 4, 3), dtype)
    base_c, base_g = clones(values((2, 8), dtype).abs())
    rm_c, rv_c, rm_g, rv_g = base_c[0, ::2], base_c[1, 1::2], base_g[0, ::2], base_g[1, 1::2]
    v0 = base_g._version
    cpu = F.batch_norm(x, rm_c, rv_c, training=True, momentum=0.3)
    gpu = F.batch_norm(x.cuda(), rm_g, rv_g, training=True, momentum=0.3)
    assert_same(gpu, cpu, atol=atol(dtype))
    assert_same(base_g, base_c, atol=atol(dtype))
    assert base_g._version > v0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(0, 3), (0, 2, 5)])
def test_batch_norm_eval(shape, dtype):
    C = shape[1]
    rm, rv = values((C,), dtype), values((C,), dtype).abs()
    for layout in ("contiguous", "permuted"):
        x = values(shape, dtype, layout) if shape[0] else minitorch.zeros(shape, dtype=dtype)
        for w, b in [(None, None), (values((C,), dtype), values((C,), dtype)), (values((C,), dtype), None)]:
            cpu = F.batch_norm(x, rm, rv, w, b, training=False, eps=1e-3)
            gpu = F.batch_norm(x.cuda(), rm.cuda(), rv.cuda(), on_device(w), on_device(b), training=False, eps=1e-3)
            assert_same(gpu, cpu, atol=atol(dtype))


def test_batch_norm_errors_match_the_cpu():
    x = values((4, 3, 2))
    raises_alike(lambda t: C_.batch_norm(t, None, None, None, None, False, 0.1, 1e-5, True), x)
    raises_alike(lambda t, m: C_.batch_norm(t, None, None, m, None, False, 0.1, 1e-5, True), x, values((3,)))
    raises_alike(lambda t, u: C_.batch_norm(t, u, None, None, None, True, 0.1, 1e-5, True), x, values((4,)))
    raises_alike(lambda t, m: C_.batch_norm(t, None, None, m, None, True, 0.1, 1e-5, True), x, values((2,)))
    raises_alike(lambda t: C_.batch_norm(t, None, None, None, None, True, 0.1, 1e-5, True), values((4,)))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        C_.batch_norm(x.to(minitorch.int64).cuda(), None, None, None, None, True, 0.1, 1e-5, True)
    with pytest.raises(RuntimeError, match="mixed dtype"):
        C_.batch_norm(x.cuda(), values((3,), minitorch.float64).cuda(), None, None, None, True, 0.1, 1e-5, True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(0, 3, 2)])
def test_batch_norm_backward(shape, dtype):
    C = shape[1]
    rm, rv = values((C,), dtype), values((C,), dtype).abs()
    for layout in ("contiguous", "sliced"):
        x = values(shape, dtype, layout) if shape[0] else minitorch.zeros(shape, dtype=dtype)
        gy = values(shape, dtype, "permuted") if shape[0] else minitorch.zeros(shape, dtype=dtype)
        for w in (None, values((C,), dtype)):
            for training in (True, False):
                args = (w, None, None) if training else (w, rm, rv)
                cpu = C_.batch_norm_backward(gy, x, *args, training, 1e-5)
                gpu = C_.batch_norm_backward(gy.cuda(), x.cuda(), *map(on_device, args), training, 1e-5)
                for g, c in zip(gpu, cpu):
                    assert_same(g, c, atol=atol(dtype) * 10, rtol=1e-4)


def test_batch_norm_backward_errors_match_the_cpu():
    x = values((4, 3))
    raises_alike(lambda g, t: C_.batch_norm_backward(g, t, None, None, None, False, 1e-5), x, x)
    raises_alike(lambda g, t: C_.batch_norm_backward(g, t, None, None, None, True, 1e-5), values((4, 2)), x)
    raises_alike(lambda g, t, w: C_.batch_norm_backward(g, t, w, None, None, True, 1e-5), x, x, values((2,)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_backward(dtype):
    cases = [((4, 300), [300]), ((2, 3, 5), [3, 5]), ((2, 3, 5), [5]), ((1, 7), [7]), ((7,), [7]),
             ((3000, 40), [40]), ((0, 7), [7]), ((3, 0), [0])]
    for shape, norm in cases:
        for layout in ("contiguous", "permuted", "sliced"):
            x, gy = values(shape, dtype, layout), values(shape, dtype, "permuted")
            for w in (None, values(tuple(norm), dtype)):
                for eps in (1e-5, 1e-2):
                    cpu = C_.layer_norm_backward(gy, x, norm, w, eps)
                    gpu = C_.layer_norm_backward(gy.cuda(), x.cuda(), norm, on_device(w), eps)
                    for g, c in zip(gpu, cpu):
                        assert_same(g, c, atol=atol(dtype) * 10, rtol=1e-4)


def test_layer_norm_backward_errors_match_the_cpu():
    raises_alike(lambda g, t: C_.layer_norm_backward(g, t, [4], None, 1e-5), minitorch.ones(2, 3), minitorch.ones(2, 4))
    raises_alike(lambda g, t: C_.layer_norm_backward(g, t, [3], None, 1e-5), minitorch.ones(2, 4), minitorch.ones(2, 4))
    raises_alike(lambda g, t, w: C_.layer_norm_backward(g, t, [4], w, 1e-5), values((2, 4)), values((2, 4)),
                 values((3,)))


def targets(shape, C, ignore=None):
    t = np.array(RNG.integers(0, C, size=shape))
    if ignore is not None and t.size:
        t.flat[::3] = ignore
    return minitorch.tensor(t).to(minitorch.int64)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", [0, 1, 2])  # none, mean, sum
def test_nll_loss_backward(dtype, reduction):
    cases = [((5,), ()), ((6, 4), (6,)), ((1, 4), (1,)), ((3, 4, 2, 5), (3, 2, 5)), ((2000, 5), (2000,)),
             ((2, 3, 300), (2, 300))]
    for xs, ts in cases:
        C = xs[0] if len(xs) == 1 else xs[1]
        for layout in ("contiguous", "permuted"):
            x = values(xs, dtype, layout)
            for w in (None, values((C,), dtype).abs()):
                for ignore in (-100, 1):
                    t = targets(ts, C, ignore=ignore if ignore >= 0 else None)
                    n = int(np.prod(ts)) if len(xs) > 1 else 1
                    g = values(ts if len(xs) > 1 else (), dtype) if reduction == 0 else values((), dtype)
                    if reduction == 0 and len(ts) >= 2:
                        g = values(tuple(reversed(ts)), dtype).permute(*reversed(range(len(ts))))
                    assert g.numel() == (n if reduction == 0 else 1)
                    cpu = C_.nll_loss_backward(g, x, t, w, reduction, ignore)
                    gpu = C_.nll_loss_backward(g.cuda(), x.cuda(), t.cuda(), on_device(w), reduction, ignore)
                    assert_same(gpu, cpu, atol=atol(dtype), rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_backward_given_total_weight(dtype, reduction):
    # aten.nll_loss_backward's total_weight: the mean's divisor (any value given), unused otherwise
    x, t, w = values((6, 4), dtype), targets((6,), 4, ignore=1), values((4,), dtype).abs()
    g = values((6,), dtype) if reduction == 0 else values((), dtype)
    total = minitorch.tensor(2.5).to(x.dtype)
    cpu = C_.nll_loss_backward(g, x, t, w, reduction, 1, total)
    gpu = C_.nll_loss_backward(g.cuda(), x.cuda(), t.cuda(), w.cuda(), reduction, 1, total.cuda())
    assert_same(gpu, cpu, atol=atol(dtype), rtol=1e-5)
    own = C_.nll_loss_backward(g, x, t, w, reduction, 1)
    scale = float((C_.nll_loss(-minitorch.ones(6, 4).to(x.dtype), t, w, 2, 1) / 2.5).item()) if reduction == 1 else 1.0
    assert_same(cpu, own * scale, device="cpu", atol=atol(dtype), rtol=1e-5)


def test_nll_loss_backward_all_ignored_and_errors():
    x, t = values((3, 4)), minitorch.tensor([2, 2, 2])
    g = minitorch.tensor(1.0)
    cpu = C_.nll_loss_backward(g, x, t, None, 1, 2)  # mean over nothing: 0 everywhere
    gpu = C_.nll_loss_backward(g.cuda(), x.cuda(), t.cuda(), None, 1, 2)
    assert_same(gpu, cpu)
    raises_device_assert(lambda a, b, c: C_.nll_loss_backward(a, b, c, None, 1, -100), g, x, minitorch.tensor([0, 5, 1]))
    raises_device_assert(lambda a, b, c: C_.nll_loss_backward(a, b, c, None, 1, -100), g, x, minitorch.tensor([0, -3, 9]))
    raises_alike(lambda a, b, c: C_.nll_loss_backward(a, b, c, None, 0, -100), values((2,)), x, minitorch.tensor([0, 1, 1]))
    raises_alike(lambda a, b, c: C_.nll_loss_backward(a, b, c, None, 1, -100), g, x, minitorch.tensor([0.0, 1.0, 2.0]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_model_gradients_match_the_cpu(dtype):
    """BatchNorm2d -> Flatten -> LayerNorm -> Linear -> LogSoftmax -> NLLLoss, one training step
    and one evaluation step: the loss, every gradient and the running statistics."""
    nn = minitorch.nn

    def model():
        return nn.Sequential(nn.BatchNorm2d(3), nn.Flatten(), nn.LayerNorm(48), nn.Linear(48, 5),
                             nn.LogSoftmax(dim=1)).to(dtype)

    cpu_model = model()
    with minitorch.no_grad():
        for p in cpu_model.parameters():
            p.copy_(minitorch.tensor(RNG.standard_normal(tuple(p.shape))).to(dtype))
    gpu_model = model()
    gpu_model.load_state_dict(cpu_model.state_dict())
    gpu_model.to("cuda")
    x = values((6, 3, 4, 4), dtype)
    t = targets((6,), 5, ignore=2)
    w = values((5,), dtype).abs()
    loss_fn = nn.NLLLoss(weight=w, ignore_index=2)
    loss_gpu_fn = nn.NLLLoss(weight=w.cuda(), ignore_index=2)
    for training in (True, False):
        cpu_model.train(training)
        gpu_model.train(training)
        xc, xg = x.clone().requires_grad_(True), x.cuda().requires_grad_(True)
        lc = loss_fn(cpu_model(xc), t)
        lg = loss_gpu_fn(gpu_model(xg), t.cuda())
        lc.backward()
        lg.backward()
        assert_same(lg.detach(), lc.detach(), atol=atol(dtype) * 10, rtol=1e-4)
        assert_same(xg.grad, xc.grad, atol=atol(dtype) * 10, rtol=1e-4)
        for (name, pc), (_, pg) in zip(cpu_model.named_parameters(), gpu_model.named_parameters()):
            assert pg.grad is not None and pg.grad.is_cuda, name
            assert_same(pg.grad, pc.grad, atol=atol(dtype) * 10, rtol=1e-4)
        for (name, bc), (_, bg) in zip(cpu_model.named_buffers(), gpu_model.named_buffers()):
            if bc.dtype == dtype:
                assert_same(bg, bc, atol=atol(dtype), rtol=1e-5)
        cpu_model.zero_grad()
        gpu_model.zero_grad()
