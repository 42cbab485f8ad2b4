"""conv2d (cuDNN) and 2-D pooling (pool.cu) on CUDA against the CPU kernels: forward and the
backward ops, over strides, padding, dilation, groups, ceil_mode, count_include_pad,
divisor_override, non-contiguous inputs and autograd."""
import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from minitorch import _C
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(0)
TOL = dict(atol=1e-4, rtol=1e-4)  # cuDNN's algorithms sum in another order than the CPU loops


def rand(*shape, dtype=np.float32):
    return minitorch.tensor(RNG.standard_normal(shape).astype(dtype))


def test_conv_kernels_are_cudnn_or_round_trip():
    want = "mt_cuda_conv2d" if minitorch.cuda._C_cuda.has_cudnn else "mt_cuda_host_conv2d"
    assert _C._dispatch_table("conv2d")["CUDA"] == want
    for op in ["max_pool2d", "max_pool2d_with_indices", "avg_pool2d", "adaptive_avg_pool2d"]:
        assert _C._dispatch_table(op)["CUDA"] == "mt_cuda_pool"  # their rows' CUDA_AS(pool)


CONV_CASES = [
    # (input shape, weight shape, bias, stride, padding, dilation, groups)
    ((2, 3, 9, 9), (4, 3, 3, 3), True, 1, 0, 1, 1),
    ((2, 4, 10, 7), (6, 2, 3, 2), False, (2, 1), (1, 2), 1, 2),
    ((1, 3, 12, 12), (5, 3, 3, 3), True, 2, 2, 2, 1),
    ((8, 6, 6), (8, 1, 3, 3), True, 1, 1, 1, 8),  # unbatched, depthwise
    ((0, 3, 5, 5), (2, 3, 3, 3), True, 1, 0, 1, 1),  # empty batch
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_and_backward(case, dtype):
    xs, ws, has_bias, stride, padding, dilation, groups = case
    x, w = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype)
    b = rand(ws[0], dtype=dtype) if has_bias else None
    args = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    out = F.conv2d(x, w, b, **args)
    gout = F.conv2d(x.cuda(), w.cuda(), b.cuda() if b is not None else None, **args)
    assert_same(gout, out, **TOL)
    go = rand(*out.shape, dtype=dtype)
    kw = dict(stride=[stride] if isinstance(stride, int) else list(stride),
              padding=[padding] if isinstance(padding, int) else list(padding),
              dilation=[dilation], groups=groups)
    assert_same(_C.convolution_backward_input(go.cuda(), w.cuda(), list(xs), **kw),
                _C.convolution_backward_input(go, w, list(xs), **kw), **TOL)
    assert_same(_C.convolution_backward_weight(go.cuda(), x.cuda(), list(ws), **kw),
                _C.convolution_backward_weight(go, x, list(ws), **kw), **TOL)


def test_conv2d_noncontiguous_and_autograd():
    x = rand(2, 3, 8, 8).transpose(2, 3)
    w = rand(4, 3, 3, 3)
    xc, wc = x.cuda().requires_grad_(), w.cuda().requires_grad_()
    x.requires_grad_()
    w.requires_grad_()
    F.conv2d(x, w, padding=1).sum().backward()
    F.conv2d(xc, wc, padding=1).sum().backward()
    assert_same(xc.grad, x.grad, **TOL)
    assert_same(wc.grad, w.grad, **TOL)


@pytest.mark.skipif(not minitorch.cuda._is_emulated(), reason="sets the emulated device's memory size")
def test_conv2d_takes_the_next_algorithm_when_a_workspace_does_not_fit():
    """cuDNN's first choice for the input gradient wants a 150 MiB workspace here (one image's
    im2col matrix, in the emulation); on a 64 MiB device the next algorithm (none) is used, as
    PyTorch does, rather than failing with out of memory."""
    import subprocess
    import sys
    code = """if 1:
        import numpy as np, minitorch, minitorch.nn.functional as F
        minitorch.backends.cudnn.allow_tf32 = False  # full float32, as the tests' conftest
        rng = np.random.default_rng(0)
        x = minitorch.tensor(rng.standard_normal((1, 64, 256, 256)).astype(np.float32))
        w = minitorch.tensor(rng.standard_normal((1, 64, 3, 3)).astype(np.float32))
        go = minitorch.ones(1, 1, 256, 256)
        gi = minitorch._C.convolution_backward_input(go.cuda(), w.cuda(), [1, 64, 256, 256], padding=[1, 1])
        want = minitorch._C.convolution_backward_input(go, w, [1, 64, 256, 256], padding=[1, 1])
        np.testing.assert_allclose(gi.cpu().numpy(), want.numpy(), atol=1e-4, rtol=1e-4)
        print("ok")
    """
    env = dict(__import__("os").environ, MINITORCH_CUDA_EMU="1", MINITORCH_EMU_MEMORY=str(64 << 20))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_conv2d_errors_match_cpu():
    x, w = rand(1, 3, 5, 5), rand(4, 2, 3, 3)
    with pytest.raises(RuntimeError) as cpu:
        F.conv2d(x, w)
    with pytest.raises(RuntimeError) as gpu:
        F.conv2d(x.cuda(), w.cuda())
    assert str(gpu.value) == str(cpu.value)


POOL_CASES = [
    # (shape, kernel_size, stride, padding, dilation, ceil_mode)
    ((2, 3, 9, 9), 3, 2, 1, 1, False),
    ((2, 3, 9, 9), 3, 2, 1, 1, True),
    ((3, 10, 7), (3, 2), (2, 1), (1, 0), 1, False),
    ((1, 2, 11, 11), 3, 2, 1, 2, True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool2d(case, dtype):
    shape, k, s, p, d, ceil = case
    x = rand(*shape, dtype=dtype)
    x[..., 0, 0] = float("nan")
    args = dict(kernel_size=k, stride=s, padding=p, dilation=d, ceil_mode=ceil)
    assert_same(minitorch.max_pool2d(x.cuda(), **args), minitorch.max_pool2d(x, **args), **TOL)
    out, idx = _C.max_pool2d_with_indices(x, **args)
    gout, gidx = _C.max_pool2d_with_indices(x.cuda(), **args)
    assert_same(gout, out, **TOL)
    assert_same(gidx, idx, **TOL)
    go = rand(*out.shape, dtype=dtype)
    kw = dict(kernel_size=[k] if isinstance(k, int) else list(k),
              stride=[s] if isinstance(s, int) else list(s),
              padding=[p] if isinstance(p, int) else list(p), dilation=[d], ceil_mode=ceil)
    assert_same(_C.max_pool2d_with_indices_backward(go.cuda(), x.cuda(), indices=gidx, **kw),
                _C.max_pool2d_with_indices_backward(go, x, indices=idx, **kw), **TOL)


def test_max_pool2d_integers():
    x = minitorch.tensor(RNG.integers(-50, 50, (2, 3, 6, 6)), dtype=minitorch.int32)
    assert_same(minitorch.max_pool2d(x.cuda(), 2), minitorch.max_pool2d(x, 2), **TOL)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 3])
@pytest.mark.parametrize("case", POOL_CASES[:3])
def test_avg_pool2d(case, count_include_pad, divisor, dtype):
    shape, k, s, p, _, ceil = case
    x = rand(*shape, dtype=dtype)
    args = (k, s, p, ceil, count_include_pad, divisor)
    out = _C.avg_pool2d(x, *args)
    assert_same(_C.avg_pool2d(x.cuda(), *args), out, **TOL)
    go = rand(*out.shape, dtype=dtype)
    bargs = ([k] if isinstance(k, int) else list(k), [s] if isinstance(s, int) else list(s),
             [p] if isinstance(p, int) else list(p), ceil, count_include_pad, divisor)
    assert_same(_C.avg_pool2d_backward(go.cuda(), x.cuda(), *bargs), _C.avg_pool2d_backward(go, x, *bargs), **TOL)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,size", [((2, 3, 9, 7), (4, 3)), ((3, 5, 5), 1), ((1, 2, 4, 4), (8, 8))])
def test_adaptive_avg_pool2d(shape, size, dtype):
    x = rand(*shape, dtype=dtype)
    out = _C.adaptive_avg_pool2d(x, size)
    assert_same(_C.adaptive_avg_pool2d(x.cuda(), size), out, **TOL)
    go = rand(*out.shape, dtype=dtype)
    assert_same(_C._adaptive_avg_pool2d_backward(go.cuda(), x.cuda()), _C._adaptive_avg_pool2d_backward(go, x), **TOL)


def test_pool_noncontiguous_and_autograd():
    x = rand(2, 3, 8, 8).transpose(2, 3).requires_grad_()
    xc = x.detach().cuda().requires_grad_()
    for f in (lambda t: F.max_pool2d(t, 3, 2, 1), lambda t: F.avg_pool2d(t, 3, 2, 1),
              lambda t: F.adaptive_avg_pool2d(t, (3, 5))):
        x.grad = xc.grad = None
        f(x).sum().backward()
        f(xc).sum().backward()
        assert_same(xc.grad, x.grad, **TOL)
