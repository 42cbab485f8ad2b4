"""The weight's gradient of conv2d and conv3d by cpu/conv_direct.c's register kernel (issue 21):
float32, rows of outputs that fill its vectors. Work items of 4 output channels by 6 taps taken
across input channels; images split among the threads where they split evenly, else each
chunk's items. Against PyTorch in float64 on the same inputs, at 1 and 2 threads: partial
channel blocks and tap groups, rows narrower than a vector (copied and padded) and rows that end
in a partial vector (read up to their end, the lanes already summed masked off) or a whole one,
strides, dilations, groups, conv3d, several chunks of images with a partial last one, an odd
batch (items split) and an even one (images split), NaN and inf in the input, non-dense
operands, an empty batch, through autograd; and that no gemm runs. Groups of 48 output channels or
more go by channels (grad_output transposed, items of 64 channels by 6 taps): whole and partial
blocks of 64, groups, strides, conv3d, NaN and inf, and rows of any width in the vectors' lanes."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(2101)

# (input, weight, stride, padding, dilation, groups)
CASES = [
    ((4, 11, 9, 40), (7, 11, 3, 3), 1, 1, 1, 1),  # 7 channels (a partial block), 99 taps (16 groups + 3), a partial last vector
    ((3, 5, 12, 14), (9, 5, 3, 3), 1, 1, 1, 1),  # rows of 14: narrower than a vector; 3 images (items split at 2 threads)
    ((2, 8, 15, 50), (6, 4, 3, 3), (1, 2), 1, 2, 2),  # width stride 2, dilation 2, two groups: rows of 24
    ((2, 6, 10, 32), (5, 6, 3, 3), 1, 1, 1, 1),  # rows of 32: two whole vectors
    ((10, 3, 64, 64), (8, 3, 3, 3), 1, 1, 1, 1),  # chunks of 4 images, the last partial (of 2 at one thread, 1 at two)
    ((6, 16, 20, 48), (16, 16, 5, 3), 1, (2, 1), 1, 1),  # 5x3 taps, height padding 2
    ((2, 4, 7, 26), (3, 4, 2, 1), 1, 0, 1, 1),  # 2x1 taps, no padding: rows of 26
    # by channels (48 or more a group)
    ((3, 5, 9, 14), (64, 5, 3, 3), 1, 1, 1, 1),  # one whole block of 64, 45 taps (7 groups + 3), rows of 14
    ((2, 7, 6, 28), (50, 7, 3, 3), 1, 1, 1, 1),  # 50 channels: a block of 64 with 14 past the group's
    ((4, 3, 5, 16), (112, 3, 3, 3), 1, 1, 1, 1),  # two blocks, the second of 48
    ((2, 8, 9, 30), (96, 4, 3, 3), (1, 2), 1, (1, 2), 2),  # two groups of 48, width stride 2, dilation 2
    ((5, 4, 6, 13), (64, 4, 2, 3), 1, (0, 1), 1, 1),  # 5 images (items split at 2 threads), 2x3 taps
]


def data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def grad_weight64(g, x, ws, stride, padding, dilation, groups):
    t = lambda a: torch.tensor(a, dtype=torch.float64)
    nd = len(ws) - 2
    tup = lambda v: [v] * nd if isinstance(v, int) else list(v)
    return torch.ops.aten.convolution_backward(
        t(g), t(x), t(np.zeros(ws)), None, tup(stride), tup(padding), tup(dilation), False, [0] * nd, groups,
        [False, True, False])[1].numpy()


def out_shape(xs, ws, stride, padding, dilation, groups):
    conv = torch.nn.functional.conv2d if len(xs) == 4 else torch.nn.functional.conv3d
    return tuple(conv(torch.zeros(xs), torch.zeros(ws), None, stride, padding, dilation, groups).shape)


def check(g, x, ws, stride, padding, dilation, groups, got):
    ref = grad_weight64(g, x, ws, stride, padding, dilation, groups)
    assert tuple(got.shape) == tuple(ws) and got.dtype == minitorch.float32
    scale = np.abs(ref).max()
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("case", CASES)
def test_direct_weight_gradient(case, threads):
    xs, ws, stride, padding, dilation, groups = case
    x = data(*xs)
    g = data(*out_shape(xs, ws, stride, padding, dilation, groups))
    got = minitorch._C.convolution_backward_weight(minitorch.tensor(g), minitorch.tensor(x), list(ws), stride,
                                                   padding, dilation, groups)
    check(g, x, ws, stride, padding, dilation, groups, got)


@pytest.mark.parametrize("xs,ws", [((2, 3, 5, 6, 24), (4, 3, 2, 3, 3)), ((3, 4, 4, 8, 16), (6, 2, 3, 3, 3)),
                                   ((2, 2, 4, 5, 14), (56, 2, 3, 3, 3))])  # by channels
def test_direct_weight_gradient_conv3d(xs, ws, threads):
    groups = xs[1] // ws[1]
    x, g = data(*xs), data(*out_shape(xs, ws, 1, 1, 1, groups))
    got = minitorch._C.convolution_backward_weight(minitorch.tensor(g), minitorch.tensor(x), list(ws), 1, 1, 1,
                                                   groups)
    check(g, x, ws, 1, 1, 1, groups, got)


# a last vector overlapping one before; rows copied; by channels (50: 14 lanes past the group's,
# which sum inf times gpad's zeros and are dropped)
@pytest.mark.parametrize("xs,oc", [((2, 6, 9, 40), 5), ((3, 6, 9, 13), 5), ((3, 6, 9, 13), 50)])
def test_direct_weight_gradient_nan_and_inf(xs, oc, threads):
    # NaN and inf reach exactly the taps that read them at a valid output, as PyTorch's
    ws = (oc, 6, 3, 3)
    x = data(*xs)
    x[0, 1, 4, -1] = np.inf  # the last column: the first tap of a row never reads it
    x[1, 2, 0, 0] = np.nan
    x[-1, 3, 2, -2] = -np.inf
    g = data(*out_shape(xs, ws, 1, 1, 1, 1))
    got = minitorch._C.convolution_backward_weight(minitorch.tensor(g), minitorch.tensor(x), list(ws), 1, 1, 1, 1)
    ref = grad_weight64(g, x, ws, 1, 1, 1, 1)
    np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(ref))
    np.testing.assert_array_equal(np.isposinf(got.numpy()), np.isposinf(ref))
    np.testing.assert_array_equal(np.isneginf(got.numpy()), np.isneginf(ref))
    fin = np.isfinite(ref)
    assert fin.any() and not fin.all()
    np.testing.assert_allclose(got.numpy()[fin], ref[fin], rtol=1e-4, atol=1e-4)


def test_direct_weight_gradient_non_dense(threads):
    # the input sliced in channels, grad_output transposed in its last two dims
    x, gt = data(4, 12, 10, 40), data(4, 5, 40, 10)
    g = np.ascontiguousarray(gt.transpose(0, 1, 3, 2))
    xm = minitorch.tensor(x)[:, ::2]
    gm = minitorch.tensor(gt).transpose(2, 3)
    assert not xm.is_contiguous() and not gm.is_contiguous()
    got = minitorch._C.convolution_backward_weight(gm, xm, [5, 6, 3, 3], 1, 1, 1, 1)
    check(g, x[:, ::2], (5, 6, 3, 3), 1, 1, 1, 1, got)


def test_direct_weight_gradient_empty_batch():
    got = minitorch._C.convolution_backward_weight(minitorch.zeros(0, 5, 9, 40), minitorch.zeros(0, 6, 9, 40),
                                                   [5, 6, 3, 3], 1, 1, 1, 1)
    assert tuple(got.shape) == (5, 6, 3, 3) and not got.numpy().any()


@pytest.mark.parametrize("n", [3, 4])
def test_direct_weight_gradient_through_autograd(n, threads):
    x, w = data(n, 16, 18, 36), data(24, 16, 3, 3)
    xm, wm = minitorch.tensor(x, requires_grad=True), minitorch.tensor(w, requires_grad=True)
    y = minitorch.nn.functional.conv2d(xm, wm, None, 1, 1)
    y.backward(minitorch.ones_like(y))
    ref = grad_weight64(np.ones(tuple(y.shape), np.float32), x, w.shape, 1, 1, 1, 1)
    np.testing.assert_allclose(wm.grad.numpy(), ref, rtol=1e-4, atol=1e-5 * np.abs(ref).max())


def test_direct_weight_gradient_runs_no_gemm():
    from minitorch._journey import record
    x, g = minitorch.tensor(data(2, 11, 9, 40)), minitorch.tensor(data(2, 7, 9, 40))
    _, events = record(minitorch._C.convolution_backward_weight, g, x, [7, 11, 3, 3], 1, 1, 1, 1)
    assert [e.label for e in events if e.layer == "Library"] == []
