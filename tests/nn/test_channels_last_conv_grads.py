"""conv2d's three gradients on channels-last tensors (issue 21): cpu/conv_nhwc.c computes them from
the NHWC data as it lies, the weight's gradient summed in registers (float32, 16 or more channels a
group), the input's as a direct NHWC convolution of grad_output (float32, unit strides) or as gemms
over NHWC rows and their col2im (strides, float64, few channels). Each case runs at 1 and 2 threads
and must equal NumPy's float64 gradients and PyTorch's, keep PyTorch's channels-last strides, and
equal minitorch's own row-major results (the NCHW kernels). Fresh memory is poisoned
(tests/conftest.py), so an element a kernel never wrote fails."""
import numpy as np
import pytest

import minitorch
from tests.helpers import as_numpy, check, to_layout, torch_layout

try:
    import torch
except ImportError:  # the sanitizer run: the NumPy checks still run
    torch = None

RNG = np.random.default_rng(2121)


def np_conv2d_grads(x, w, gy, stride, pad, dil, groups):
    """float64 gradients of conv2d (N, C, H, W) * (OC, C/groups, KH, KW) for output gradient gy:
    (input, weight, bias); stride, pad, dil are (rows, columns) pairs."""
    (sh, sw), (ph, pw), (dh, dw) = stride, pad, dil
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    n, c = x.shape[:2]
    oc, cg, kh, kw = w.shape
    oh, ow = gy.shape[2:]
    og = oc // groups
    gyg = gy.reshape(n, groups, og, oh, ow)
    wg = w.reshape(groups, og, cg, kh, kw)
    gxp = np.zeros_like(xp)
    gw = np.zeros_like(wg)
    for i in range(kh):
        for j in range(kw):
            rows = slice(i * dh, i * dh + sh * (oh - 1) + 1, sh)
            cols = slice(j * dw, j * dw + sw * (ow - 1) + 1, sw)
            tap = xp[:, :, rows, cols].reshape(n, groups, cg, oh, ow)
            gw[..., i, j] = np.einsum("ngchw,ngohw->goc", tap, gyg)
            gxp[:, :, rows, cols] += np.einsum("ngohw,goc->ngchw", gyg, wg[..., i, j]).reshape(n, c, oh, ow)
    gx = gxp[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]]
    return gx, gw.reshape(w.shape), gy.sum(axis=(0, 2, 3))


def pair(v):
    return v if isinstance(v, tuple) else (v, v)


# (input shape, weight shape, stride, padding, dilation, groups): the register kernels (32 and 64
# channels; 20, 24 and 40: a last vector overlapping the one before; 12, 9 and 18 output channels:
# a partial block of 8), odd sizes, batch 1, several chunks of rows (64x64 images), strides and
# dilation and 16 channels (the input's gradient through gemm + col2im), groups, a 1x1 kernel (no
# col), groups of few channels and a first layer (the NCHW kernels), an empty batch, depthwise
# and groups of 12-16 output channels
CASES = [
    ((2, 32, 9, 11), (64, 32, 3, 3), 1, 1, 1, 1),
    ((1, 40, 7, 9), (12, 40, 3, 3), 1, 1, 1, 1),
    ((3, 20, 6, 5), (9, 20, 3, 2), (2, 1), (1, 0), (1, 2), 1),
    ((2, 48, 9, 8), (48, 24, 3, 3), 2, 2, 2, 2),
    ((1, 16, 64, 64), (16, 16, 5, 5), 1, 2, 1, 1),
    ((2, 64, 4, 4), (32, 32, 3, 3), 1, 0, 1, 2),
    ((2, 32, 7, 7), (8, 8, 3, 3), 1, 1, 1, 4),
    ((2, 33, 5, 7), (17, 33, 1, 1), 1, 0, 1, 1),
    ((2, 32, 6, 6), (16, 32, 1, 1), 2, 0, 1, 1),
    ((4, 3, 10, 10), (16, 3, 3, 3), 1, 1, 1, 1),
    ((3, 3, 11, 10), (32, 3, 3, 3), 2, 1, 1, 1),
    ((2, 8, 7, 6), (12, 4, 3, 3), 1, 1, 1, 2),
    ((0, 16, 5, 5), (8, 16, 3, 3), 1, 1, 1, 1),
    # depthwise (cpu/conv_depthwise.c): 32 channels (two vectors), 20 (a last vector overlapping
    # the one before) with stride 2 (the input's gradient gathered), 48 (three vectors) with
    # dilation, padding beyond the kernel's reach, 16 with no padding; a channel multiplier of 2
    # (the NCHW kernels)
    ((2, 32, 9, 11), (32, 1, 3, 3), 1, 1, 1, 32),
    ((2, 20, 7, 8), (20, 1, 3, 3), 2, 1, 1, 20),
    ((1, 48, 10, 9), (48, 1, 5, 3), (1, 2), (2, 1), (2, 1), 48),
    ((2, 24, 6, 5), (24, 1, 3, 3), 1, 3, 1, 24),
    ((3, 16, 5, 5), (16, 1, 3, 3), 1, 0, 1, 16),
    ((2, 16, 6, 6), (32, 1, 3, 3), 1, 1, 1, 16),
    # groups of 16 and 12 output channels (one vector of the register kernel)
    ((2, 64, 7, 9), (64, 16, 3, 3), 1, 1, 1, 4),
    ((2, 24, 6, 7), (24, 12, 3, 3), (2, 1), 1, 1, 2),
]


def run(lib, make, arrays, gy, stride, pad, dil, groups):
    x, w, b = [make(a).requires_grad_(True) for a in arrays]
    y = lib.nn.functional.conv2d(x, w, b, stride, pad, dil, groups)
    gy_t = make(gy)
    gx, gw, gb = lib.autograd.grad(y, (x, w, b), gy_t)
    return y, gx, gw, gb


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
def test_conv2d_gradients_channels_last(case, dtype, threads):
    xs, ws, stride, pad, dil, groups = case
    x = RNG.standard_normal(xs).astype(dtype)
    w = RNG.standard_normal(ws).astype(dtype)
    b = RNG.standard_normal(ws[0]).astype(dtype)
    y_ref = minitorch.nn.functional.conv2d(minitorch.tensor(x), minitorch.tensor(w), None, stride, pad, dil,
                                           groups)
    gy = RNG.standard_normal(tuple(y_ref.shape)).astype(dtype)
    got = run(minitorch, lambda a: to_layout(a, "channels_last"), [x, w, b], gy, stride, pad, dil, groups)
    want = np_conv2d_grads(x.astype(np.float64), w.astype(np.float64), gy.astype(np.float64), pair(stride),
                           pair(pad), pair(dil), groups)
    tol = {"atol": 2e-4, "rtol": 2e-4} if dtype == "float32" else {"atol": 1e-10, "rtol": 1e-10}
    for name, g, r in zip(("input", "weight", "bias"), got[1:], want):
        assert g.dtype == getattr(minitorch, dtype) and tuple(g.shape) == r.shape, name
        np.testing.assert_allclose(as_numpy(g), r, err_msg=f"gradient of the {name}", **tol)
    for g in got[1:3]:
        assert g.is_contiguous(memory_format=minitorch.channels_last), g.stride()
    rows = run(minitorch, minitorch.tensor, [x, w, b], gy, stride, pad, dil, groups)  # the NCHW kernels'
    for g, r in zip(got, rows):
        np.testing.assert_allclose(as_numpy(g), as_numpy(r), **tol)
    if torch is not None:
        t = run(torch, lambda a: torch_layout(torch, a, "channels_last"), [x, w, b], gy, stride, pad, dil, groups)
        for g, r in zip(got, t):
            np.testing.assert_allclose(as_numpy(g), r.detach().numpy(), **tol)
        for g, r in zip(got[:3], t[:3]):
            assert [s for s, n in zip(g.stride(), g.shape) if n > 1 or xs[0] == 0] == \
                   [s for s, n in zip(r.stride(), r.shape) if n > 1 or xs[0] == 0], (g.stride(), r.stride())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_gradients_channels_last_nan(dtype, threads):
    """A NaN in the input reaches the weight's gradient of every tap that read it, and nothing else;
    an inf in grad_output the input's gradient where its taps reach."""
    x = RNG.standard_normal((2, 32, 8, 8)).astype(dtype)
    w = RNG.standard_normal((16, 32, 3, 3)).astype(dtype)
    x[1, 5, 3, 4] = np.nan
    gy = RNG.standard_normal((2, 16, 8, 8)).astype(dtype)
    gy[0, 7, 6, 2] = np.inf
    got = run(minitorch, lambda a: to_layout(a, "channels_last"), [x, w, np.zeros(16, dtype)], gy, 1, 1, 1, 1)
    gx, gw, _ = np_conv2d_grads(x.astype(np.float64), w.astype(np.float64), gy.astype(np.float64), (1, 1), (1, 1),
                                (1, 1), 1)
    np.testing.assert_allclose(as_numpy(got[1]), gx, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(as_numpy(got[2]), gw, atol=1e-4, rtol=1e-4)
    assert np.isnan(as_numpy(got[2])[:, 5]).all() and not np.isnan(as_numpy(got[2])[:, 6]).any()


def test_conv2d_weight_gradient_of_a_strided_channels_last_input(threads):
    """Operands that are channels-last views but not dense are laid out densely first."""
    a = RNG.standard_normal((2, 40, 9, 12)).astype(np.float32)
    w = RNG.standard_normal((16, 20, 3, 3)).astype(np.float32)

    def fn(lib, x, w):
        return lib.nn.functional.conv2d(x[:, ::2, :, 1:], w, padding=1)

    x = to_layout(a, "channels_last").requires_grad_(True)
    wt = to_layout(w, "channels_last").requires_grad_(True)
    gx, gw = minitorch.autograd.grad(fn(minitorch, x, wt).sum(), (x, wt))
    xr, wr = minitorch.tensor(a).requires_grad_(True), minitorch.tensor(w).requires_grad_(True)
    rx, rw = minitorch.autograd.grad(fn(minitorch, xr, wr).sum(), (xr, wr))
    np.testing.assert_allclose(as_numpy(gx), as_numpy(rx), atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(as_numpy(gw), as_numpy(rw), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("x_layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("w_layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("xs,ws,groups", [((0, 3, 5, 5), (4, 3, 3, 3), 1), ((0, 4, 6, 5), (6, 2, 3, 1), 2)])
def test_conv2d_of_an_empty_batch_lays_out_as_torch(xs, ws, groups, x_layout, w_layout, dtype):
    """PyTorch's empty batch: a row-major output whatever the operands' layout, and zero gradients
    laid out as the input and the weight each (not in the convolution's channels-last format)."""
    arrays = [RNG.standard_normal(xs).astype(dtype), RNG.standard_normal(ws).astype(dtype),
              RNG.standard_normal(ws[0]).astype(dtype)]

    def go(lib):
        def make(a, lay):  # empty() states the strides (PyTorch's tensor() of no element has all 0)
            fmt = lib.channels_last if lay == "channels_last" else lib.contiguous_format
            return lib.empty(a.shape, dtype=getattr(lib, dtype), memory_format=fmt).copy_(lib.tensor(a))

        x, w, b = [make(a, lay).requires_grad_(True) for a, lay in zip(arrays, (x_layout, w_layout, "contiguous"))]
        y = lib.nn.functional.conv2d(x, w, b, 1, 1, 1, groups)
        return (y, *lib.autograd.grad(y.sum(), (x, w, b)))

    got = go(minitorch)
    cl = minitorch.channels_last
    assert got[0].shape[0] == 0 and got[0].is_contiguous() and not got[0].is_contiguous(memory_format=cl)
    for g, a, lay in zip(got[1:3], arrays, (x_layout, w_layout)):
        assert g.is_contiguous(memory_format=cl) == (lay == "channels_last"), g.stride()
        np.testing.assert_array_equal(as_numpy(g), np.zeros_like(a))
    np.testing.assert_array_equal(as_numpy(got[3]), np.zeros(ws[0]))
    if torch is not None:
        want = go(torch)
        for g, r in zip(got, want):
            assert g.stride() == r.stride() and tuple(g.shape) == tuple(r.shape), (g.stride(), r.stride())
