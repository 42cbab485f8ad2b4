"""Depthwise conv2d's gradients on channels-last float32 (cpu/conv_depthwise.c, issue 21): the
input's gradient with strides, each output pixel's products added into the input pixels its taps
read (a last vector of channels that overlaps the one before adds its own lanes only), and the
weight's, an item a kernel row of 3 or 5 taps and a block of 1, 2 or 4 vectors of channels (other
kernel widths a tap an item); and grouped convolutions of 2-11 output channels a group on
channels-last tensors, which the NCHW kernels take after a copy into NCHW (copy.c's vector
transpose). Values and gradients of input, weight and bias against PyTorch's: odd sizes, strides,
padding (beyond the kernel's reach too), dilation, widths that the unrolled pixels fill and not,
a strided (non-dense) input, 1 and 2 threads."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch

RNG = np.random.default_rng(2121)


def data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# (input, weight, stride, padding, dilation, groups)
DEPTHWISE = [
    ((2, 64, 13, 11), (64, 1, 3, 3), 2, 1, 1, 64),  # 4 vectors a block
    ((1, 64, 9, 40), (64, 1, 3, 3), 2, 1, 1, 64),  # wide rows: the unrolled pixels
    ((2, 32, 12, 37), (32, 1, 3, 3), (2, 1), (1, 2), (1, 2), 32),  # 2 vectors, width dilation
    ((2, 16, 11, 23), (16, 1, 5, 5), 2, 2, 1, 16),  # 5 taps a row, 1 vector
    ((1, 20, 9, 21), (20, 1, 3, 5), 2, (1, 2), 1, 20),  # a last vector overlapping
    ((1, 48, 10, 19), (48, 1, 5, 3), (2, 3), 1, (2, 1), 48),  # 3 vectors (blocks of 1)
    ((2, 24, 9, 20), (24, 1, 3, 3), 2, 3, 1, 24),  # padding beyond the kernel's reach
    ((2, 16, 13, 17), (16, 1, 7, 7), 2, 3, 1, 16),  # 7 taps a row: a tap an item
    ((1, 32, 5, 3), (32, 1, 3, 3), 1, 1, 1, 32),  # narrower than the unrolled pixels
    ((3, 16, 8, 8), (16, 1, 3, 3), 3, 0, 1, 16),  # stride 3, no padding
]

GROUPED = [
    ((2, 64, 9, 11), (64, 8, 3, 3), 1, 1, 1, 8),
    ((2, 64, 10, 7), (64, 4, 3, 3), 2, 1, 1, 16),
    ((1, 128, 7, 9), (128, 4, 3, 3), 1, 1, 1, 32),  # ResNeXt's
    ((2, 24, 9, 9), (6, 3, 3, 3), 1, (1, 0), (1, 2), 8),
    ((1, 33, 17, 18), (22, 3, 3, 3), (2, 1), 1, 1, 11),
]


def conv(stride, pad, dil, groups):
    return lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, stride, pad, dil, groups)


@pytest.mark.parametrize("case", DEPTHWISE + GROUPED)
def test_channels_last_gradients_match_torch(case, threads):
    xs, ws, stride, pad, dil, groups = case
    same_as_torch(conv(stride, pad, dil, groups), [data(*xs), data(*ws), data(ws[0])], layout="channels_last",
                  atol=2e-4, rtol=2e-4)


@pytest.mark.parametrize("case", [DEPTHWISE[0], DEPTHWISE[4], GROUPED[1]])
def test_strided_channels_last_input(case):
    """a channels-last input that is not dense (every other column): copied into the layout first"""
    xs, ws, stride, pad, dil, groups = case
    wide = xs[:3] + (2 * xs[3],)

    def fn(m, x, w, b):
        x = x.contiguous(memory_format=m.channels_last)[..., ::2]
        return m.nn.functional.conv2d(x, w.contiguous(memory_format=m.channels_last), b, stride, pad, dil, groups)

    same_as_torch(fn, [data(*wide), data(*ws), data(ws[0])], atol=2e-4, rtol=2e-4)


def test_depthwise_weight_gradient_with_inf_outside_the_taps_reach():
    """an infinity in an input column that one tap of a row never reads leaves that tap's gradient
    finite, as PyTorch's"""
    x, w = data(1, 16, 6, 9), data(16, 1, 3, 3)
    x[:, :, :, -1] = np.inf  # column 8: with stride 2 and padding 1, tap kw = 0 never reads it
    got = []
    for lib in (minitorch,) + ((pytest.importorskip("torch"),)):
        xt = lib.tensor(x).contiguous(memory_format=lib.channels_last)
        wt = lib.tensor(w).contiguous(memory_format=lib.channels_last).requires_grad_(True)
        y = lib.nn.functional.conv2d(xt, wt, None, 2, 1, 1, 16)
        (gw,) = lib.autograd.grad(y.sum(), wt)
        got.append(np.asarray(gw.detach().numpy()))
    np.testing.assert_array_equal(np.isfinite(got[0]), np.isfinite(got[1]))
    finite = np.isfinite(got[1])
    np.testing.assert_allclose(got[0][finite], got[1][finite], rtol=1e-4, atol=1e-4)
