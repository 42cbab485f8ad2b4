"""conv2d by Winograd's F(2x2, 3x3) (cpu/conv_winograd.c, issue 21): row-major float32 deep layers
(more than 256 taps) with 64 output channels or more, or on small planes (under 64 output pixels),
with 3x3 taps, unit strides and dilation and one group. Against PyTorch in float64 on the same inputs, at 1 and 2 threads: odd
planes (tiles cut by the last row and column), no, one and two pixels of padding, channel and tile
counts that end in a partial vector, bias (strided too), non-dense inputs and weights, one image
and an empty batch, channels-last inputs, 64 output channels on a larger plane (chunks of tiles on
one thread), and the gradients (the input's by the same kernel, cpu/conv_backward.c); which
path such a call takes; chunks of their own on each of two threads; and the transformed weight
kept with the weight's storage, made again after every kind of change of the weight."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch

RNG = np.random.default_rng(2127)

# (input, out channels, padding)
CASES = [
    ((8, 32, 7, 7), 48, 1),  # ResNet's last stage in small: 8 images of 4x4 tiles, the last cut
    ((3, 40, 5, 5), 24, 1),  # 27 tiles: a vector and a partial one
    ((1, 29, 6, 4), 17, 0),  # 29 channels (a vector and 13 lanes), no padding, even planes
    ((2, 33, 3, 6), 5, 2),  # two pixels of padding: tiles reading only padding
    ((2, 30, 9, 4), 8, (1, 0)),  # padding in height only
    ((1, 64, 1, 1), 16, 1),  # a single pixel
    ((2, 32, 30, 27), 64, 1),  # 64 output channels on a larger plane: two chunks of tile rows on one thread
    ((3, 48, 29, 23), 64, 2),  # 624 tiles: chunks of their own on each of two threads, the last one short
]


def data(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def conv64(x, w, b, pad):
    torch = pytest.importorskip("torch")
    t = lambda a: None if a is None else torch.tensor(a, dtype=torch.float64)
    return torch.nn.functional.conv2d(t(x), t(w), t(b), 1, pad).numpy()


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("bias", [False, True])
def test_winograd_forward(case, bias, threads):
    xs, oc, pad = case
    x, w, b = data(*xs), data(oc, xs[1], 3, 3), data(oc) if bias else None
    got = minitorch.nn.functional.conv2d(minitorch.tensor(x), minitorch.tensor(w),
                                         None if b is None else minitorch.tensor(b), 1, pad)
    assert got.is_contiguous()
    np.testing.assert_allclose(got.numpy(), conv64(x, w, b, pad), atol=1e-4, rtol=1e-4)


def test_winograd_non_dense_operands():
    # an input sliced in channels, a weight transposed in its taps, every other bias element
    x, w, b = data(2, 80, 7, 7), data(24, 40, 3, 3), data(48)
    xt = minitorch.tensor(x)[:, ::2]
    wt = minitorch.tensor(np.ascontiguousarray(w.transpose(0, 1, 3, 2))).transpose(2, 3)
    got = minitorch.nn.functional.conv2d(xt, wt, minitorch.tensor(b)[::2], 1, 1)
    np.testing.assert_allclose(got.numpy(), conv64(x[:, ::2], w, b[::2], 1), atol=1e-4, rtol=1e-4)


def test_winograd_empty_batch():
    got = minitorch.nn.functional.conv2d(minitorch.zeros(0, 32, 7, 7), minitorch.tensor(data(8, 32, 3, 3)),
                                         None, 1, 1)
    assert tuple(got.shape) == (0, 8, 7, 7)


@pytest.mark.parametrize("case", [
    CASES[1], CASES[3],
    ((2, 30, 7, 7), 32, 1),  # the input's gradient too: a convolution of 32 channels on a small plane
    ((1, 64, 20, 18), 64, 2),  # and on a larger one, with padding 2 (the gradient's 0)
    ((2, 64, 27, 25), 64, 1),  # 364 tiles: each of two threads its own chunks, forward and input gradient
])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "transposed"])
def test_winograd_gradients_any_layout(case, layout, threads):
    xs, oc, pad = case

    def fn(m, x, w, b):
        return m.nn.functional.conv2d(x, w, b, 1, pad)

    same_as_torch(fn, [data(*xs), data(oc, xs[1], 3, 3), data(oc)], layout=layout, atol=3e-4, rtol=3e-4)


@pytest.mark.parametrize("xs,ws,stride,dtype,calls", [
    ((2, 40, 7, 7), (16, 40, 3, 3), 1, np.float32, ["cblas_sgemm"] * 16),  # a gemm per position of the 4x4 tile
    ((2, 40, 8, 8), (16, 40, 3, 3), 1, np.float32, []),  # 64 pixels, 16 channels out: the direct kernel
    ((1, 32, 20, 18), (64, 32, 3, 3), 1, np.float32, ["cblas_sgemm"] * 16),  # 64 channels out: one chunk
    ((2, 28, 7, 7), (16, 28, 3, 3), 1, np.float32, []),  # 252 taps: the direct kernel
    ((2, 40, 9, 9), (16, 40, 3, 3), 2, np.float32, ["cblas_sgemm"]),  # strided: im2col + one gemm
    ((2, 40, 7, 7), (16, 40, 3, 3), 1, np.float64, ["cblas_dgemm"]),  # float64: im2col + one gemm
])
def test_winograd_path(xs, ws, stride, dtype, calls):
    from minitorch._journey import record
    x, w = minitorch.tensor(data(*xs, dtype=dtype)), minitorch.tensor(data(*ws, dtype=dtype))
    _, events = record(minitorch.nn.functional.conv2d, x, w, None, stride, 1)
    assert [e.label for e in events if e.layer == "Library"] == [f"Library::{c}" for c in calls]


def test_winograd_runs_on_two_threads_on_large_planes(threads):
    # 578 tiles of 64 -> 64: more than a chunk of 128 tiles for each thread, so on two threads
    # each thread takes chunks of its own and calls its 16 gemms inside the parallel region
    # (each on the calling thread alone: a plain gemm there waited forever on its other half);
    # on one, chunks in turn. Winograd either way (im2col would make one gemm an image), and
    # the thread count stays what the caller set.
    from minitorch._journey import record
    x, w = data(2, 64, 34, 34), data(64, 64, 3, 3)
    got, events = record(minitorch.nn.functional.conv2d, minitorch.tensor(x), minitorch.tensor(w), None, 1, 1)
    labels = [e.label for e in events if e.layer == "Library"]
    assert set(labels) == {"Library::cblas_sgemm"} and len(labels) % 16 == 0 and len(labels) >= 32
    assert minitorch.get_num_threads() == threads
    np.testing.assert_allclose(got.numpy(), conv64(x, w, None, 1), atol=1e-4, rtol=1e-4)
    a, b = data(300, 200), data(200, 100)  # a product after it still splits over the threads
    np.testing.assert_allclose((minitorch.tensor(a) @ minitorch.tensor(b)).numpy(), a @ b, atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("change", ["add_", "sgd_step", "data", "copy_", "out", "view", "strides"])
def test_kept_weight_transform_follows_the_weight(change, threads):
    # The transformed weight stays with the weight's storage between calls (conv_winograd.c);
    # each kind of change of the weight must make the next call transform it again.
    x = data(2, 40, 7, 7)
    big = data(16, 80, 3, 3)
    wt = minitorch.tensor(big[:, :40].copy(), requires_grad=True)
    xt = minitorch.tensor(x)
    with minitorch.no_grad():
        first = minitorch.nn.functional.conv2d(xt, wt, None, 1, 1)
        again = minitorch.nn.functional.conv2d(xt, wt, None, 1, 1)  # from what was kept
    np.testing.assert_array_equal(again.numpy(), first.numpy())
    w = big[:, :40].copy()
    if change == "add_":
        with minitorch.no_grad():
            wt.add_(0.5)
        w = w + 0.5
    elif change == "sgd_step":
        opt = minitorch.optim.SGD([wt], lr=0.1)
        minitorch.nn.functional.conv2d(xt, wt, None, 1, 1).sum().backward()
        opt.step()
        w = wt.detach().numpy().copy()
        assert not np.allclose(w, big[:, :40])
    elif change == "data":  # a write through .data bumps another version counter than wt's
        wt.data.mul_(2.0)
        w = w * 2.0
    elif change == "copy_":
        with minitorch.no_grad():
            wt.copy_(minitorch.tensor(big[:, 40:].copy()))
        w = big[:, 40:].copy()
    elif change == "out":
        with minitorch.no_grad():
            minitorch.mul(wt, -1.0, out=wt)
        w = -w
    elif change == "strides":  # the same storage and first element, its taps transposed
        wt = wt.detach().transpose(2, 3)
        w = w.transpose(0, 1, 3, 2)
    else:  # another view of one storage, from another element on
        whole = minitorch.tensor(big)
        minitorch.nn.functional.conv2d(xt, whole[:, :40], None, 1, 1)
        wt = whole[:, 1:41]
        w = big[:, 1:41]
    with minitorch.no_grad():
        got = minitorch.nn.functional.conv2d(xt, wt, None, 1, 1)
    np.testing.assert_allclose(got.numpy(), conv64(x, w, None, 1), atol=1e-4, rtol=1e-4)
