"""conv2d's im2col + gemm path with the images split among the threads (cpu/conv.c,
images_apart, issue 21): where more than one thread runs and the images split evenly, each
thread takes its share with its own col and runs its gemms with BLAS at one thread. Against
PyTorch in float64 on the same inputs, at 1 and 2 threads: a 1x1 kernel (the image its own col),
strided deep layers (a whole image's col), a deep layer on small planes (chunks of images through
one gemm), groups, dilation, float64 and the integer loops, channels-last results, bias, odd
batches (each image split as before) and an empty one; and the calls it makes: one gemm an image
at two threads, where the direct kernel ran on a strided deep layer before."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(2102)

# (input, weight, stride, padding, dilation, groups)
CASES = [
    ((4, 64, 9, 9), (24, 64, 1, 1), 1, 0, 1, 1),  # 1x1: the image is its own col
    ((4, 40, 20, 20), (16, 40, 3, 3), 2, 1, 1, 1),  # 360 taps, stride 2: a deep layer, its whole col
    ((6, 30, 6, 6), (20, 30, 3, 3), 1, 1, 1, 1),  # 270 taps on 36 pixels: chunks of images, one gemm each
    ((4, 40, 13, 11), (12, 20, 3, 3), 1, 2, 2, 2),  # groups and dilation: blocks of rows
    ((3, 40, 20, 20), (16, 40, 3, 3), 2, 1, 1, 1),  # 3 images: each image split between the threads
    ((2, 300, 5, 7), (8, 300, 3, 3), (2, 1), (0, 1), 1, 1),  # one image a thread
]


def data(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def conv64(x, w, b, stride, padding, dilation, groups):
    t = lambda a: None if a is None else torch.tensor(a, dtype=torch.float64)
    return torch.nn.functional.conv2d(t(x), t(w), t(b), stride, padding, dilation, groups).numpy()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_images_apart_forward(case, dtype, layout, threads):
    xs, ws, stride, padding, dilation, groups = case
    x, w, b = data(*xs, dtype=dtype), data(*ws, dtype=dtype), data(ws[0], dtype=dtype)
    xm, wm = minitorch.tensor(x), minitorch.tensor(w)
    if layout == "channels_last":
        xm, wm = (t.contiguous(memory_format=minitorch.channels_last) for t in (xm, wm))
    got = minitorch.nn.functional.conv2d(xm, wm, minitorch.tensor(b)[::1], stride, padding, dilation, groups)
    assert got.dtype == xm.dtype and got.is_contiguous(
        memory_format=minitorch.channels_last if layout == "channels_last" else minitorch.contiguous_format)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(got.numpy(), conv64(x, w, b, stride, padding, dilation, groups), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [CASES[0], CASES[1], CASES[3]])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_images_apart_integers(case, dtype, threads):
    xs, ws, stride, padding, dilation, groups = case
    if dtype == np.int32 and dilation > 1:
        pytest.skip("PyTorch has no dilated int32 kernel (refused as it does)")
    x, w = RNG.integers(-3, 4, xs).astype(dtype), RNG.integers(-3, 4, ws).astype(dtype)
    got = minitorch.nn.functional.conv2d(minitorch.tensor(x), minitorch.tensor(w), None, stride, padding, dilation,
                                         groups)
    ref = conv64(x.astype(np.float64), w.astype(np.float64), None, stride, padding, dilation, groups)
    assert got.dtype == minitorch.tensor(x).dtype
    np.testing.assert_array_equal(got.numpy(), ref.astype(dtype))


def test_images_apart_non_dense_and_empty(threads):
    x, w = data(4, 80, 10, 10), data(16, 40, 3, 3)
    got = minitorch.nn.functional.conv2d(minitorch.tensor(x)[:, ::2], minitorch.tensor(w), None, 2, 1)
    np.testing.assert_allclose(got.numpy(), conv64(x[:, ::2], w, None, 2, 1, 1, 1), rtol=1e-4, atol=1e-4)
    empty = minitorch.nn.functional.conv2d(minitorch.zeros(0, 40, 10, 10), minitorch.tensor(w), None, 2, 1)
    assert tuple(empty.shape) == (0, 16, 5, 5)


@pytest.mark.parametrize("n,nthreads,calls", [
    (4, 2, 4),  # apart: one gemm an image
    (4, 1, 4),  # one thread: the same gemms
    (3, 2, 0),  # 3 images on 2 threads: each image split, by the direct kernel
])
def test_images_apart_path(n, nthreads, calls):
    from minitorch._journey import record
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(nthreads)
    try:
        x, w = minitorch.tensor(data(n, 64, 24, 24)), minitorch.tensor(data(32, 64, 3, 3))
        _, events = record(minitorch.nn.functional.conv2d, x, w, None, 2, 1)
    finally:
        minitorch.set_num_threads(before)
    assert [e.label for e in events if e.layer == "Library"] == ["Library::cblas_sgemm"] * calls


@pytest.mark.parametrize("case", [
    ((4, 40, 20, 20), (16, 40, 3, 3), 2, 1, 1, 1),  # strided: the input's gradient by gemm + col2im
    ((4, 64, 9, 9), (24, 64, 1, 1), 2, 0, 1, 1),  # a strided 1x1
    ((4, 40, 13, 11), (12, 20, 3, 3), 2, 2, 2, 2),  # groups, dilation
    ((3, 40, 20, 20), (16, 40, 3, 3), 2, 1, 1, 1),  # 3 images: each image split
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_images_apart_input_gradient(case, dtype, threads):
    xs, ws, stride, padding, dilation, groups = case
    x, w = data(*xs, dtype=dtype), data(*ws, dtype=dtype)
    xm = minitorch.tensor(x, requires_grad=True)
    y = minitorch.nn.functional.conv2d(xm, minitorch.tensor(w), None, stride, padding, dilation, groups)
    g = data(*y.shape, dtype=dtype)
    y.backward(minitorch.tensor(g))
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    yt = torch.nn.functional.conv2d(xt, torch.tensor(w, dtype=torch.float64), None, stride, padding, dilation, groups)
    yt.backward(torch.tensor(g, dtype=torch.float64))
    tol = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("n,nthreads", [(4, 2), (4, 1), (3, 2)])
def test_images_apart_input_gradient_path(n, nthreads):
    # one gemm an image whichever way the images go (each split by OpenBLAS, or a thread's own)
    from minitorch._journey import record
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(nthreads)
    try:
        g, w = minitorch.tensor(data(n, 32, 12, 12)), minitorch.tensor(data(32, 64, 3, 3))
        got, events = record(minitorch._C.convolution_backward_input, g, w, [n, 64, 24, 24], 2, 1, 1, 1)
    finally:
        minitorch.set_num_threads(before)
    assert [e.label for e in events if e.layer == "Library"] == ["Library::cblas_sgemm"] * n
    assert tuple(got.shape) == (n, 64, 24, 24)
