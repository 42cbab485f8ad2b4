"""conv3d on channels-last-3d tensors (issue 21): the CPU writes NDHWC as it is stated (cpu/
conv_nhwc.c's register kernel, reading NDHWC as it lies, where a group has 12-16 or 24 and more
output channels; else conv_direct.c's, from an NCDHW copy), and
its gradients, whose input gradient with unit strides is itself such a conv3d. Values and the gradients of input, weight and bias must equal NumPy's float64
ones and PyTorch's, keep PyTorch's strides (channels-last-3d where oneDNN runs), and equal minitorch's own row-major
results; strides, padding, dilation, groups, odd sizes, partial blocks of pixels and channels, a
strided (non-dense) input, an empty batch, at 1 and 2 threads. Fresh memory is poisoned
(tests/conftest.py), so an element a kernel never wrote fails."""
import itertools

import numpy as np
import pytest

import minitorch
from tests.helpers import as_numpy, to_layout, torch_layout

try:
    import torch
except ImportError:  # the sanitizer run: the NumPy checks still run
    torch = None

RNG = np.random.default_rng(2133)


def np_conv_grads(x, w, b, gy, stride, pad, dil, groups):
    """float64 output and gradients (input, weight, bias) of a 3-D convolution x (N, C, D, H, W) * w
    (OC, C/groups, KD, KH, KW) + b (OC) for output gradient gy (its shape the output's); stride, pad, dil per
    dim."""
    n, c = x.shape[:2]
    oc, cg = w.shape[:2]
    og, out_sp = oc // groups, gy.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in pad))
    gyg = gy.reshape((n, groups, og) + out_sp)
    wg = w.reshape((groups, og, cg) + w.shape[2:])
    y, gxp, gw = np.zeros((n, groups, og) + out_sp), np.zeros_like(xp), np.zeros_like(wg)
    for tap in itertools.product(*(range(k) for k in w.shape[2:])):
        sl = tuple(slice(t * d, t * d + s * (o - 1) + 1, s) for t, d, s, o in zip(tap, dil, stride, out_sp))
        part = xp[(slice(None), slice(None)) + sl].reshape((n, groups, cg) + out_sp)
        wt = wg[(Ellipsis,) + tap]
        y += np.einsum("ngcdhw,goc->ngodhw", part, wt)
        gw[(Ellipsis,) + tap] = np.einsum("ngcdhw,ngodhw->goc", part, gyg)
        gxp[(slice(None), slice(None)) + sl] += np.einsum("ngodhw,goc->ngcdhw", gyg, wt).reshape((n, c) + out_sp)
    gx = gxp[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(pad, x.shape[2:]))]
    return y.reshape((n, oc) + out_sp) + b.reshape(oc, 1, 1, 1), gx, gw.reshape(w.shape), gy.sum(axis=(0, 2, 3, 4))


def triple(v):
    return v if isinstance(v, tuple) else (v,) * 3


# (input shape, weight shape, stride, padding, dilation, groups): few taps (the direct kernel,
# writing NDHWC) with 16, 32, 40 and 4 output channels, odd sizes, strides, padding, dilation,
# groups, a 1x1x1 kernel (the NDHWC kernel), an empty batch
CASES = [
    ((2, 4, 6, 7, 5), (16, 4, 3, 3, 3), 1, 1, 1, 1),
    ((1, 8, 5, 6, 9), (32, 8, 3, 2, 3), (1, 2, 1), (1, 0, 2), (2, 1, 1), 1),
    ((2, 6, 5, 5, 6), (40, 3, 2, 3, 3), (2, 1, 2), 1, 1, 2),
    ((2, 16, 4, 5, 6), (4, 16, 3, 3, 3), 1, 1, 1, 1),
    ((3, 24, 3, 4, 5), (24, 12, 3, 1, 3), 1, (1, 0, 1), (1, 1, 2), 2),
    ((2, 5, 4, 3, 6), (16, 5, 1, 1, 1), 1, 0, 1, 1),
    ((0, 4, 4, 4, 4), (16, 4, 3, 3, 3), 1, 1, 1, 1),
    # many taps on rows that leave the direct kernel's vectors part empty: the NDHWC kernel, with
    # one vector (and short runs at the rows' edges copied: 12 channels), two, and groups
    ((2, 12, 4, 5, 20), (16, 12, 3, 3, 3), 1, 1, 1, 1),
    ((2, 32, 4, 5, 20), (16, 32, 3, 3, 3), (1, 2, 1), (0, 1, 2), 1, 1),
    ((1, 40, 3, 4, 9), (48, 20, 3, 2, 3), 1, 1, (1, 1, 2), 2),
]


def run(lib, make, arrays, gy, stride, pad, dil, groups):
    x, w, b = [make(a).requires_grad_(True) for a in arrays]
    y = lib.nn.functional.conv3d(x, w, b, stride, pad, dil, groups)
    return (y,) + tuple(lib.autograd.grad(y, (x, w, b), make(gy)))


@pytest.mark.parametrize("case", CASES)
def test_conv3d_channels_last_3d(case, threads):
    xs, ws, stride, pad, dil, groups = case
    x, w, b = [RNG.standard_normal(s).astype(np.float32) for s in (xs, ws, ws[:1])]
    shape = tuple(minitorch.nn.functional.conv3d(minitorch.tensor(x), minitorch.tensor(w), None, stride, pad, dil,
                                                 groups).shape)
    gy = RNG.standard_normal(shape).astype(np.float32)
    got = run(minitorch, lambda a: to_layout(a, "channels_last"), [x, w, b], gy, stride, pad, dil, groups)
    want = np_conv_grads(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), gy.astype(np.float64),
                         triple(stride), triple(pad), triple(dil), groups)
    for name, g, r in zip(("output", "input", "weight", "bias"), got, want):
        assert g.dtype == minitorch.float32 and tuple(g.shape) == r.shape, name
        np.testing.assert_allclose(as_numpy(g), r, atol=2e-4, rtol=2e-4, err_msg=name)
    rows = run(minitorch, minitorch.tensor, [x, w, b], gy, stride, pad, dil, groups)  # row-major kernels
    for g, r in zip(got, rows):
        np.testing.assert_allclose(as_numpy(g), as_numpy(r), atol=2e-4, rtol=2e-4)
    if torch is not None:
        t = run(torch, lambda a: torch_layout(torch, a, "channels_last"), [x, w, b], gy, stride, pad, dil, groups)
        for g, r in zip(got, t):
            np.testing.assert_allclose(as_numpy(g), r.detach().numpy(), atol=2e-4, rtol=2e-4)
        # laid out as PyTorch's backend lays them out: oneDNN's channels-last-3d, the slow 3-D
        # kernels' row-major (dilated, or one small image; ops/conv_checks.c's mt_conv_layouts)
        for g, r in zip(got[:3], t[:3]):
            assert tuple(g.stride()) == tuple(r.stride()), (g.stride(), r.stride())


def test_conv3d_channels_last_3d_of_a_strided_input(threads):
    """A channels-last-3d view that is not dense is laid out densely first; NaN reaches only the
    outputs whose windows read it."""
    a = RNG.standard_normal((2, 8, 5, 6, 10)).astype(np.float32)
    a[1, 2, 2, 3, 4] = np.nan
    w = RNG.standard_normal((16, 4, 3, 3, 3)).astype(np.float32)
    x = to_layout(a, "channels_last")[:, ::2, :, :, ::2]
    y = minitorch.nn.functional.conv3d(x, to_layout(w, "channels_last"), padding=1)
    want = np_conv_grads(a[:, ::2, :, :, ::2].astype(np.float64), w.astype(np.float64), np.zeros(16),
                         np.zeros(tuple(y.shape)), (1,) * 3, (1,) * 3, (1,) * 3, 1)[0]
    np.testing.assert_allclose(as_numpy(y), want, atol=2e-4, rtol=2e-4)
    assert np.isnan(as_numpy(y)[1, :, 1:4, 2:5, 1:4]).all() and np.isnan(as_numpy(y)).sum() == 16 * 27


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("batch", [1, 2])
@pytest.mark.parametrize("weight_cl", [False, True])
def test_conv3d_layout_of_small_dtypes_as_torch(dtype, batch, weight_cl):
    """PyTorch picks the backend, and so the result's layout, by the stored dtype (oneDNN for every
    bfloat16 convolution where the CPU has its instructions, and for float16 where it has
    AVX512-FP16; else the slow row-major 3-D kernels), though minitorch computes both in float32:
    one small image's bfloat16 result is channels-last-3d, a float16 batch's row-major on a CPU
    without AVX512-FP16 and channels-last-3d on one with it."""
    if torch is None:
        pytest.skip("compares with PyTorch")
    strides = []
    for lib in (minitorch, torch):
        dt = getattr(lib, dtype)
        x = lib.ones(batch, 2, 3, 4, 5, dtype=dt).to(memory_format=lib.channels_last_3d)
        w = lib.ones(3, 2, 2, 1, 2, dtype=dt)
        if weight_cl:
            w = w.to(memory_format=lib.channels_last_3d)
        y = lib.nn.functional.conv3d(x, w, stride=(1, 2, 1))
        strides.append((y.stride(), y.float().sum().item()))
    assert strides[0] == strides[1]
