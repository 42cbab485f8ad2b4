"""The weight's gradient of conv2d by im2col + gemm (cpu/conv_backward.c's weight_columns, issue 21):
the deep strided layers, narrow planes and 1x1 kernels the direct kernel leaves to the gemm. At
two threads each takes its input channels, so its columns of the gradient, over every image: its
rows of col, its own copy of each chunk's grad_output, its gemms on its thread. Against PyTorch in
float64, at 1 and 2 threads: odd batches, a split inside a group, several chunks of images with a
partial last, a 1x1 kernel whose images are their own col (a chunk of several, and of one), float64;
and that the gemm path is the one taken."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(2102)

# (input, weight, stride, padding, groups)
CASES = [
    ((5, 32, 14, 14), (48, 32, 3, 3), 2, 1, 1),  # 288 taps with a stride; 5 images
    ((8, 60, 14, 14), (72, 20, 3, 3), 2, 1, 3),  # three groups of 20 channels: two threads split the second
    ((7, 64, 56, 56), (64, 64, 3, 3), 2, 1, 1),  # chunks of 2 images, the last of 1
    ((6, 128, 10, 10), (48, 128, 1, 1), 1, 0, 1),  # 1x1: the images are their own col, one chunk of 6
    ((2, 128, 64, 64), (32, 128, 1, 1), 1, 0, 1),  # 1x1, chunks of one image: read as it lies
    ((3, 40, 7, 7), (50, 40, 3, 3), 1, 1, 1),  # a 7x7 plane
]


def data(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def reference(g, x, ws, stride, padding, groups):
    t = lambda a: torch.tensor(a, dtype=torch.float64)
    return torch.ops.aten.convolution_backward(
        t(g), t(x), t(np.zeros(ws)), None, [stride] * 2, [padding] * 2, [1, 1], False, [0, 0], groups,
        [False, True, False])[1].numpy()


def run(case, dtype=np.float32):
    xs, ws, stride, padding, groups = case
    x = data(*xs, dtype=dtype)
    oh = (xs[2] + 2 * padding - ws[2]) // stride + 1
    g = data(xs[0], ws[0], oh, oh, dtype=dtype)
    got = minitorch._C.convolution_backward_weight(minitorch.tensor(g), minitorch.tensor(x), list(ws), stride,
                                                   padding, 1, groups)
    ref = reference(g, x, ws, stride, padding, groups)
    assert tuple(got.shape) == tuple(ws) and got.numpy().dtype == dtype
    return got.numpy(), ref


@pytest.mark.parametrize("case", CASES)
def test_weight_gradient_by_gemm(case, threads):
    got, ref = run(case)
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())


@pytest.mark.parametrize("case", CASES[:2])
def test_weight_gradient_by_gemm_float64(case, threads):
    got, ref = run(case, np.float64)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("case", CASES[:1] + CASES[3:4])
def test_weight_gradient_runs_gemm(case):
    from minitorch._journey import record
    xs, ws, stride, padding, groups = case
    oh = (xs[2] + 2 * padding - ws[2]) // stride + 1
    x, g = minitorch.tensor(data(*xs)), minitorch.tensor(data(xs[0], ws[0], oh, oh))
    _, events = record(minitorch._C.convolution_backward_weight, g, x, list(ws), stride, padding, 1, groups)
    assert "Library::cblas_sgemm" in [e.label for e in events if e.layer == "Library"]


def test_weight_gradient_by_gemm_last_chunk_shorter(threads):
    # chunks of 2 images, the last of 1: a part on the last chunk must not write its rows of col
    # over those of a part still on a longer one (col's rows lie nb images apart in every chunk);
    # repeated, as the parts' timing decides whether they meet
    xs, ws = (7, 64, 56, 56), (64, 64, 3, 3)
    x, g = data(*xs), data(7, 64, 28, 28)
    ref = reference(g, x, ws, 2, 1, 1)
    for _ in range(8):
        got = minitorch._C.convolution_backward_weight(minitorch.tensor(g), minitorch.tensor(x), list(ws), 2, 1, 1, 1)
        np.testing.assert_allclose(got.numpy(), ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())
