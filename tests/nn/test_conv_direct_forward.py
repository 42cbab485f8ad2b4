"""The direct float32 forward (cpu/conv_direct.c, issue 21) against NumPy in float64: few taps
(the first layers: 1 and 3 input channels, 3x3 to 7x7, the ResNet stem's 7x7/2), width strides 2
and 3 with paddings below, equal to and above the stride (pad_input gathers each phase of a strided
row), dilation, odd widths, output channels and rows that leave a register block part empty,
one output row (conv1d, cut into pieces), bias, channels-last results, at 1 and 2 threads."""
import numpy as np
import pytest

import minitorch

RNG = np.random.default_rng(2121)

# (input, weight, stride, padding, dilation)
CASES = [
    ((2, 3, 45, 45), (64, 3, 7, 7), 2, 3, 1),  # the ResNet stem's shape, smaller
    ((2, 3, 33, 31), (13, 3, 7, 7), 2, 3, 1),  # odd widths, 13 channels: a part-empty block
    ((2, 1, 29, 37), (8, 1, 3, 3), 2, 0, 1),  # no padding
    ((2, 2, 30, 41), (10, 2, 5, 5), 3, 4, 1),  # stride 3, padding above it
    ((2, 3, 26, 26), (9, 3, 3, 3), (1, 3), (2, 1), 1),  # width stride 3 only
    ((2, 3, 40, 40), (24, 3, 3, 3), 2, 2, 2),  # dilation with a stride
    ((3, 3, 32, 32), (64, 3, 3, 3), 1, 1, 1),  # CIFAR's first layer
    ((2, 4, 20, 50), (3, 4, 3, 3), 1, 1, 1),  # 3 output channels: blocks of 4
    ((2, 4, 11, 11), (5, 4, 3, 3), 1, 1, 1),  # rows of 11: no whole vector
    ((2, 1, 13, 7), (8, 1, 3, 3), 2, 3, 1),  # rows of 4 outputs or fewer: two rows a vector
]

# conv1d: (input, weight, stride, padding)
CASES_1D = [
    ((2, 16, 101), (24, 16, 3), 1, 1),
    ((2, 8, 203), (16, 8, 7), 2, 3),
    ((2, 4, 64), (5, 4, 9), 3, 5),
]


def data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def pair(v):
    return (v, v) if isinstance(v, int) else v


def conv_ref(x, w, b, stride, padding, dilation):
    """float64 conv2d of (N, C, H, W) by (OC, C, KH, KW): a sum over taps of strided slices."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    kh, kw = w.shape[2:]
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], w.shape[0], oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j].astype(np.float64))
    return out if b is None else out + b.astype(np.float64)[None, :, None, None]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_direct_forward(case, bias, layout, threads):
    xs, ws, stride, padding, dilation = case
    x, w = data(*xs), data(*ws)
    b = data(ws[0]) if bias else None
    xm, wm = minitorch.tensor(x), minitorch.tensor(w)
    if layout == "channels_last":
        xm = xm.contiguous(memory_format=minitorch.channels_last)
    got = minitorch.nn.functional.conv2d(xm, wm, None if b is None else minitorch.tensor(b), stride, padding,
                                         dilation)
    want = conv_ref(x, w, b, stride, padding, dilation)
    assert got.dtype == minitorch.float32 and tuple(got.shape) == want.shape
    fmt = minitorch.channels_last if layout == "channels_last" else minitorch.contiguous_format
    assert got.is_contiguous(memory_format=fmt) or xs[1] == 1  # one channel: either layout
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", CASES_1D)
def test_direct_forward_1d(case, threads):
    xs, ws, stride, padding = case
    x, w, b = data(*xs), data(*ws), data(ws[0])
    got = minitorch.nn.functional.conv1d(minitorch.tensor(x), minitorch.tensor(w), minitorch.tensor(b), stride,
                                         padding)
    want = conv_ref(x[:, :, None], w[:, :, None], b, (1, stride), (0, padding), 1)[:, :, 0]
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_direct_forward_non_finite(threads):
    """An inf in the input reaches exactly the outputs whose taps read it (no padding lane of a
    strided phase picks it up)."""
    x, w = data(1, 3, 23, 23), np.abs(data(8, 3, 7, 7)) + 0.1
    x[0, 1, 10, 11] = np.inf
    got = minitorch.nn.functional.conv2d(minitorch.tensor(x), minitorch.tensor(w), None, 2, 3).numpy()
    want = conv_ref(np.where(np.isinf(x), 0, x), w, None, 2, 3, 1)
    reads = conv_ref((np.isinf(x)).astype(np.float32), np.ones_like(w), None, 2, 3, 1) > 0
    assert np.all(np.isposinf(got[reads])) and reads.any()
    np.testing.assert_allclose(got[~reads], want[~reads], rtol=1e-4, atol=1e-4)
