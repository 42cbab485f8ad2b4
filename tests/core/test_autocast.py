"""autocast that casts: each op family under a CPU bfloat16 region against PyTorch's (result dtype,
values, gradients back to the float32 leaves), the region's rules (nesting, enabled=False inside,
threads, float64 and integer tensors left alone, the weight-cast cache), custom_fwd/custom_bwd,
and small models trained a few steps under autocast. The CUDA policy is tested on the emulated
device in tests/cuda/test_cuda_autocast.py."""
import threading

import numpy as np
import pytest

import minitorch
from helpers import torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def f32(t) -> np.ndarray:
    """A float tensor of any width as float32 values (bfloat16 and float16 widen exactly)."""
    return np.array(t.detach().float().numpy(), copy=True)


def within_bf16_ulps(got, want, ulps=1, floor=1e-6):
    """Each element of got is within `ulps` units in the last place of bfloat16 (2**-7 of the
    power of two at or below it) of want's, or both below floor. A string ulps "N of max" measures
    every element's unit at the largest magnitude of want instead (for sums rounded on the way)."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    if isinstance(ulps, str):
        floor, ulps = np.abs(want).max(), int(ulps.split()[0])
    mag = np.maximum(np.maximum(np.abs(got), np.abs(want)), floor)
    ulp = 2.0 ** (np.floor(np.log2(mag)) - 7)
    bad = np.abs(got - want) > ulps * ulp
    assert not bad.any(), f"{bad.sum()} elements differ by more than {ulps} bf16 ulp: {got[bad][:4]} vs {want[bad][:4]}"


def run_region(lib, fn, arrays, dtypes, grad):
    """fn(lib, *tensors) inside lib's CPU autocast region; the tensors are made in float32 from
    arrays and converted to dtypes ('f32', 'bf16', 'f64', 'i64'), leaves requiring grad when grad
    and floating. Returns the output and the leaves."""
    leaves = []
    for a, d in zip(arrays, dtypes):
        t = lib.tensor(a)
        t = {"f32": t.float(), "bf16": t.bfloat16(), "f64": t.double(), "i64": t.long()}[d]
        if grad and d != "i64":
            t.requires_grad_(True)
        leaves.append(t)
    with lib.autocast("cpu"):
        out = fn(lib, *leaves)
    return out, leaves


def autocast_alike(fn, arrays, dtypes=None, *, grad=True, ulps=1, atol=1e-5, rtol=1e-5, grad_rtol=3e-2):
    """fn under CPU bf16 autocast gives PyTorch's result dtype and values: within `ulps` bf16 ulps
    for a bfloat16 result, atol/rtol for float32 ones; then the gradients of the same weighting of
    the output reach the leaves in their dtypes with PyTorch's values to grad_rtol (relative to the
    largest gradient: the backward runs in bfloat16 where the forward did)."""
    dtypes = dtypes or ["f32"] * len(arrays)
    out, leaves = run_region(minitorch, fn, arrays, dtypes, grad)
    t_out, t_leaves = run_region(torch, fn, arrays, dtypes, grad)
    assert str(out.dtype).split(".")[-1] == str(t_out.dtype).split(".")[-1], f"dtype {out.dtype} != {t_out.dtype}"
    assert tuple(out.shape) == tuple(t_out.shape)
    if t_out.dtype == torch.bfloat16:
        within_bf16_ulps(f32(out), f32(t_out), ulps)
    else:
        np.testing.assert_allclose(f32(out), f32(t_out), atol=atol, rtol=rtol)
    if not (grad and t_out.requires_grad):
        return out
    weight = np.random.default_rng(1).standard_normal(tuple(t_out.shape)).astype(np.float32)
    (out.float() * minitorch.tensor(weight)).sum().backward()
    (t_out.float() * torch.tensor(weight)).sum().backward()
    for k, (x, t) in enumerate(zip(leaves, t_leaves)):
        if t.grad is None:
            continue
        assert x.grad is not None and x.grad.dtype == x.dtype, f"input {k}: gradient {x.grad}"
        g, tg = f32(x.grad), f32(t.grad)
        scale = max(np.abs(tg).max(), 1e-6)
        np.testing.assert_allclose(g / scale, tg / scale, atol=grad_rtol, err_msg=f"gradient of input {k}")
    return out


R = np.random.default_rng(0)


def rand(*shape, low=-1.0, high=1.0):
    return R.uniform(low, high, shape).astype(np.float32)


# name -> (fn(lib, *tensors), arrays): ops PyTorch's CPU autocast runs in bfloat16
LOWER = {
    "mm": (lambda lib, a, b: lib.mm(a, b), [rand(5, 7), rand(7, 3)]),
    "matmul": (lambda lib, a, b: a @ b, [rand(2, 5, 7), rand(7, 3)]),
    "bmm": (lambda lib, a, b: lib.bmm(a, b), [rand(2, 5, 7), rand(2, 7, 3)]),
    "addmm": (lambda lib, c, a, b: lib.addmm(c, a, b), [rand(3), rand(5, 7), rand(7, 3)]),
    "baddbmm": (lambda lib, c, a, b: lib.baddbmm(c, a, b, beta=0.5), [rand(2, 5, 3), rand(2, 5, 7), rand(2, 7, 3)]),
    "addbmm": (lambda lib, c, a, b: lib.addbmm(c, a, b), [rand(5, 3), rand(2, 5, 7), rand(2, 7, 3)]),
    "linear": (lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), [rand(4, 6, 16), rand(8, 16), rand(8)]),
    "conv1d": (lambda lib, x, w, b: lib.nn.functional.conv1d(x, w, b, padding=1), [rand(2, 3, 9), rand(4, 3, 3), rand(4)]),
    "conv2d": (lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, stride=2), [rand(2, 3, 7, 7), rand(4, 3, 3, 3), rand(4)]),
    "conv3d": (lambda lib, x, w: lib.nn.functional.conv3d(x, w), [rand(1, 2, 4, 5, 5), rand(3, 2, 2, 2, 2)]),
    "conv_transpose1d": (lambda lib, x, w: lib.nn.functional.conv_transpose1d(x, w), [rand(2, 3, 6), rand(3, 2, 3)]),
    "conv_transpose2d": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2), [rand(1, 3, 4, 4), rand(3, 2, 3, 3)]),
    "conv_transpose3d": (lambda lib, x, w: lib.nn.functional.conv_transpose3d(x, w), [rand(1, 2, 3, 3, 3), rand(2, 2, 2, 2, 2)]),
    "prelu": (lambda lib, x, w: lib.nn.functional.prelu(x, w), [rand(3, 4, 5), rand(4)]),
    "sdpa": (lambda lib, q, k, v: lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True),
             [rand(2, 2, 5, 8), rand(2, 2, 5, 8), rand(2, 2, 5, 8)]),
    # not listed, but made of listed ops
    "einsum": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [rand(4, 5), rand(5, 3)]),
}

# name -> (fn, arrays): ops PyTorch's CPU autocast runs in float32 (bfloat16 inputs are widened)
FP32 = {
    "mse_loss": (lambda lib, a, b: lib.nn.functional.mse_loss(a, b), [rand(4, 5), rand(4, 5)]),
    "l1_loss": (lambda lib, a, b: lib.nn.functional.l1_loss(a, b), [rand(4, 5), rand(4, 5)]),
    "smooth_l1_loss": (lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b), [rand(4, 5), rand(4, 5)]),
    "huber_loss": (lambda lib, a, b: lib.nn.functional.huber_loss(a, b), [rand(4, 5), rand(4, 5)]),
    "cross_entropy": (lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 2, 1, 4])), [rand(4, 5)]),
    "nll_loss": (lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([0, 2, 1, 4])), [rand(4, 5)]),
    "kl_div": (lambda lib, a, b: lib.nn.functional.kl_div(a, b, reduction="batchmean"), [rand(4, 5), rand(4, 5, low=0.1)]),
    "soft_margin_loss": (lambda lib, a, b: lib.nn.functional.soft_margin_loss(a, b.detach()), [rand(4, 5), rand(4, 5)]),
    "bce_with_logits": (lambda lib, a, b: lib.nn.functional.binary_cross_entropy_with_logits(a, b),
                        [rand(4, 5), rand(4, 5, low=0.0)]),
    "bce": (lambda lib, a, b: lib.nn.functional.binary_cross_entropy(a.sigmoid(), b), [rand(4, 5), rand(4, 5, low=0.0)]),
    "margin_ranking_loss": (lambda lib, a, b: lib.nn.functional.margin_ranking_loss(a, b, lib.ones(6)), [rand(6), rand(6)]),
    "cosine_embedding_loss": (lambda lib, a, b: lib.nn.functional.cosine_embedding_loss(a, b, lib.ones(4)),
                              [rand(4, 5), rand(4, 5)]),
    "triplet_margin_loss": (lambda lib, a, b, c: lib.nn.functional.triplet_margin_loss(a, b, c),
                            [rand(4, 5), rand(4, 5), rand(4, 5)]),
    "cdist": (lambda lib, a, b: lib.cdist(a, b), [rand(4, 3), rand(5, 3)]),
    "avg_pool3d": (lambda lib, x: lib.nn.functional.avg_pool3d(x, 2), [rand(1, 2, 4, 4, 4)]),
    "max_pool3d": (lambda lib, x: lib.nn.functional.max_pool3d(x, 2), [rand(1, 2, 4, 4, 4)]),
    "adaptive_avg_pool3d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 2), [rand(1, 2, 4, 4, 4)]),
    "reflection_pad2d": (lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 1), mode="reflect"), [rand(1, 2, 4, 4)]),
    "replication_pad1d": (lambda lib, x: lib.nn.functional.pad(x, (2, 1), mode="replicate"), [rand(1, 2, 4)]),
    "prod": (lambda lib, x: x.prod(1), [rand(3, 4, low=0.5)]),
    "trace": (lambda lib, x: lib.trace(x), [rand(4, 4)]),
    "inverse": (lambda lib, x: lib.linalg.inv(x), [rand(4, 4) + 4 * np.eye(4, dtype=np.float32)]),
    "quantile": (lambda lib, x: x.quantile(0.3), [rand(9)]),
}

# name -> (fn, arrays): ops autocast leaves alone on the CPU (they keep their inputs' dtype)
UNTOUCHED = {
    "softmax": (lambda lib, x: x.softmax(-1), [rand(3, 5)]),
    "layer_norm": (lambda lib, x: lib.nn.functional.layer_norm(x, (5,)), [rand(3, 5)]),
    # a bfloat16 input with float32 parameters (PyTorch's mixed type): the input's dtype
    "layer_norm_affine": (lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (5,), w.float(), b.float()),
                          [rand(3, 5), rand(5), rand(5)]),
    "batch_norm": (lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w.float(), b.float(), True),
                   [rand(4, 5), rand(5), rand(5)]),
    "group_norm": (lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w.float(), b.float()),
                   [rand(3, 4, 5), rand(4), rand(4)]),
    "exp": (lambda lib, x: x.exp(), [rand(3, 5)]),
    "sum": (lambda lib, x: x.sum(0), [rand(3, 5)]),
    "gelu": (lambda lib, x: lib.nn.functional.gelu(x), [rand(3, 5)]),
    "add": (lambda lib, a, b: a + b, [rand(3, 5), rand(3, 5)]),
}


# Our 3-D convolutions round partial sums to bfloat16 on the way, and our sdpa rounds between its
# bfloat16 matmuls and softmax where PyTorch's flash kernel keeps float32 inside: these agree to
# 2 bf16 units of their largest output (measured: conv3d max error 0.012 vs exact, PyTorch's
# 0.008; sdpa 0.0019, PyTorch's 0.0020). The others agree to 1 unit of each element.
ULPS = {"conv3d": "2 of max", "conv_transpose3d": "2 of max", "sdpa": "2 of max"}


@needs_torch
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", sorted(LOWER))
def test_lower_precision_ops(name, dtype):
    fn, arrays = LOWER[name]
    out = autocast_alike(fn, arrays, [dtype] * len(arrays), ulps=ULPS.get(name, 1))
    assert out.dtype == minitorch.bfloat16


@needs_torch
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", sorted(FP32))
def test_float32_ops(name, dtype):
    fn, arrays = FP32[name]
    out = autocast_alike(fn, arrays, [dtype] * len(arrays), grad=name not in ("quantile", "inverse"))
    assert out.dtype == minitorch.float32


@needs_torch
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("name", sorted(UNTOUCHED))
def test_untouched_ops(name, dtype):
    fn, arrays = UNTOUCHED[name]
    out = autocast_alike(fn, arrays, [dtype] * len(arrays))
    assert out.dtype == (minitorch.float32 if dtype == "f32" else minitorch.bfloat16)


@needs_torch
@pytest.mark.parametrize("fn", [lambda lib, a, b: lib.cat([a, b]), lambda lib, a, b: lib.stack([a, b]),
                                lambda lib, a, b: a.index_copy(0, lib.tensor([1, 0]), b)], ids=["cat", "stack", "index_copy"])
@pytest.mark.parametrize("dtypes", [["bf16", "f32"], ["bf16", "bf16"], ["f32", "f32"]])
def test_promote_ops(fn, dtypes):
    out = autocast_alike(fn, [rand(2, 3), rand(2, 3)], dtypes)
    assert out.dtype == (minitorch.bfloat16 if dtypes == ["bf16", "bf16"] else minitorch.float32)


@needs_torch
def test_linear_bf16_bitwise():
    # bf16 inputs, float32 accumulation, one rounding to bf16: the same bits as PyTorch's here
    x, w, b = rand(16, 64), rand(32, 64), rand(32)
    out, _ = run_region(minitorch, LOWER["linear"][0], [x, w, b], ["f32"] * 3, False)
    t_out, _ = run_region(torch, LOWER["linear"][0], [x, w, b], ["f32"] * 3, False)
    within_bf16_ulps(f32(out), f32(t_out), ulps=1)
    assert (f32(out) == f32(t_out)).mean() > 0.95


def test_float64_and_integers_are_not_cast():
    a = minitorch.randn(3, 3, dtype=minitorch.float64)
    i = minitorch.ones(3, 3, dtype=minitorch.int64)
    with minitorch.autocast("cpu"):
        assert (a @ a).dtype == minitorch.float64
        assert (i @ i).dtype == minitorch.int64
        assert minitorch.nn.functional.mse_loss(a, a).dtype == minitorch.float64


def test_no_cast_outside_or_disabled_or_other_device():
    x = minitorch.randn(3, 3)
    assert (x @ x).dtype == minitorch.float32
    with minitorch.autocast("cpu", enabled=False):
        assert (x @ x).dtype == minitorch.float32
    with minitorch.autocast("cpu"):
        assert (x @ x).dtype == minitorch.bfloat16
        with minitorch.autocast("cpu", enabled=False):
            assert (x @ x).dtype == minitorch.float32
            with minitorch.autocast("cpu", dtype=minitorch.float16):
                assert (x @ x).dtype == minitorch.float16
            assert (x @ x).dtype == minitorch.float32
        assert (x @ x).dtype == minitorch.bfloat16
        seen = []
        t = threading.Thread(target=lambda: seen.append((x @ x).dtype))
        t.start()
        t.join()
        assert seen == [minitorch.float32]  # another thread is outside the region
    assert (x @ x).dtype == minitorch.float32
    minitorch.set_autocast_enabled("cpu", True)
    try:
        assert (x @ x).dtype == minitorch.bfloat16 and minitorch.is_autocast_enabled("cpu")
    finally:
        minitorch.set_autocast_enabled("cpu", False)
    # a CUDA region does not cast CPU tensors (PyTorch warns and disables it without a GPU)
    if minitorch.cuda.is_available():
        with minitorch.autocast("cuda"):
            assert (x @ x).dtype == minitorch.float32


def test_unsupported_dtype_disables_as_torch():
    for lib in [minitorch] + ([torch] if torch is not None else []):
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
            ctx = lib.autocast("cpu", dtype=lib.float64)
        with ctx:
            assert not lib.is_autocast_enabled("cpu")


def test_weight_cast_cache():
    lin = minitorch.nn.Linear(4, 3)
    x = minitorch.randn(2, 4)
    with minitorch.autocast("cpu"):
        lin(x)
        assert minitorch._C._autocast_cache_size() == 2  # weight and bias, cast once
        lin(x)
        assert minitorch._C._autocast_cache_size() == 2
        (x @ x.t()).sum()  # x requires no grad: not a weight, not cached
        with minitorch.autocast("cpu"):  # an inner region keeps the outer one's casts
            lin(x)
        assert minitorch._C._autocast_cache_size() == 2
        with minitorch.no_grad():
            lin(x)
    assert minitorch._C._autocast_cache_size() == 0  # the outermost region dropped them
    with minitorch.autocast("cpu", cache_enabled=False):
        y = lin(x)
        assert minitorch._C._autocast_cache_size() == 0 and y.dtype == minitorch.bfloat16
    assert minitorch.is_autocast_cache_enabled()


def test_cast_is_differentiable_to_float32_leaves():
    minitorch.manual_seed(0)
    lin = minitorch.nn.Linear(4, 3)
    x = minitorch.randn(2, 4, requires_grad=True)
    with minitorch.autocast("cpu"):
        y = lin(x)
        y2 = lin(x)  # the cached cast of the weight, used twice
    assert y.grad_fn is not None
    (y.float().sum() + y2.float().sum()).backward()
    assert lin.weight.grad.dtype == minitorch.float32 and x.grad.dtype == minitorch.float32
    # x is rounded to bfloat16 (8 bits) before the product: a column sum near zero is only
    # right to the rounding of its terms, so the bound is absolute in the terms' size
    xs = x.detach().numpy()
    np.testing.assert_allclose(
        lin.weight.grad.numpy(), 2 * np.tile(xs.sum(0), (3, 1)), rtol=2e-2, atol=2 * 2**-8 * np.abs(xs).sum(0).max()
    )


@needs_torch
def test_binary_cross_entropy_refused_only_on_cuda_policy():
    # the CPU runs it in float32; the CUDA message is tested on the emulated device
    a, b = rand(3), rand(3, low=0.0)
    autocast_alike(lambda lib, p, q: lib.nn.functional.binary_cross_entropy(p.sigmoid(), q), [a, b], ["bf16", "f32"])


def _scaled_mm(lib, amp):
    class ScaledMM(lib.autograd.Function):
        @staticmethod
        @amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            ctx.inner = lib.is_autocast_enabled("cpu")
            return a.mm(b) * 2

        @staticmethod
        @amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ctx.bwd = lib.is_autocast_enabled("cpu")
            return (g.mm(b.t()) * 2).to(a.dtype), (a.t().mm(g) * 2).to(b.dtype)

    return ScaledMM


@pytest.mark.parametrize("cast", [True, False])
def test_custom_fwd_bwd(cast):
    libs = [minitorch] + ([torch] if torch is not None else [])
    seen = []
    for lib in libs:
        amp = lib.amp
        fn = _scaled_mm(lib, amp)
        if not cast:
            class Plain(fn):
                forward = staticmethod(amp.custom_fwd(fn.forward.__wrapped__, device_type="cpu"))
            fn = Plain
        a = lib.tensor(rand(3, 4)).bfloat16().requires_grad_()
        b = lib.tensor(rand(4, 2), requires_grad=True)
        with lib.autocast("cpu"):
            out = fn.apply(a, b)
        out.float().sum().backward()
        seen.append((str(out.dtype).split(".")[-1], str(a.grad.dtype).split(".")[-1], str(b.grad.dtype).split(".")[-1]))
    assert seen[0] == (("float32", "bfloat16", "float32") if cast else ("bfloat16", "bfloat16", "float32"))
    assert len(set(seen)) == 1, seen


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(12, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 5))


def _cnn(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5))


class _Attention:
    """One attention block: qkv projection, causal sdpa, output projection, then a head."""

    def __init__(self, lib):
        nn = lib.nn
        self.lib = lib
        self.qkv, self.proj, self.head = nn.Linear(8, 24), nn.Linear(8, 8), nn.Linear(8, 5)
        self.norm = nn.LayerNorm(8)

    def parameters(self):
        for m in (self.qkv, self.proj, self.norm, self.head):
            yield from m.parameters()

    def __call__(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.norm(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in (q, k, v))
        y = self.lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return self.head(y).mean(1)


MODELS = {"mlp": (_mlp, (16, 12)), "cnn": (_cnn, (8, 2, 6, 6)), "attention": (_Attention, (4, 6, 8))}


def _train(lib, name, steps=3):
    make, shape = MODELS[name]
    model = make(lib)
    rng = np.random.default_rng(3)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(rng.uniform(-0.4, 0.4, tuple(p.shape)).astype(np.float32)))
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32))
    y = lib.tensor(rng.integers(0, 5, shape[0]))
    opt = lib.optim.SGD(list(model.parameters()), lr=0.1)
    losses, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        with lib.autocast("cpu", dtype=lib.bfloat16):
            loss = lib.nn.functional.cross_entropy(model(x), y)
        assert str(loss.dtype).endswith("float32")
        loss.backward()
        grads.append([f32(p.grad) for p in model.parameters()])
        assert all(str(p.grad.dtype).endswith("float32") for p in model.parameters())
        losses.append(loss.item())
        opt.step()
    return losses, grads


# Where both compute the same bfloat16 products (float32 sums in another order), a loss agrees to
# a few bfloat16 units and a gradient, relative to its largest element, to 2e-2.
@needs_torch
@pytest.mark.parametrize("name", sorted(MODELS))
def test_train_three_steps_as_torch(name):
    losses, grads = _train(minitorch, name)
    t_losses, t_grads = _train(torch, name)
    np.testing.assert_allclose(losses, t_losses, rtol=1e-2)
    for step, (gs, tgs) in enumerate(zip(grads, t_grads)):
        for k, (g, tg) in enumerate(zip(gs, tgs)):
            scale = max(np.abs(tg).max(), 1e-6)
            np.testing.assert_allclose(g / scale, tg / scale, atol=2e-2, err_msg=f"step {step}, parameter {k}")


@needs_torch
def test_out_and_deprecated_spellings():
    for lib in (minitorch, torch):
        a = lib.tensor(rand(2, 3))
        out = lib.empty(2, 2)
        with lib.autocast("cpu"):
            # a call with out= is not autocast: the float32 product, exactly
            assert lib.mm(a, a.t(), out=out) is out and out.dtype == lib.float32
            np.testing.assert_allclose(f32(out), f32(a) @ f32(a).T, rtol=1e-6)
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
            region = lib.cpu.amp.autocast()
        with region:
            assert (a @ a.t()).dtype == lib.bfloat16
            assert (a.matmul(a.t())).dtype == lib.bfloat16


def test_backward_inside_region():
    # PyTorch does not advise it, but it works: the float32 leaves still get float32 gradients
    w = minitorch.randn(3, 4, requires_grad=True)
    x = minitorch.randn(2, 4)
    with minitorch.autocast("cpu"):
        loss = minitorch.nn.functional.mse_loss(x @ w.t(), minitorch.zeros(2, 3))
        loss.backward()
    assert loss.dtype == minitorch.float32 and w.grad.dtype == minitorch.float32
