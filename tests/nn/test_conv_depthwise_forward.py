"""Depthwise conv2d's forward on channels-last float32 (cpu/conv_depthwise.c, issue 21): the output
pixels whose every tap reads inside the row go in strips of unrolled pixels with no test, a last
strip overlapping the one before it, the pixels at the row's edges one at a time, and rows with
fewer inside pixels than a strip all tested. Against PyTorch in float64 on the same float32
inputs: strips of 6, 12 and 24 pixels (4, 2 and 1 vectors of channels), stride 1 and 2, no
padding, padding beyond the kernel's reach, dilation, a last vector of channels overlapping the
one before, narrow rows, bias, a non-dense input, 1 and 2 threads; and the gradients."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch

RNG = np.random.default_rng(2122)

# (input, weight, stride, padding, dilation)
CASES = [
    ((2, 32, 6, 56), (32, 1, 3, 3), 1, 1, 1),  # MobileNet's rows: 12-pixel strips, last overlapping
    ((1, 64, 7, 29), (64, 1, 3, 3), 2, 1, 1),  # 6-pixel strips, stride 2
    ((2, 16, 5, 40), (16, 1, 3, 3), 1, 0, 1),  # 24-pixel strips, no padding (no edge pixels)
    ((1, 20, 4, 30), (20, 1, 3, 5), 1, (1, 2), (1, 2)),  # overlapping channel vector, dilation
    ((2, 32, 5, 33), (32, 1, 3, 3), (1, 2), 3, 1),  # padding beyond the kernel's reach
    ((1, 48, 3, 10), (48, 1, 3, 3), 1, 1, 1),  # fewer inside pixels than a strip: all tested
    ((1, 64, 9, 61), (64, 1, 5, 5), 1, 2, 1),  # 5x5
]


def data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_forward_matches_torch_float64(case, bias, threads):
    torch = pytest.importorskip("torch")
    xs, ws, stride, pad, dil = case
    x, w, b = data(*xs), data(*ws), data(ws[0]) if bias else None
    got = minitorch.nn.functional.conv2d(
        minitorch.tensor(x).contiguous(memory_format=minitorch.channels_last),
        minitorch.tensor(w).contiguous(memory_format=minitorch.channels_last),
        None if b is None else minitorch.tensor(b), stride, pad, dil, xs[1])
    want = torch.nn.functional.conv2d(torch.tensor(x, dtype=torch.float64), torch.tensor(w, dtype=torch.float64),
                                      None if b is None else torch.tensor(b, dtype=torch.float64), stride, pad,
                                      dil, xs[1])
    assert got.is_contiguous(memory_format=minitorch.channels_last)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[3]])
def test_gradients_and_a_strided_input(case):
    xs, ws, stride, pad, dil = case
    wide = xs[:3] + (2 * xs[3],)

    def fn(m, x, w, b):
        x = x.contiguous(memory_format=m.channels_last)[..., ::2]
        return m.nn.functional.conv2d(x, w.contiguous(memory_format=m.channels_last), b, stride, pad, dil, xs[1])

    same_as_torch(fn, [data(*wide), data(*ws), data(ws[0])], atol=2e-4, rtol=2e-4)
