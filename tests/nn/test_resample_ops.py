"""F.interpolate's upsample ops, pixel_shuffle/pixel_unshuffle, unfold/fold
(im2col/col2im) and adaptive_max_pool1d/2d/3d are one op each, recording PyTorch's one node (also along next_functions
chains), naming the op in the profiler, with values and gradients equal to PyTorch's (float32:
bit for bit for nearest and bilinear 2-D), their backwards ops with double backward
(gradgradcheck in float64), non-contiguous, empty-batch and NaN inputs, and PyTorch's errors."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, same_as_torch, same_error, torch

F = minitorch.nn.functional
_C = minitorch._C
RNG = np.random.default_rng(2020)


def data(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# ---- upsample: one node each way, bit-exact nearest and bilinear 2-D ----

RESIZE_2D = [dict(scale_factor=2), dict(scale_factor=0.5), dict(scale_factor=1.7), dict(size=(7, 3)),
             dict(size=(70, 90)), dict(scale_factor=(2.5, 1.3)), dict(size=(1, 1)), dict(size=(40, 50))]


@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("resize", RESIZE_2D, ids=str)
@pytest.mark.parametrize("mode", ["nearest", "bilinear"])
def test_2d_values_and_gradients_bit_for_bit(mode, resize, align):
    """float32, bit for bit: the gradients always; the values too but for bilinear outputs of
    H + W <= 128, which PyTorch computes with its channels-last kernel (its last bit may differ)"""
    if torch is None:
        pytest.skip("compares with PyTorch")
    if mode == "nearest" and align:
        pytest.skip("nearest takes no align_corners")
    x = data(2, 3, 40, 50, dtype="float32")
    kw = dict(resize, mode=mode, align_corners=align if mode == "bilinear" else None)
    outs, grads = [], []
    for lib in (minitorch, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, **kw)
        w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)).astype("float32"))
        (y * w).sum().backward()
        outs.append(y.detach().numpy())
        grads.append(t.grad.numpy())
    if mode == "bilinear" and sum(outs[1].shape[-2:]) <= 128:
        np.testing.assert_allclose(outs[0], outs[1], rtol=3e-7, atol=3e-7)
    else:
        np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(grads[0], grads[1])


@pytest.mark.parametrize("mode,dims", [("nearest", 3), ("nearest", 4), ("nearest", 5), ("nearest-exact", 4),
                                       ("linear", 3), ("bilinear", 4), ("bicubic", 4), ("trilinear", 5)])
def test_upsample_nodes_and_their_backwards(mode, dims):
    if torch is None:
        pytest.skip("compares with PyTorch")
    x = data(1, 2, *([3] * (dims - 2)))
    names = []
    for lib in (minitorch, torch):
        t = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.interpolate(t, scale_factor=2, mode=mode)
        g = lib.ones(tuple(y.shape), dtype=lib.float64, requires_grad=True)
        (gx,) = lib.autograd.grad(y, t, g, create_graph=True)
        names.append((y.grad_fn.name(), type(y.grad_fn).__name__,
                       [type(f).__name__ for f, _ in y.grad_fn.next_functions], gx.grad_fn.name()))
    assert names[0] == names[1]


@pytest.mark.parametrize("mode,dims", [("nearest", 3), ("nearest-exact", 4), ("linear", 3), ("bilinear", 4),
                                       ("bicubic", 4), ("trilinear", 5), ("nearest", 5)])
@pytest.mark.parametrize("align", [False, True])
def test_upsample_double_backward(mode, dims, align):
    if mode.startswith("nearest") and align:
        pytest.skip("nearest takes no align_corners")
    x = minitorch.tensor(data(1, 2, *([3] * (dims - 2))), requires_grad=True)
    kw = dict(scale_factor=1.5, mode=mode, align_corners=align if not mode.startswith("nearest") else None)
    assert minitorch.autograd.gradgradcheck(lambda t: F.interpolate(t, **kw), [x])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_upsample_backward_ops_match_pytorch(layout):
    same_as_torch(lambda m, g: nn_ops(m).upsample_bilinear2d_backward(g, [6, 4], [2, 3, 3, 2], True, 1.5, None),
                  [data(2, 3, 6, 4)], layout=layout, atol=1e-12, rtol=1e-12)
    same_as_torch(lambda m, g: nn_ops(m).upsample_nearest1d_backward(g, [7], [1, 2, 3], 2.5),
                  [data(1, 2, 7)], layout=layout, atol=1e-12, rtol=1e-12)


def nn_ops(m):
    """where the op lives: torch.ops.aten, minitorch._C"""
    return m.ops.aten if m is torch else m._C


# each backward op called as itself: (call(lib, grad_output), grad_output's shape)
BACKWARD_CALLS = {
    "nearest1d": (lambda m, g: nn_ops(m).upsample_nearest1d_backward(g, [7], [1, 2, 3], None), (1, 2, 7)),
    "nearest2d": (lambda m, g: nn_ops(m).upsample_nearest2d_backward(g, [5, 4], [1, 2, 2, 3], 2.5, None),
                  (1, 2, 5, 4)),
    "nearest3d": (lambda m, g: nn_ops(m).upsample_nearest3d_backward(g, [3, 4, 2], [1, 1, 2, 2, 2], None, None,
                                                                      None), (1, 1, 3, 4, 2)),
    "exact1d": (lambda m, g: nn_ops(m)._upsample_nearest_exact1d_backward(g, [5], [1, 2, 3], None), (1, 2, 5)),
    "exact2d": (lambda m, g: nn_ops(m)._upsample_nearest_exact2d_backward(g, [5, 4], [1, 2, 2, 3], None, None),
                (1, 2, 5, 4)),
    "exact3d": (lambda m, g: nn_ops(m)._upsample_nearest_exact3d_backward(g, [3, 4, 2], [1, 1, 2, 2, 2], None,
                                                                           None, None), (1, 1, 3, 4, 2)),
    "linear1d": (lambda m, g: nn_ops(m).upsample_linear1d_backward(g, [7], [1, 2, 3], False, None), (1, 2, 7)),
    "bilinear2d": (lambda m, g: nn_ops(m).upsample_bilinear2d_backward(g, [6, 4], [2, 3, 3, 2], True, None, None),
                   (2, 3, 6, 4)),
    "bicubic2d": (lambda m, g: nn_ops(m).upsample_bicubic2d_backward(g, [6, 5], [1, 2, 3, 3], False, None, None),
                  (1, 2, 6, 5)),
    "trilinear3d": (lambda m, g: nn_ops(m).upsample_trilinear3d_backward(g, [3, 4, 3], [1, 1, 2, 2, 2], False, None,
                                                                          None, None), (1, 1, 3, 4, 3)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", list(BACKWARD_CALLS))
def test_upsample_backward_ops_as_themselves(name, layout):
    fn, shape = BACKWARD_CALLS[name]
    same_as_torch(fn, [data(*shape)], layout=layout, atol=1e-12, rtol=1e-12)


def test_upsample_nan_empty_batch_and_errors():
    x = data(2, 1, 3, 3)
    x[0, 0, 1, 1] = np.nan
    same_as_torch(lambda m, t: m.nn.functional.interpolate(t, scale_factor=2, mode="bilinear"), [x])
    same_as_torch(lambda m, t: m.nn.functional.interpolate(t, scale_factor=2), [data(0, 2, 3, 3)])
    same_error(lambda m, g: nn_ops(m).upsample_nearest2d_backward(
        g, [4, 4], [1, 2, 2, 2], None, None), data(1, 2, 4, 5))
    same_error(lambda m, g: nn_ops(m).upsample_nearest2d_backward(
        g, [4, 4], [1, 2, 2, 2], None, None), data(2, 4, 4))
    same_error(lambda m, x: nn_ops(m).upsample_nearest2d(x, [0, 4], None, None),
               data(1, 2, 2, 2))


# ---- pixel_shuffle / pixel_unshuffle ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,r", [((1, 8, 2, 3), 2), ((2, 3, 9, 2, 2), 3), ((4, 1, 1), 2), ((0, 4, 2, 2), 2),
                                     ((1, 3, 2, 2), 1), ((4, 8, 40, 33), 2), ((2, 27, 30, 31), 3)])
def test_pixel_shuffle_matches_pytorch(shape, r, layout):
    """The larger cases run on threads, their copies' short inner dim (r) moved outside W."""
    grad = 0 not in shape  # PyTorch's own backward of an empty pixel_shuffle fails
    same_as_torch(lambda m, x: m.nn.functional.pixel_shuffle(x, r), [data(*shape)], layout=layout, grad=grad)
    same_as_torch(lambda m, x: m.pixel_shuffle(x, r), [data(*shape)], layout=layout, grad=grad)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,r", [((1, 2, 4, 6), 2), ((2, 1, 3, 6, 3), 3), ((1, 2, 2), 2), ((0, 1, 2, 2), 2)])
def test_pixel_unshuffle_matches_pytorch(shape, r, layout):
    # an empty input comes back as it is, as PyTorch's
    same_as_torch(lambda m, x: m.nn.functional.pixel_unshuffle(x, r), [data(*shape)], layout=layout,
                  grad=0 not in shape)


def test_pixel_shuffle_nodes_copies_and_double_backward():
    x = minitorch.tensor(data(1, 4, 2, 3), requires_grad=True)
    y = F.pixel_shuffle(x, 2)
    assert y.grad_fn.name() == "PixelShuffleBackward0"
    assert F.pixel_unshuffle(y, 2).grad_fn.name() == "PixelUnshuffleBackward0"
    assert F.pixel_shuffle(x, 1).data_ptr() != x.data_ptr()
    assert minitorch.autograd.gradgradcheck(lambda t: F.pixel_shuffle(t, 2), [x])
    assert minitorch.autograd.gradgradcheck(lambda t: F.pixel_unshuffle(t, 2), [y.detach().requires_grad_()])


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.nn.functional.pixel_shuffle(x, 2), (1, 3, 2, 2)),
    (lambda m, x: m.nn.functional.pixel_shuffle(x, 0), (1, 4, 2, 2)),
    (lambda m, x: m.nn.functional.pixel_shuffle(x, 2), (4, 2)),
    (lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), (1, 1, 3, 2)),
    (lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), (1, 1, 2, 3)),
    (lambda m, x: m.nn.functional.pixel_unshuffle(x, -1), (1, 1, 2, 2)),
])
def test_pixel_shuffle_errors(fn, shape):
    same_error(fn, data(*shape))


# ---- unfold / fold: im2col and col2im ----

BLOCKS = [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=2), dict(kernel_size=3, padding=1, dilation=2),
          dict(kernel_size=(1, 2), stride=(2, 1), padding=(1, 0))]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("kw", BLOCKS, ids=str)
@pytest.mark.parametrize("shape", [(2, 3, 5, 6), (3, 5, 6), (0, 2, 5, 6)])
def test_unfold_and_fold_match_pytorch(shape, kw, layout):
    same_as_torch(lambda m, x: m.nn.functional.unfold(x, **kw), [data(*shape)], layout=layout, atol=1e-12)
    if torch is None:
        return
    cols = torch.nn.functional.unfold(torch.tensor(data(*shape)), **kw).numpy()
    same_as_torch(lambda m, c: m.nn.functional.fold(c, shape[-2:], **kw), [cols], layout=layout, atol=1e-12)


def test_unfold_fold_nodes_and_double_backward():
    x = minitorch.tensor(data(1, 2, 4, 4), requires_grad=True)
    cols = F.unfold(x, 2, padding=1)
    assert cols.grad_fn.name() == "Im2ColBackward0"
    folded = F.fold(cols, (4, 4), 2, padding=1)
    assert folded.grad_fn.name() == "Col2ImBackward0"
    assert type(folded.grad_fn.next_functions[0][0]).__name__ == "Im2ColBackward0"
    assert minitorch.autograd.gradgradcheck(lambda t: F.unfold(t, 2, padding=1, stride=2), [x])
    c = cols.detach().requires_grad_()
    assert minitorch.autograd.gradgradcheck(lambda t: F.fold(t, (4, 4), 2, padding=1), [c])


def test_im2col_col2im_as_themselves():
    same_as_torch(lambda m, x: nn_ops(m).im2col(x, [2, 2], [1, 1], [0, 1], [1, 2]), [data(2, 3, 4, 5)], atol=1e-12)
    same_as_torch(lambda m, c: nn_ops(m).col2im(c, [4, 5], [2, 2], [1, 1], [0, 1], [1, 2]), [data(2, 12, 9)],
                  atol=1e-12)


def test_unfold_nan_and_bool():
    x = data(1, 1, 3, 3)
    x[0, 0, 0, 0] = np.nan
    same_as_torch(lambda m, t: m.nn.functional.unfold(t, 2), [x])
    b = RNG.random((1, 2, 3, 3)) > 0.5
    if torch is not None:
        got = F.unfold(minitorch.tensor(b), 2)
        want = torch.nn.functional.unfold(torch.tensor(b), 2)
        assert str(got.dtype) == "minitorch.bool"
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.nn.functional.unfold(x, 0), (1, 1, 3, 3)),
    (lambda m, x: m.nn.functional.unfold(x, 2, dilation=0), (1, 1, 3, 3)),
    (lambda m, x: m.nn.functional.unfold(x, 2, padding=-1), (1, 1, 3, 3)),
    (lambda m, x: m.nn.functional.unfold(x, 2, stride=0), (1, 1, 3, 3)),
    (lambda m, x: m.nn.functional.unfold(x, 4), (1, 1, 3, 3)),
    (lambda m, x: m.nn.functional.unfold(x, 2), (3, 3)),
    (lambda m, x: m.nn.functional.unfold(x, 2), (3,)),
    (lambda m, x: m.nn.functional.unfold(x, 2), (1, 0, 3, 3)),
    (lambda m, x: m.nn.functional.fold(x, (3, 3), 2), (1, 5, 4)),
    (lambda m, x: m.nn.functional.fold(x, (3, 3), 2), (1, 4, 5)),
    (lambda m, x: m.nn.functional.fold(x, (3, 3), 2, stride=0), (1, 4, 4)),
    (lambda m, x: m.nn.functional.fold(x, (1, 1), 2), (1, 4, 1)),
    (lambda m, x: m.nn.functional.fold(x, (3, 3), 2), (4, 4, 4, 4)),
])
def test_unfold_fold_errors(fn, shape):
    same_error(fn, data(*shape))


# ---- adaptive max pooling ----

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,size", [((2, 3, 7, 5), (3, 2)), ((3, 6, 6), 4), ((1, 2, 5, 4), (None, 2)),
                                        ((1, 1, 3, 3), (5, 7)), ((0, 2, 4, 4), 2)])
def test_adaptive_max_pool2d_matches_pytorch(shape, size, layout):
    same_as_torch(lambda m, x: m.nn.functional.adaptive_max_pool2d(x, size), [data(*shape)], layout=layout)
    same_as_torch(lambda m, x: m.nn.functional.adaptive_max_pool2d(x, size, return_indices=True)[1],
                  [data(*shape)], layout=layout)


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.nn.functional.adaptive_max_pool3d(x, (2, 3, 2)), (1, 2, 5, 4, 3)),
    (lambda m, x: m.nn.functional.adaptive_max_pool3d(x, 2, return_indices=True)[1], (2, 3, 3, 4)),
    (lambda m, x: m.nn.functional.adaptive_max_pool1d(x, 3), (2, 3, 7)),
])
def test_adaptive_max_pool_1d_3d_match_pytorch(fn, shape):
    same_as_torch(fn, [data(*shape)])


def test_adaptive_max_pool_backward_ops_as_themselves():
    x = data(2, 3, 5, 4)
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        t = lib.tensor(x)
        out2, idx2 = nn_ops(lib).adaptive_max_pool2d(t, [2, 3])
        g = lib.ones_like(out2)
        got = nn_ops(lib).adaptive_max_pool2d_backward(g, t, idx2)
        out3, idx3 = nn_ops(lib).adaptive_max_pool3d(t, [2, 2, 3])
        got3 = nn_ops(lib).adaptive_max_pool3d_backward(lib.ones_like(out3), t, idx3)
        if lib is minitorch:
            mine = (got.numpy(), got3.numpy(), idx2.numpy(), idx3.numpy())
    if torch is not None:
        for a, b in zip(mine, (got.numpy(), got3.numpy(), idx2.numpy(), idx3.numpy())):
            np.testing.assert_array_equal(a, b)


def test_adaptive_max_pool_nan_nodes_and_double_backward():
    x = data(1, 2, 4, 4)
    x[0, 1, 0, 1] = np.nan
    same_as_torch(lambda m, t: m.nn.functional.adaptive_max_pool2d(t, 2), [x])
    t = minitorch.tensor(data(1, 2, 5, 5), requires_grad=True)
    y = F.adaptive_max_pool2d(t, 3)
    assert type(y.grad_fn).__name__ == y.grad_fn.name() == "AdaptiveMaxPool2DBackward0"
    assert F.adaptive_max_pool3d(t, 2).grad_fn.name() == "AdaptiveMaxPool3DBackward0"
    (g,) = minitorch.autograd.grad(y, t, minitorch.ones_like(y, requires_grad=True), create_graph=True)
    assert g.grad_fn.name() == "AdaptiveMaxPool2DBackwardBackward0"
    assert minitorch.autograd.gradgradcheck(lambda u: F.adaptive_max_pool2d(u, 3), [t])


@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 2), (2, 3)),
    (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, 2), (1, 0, 3, 3)),
    (lambda m, x: m.nn.functional.adaptive_max_pool2d(x, (2, -1)), (1, 1, 3, 3)),
    (lambda m, x: m.nn.functional.adaptive_max_pool2d(x.long(), 2), (1, 1, 3, 3)),
    (lambda m, x: m.nn.functional.adaptive_max_pool3d(x, 2), (1, 3, 3)),
])
def test_adaptive_max_pool_errors(fn, shape):
    same_error(fn, data(*shape))


# ---- a chain of the four, node by node, and the profiler ----

def walk(fn):
    """the node names met along the first edge from fn, fn's own first"""
    names = []
    while fn is not None:
        names.append(fn.name().replace("torch::autograd::", ""))
        nxt = [f for f, _ in fn.next_functions if f is not None]
        fn = nxt[0] if nxt else None
    return names


def chain(lib, x):
    F_ = lib.nn.functional
    y = F_.interpolate(x, scale_factor=2, mode="bilinear")
    y = F_.pixel_unshuffle(F_.interpolate(y, scale_factor=2), 2)
    return F_.fold(F_.unfold(y, 2, stride=2), y.shape[-2:], 2, stride=2)


def test_next_functions_chain_is_pytorchs():
    if torch is None:
        pytest.skip("compares with PyTorch")
    x = data(1, 2, 3, 3)
    got = walk(chain(minitorch, minitorch.tensor(x, requires_grad=True)).grad_fn)
    want = walk(chain(torch, torch.tensor(x, requires_grad=True)).grad_fn)
    assert got == want


def test_profiler_names_the_ops():
    x = minitorch.tensor(data(1, 2, 3, 3), requires_grad=True)
    with minitorch.profiler.profile() as prof:
        chain(minitorch, x).sum().backward()
    keys = {e.key for e in prof.key_averages()}
    for op in ("upsample_bilinear2d", "upsample_nearest2d", "pixel_unshuffle", "im2col", "col2im",
               "upsample_bilinear2d_backward", "upsample_nearest2d_backward", "pixel_shuffle"):
        assert any(k.endswith(op) for k in keys), (op, sorted(keys))
    assert not any(k.endswith("index_select") for k in keys)
