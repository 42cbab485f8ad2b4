"""The direct float32 convolution kernel (csrc/cpu/conv_direct.c), which conv2d and conv3d take for
few taps per output and unit width stride, at the edges of its blocking: output widths around
its 16-lane vectors, output channels around its blocks of 8, odd output heights (its row pairs),
groups, dilation, height and depth strides, batches larger than its padded-copy chunk, and NaN
and inf inputs; against the float64 NumPy reference (helpers.check) and PyTorch. conv1d's lone
output row, cut into pieces; conv2d's input gradient, which with unit strides is a convolution
the kernel runs too, and its weight gradient (8 channels by 3 taps a work item). And the choice of path: what reaches BLAS and what does not (the
profiler's journey)."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, check, same_as_torch
from minitorch._journey import record
from test_conv_pool import conv2d_ref, pad2, pair, windows

RNG = np.random.default_rng(7)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("ow", [1, 15, 16, 17, 31, 33])
@pytest.mark.parametrize("oc", [1, 7, 8, 9, 17])
def test_widths_and_channel_blocks(ow, oc):
    # padding 1 with a 3x3 kernel keeps the width; 5 rows make an odd count of output rows
    x, w, b = f32(2, 3, 5, ow), f32(oc, 3, 3, 3), f32(oc)
    check(lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
          lambda x, w, b: conv2d_ref(x, w, b, padding=1), [x, w, b], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("kw", [
    {"groups": 2}, {"groups": 3, "padding": 2}, {"dilation": 2, "padding": 2},
    {"dilation": (2, 3), "padding": (1, 3)}, {"stride": (2, 1)}, {"stride": (3, 1), "padding": (2, 0)},
    {"padding": (0, 2)}, {"stride": 2, "padding": 1}, {"stride": (1, 3), "dilation": 2, "padding": 2},
    {"stride": (2, 2), "groups": 3},
])
def test_groups_dilation_strides(kw):
    x, w, b = f32(3, 6, 11, 20), f32(6, 6 // kw.get("groups", 1), 3, 3), f32(6)
    check(lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, **kw),
          lambda x, w, b: conv2d_ref(x, w, b, **kw), [x, w, b], atol=1e-4, rtol=1e-4)


def test_batch_beyond_one_padded_chunk():
    # (4, 70, 70) floats of padded input an image: 8 MiB holds 107 of them, so 300 take three chunks
    x, w = f32(300, 4, 68, 68), f32(5, 4, 3, 3)
    check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1),
          lambda x, w: conv2d_ref(x, w, padding=1), [x, w], atol=1e-4, rtol=1e-4)


def test_nan_and_inf_reach_only_their_windows():
    x, w = f32(1, 2, 6, 20), f32(3, 2, 3, 3)
    x[0, 0, 2, 3], x[0, 1, 4, 17] = np.nan, np.inf
    out = check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1),
                lambda x, w: conv2d_ref(x, w, padding=1), [x, w], atol=1e-4, rtol=1e-4)
    bad = ~np.isfinite(out.numpy())
    assert bad[0, :, 1:4, 2:5].all() and bad[0, :, 3:6, 16:19].all() and bad.sum() == 3 * (9 + 9)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_non_contiguous_inputs(layout):
    x, w, b = f32(2, 3, 9, 18), f32(4, 3, 3, 3), f32(4)
    check(lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
          lambda x, w, b: conv2d_ref(x, w, b, padding=1), [x, w, b], layout=layout, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 4, 9, 10, 17), (9, 4, 3, 3, 3), {"padding": 1}),
    ((1, 2, 7, 6, 20), (4, 1, 2, 3, 3), {"groups": 2, "dilation": (2, 1, 2), "padding": (1, 0, 2)}),
    ((3, 1, 8, 8, 8), (2, 1, 3, 3, 3), {"stride": (2, 2, 1)}),
])
def test_conv3d_direct(xs, ws, kw):
    x, w, b = f32(*xs), f32(*ws), f32(ws[0])
    same_as_torch(lambda m, x, w, b: m.nn.functional.conv3d(x, w, b, **kw), [x, w, b], atol=1e-4, rtol=1e-4)


def test_which_path_reaches_blas():
    def blas_calls(*args, **kw):
        _, events = record(minitorch.nn.functional.conv2d, *args, **kw)
        return [e.label for e in events if e.layer == "Library"]

    x = minitorch.ones(2, 3, 8, 20)
    assert blas_calls(x, minitorch.ones(4, 3, 3, 3)) == []  # few taps: direct
    assert blas_calls(x.double(), minitorch.ones(4, 3, 3, 3).double())  # float64: im2col + gemm
    assert blas_calls(x, minitorch.ones(4, 3, 3, 3), stride=(1, 2)) == []  # width stride: its phases
    assert blas_calls(x, minitorch.ones(4, 3, 1, 1))  # 1x1: the image as it lies, one gemm
    wide = minitorch.ones(1, 64, 5, 11)  # many taps (576) on 11 columns (11 lanes of 16): im2col + gemm
    assert blas_calls(wide, minitorch.ones(8, 64, 3, 3), padding=1)
    assert blas_calls(minitorch.ones(1, 64, 16, 16), minitorch.ones(8, 64, 3, 3), padding=1) == []


@pytest.mark.parametrize("xs,ws,kw", [
    ((50, 4, 8, 8), (6, 2, 3, 3), {"groups": 2, "padding": 1}),  # many small images: chunks of them
    ((40, 3, 6, 7), (5, 3, 1, 1), {}),  # 1x1: the images themselves side by side
    ((3, 2, 20, 20), (4, 2, 3, 3), {"stride": 2, "dilation": 2}),
])
def test_gradients_with_chunked_weight_gradient(xs, ws, kw):
    same_as_torch(lambda m, x, w: m.nn.functional.conv2d(x, w, **kw), [f32(*xs), f32(*ws)], atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("kw", [{"padding": 1}, {"padding": (2, 1, 0), "dilation": (2, 1, 1)}, {"padding": "same"}])
def test_conv3d_input_gradient_as_one_convolution(kw):
    # unit strides and padding within the kernel's reach: the input's gradient is conv3d of the
    # output's gradient with the weight's channels swapped and taps reversed (also twice). Which
    # path runs depends on strides and padding only (conv3d_grad_input), not on the sizes: the
    # input is small, since gradcheck and gradgradcheck perturb each element (5x6x7: 48 s, 3x4x5: 2.5 s)
    x = minitorch.randn(2, 4, 3, 4, 5, dtype=minitorch.float64, requires_grad=True)
    w = minitorch.randn(6, 2, 3, 2, 3, dtype=minitorch.float64, requires_grad=True)
    f = lambda x, w: minitorch.nn.functional.conv3d(x, w, groups=2, **kw)  # noqa: E731
    assert minitorch.autograd.gradcheck(f, (x, w))
    assert minitorch.autograd.gradgradcheck(f, (x, w))


@pytest.mark.parametrize("hw,oc", [((7, 7), 16), ((8, 8), 9), ((9, 6), 3), ((5, 8), 20)])
def test_narrow_rows_two_to_a_vector(hw, oc):
    # rows of 8 outputs or fewer share a vector two by two (blocks of 8 channels x 4 rows), with
    # up to 256 taps (28 * 9 = 252; more on a plane this small is a deep layer's, conv.c's gemm)
    x, w, b = f32(2, 28, *hw), f32(oc, 28, 3, 3), f32(oc)
    check(lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
          lambda x, w, b: conv2d_ref(x, w, b, padding=1), [x, w, b], atol=1e-3, rtol=1e-4)
    _, events = record(minitorch.nn.functional.conv2d, minitorch.tensor(x), minitorch.tensor(w), None, 1, 1)
    assert [e.label for e in events if e.layer == "Library"] == []


def conv1d_ref(x, w, b=None, **kw):
    """conv2d_ref over (N, C, 1, L): the 1-D convolution, as conv1d views it."""
    kw = {k: (0 if k == "padding" else 1, v) if k in ("stride", "padding", "dilation") else v for k, v in kw.items()}
    return conv2d_ref(x[:, :, None], w[:, :, None], b, **kw)[:, :, 0]


@pytest.mark.parametrize("ow", [9, 16, 17, 31, 32, 33, 48, 63, 65, 100])
@pytest.mark.parametrize("oc,c", [(3, 40), (8, 40), (9, 40), (17, 2)])
def test_conv1d_row_in_pieces(ow, oc, c):
    # one output row is cut into pieces of 16 columns, two (or four for 4 channels) to a block;
    # many taps (40 * 5 = 200) and few (2 * 5); widths around the pieces and blocks of pieces
    x, w, b = f32(2, c, ow), f32(oc, c, 5), f32(oc)
    check(lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, padding=2),
          lambda x, w, b: conv1d_ref(x, w, b, padding=2), [x, w, b], atol=1e-3, rtol=1e-4)


@pytest.mark.parametrize("kw", [
    {"stride": 2, "padding": 3}, {"stride": 3}, {"dilation": 3, "padding": 5}, {"groups": 4, "padding": 1},
])
def test_conv1d_pieces_strides_dilation_groups(kw):
    x, w, b = f32(3, 8, 150), f32(8, 8 // kw.get("groups", 1), 7), f32(8)
    check(lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, **kw),
          lambda x, w, b: conv1d_ref(x, w, b, **kw), [x, w, b], atol=1e-3, rtol=1e-4)


def test_conv1d_pieces_gradients_nan_and_path():
    x, w, b = f32(2, 64, 90), f32(16, 64, 9), f32(16)
    same_as_torch(lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, padding=4), [x, w, b], atol=1e-3, rtol=1e-4)
    x[1, 5, 40] = np.nan
    out = minitorch.nn.functional.conv1d(minitorch.tensor(x), minitorch.tensor(w), padding=4).numpy()
    assert np.isnan(out[1, :, 36:45]).all() and np.isfinite(out[0]).all() and np.isnan(out).sum() == 16 * 9
    # 576 taps on one row of 90: pieces of 16, two to a block, fill 90 of 96 lanes: direct
    _, events = record(minitorch.nn.functional.conv1d, minitorch.tensor(x), minitorch.tensor(w), None, 1, 4)
    assert [e.label for e in events if e.layer == "Library"] == []


def conv2d_input_ref(size, w, g, stride=1, padding=0, dilation=1, groups=1):
    """The input's gradient of conv2d: each output's gradient times the kernel, added into the
    window it read (the scatter, not the convolution the kernel computes)."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    n, c, h, wd = size
    oc, cg, kh, kw = w.shape
    og, oh, ow = oc // groups, g.shape[2], g.shape[3]
    gx = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    for gi in range(groups):
        for i in range(kh):
            for j in range(kw):
                part = np.einsum("nohw,oc->nchw", g[:, gi * og:(gi + 1) * og], w[gi * og:(gi + 1) * og, :, i, j])
                gx[:, gi * cg:(gi + 1) * cg, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                   j * dw:j * dw + sw * (ow - 1) + 1:sw] += part
    return gx[:, :, ph:ph + h, pw:pw + wd]


@pytest.mark.parametrize("size,ws,kw", [
    ((2, 64, 9, 20), (8, 64, 3, 3), {"padding": 1}),  # 72 taps of the gradient's convolution
    ((2, 7, 6, 47), (40, 7, 3, 3), {"padding": 1}),  # 360 taps, 7 channels (a block of 8, part empty)
    ((3, 4, 8, 8), (24, 2, 3, 3), {"groups": 2, "padding": 1}),  # rows of 8: two to a vector
    ((1, 6, 11, 17), (30, 3, 3, 2), {"groups": 2, "padding": (2, 0), "dilation": (2, 3)}),
    ((2, 3, 7, 29), (20, 3, 5, 5), {"padding": (0, 2)}),  # no padding in height: all of d*(K-1)
    ((2, 3, 7, 21), (20, 3, 3, 3), {"padding": (3, 1)}),  # beyond the kernel's reach: im2col's col2im
    ((2, 5, 12, 40), (20, 5, 3, 3), {"stride": (1, 2), "padding": 1}),  # strided: gemm and col2im
    ((2, 5, 12, 40), (20, 5, 3, 3), {"stride": (2, 1), "padding": 1}),
])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_input_gradient(size, ws, kw, layout):
    check_gradient("input", size, ws, kw, layout)


def check_gradient(of, xs, ws, kw, layout):
    """conv2d's gradient of its input or weight (`of`) for a random grad_output, in minitorch
    against the float64 NumPy reference and PyTorch."""
    x, w = f32(*xs), f32(*ws)
    g = f32(*minitorch.nn.functional.conv2d(minitorch.tensor(x), minitorch.tensor(w), **kw).shape)
    if of == "input":
        check(lambda m, g, w: m.nn.grad.conv2d_input(xs, w, g, **kw),
              lambda g, w: conv2d_input_ref(xs, w, g, **kw), [g, w], layout=layout, atol=1e-3, rtol=1e-4)
    else:
        check(lambda m, x, g: m.nn.grad.conv2d_weight(x, ws, g, **kw),
              lambda x, g: conv2d_weight_ref(x, ws, g, **kw), [x, g], layout=layout, atol=1e-3, rtol=1e-4)


def test_input_gradient_nan_and_path():
    w, g = f32(16, 8, 3, 3), f32(2, 16, 10, 30)
    g[1, 3, 4, 7] = np.nan
    gx = minitorch.nn.grad.conv2d_input((2, 8, 10, 30), minitorch.tensor(w), minitorch.tensor(g), padding=1)
    bad = np.isnan(gx.numpy())
    assert bad[1, :, 3:6, 6:9].all() and bad.sum() == 8 * 9 and np.isfinite(gx.numpy()[0]).all()
    # 144 taps, unit strides: the direct kernel, no gemm; with a height stride, gemm and col2im
    _, events = record(minitorch.nn.grad.conv2d_input, (2, 8, 10, 30), minitorch.tensor(w), minitorch.tensor(g),
                       1, 1)
    assert [e.label for e in events if e.layer == "Library"] == []
    _, events = record(minitorch.nn.grad.conv2d_input, (2, 8, 20, 30), minitorch.tensor(w), minitorch.tensor(g),
                       (2, 1), 1)
    assert [e.label for e in events if e.layer == "Library"]


def conv2d_weight_ref(x, size, g, stride=1, padding=0, dilation=1, groups=1):
    """The weight's gradient of conv2d: each output's gradient times the window it read, summed."""
    (ph, pw) = pair(padding)
    win = windows(pad2(x, ph, pw), size[2:], pair(stride), pair(dilation))[:, :, :g.shape[2], :g.shape[3]]
    cg, og = size[1], size[0] // groups
    return np.concatenate([np.einsum("nohw,nchwij->ocij", g[:, i * og:(i + 1) * og], win[:, i * cg:(i + 1) * cg])
                           for i in range(groups)])


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 6, 15), (7, 3, 3, 3), {"padding": 1}),  # 15 of 16 lanes; 7 channels: a block, part empty
    ((2, 5, 5, 16), (9, 5, 3, 3), {"padding": 1}),  # whole vectors; channel blocks 8 + 1
    ((1, 4, 3, 37), (17, 4, 2, 2), {}),  # 36 columns; 4 taps: groups of 3 taps, the last of 1
    ((2, 6, 7, 24), (12, 3, 1, 5), {"groups": 2, "padding": (1, 2)}),
    ((1, 4, 9, 30), (8, 4, 3, 3), {"dilation": (2, 3), "padding": (2, 1)}),
    ((2, 3, 12, 48), (8, 3, 5, 5), {"stride": 2, "padding": 2}),  # strided, few taps: direct
    ((2, 32, 10, 40), (8, 32, 3, 3), {"stride": (1, 2), "padding": 1}),  # strided, 288 taps: gemm
    ((70, 2, 8, 16), (3, 2, 3, 3), {"padding": 1}),  # 70 images: two chunks, the second added
])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_weight_gradient(xs, ws, kw, layout):
    check_gradient("weight", xs, ws, kw, layout)


def test_weight_gradient_inf_past_the_row_and_path():
    # 25 outputs a row: the last vector's lanes 9-15 read columns no output of theirs reads, and
    # x's inf in column 26 must reach the taps that read it (kw = 2, at ow = 24) and no other
    x, g = f32(2, 3, 5, 27), f32(2, 8, 3, 25)
    x[1, 2, 4, 26] = np.inf
    gw = check(lambda m, x, g: m.nn.grad.conv2d_weight(x, (8, 3, 3, 3), g),
               lambda x, g: conv2d_weight_ref(x, (8, 3, 3, 3), g), [x, g], atol=1e-3, rtol=1e-4).numpy()
    assert np.isfinite(gw[:, :2]).all() and np.isfinite(gw[:, 2, :, :2]).all()
    assert not np.isfinite(gw[:, 2, 2, 2]).any() and np.isfinite(gw[:, 2, :2, 2]).all()
    _, events = record(minitorch.nn.grad.conv2d_weight, minitorch.tensor(x), (8, 3, 3, 3), minitorch.tensor(g))
    assert [e.label for e in events if e.layer == "Library"] == []
