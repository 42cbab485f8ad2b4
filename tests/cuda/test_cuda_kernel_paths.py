"""CUDA kernel paths, each against the CPU: linear on a (B, T, C) input as one
cuBLASLt product with the bias epilogue; torch.backends.cudnn.enabled (conv2d on im2col and
cuBLAS without cuDNN) and cudnn.allow_tf32; softmax's and log_softmax's backward kernels (no host
round trip, no chain of elementwise ops); reductions with many results over a non-contiguous dim
(threads over the results); grid_sampler_2d's and _3d's CUDA kernels."""
import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch.profiler import ProfilerActivity, profile
from helpers import as_numpy, assert_same, check, check_device, to_layout

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(222)
needs_cudnn = pytest.mark.skipif(not minitorch.cuda._C_cuda.has_cudnn, reason="built without cuDNN")
needs_cublas = pytest.mark.skipif(not minitorch.cuda._C_cuda.has_cublas, reason="built without cuBLAS")


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def events(fn):
    """fn() under the profiler: the names of its events, in order."""
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        minitorch.cuda.synchronize()
    return [e.name for e in prof.events()]


def syncs(fn):
    """How many times the host waited for the emulated device during fn() (None on a GPU)."""
    if not minitorch.cuda._is_emulated():
        fn()
        return None
    before = minitorch.cuda._emu_sync_count()
    fn()
    return minitorch.cuda._emu_sync_count() - before


# ---- 1. linear on (B, T, C): one product with the bias epilogue --------------------------------

@needs_cublas
@pytest.mark.parametrize("shape", [(3, 5, 8), (2, 3, 4, 8), (0, 5, 8), (4, 1, 8)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_nd_matches_the_cpu(shape, dtype):
    x, w, b = rand(*shape, dtype=dtype), rand(6, 8, dtype=dtype), rand(6, dtype=dtype)
    b[1] = np.nan
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for layout in ("contiguous", "transposed"):  # transposed: not contiguous, matmul then add
        got = F.linear(to_layout(x, layout, "cuda"), minitorch.tensor(w).cuda(), minitorch.tensor(b).cuda())
        want = F.linear(minitorch.tensor(x), minitorch.tensor(w), minitorch.tensor(b))
        assert_same(got, want, atol=tol, rtol=tol)


@needs_cublas
def test_linear_3d_is_one_lt_product_with_the_bias():
    x, w, b = (minitorch.tensor(a).cuda() for a in (rand(4, 16, 32), rand(48, 32), rand(48)))
    names = events(lambda: F.linear(x, w, b))
    assert names.count("Library::cublasLtMatmul") == 1
    assert "Op::addmm" in names and "Op::bmm" not in names
    assert "Op::add" not in names  # the bias is the epilogue's, not a separate add
    assert syncs(lambda: F.linear(x, w, b)) in (0, None)


@needs_cublas
def test_linear_3d_gradients_match_the_cpu():
    arrays = rand(2, 5, 8), rand(6, 8), rand(6)
    grads = []
    for dev in ("cpu", "cuda"):
        ts = [minitorch.tensor(a).to(dev).requires_grad_(True) for a in arrays]
        (F.linear(*ts) ** 2).sum().backward()
        grads.append([t.grad for t in ts])
    for g, c in zip(*reversed(grads)):
        assert_same(g, c, atol=1e-4, rtol=1e-5)


# ---- 2. cudnn.enabled and cudnn.allow_tf32 -------------------------------------------------------

@pytest.fixture
def cudnn(monkeypatch):
    c = minitorch.backends.cudnn
    for name in ("enabled", "allow_tf32", "benchmark"):
        monkeypatch.setattr(c, name, getattr(c, name))
    return c


CONVS = [  # (x shape, w shape, kwargs)
    ((2, 3, 9, 8), (4, 3, 3, 3), dict(padding=1)),
    ((1, 4, 11, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)),
    ((5, 6, 7), (2, 5, 1, 1), dict()),  # unbatched, a 1x1 filter
    ((2, 2, 5, 5), (3, 2, 5, 5), dict(stride=3, padding=2)),
    ((0, 3, 5, 5), (2, 3, 3, 3), dict()),  # an empty batch
]


@pytest.mark.parametrize("xs, ws, kw", CONVS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_without_cudnn_matches_the_cpu(cudnn, xs, ws, kw, bias, dtype):
    cudnn.enabled = False
    x, w = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype)
    b = rand(ws[0], dtype=dtype) if bias else None
    tol = 1e-4 if dtype == np.float32 else 1e-10
    grads = []
    for dev in ("cpu", "cuda"):
        ts = [minitorch.tensor(a).to(dev).requires_grad_(True) for a in (x, w, b) if a is not None]
        out = F.conv2d(ts[0], ts[1], ts[2] if bias else None, **kw)
        (out * out).sum().backward()
        grads.append([out] + [t.grad for t in ts])
    for g, c in zip(grads[1], grads[0]):
        assert_same(g, c, atol=tol, rtol=tol)


@needs_cudnn
def test_disabled_cudnn_is_not_called(cudnn):
    x, w, b = (minitorch.tensor(a).cuda() for a in (rand(2, 3, 8, 8), rand(4, 3, 3, 3), rand(4)))
    x.requires_grad_(True)
    w.requires_grad_(True)
    on = events(lambda: F.conv2d(x, w, b, padding=1).sum().backward())
    assert any("cudnnConvolution" in n for n in on)
    cudnn.enabled = False
    off = events(lambda: F.conv2d(x, w, b, padding=1).sum().backward())
    assert not any("cudnn" in n for n in off)
    assert "Op::baddbmm" in off and "Op::bmm" in off  # im2col, then the products on cuBLAS
    assert syncs(lambda: F.conv2d(x, w, b, padding=1).sum().backward()) in (0, None)


def tf32(a):
    """a (float32) rounded to TF32 as tensor cores read it: 10 mantissa bits, to nearest even."""
    b = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x0FFF + ((b >> 13) & 1)) & ~np.uint64(0x1FFF)
    return b.astype(np.uint32).view(np.float32)


@needs_cudnn
@pytest.mark.skipif(not minitorch.cuda._is_emulated(), reason="whether a GPU uses TF32 is its choice")
def test_cudnn_allow_tf32_rounds_float32_convolutions(cudnn):
    x, w = rand(2, 16, 6, 6), rand(3, 16, 3, 3)
    gx, gw = minitorch.tensor(x).cuda(), minitorch.tensor(w).cuda()
    exact = as_numpy(F.conv2d(minitorch.tensor(x.astype(np.float64)), minitorch.tensor(w.astype(np.float64))))
    rounded = as_numpy(F.conv2d(minitorch.tensor(tf32(x).astype(np.float64)),
                                minitorch.tensor(tf32(w).astype(np.float64))))
    assert np.abs(rounded - exact).max() > 1e-3  # the case tells the two apart
    cudnn.allow_tf32 = False  # what the tests' session runs with (conftest)
    np.testing.assert_allclose(as_numpy(F.conv2d(gx, gw)), exact, atol=1e-4, rtol=1e-5)
    cudnn.allow_tf32 = True  # PyTorch's default
    np.testing.assert_allclose(as_numpy(F.conv2d(gx, gw)), rounded, atol=1e-4, rtol=1e-5)
    d = F.conv2d(minitorch.tensor(x.astype(np.float64)).cuda(), minitorch.tensor(w.astype(np.float64)).cuda())
    np.testing.assert_allclose(as_numpy(d), exact, atol=1e-10)  # float64 never uses TF32
    with cudnn.flags(enabled=True, allow_tf32=False):
        np.testing.assert_allclose(as_numpy(F.conv2d(gx, gw)), exact, atol=1e-4, rtol=1e-5)
    assert cudnn.allow_tf32 is True


def test_cudnn_flags_default_as_pytorch():
    import subprocess
    import sys

    code = ("import minitorch; c = minitorch.backends.cudnn; "
            "print(c.enabled, c.allow_tf32, c.benchmark, c.deterministic)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "False", "False"]


# ---- 3. softmax's and log_softmax's backward ----------------------------------------------------

SOFTMAX_SHAPES = [((7, 40), -1), ((3, 300), 1), ((5, 2000), -1), ((4, 6, 5), 1), ((2, 3, 0), -1),
                  ((6,), 0), ((3, 1), 0)]


def softmax_back_ref(g, y, dim, log):
    if log:
        return g - np.exp(y) * g.sum(axis=dim, keepdims=True)
    return y * (g - (g * y).sum(axis=dim, keepdims=True))


@pytest.mark.parametrize("shape, dim", SOFTMAX_SHAPES)
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_softmax_backward_data_matches_the_cpu(shape, dim, log, layout):
    g, x = rand(*shape), rand(*shape)
    if g.size:
        g.flat[0] = np.nan
    y = as_numpy((F.log_softmax if log else F.softmax)(minitorch.tensor(x), dim=dim))
    name = "_log_softmax_backward_data" if log else "_softmax_backward_data"
    for dev in ("cpu", "cuda"):
        check(lambda mt, a, b: getattr(mt, name)(a, b, dim, b.dtype),
              lambda a, b: softmax_back_ref(a, b, dim, log), [g, y], layout=layout, device=dev,
              atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, -1])
def test_softmax_gradients_match_the_cpu(log, dim):
    x = rand(9, 130)
    fn = F.log_softmax if log else F.softmax
    grads = []
    for dev in ("cpu", "cuda"):
        t = minitorch.tensor(x).to(dev).requires_grad_(True)
        w = minitorch.tensor(np.linspace(-1, 1, x.size, dtype=np.float32).reshape(x.shape)).to(dev)
        (fn(t, dim=dim) * w).sum().backward()
        grads.append(t.grad)
    assert_same(grads[1], grads[0], atol=1e-5, rtol=1e-4)


def test_cross_entropy_backward_is_one_kernel_and_no_sync():
    logits = minitorch.tensor(rand(64, 100)).cuda().requires_grad_(True)
    target = minitorch.tensor(RNG.integers(0, 100, 64)).cuda()
    loss = F.cross_entropy(logits, target)
    names = events(lambda: loss.backward(retain_graph=True))
    assert "Op::_log_softmax_backward_data" in names
    for chain in ("Op::exp", "Op::sub"):  # the old chain of elementwise ops
        assert chain not in names, names
    assert syncs(lambda: loss.backward()) in (0, None)
    cpu = minitorch.tensor(as_numpy(logits)).requires_grad_(True)
    F.cross_entropy(cpu, minitorch.tensor(as_numpy(target))).backward()
    np.testing.assert_allclose(as_numpy(logits.grad) / 2, as_numpy(cpu.grad), atol=1e-6)


def test_double_backward_of_softmax_still_differentiates():
    x = minitorch.tensor(rand(3, 5).astype(np.float64)).cuda().requires_grad_(True)
    y = F.softmax(x, dim=1)
    (g,) = minitorch.autograd.grad((y * y).sum(), x, create_graph=True)
    (gg,) = minitorch.autograd.grad(g.sum(), x)
    xc = minitorch.tensor(as_numpy(x)).requires_grad_(True)
    yc = F.softmax(xc, dim=1)
    (gc,) = minitorch.autograd.grad((yc * yc).sum(), xc, create_graph=True)
    (ggc,) = minitorch.autograd.grad(gc.sum(), xc)
    np.testing.assert_allclose(as_numpy(gg), as_numpy(ggc), atol=1e-10)


# ---- 4. many results over a non-contiguous reduced dim -----------------------------------------

RED_CASES = [((300, 70), (0,)), ((33, 5, 64), (0, 1)), ((4, 50, 40), (1,)), ((1000, 33), (0,)),
             ((5000, 40), (0,)), ((3000, 2, 48), (0, 1))]  # the last two: several slices per tile


@pytest.mark.parametrize("shape, dims", RED_CASES)
@pytest.mark.parametrize("op", ["sum", "mean", "amax", "var", "argmax", "logsumexp", "norm"])
def test_reductions_over_outer_dims_match_the_cpu(shape, dims, op):
    x = rand(*shape)
    x.flat[7] = np.nan
    t = minitorch.tensor(x)
    if op == "argmax":
        if len(dims) > 1:
            pytest.skip("argmax takes one dim")
        fn = lambda a: a.argmax(dims[0])
    elif op == "norm":
        fn = lambda a: minitorch.linalg.vector_norm(a, dim=dims)
    else:
        fn = lambda a: getattr(a, op)(dim=dims)
    # float32 sums (and means) in another order differ by up to ~1e-7 of sum |x| (a column of 6000 normals
    # summing to near 0 was 1.2e-5 apart): the bound scales with it
    scale = float(np.nansum(np.abs(x), axis=dims).max()) if op in ("sum", "mean") else 0.0
    if op == "mean":
        scale /= np.prod([shape[d] for d in dims])
    check_device(fn, t, atol=max(1e-5, 1e-6 * scale), rtol=1e-5)
    check_device(fn, t.double(), atol=1e-12, rtol=1e-12)


def test_sum_over_dim_0_reads_coalesced():
    x = minitorch.tensor(rand(256, 512)).cuda()
    names = events(lambda: x.sum(0))
    assert any("red_cols_kernel" in n for n in names), [n for n in names if "Kernel" in n]
    assert not any("red_kernel" in n and "cols" not in n for n in names)
    np.testing.assert_allclose(as_numpy(x.sum(0)), as_numpy(x).astype(np.float64).sum(0), atol=1e-4)
    # a contiguous reduced dim keeps a block per result
    assert not any("red_cols_kernel" in n for n in events(lambda: x.sum(1)))
    # few tiles over many rows: slices of rows per tile, then the states folded
    tall = minitorch.tensor(rand(6000, 64)).cuda()
    names = events(lambda: tall.sum(0))
    assert any("red_cols_kernel" in n for n in names) and any("red_finish_kernel" in n for n in names)
    np.testing.assert_allclose(as_numpy(tall.sum(0)), as_numpy(tall).astype(np.float64).sum(0), atol=1e-3)


# ---- 6. grid_sampler_2d and _3d -----------------------------------------------------------------

def same_sampling(x, grid, mode, padding, align):
    """grid_sample's output and the gradients of input and grid on the device as on the CPU."""
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    res = []
    for dev in ("cpu", "cuda"):
        xt = to_layout(x, "transposed", dev).requires_grad_(True)
        gt = minitorch.tensor(grid).to(dev).requires_grad_(True)
        out = F.grid_sample(xt, gt, mode=mode, padding_mode=padding, align_corners=align)
        w = minitorch.tensor(np.linspace(-2, 2, out.numel(), dtype=x.dtype).reshape(out.shape)).to(dev)
        (out * w).sum().backward()
        res.append((out, xt.grad, gt.grad))
    for g, c in zip(res[1], res[0]):
        assert_same(g, c, atol=tol, rtol=tol)


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grid_sample_matches_the_cpu(mode, padding, align, dtype):
    x = rand(2, 3, 5, 6, dtype=dtype)
    grid = (RNG.uniform(-1.3, 1.3, (2, 4, 7, 2))).astype(dtype)
    grid[0, 0, 0] = [np.nan, 0.1]
    grid[1, 2, 3] = [np.inf, -np.inf]
    same_sampling(x, grid, mode, padding, align)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_grid_sample_3d_matches_the_cpu(mode, padding, align, dtype):
    x = rand(2, 3, 4, 5, 3, dtype=dtype)
    grid = (RNG.uniform(-1.3, 1.3, (2, 3, 2, 4, 3))).astype(dtype)
    grid[0, 0, 0, 0] = [np.nan, 0.1, 0.2]
    grid[1, 2, 1, 3] = [np.inf, -np.inf, 0.5]
    same_sampling(x, grid, mode, padding, align)


def test_grid_sample_runs_on_the_device():
    x = minitorch.tensor(rand(1, 2, 8, 8)).cuda().requires_grad_(True)
    grid = minitorch.tensor(RNG.uniform(-1, 1, (1, 5, 5, 2)).astype(np.float32)).cuda().requires_grad_(True)
    names = events(lambda: F.grid_sample(x, grid, align_corners=False).sum().backward())
    kernels = [n for n in names if "grid_forward_kernel" in n or "grid_backward_kernel" in n]
    assert len(kernels) >= 2, names
    assert not any("Memcpy" in n and "DtoH" in n for n in names)
    assert syncs(lambda: F.grid_sample(x, grid, align_corners=False).sum().backward()) in (0, None)
    x3 = minitorch.tensor(rand(1, 2, 3, 4, 4)).cuda().requires_grad_(True)
    grid3 = minitorch.tensor(RNG.uniform(-1, 1, (1, 2, 3, 3, 3)).astype(np.float32)).cuda().requires_grad_(True)
    names = events(lambda: F.grid_sample(x3, grid3, align_corners=False).sum().backward())
    assert sum("grid3d_forward_kernel" in n or "grid3d_backward_kernel" in n for n in names) >= 2, names
    assert not any("Memcpy" in n and "DtoH" in n for n in names)
