"""Row-major (NCHW) conv2d paths of issue 21: the NCHW depthwise kernel (cpu/conv_depthwise.c:
groups = C, OC a multiple of C; a padded scratch plane and vectors of 64 output columns with unit
width stride, the simple tap-by-tap rows otherwise) and deep layers (cpu/conv.c: more than 256 taps
on a strided or small output plane go through im2col + gemm, small planes' images side by side
in one gemm). Against PyTorch in float64 on the same inputs, at 1 and 2 threads: odd sizes,
stride 2 in either direction, dilation, padding beyond the kernel's reach, a depth multiplier of
2 and 3, rows wider than one block of columns and narrower than a vector, bias, non-dense
inputs and weights, float64, channels-last inputs; and the gradients."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch

RNG = np.random.default_rng(2126)

# depthwise (input, out channels, kernel, stride, padding, dilation)
DEPTHWISE = [
    ((2, 32, 56, 56), 32, (3, 3), 1, 1, 1),  # MobileNet's: one block of 64 columns, 56 stored
    ((1, 3, 9, 11), 6, (3, 3), 2, 1, 1),  # multiplier 2, stride 2: the simple rows
    ((2, 4, 7, 130), 12, (3, 5), (2, 1), (0, 2), (1, 2)),  # multiplier 3, 3 blocks of columns, dilation
    ((1, 5, 6, 6), 5, (2, 2), 1, 0, 1),  # an even kernel, no padding, a row narrower than a vector
    ((1, 2, 5, 5), 2, (5, 5), 1, 3, 1),  # padding beyond the kernel's reach
    ((1, 3, 4, 4), 6, (3, 3), 3, 4, 2),  # every tap in the padding for some outputs
    ((2, 16, 20, 20), 16, (7, 7), 1, 3, 1),  # 7x7
    ((6, 1, 28, 28), 32, (3, 3), 1, 1, 1),  # MNIST's first layer: 32 planes from one padded copy, 2 vectors
    ((3, 2, 1, 5), 8, (1, 3), 1, (0, 1), 1),  # one row narrower than a vector: each plane's store cut
    ((2, 1, 3, 17), 4, (3, 3), 1, 1, 1),  # 17 columns: a second vector of 1, stored into the next row
    ((2, 3, 4, 33), 6, (3, 3), (2, 1), 1, (1, 2)),  # 3 vectors, row stride 2, width dilation
]

# deep layers (input, weight, stride, padding, dilation, groups)
DEEP = [
    ((3, 40, 5, 5), (24, 40, 3, 3), 1, 1, 1, 1),  # 360 taps on 5x5: three images in one gemm
    ((1, 30, 7, 7), (16, 30, 3, 3), 1, 1, 1, 1),  # one image
    ((2, 30, 11, 9), (20, 30, 3, 3), 2, 1, 1, 1),  # stride 2 on a small plane: one gemm
    ((2, 30, 20, 19), (8, 30, 3, 3), 2, 1, 1, 1),  # stride 2 on 10x10: an image a gemm on one thread
    ((2, 32, 9, 10), (16, 32, 3, 3), (1, 2), (2, 1), (2, 1), 1),  # width stride, dilation
    ((2, 60, 6, 6), (8, 30, 3, 3), 1, 1, 1, 2),  # two groups of 270 taps
    ((2, 300, 4, 4), (8, 300, 1, 1), 2, 0, 1, 1),  # a 1x1 kernel with stride 2: 300 taps
]


def data(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def conv64(x, w, b, stride, pad, dil, groups):
    torch = pytest.importorskip("torch")
    t = lambda a: None if a is None else torch.tensor(a, dtype=torch.float64)
    return torch.nn.functional.conv2d(t(x), t(w), t(b), stride, pad, dil, groups).numpy()


@pytest.mark.parametrize("case", DEPTHWISE)
@pytest.mark.parametrize("bias", [False, True])
def test_depthwise_nchw_forward(case, bias, threads):
    xs, oc, k, stride, pad, dil = case
    x, w, b = data(*xs), data(oc, 1, *k), data(oc) if bias else None
    got = minitorch.nn.functional.conv2d(minitorch.tensor(x), minitorch.tensor(w),
                                         None if b is None else minitorch.tensor(b), stride, pad, dil, xs[1])
    assert got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), conv64(x, w, b, stride, pad, dil, xs[1]), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("case", [DEPTHWISE[1], DEPTHWISE[2], DEPTHWISE[3]])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_depthwise_nchw_gradients_any_layout(case, layout):
    xs, oc, k, stride, pad, dil = case

    def fn(m, x, w, b):
        return m.nn.functional.conv2d(x, w, b, stride, pad, dil, xs[1])

    same_as_torch(fn, [data(*xs), data(oc, 1, *k), data(oc)], layout=layout, atol=2e-4, rtol=2e-4)


def test_depthwise_nchw_strided_bias_and_weight():
    x, w, b = data(2, 8, 10, 12), data(8, 1, 3, 3), data(16)
    wt = minitorch.tensor(np.ascontiguousarray(w.transpose(0, 1, 3, 2))).transpose(2, 3)  # not dense rows
    got = minitorch.nn.functional.conv2d(minitorch.tensor(x), wt, minitorch.tensor(b)[::2], 1, 1, 1, 8)
    np.testing.assert_allclose(got.numpy(), conv64(x, w, b[::2], 1, 1, 1, 8), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("case", DEEP)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_deep_layer_forward(case, dtype, threads):
    xs, ws, stride, pad, dil, groups = case
    x, w, b = data(*xs, dtype=dtype), data(*ws, dtype=dtype), data(ws[0], dtype=dtype)
    got = minitorch.nn.functional.conv2d(minitorch.tensor(x), minitorch.tensor(w), minitorch.tensor(b),
                                         stride, pad, dil, groups)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), conv64(x, w, b, stride, pad, dil, groups), atol=tol, rtol=tol)


@pytest.mark.parametrize("case", [DEEP[0], DEEP[2], DEEP[4]])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
def test_deep_layer_gradients_any_layout(case, layout):
    xs, ws, stride, pad, dil, groups = case

    def fn(m, x, w, b):
        return m.nn.functional.conv2d(x, w, b, stride, pad, dil, groups)

    same_as_torch(fn, [data(*xs), data(*ws), data(ws[0])], layout=layout, atol=3e-4, rtol=3e-4)


@pytest.mark.parametrize("xs,ws,stride,gemm", [
    ((2, 40, 7, 7), (16, 40, 3, 3), 2, True),  # 360 taps on 4x4, stride 2: a deep layer, one gemm for both images
    ((2, 40, 9, 9), (16, 40, 3, 3), 2, True),  # 360 taps, stride 2 on a small plane
    ((2, 40, 8, 8), (16, 40, 3, 3), 1, False),  # 64 pixels: the direct kernel
    ((2, 28, 7, 7), (16, 28, 3, 3), 1, False),  # 252 taps: the direct kernel
    ((2, 8, 9, 9), (16, 1, 3, 3), 1, False),  # depthwise, multiplier 2: its own kernel
])
def test_which_path(xs, ws, stride, gemm):
    from minitorch._journey import record
    x, w = minitorch.tensor(data(*xs)), minitorch.tensor(data(*ws))
    _, events = record(minitorch.nn.functional.conv2d, x, w, None, stride, 1, 1, xs[1] // ws[1])
    assert [e.label for e in events if e.layer == "Library"] == (["Library::cblas_sgemm"] if gemm else [])


@pytest.mark.parametrize("n", [2, 3])
def test_strided_deep_layer_path(n, threads):
    # a strided deep layer on 14x14: a gemm an image on one thread, and on two where the images
    # split evenly between them (conv.c's images_apart); else the direct kernel on two
    from minitorch._journey import record
    x, w = minitorch.tensor(data(n, 40, 28, 28)), minitorch.tensor(data(16, 40, 3, 3))
    _, events = record(minitorch.nn.functional.conv2d, x, w, None, 2, 1)
    gemms = n if threads == 1 or n % threads == 0 else 0
    assert [e.label for e in events if e.layer == "Library"] == ["Library::cblas_sgemm"] * gemms
