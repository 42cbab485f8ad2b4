"""conv1d, conv_transpose1d/2d, the 1-D and adaptive max pools, unfold/fold, pixel_shuffle and
their modules, and conv2d's double backward: values and gradients of input, weight and bias
against PyTorch with the same inputs (non-contiguous too), finite differences in float64, errors
with PyTorch's classes and messages."""
import numpy as np
import pytest

import minitorch
from minitorch import nn
from helpers import check_grad, same_as_torch, same_error, torch

rng = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def F(lib):
    return lib.nn.functional


# ---- conv1d ----

CONV1D = [
    dict(),
    dict(stride=2, padding=1),
    dict(dilation=2, padding=2),
    dict(padding="same", dilation=2),
    dict(padding="same"),
    dict(padding="valid", stride=(3,)),
]


@pytest.mark.parametrize("kw", CONV1D)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_conv1d_matches_torch(kw, layout):
    x, w, b = randn(2, 4, 9), randn(6, 4, 3), randn(6)
    same_as_torch(lambda lib, x, w, b: F(lib).conv1d(x, w, b, **kw), [x, w, b], layout=layout, atol=1e-5)


def test_conv1d_groups_unbatched_even_kernel_same_and_function_form():
    x, w = randn(4, 7), randn(6, 2, 4)
    same_as_torch(lambda lib, x, w: F(lib).conv1d(x, w, groups=2, padding="same"), [x, w], atol=1e-5)
    same_as_torch(lambda lib, x, w: lib.conv1d(x, w, None, 1, 1, 1, 2), [x, w], atol=1e-5)


def test_conv1d_gradients_finite_differences():
    check_grad(lambda m, x, w, b: F(m).conv1d(x, w, b, stride=2, padding=1, dilation=2),
               [randn(2, 3, 8), randn(4, 3, 2), randn(4)])


@pytest.mark.parametrize("call", [
    lambda lib, x, w: F(lib).conv1d(x[0, 0], w),
    lambda lib, x, w: F(lib).conv1d(x.unsqueeze(0), w),
    lambda lib, x, w: F(lib).conv1d(x[:, :2], w),
    lambda lib, x, w: F(lib).conv1d(x, w, stride=(1, 1)),
    lambda lib, x, w: F(lib).conv1d(x[..., :2], w),
    lambda lib, x, w: F(lib).conv1d(x, w, padding=-1),
    lambda lib, x, w: F(lib).conv1d(x, w, stride=0),
    lambda lib, x, w: F(lib).conv1d(x, w, groups=0),
    lambda lib, x, w: F(lib).conv1d(x, w, groups=2),
    lambda lib, x, w: F(lib).conv1d(x, w, padding="same", stride=2),
    lambda lib, x, w: F(lib).conv1d(x, w, padding="full"),
])
def test_conv1d_errors(call):
    same_error(call, randn(2, 3, 5), randn(4, 3, 3))


# ---- transposed convolutions ----

CONVT2D = [
    dict(),
    dict(stride=2),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 3), padding=(1, 0), output_padding=(1, 2), dilation=(1, 2)),
    dict(dilation=2, padding=1),
    dict(stride=1, dilation=2, output_padding=1),  # output_padding below the dilation only
    dict(groups=2, stride=2),
]


@pytest.mark.parametrize("kw", CONVT2D)
@pytest.mark.parametrize("layout", ["contiguous", "sliced"])
def test_conv_transpose2d_matches_torch(kw, layout):
    x, w, b = randn(2, 4, 5, 4), randn(4, 3, 3, 2), randn(3 * kw.get("groups", 1))
    same_as_torch(lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, **kw), [x, w, b], layout=layout,
                  atol=1e-5)


def test_conv_transpose2d_unbatched_no_bias_and_function_form():
    x, w = randn(4, 3, 3), randn(4, 2, 2, 2)
    same_as_torch(lambda lib, x, w: lib.conv_transpose2d(x, w, None, 2, 0, 1, 1, 1), [x, w], atol=1e-5)


@pytest.mark.parametrize("kw", [dict(), dict(stride=3, padding=1, output_padding=2), dict(groups=2, dilation=3)])
def test_conv_transpose1d_matches_torch(kw):
    x, w, b = randn(3, 4, 6), randn(4, 2, 3), randn(2 * kw.get("groups", 1))
    same_as_torch(lambda lib, x, w, b: F(lib).conv_transpose1d(x, w, b, **kw), [x, w, b], layout="transposed",
                  atol=1e-5)
    same_as_torch(lambda lib, x, w: lib.conv_transpose1d(x[0], w), [x, w], atol=1e-5)


def test_conv_transpose_gradients_finite_differences():
    check_grad(lambda m, x, w, b: F(m).conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
               [randn(2, 2, 3, 3), randn(2, 3, 3, 3), randn(3)])
    check_grad(lambda m, x, w, b: F(m).conv_transpose1d(x, w, b, stride=2, groups=2),
               [randn(1, 4, 4), randn(4, 1, 3), randn(2)])


@pytest.mark.parametrize("call", [
    lambda lib, x, w: F(lib).conv_transpose2d(x[0, 0], w),
    lambda lib, x, w: F(lib).conv_transpose2d(x[:, :3], w),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, w[0, 0]),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, output_padding=1),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=2, output_padding=2),
    lambda lib, x, w: F(lib).conv_transpose2d(x[:1, :, :1, :1], w, padding=2),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w[..., 0]),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, groups=3),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, groups=0),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, stride=0),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, padding=-1),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w, output_padding=-1),
    lambda lib, x, w: F(lib).conv_transpose2d(x, w.double()),
    lambda lib, x, w: F(lib).conv_transpose1d(x[0], w[..., 0], output_padding=1),
    lambda lib, x, w: F(lib).conv_transpose1d(x, w[..., 0]),
    lambda lib, x, w: F(lib).conv_transpose1d(x[:, 0], w[..., 0]),
])
def test_conv_transpose_errors(call):
    same_error(call, randn(2, 4, 5, 5), randn(4, 3, 3, 3))


# ---- double backward ----

def _grad_of_grad(lib, fn, *arrays):
    """d/d(all) of sum(w * d fn / d x) with create_graph: the second derivatives a gradient
    penalty takes."""
    xs = [lib.tensor(a).requires_grad_(True) for a in arrays]
    out = fn(lib, *xs)
    weight = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)).astype(arrays[0].dtype))
    (gx,) = lib.autograd.grad((out * weight).sum(), xs[0], create_graph=True)
    penalty = (gx ** 2).sum()
    penalty.backward()
    return [gx.detach().numpy()] + [None if x.grad is None else x.grad.numpy() for x in xs]


DOUBLE = [
    lambda lib, x, w, b: F(lib).conv2d(x, w, b, stride=2, padding=1),
    lambda lib, x, w, b: F(lib).conv2d(x, w, b, dilation=2, groups=2),
    lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b[:2], stride=2, output_padding=1),
    lambda lib, x, w, b: F(lib).conv1d(x[..., 0, :], w[..., 0, :], b, padding=1),
    lambda lib, x, w, b: F(lib).conv_transpose1d(x[..., 0, :], w[..., 0, :], b[:2], dilation=2, output_padding=1),
    lambda lib, x, w, b: F(lib).conv_transpose2d(x[0], w, b[:2], stride=(1, 2), dilation=(2, 1), output_padding=1),
]


@pytest.mark.parametrize("fn", DOUBLE)
def test_conv_double_backward_matches_torch(fn):
    arrays = [randn(2, 4, 6, 6), randn(4, 2, 3, 3), randn(4)]
    if fn is DOUBLE[0] or fn is DOUBLE[3]:
        arrays[1] = randn(4, 4, 3, 3)
    got = _grad_of_grad(minitorch, fn, *arrays)
    assert all(g is None or np.isfinite(g).all() for g in got)
    if torch is not None:
        want = _grad_of_grad(torch, fn, *arrays)
        for g, t in zip(got, want):
            assert (g is None) == (t is None)
            if g is not None:
                np.testing.assert_allclose(g, t, atol=1e-4, rtol=1e-4)


def _finite_differences(fn, arrays, eps=1e-6):
    """d sum(w * fn(*arrays)) / d arrays[k] by central differences in float64, with the gradient
    from minitorch's autograd beside it."""
    arrays = [a.astype(np.float64) for a in arrays]
    xs = [minitorch.tensor(a).requires_grad_(True) for a in arrays]
    out = fn(*xs)
    w = np.random.default_rng(3).standard_normal(tuple(out.shape))
    (out * minitorch.tensor(w)).sum().backward()
    for x, a in zip(xs, arrays):
        num = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            hi, lo = a.copy(), a.copy()
            hi[i] += eps
            lo[i] -= eps
            f = [(fn(*[minitorch.tensor(h if y is x else b).requires_grad_(True)
                      for y, b in zip(xs, arrays)]).detach().numpy() * w).sum() for h in (hi, lo)]
            num[i] = (f[0] - f[1]) / (2 * eps)
        np.testing.assert_allclose(x.grad.numpy(), num, atol=1e-5, rtol=1e-4)


def test_nodes_are_pytorchs():
    x = minitorch.randn(1, 4, 3, 3, requires_grad=True)
    for out in (F(minitorch).conv_transpose2d(x, minitorch.randn(4, 2, 3, 3), minitorch.randn(2)),
                F(minitorch).conv_transpose1d(x[0, :, 0], minitorch.randn(4, 2, 3)),
                F(minitorch).conv1d(x[0, :, 0], minitorch.randn(2, 4, 2))):
        assert out.grad_fn.name() == "ConvolutionBackward0"


def test_conv_double_backward_finite_differences():
    """The gradient of conv2d's input and weight gradients, in float64, by central differences."""
    def input_grad(x, w):
        out = minitorch.nn.functional.conv2d(x, w, stride=2, padding=1, groups=2)
        (gx,) = minitorch.autograd.grad((out * out).sum(), x, create_graph=True)
        return gx

    def weight_grad(x, w):
        out = minitorch.nn.functional.conv2d(x, w, dilation=2)
        (gw,) = minitorch.autograd.grad(out.sin().sum(), w, create_graph=True)
        return gw

    def transposed_grad(x, w):
        out = minitorch.nn.functional.conv_transpose1d(x, w, stride=2, dilation=3, output_padding=2)
        (gx,) = minitorch.autograd.grad(out.pow(3).sum(), x, create_graph=True)
        return gx

    _finite_differences(input_grad, [randn(1, 4, 4, 4), randn(2, 2, 3, 3)])
    _finite_differences(transposed_grad, [randn(2, 2, 4), randn(2, 3, 2)])
    _finite_differences(weight_grad, [randn(1, 2, 5, 5), randn(3, 2, 2, 2)])


def test_convolution_backward_ops_are_differentiable():
    go, w, x = randn(1, 3, 4, 4), randn(3, 2, 3, 3), randn(1, 2, 6, 6)
    _finite_differences(lambda go, w: minitorch._C.convolution_backward_input(go, w, [1, 2, 6, 6], 1, 0, 1, 1),
                        [go, w])
    _finite_differences(lambda go, x: minitorch._C.convolution_backward_weight(go, x, [3, 2, 3, 3], 1, 0, 1, 1),
                        [go, x])


# ---- pools ----

POOL1D = [
    lambda lib, x: F(lib).max_pool1d(x, 2),
    lambda lib, x: F(lib).max_pool1d(x, 3, 2, 1, ceil_mode=True),
    lambda lib, x: F(lib).max_pool1d(x, (2,), dilation=2, return_indices=True)[1],
    lambda lib, x: F(lib).max_pool1d(x, 3, stride=1, padding=1, return_indices=True)[0],
    lambda lib, x: F(lib).avg_pool1d(x, 3),
    lambda lib, x: F(lib).avg_pool1d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda lib, x: F(lib).adaptive_avg_pool1d(x, 4),
    lambda lib, x: F(lib).adaptive_max_pool1d(x, 3),
    lambda lib, x: F(lib).adaptive_max_pool1d(x, (4,), return_indices=True)[1],
    lambda lib, x: lib.max_pool1d(x, 2),
    lambda lib, x: lib.avg_pool1d(x, 2),
    lambda lib, x: lib.adaptive_avg_pool1d(x, 2),
    lambda lib, x: lib.adaptive_max_pool1d(x, 2)[0],
]


@pytest.mark.parametrize("fn", POOL1D)
@pytest.mark.parametrize("shape", [(2, 3, 9), (3, 7)])
def test_pool1d_matches_torch(fn, shape):
    same_as_torch(fn, [randn(*shape)], layout="transposed", atol=1e-6)


ADAPTIVE_MAX = [(1, 1), (2, 3), (4, 5), (3, None), 3]


@pytest.mark.parametrize("size", ADAPTIVE_MAX)
@pytest.mark.parametrize("shape", [(2, 3, 7, 5), (3, 4, 6), (1, 1, 4, 4)])
def test_adaptive_max_pool2d_matches_torch(size, shape):
    x = randn(*shape)
    same_as_torch(lambda lib, x: F(lib).adaptive_max_pool2d(x, size), [x], layout="sliced")
    same_as_torch(lambda lib, x: F(lib).adaptive_max_pool2d(x, size, return_indices=True)[1], [x], grad=False)


@pytest.mark.parametrize("call", [
    lambda lib, x: F(lib).max_pool1d(x, 2),
    lambda lib, x: F(lib).avg_pool1d(x[0, 0, 0], 2),
    lambda lib, x: F(lib).adaptive_max_pool2d(x[0, 0], 2),
    lambda lib, x: F(lib).adaptive_max_pool2d(x, (-1, 2)),
    lambda lib, x: F(lib).adaptive_avg_pool1d(x, 2),
    lambda lib, x: F(lib).adaptive_max_pool1d(x, 2),
    lambda lib, x: F(lib).max_pool1d(x[0], (2, 2)),
])
def test_pool_errors(call):
    same_error(call, randn(2, 3, 4, 4))


# ---- unfold / fold / pixel shuffle ----

FOLD = [dict(kernel_size=2), dict(kernel_size=(2, 3), stride=(1, 2), padding=1, dilation=(2, 1)),
        dict(kernel_size=3, padding=1, stride=2)]


@pytest.mark.parametrize("kw", FOLD)
def test_unfold_and_fold_match_torch(kw):
    x = randn(2, 3, 6, 7)
    same_as_torch(lambda lib, x: F(lib).unfold(x, **kw), [x], layout="transposed")
    same_as_torch(lambda lib, x: F(lib).unfold(x[0], **kw), [x])
    cols = torch.nn.functional.unfold(torch.tensor(x), **kw).numpy() if torch is not None else None
    if cols is not None:
        same_as_torch(lambda lib, c: F(lib).fold(c, (6, 7), **kw), [cols], layout="sliced", atol=1e-5)
        same_as_torch(lambda lib, c: F(lib).fold(c[0], (6, 7), **kw), [cols], atol=1e-5)


def test_unfold_and_fold_dtypes():
    same_as_torch(lambda lib, x: F(lib).unfold(x, 2, padding=1), [rng.random((1, 2, 3, 3)) > 0.5])
    same_as_torch(lambda lib, x: F(lib).unfold(x, 2), [randn(1, 2, 3, 3, dtype=np.float64)])
    same_error(lambda lib, x: F(lib).unfold(x, 2), np.ones((1, 1, 2, 2), dtype=np.int32))
    same_error(lambda lib, x: F(lib).fold(x, (2, 2), 2), np.ones((1, 4, 1), dtype=np.int64))


def test_unfold_fold_gradients_finite_differences():
    check_grad(lambda m, x: F(m).unfold(x, 2, padding=1, stride=2), [randn(1, 2, 4, 5)])
    check_grad(lambda m, c: F(m).fold(c, (4, 5), 2, padding=1, stride=2), [randn(1, 8, 9)])


@pytest.mark.parametrize("call", [
    lambda lib, x: F(lib).fold(x[0, 0, 0], (3, 3), 2),
    lambda lib, x: F(lib).fold(x[0, :3], (3, 3), 2),
    lambda lib, x: F(lib).fold(x[0, :, :, 0], (3, 3), 2),
    lambda lib, x: F(lib).pixel_shuffle(x[0, 0], 2),
    lambda lib, x: F(lib).pixel_shuffle(x, 3),
    lambda lib, x: F(lib).pixel_unshuffle(x, 3),
])
def test_unfold_fold_pixel_shuffle_errors(call):
    same_error(call, randn(2, 4, 6, 4))


@pytest.mark.parametrize("shape,r", [((2, 8, 3, 2), 2), ((9, 2, 2), 3), ((2, 1, 4, 4, 3), 1)])
def test_pixel_shuffle_and_unshuffle_match_torch(shape, r):
    x = randn(*shape)
    same_as_torch(lambda lib, x: F(lib).pixel_shuffle(x, r), [x], layout="transposed")
    same_as_torch(lambda lib, x: lib.pixel_unshuffle(lib.pixel_shuffle(x, r), r), [x])


# ---- modules ----

MODULES = [
    ("Conv1d(4, 6, 3)", (2, 4, 9)),
    ("Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, bias=False)", (4, 9)),
    ("Conv1d(4, 6, 4, padding='same', padding_mode='reflect')", (2, 4, 9)),
    ("Conv1d(4, 6, 3, padding=2, padding_mode='circular')", (2, 4, 9)),
    ("Conv1d(4, 6, 3, padding=1, padding_mode='replicate')", (2, 4, 9)),
    ("Conv2d(4, 6, 3, padding=1, padding_mode='circular')", (2, 4, 5, 5)),
    ("Conv2d(4, 6, (3, 2), padding=(1, 2), padding_mode='replicate')", (2, 4, 5, 5)),
    ("Conv2d(4, 6, 3, padding='same', padding_mode='reflect')", (2, 4, 5, 5)),
    ("ConvTranspose1d(4, 6, 3, stride=2, output_padding=1)", (2, 4, 5)),
    ("ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2)", (2, 4, 5, 5)),
    ("ConvTranspose2d(4, 2, (2, 3), dilation=2, bias=False)", (4, 3, 3)),
    ("MaxPool1d(3, 2, 1)", (2, 3, 8)),
    ("AvgPool1d(2)", (2, 3, 8)),
    ("AdaptiveAvgPool1d(3)", (2, 3, 8)),
    ("AdaptiveMaxPool1d(3)", (2, 3, 8)),
    ("AdaptiveMaxPool2d((2, 3))", (2, 3, 5, 7)),
    ("Unfold(2, padding=1)", (2, 3, 4, 4)),
    ("Fold((3, 4), 2)", (2, 8, 6)),
    ("PixelShuffle(2)", (2, 8, 2, 3)),
    ("PixelUnshuffle(2)", (2, 2, 4, 6)),
]


@pytest.mark.parametrize("spec,shape", MODULES)
def test_modules_match_torch(spec, shape):
    m = eval("nn." + spec)
    x = randn(*shape)
    params = {k: v.detach().numpy() for k, v in m.state_dict().items()}
    for k, p in m.named_parameters():
        assert p.requires_grad, k
    if torch is None:
        m(minitorch.tensor(x))
        return
    t = eval("torch.nn." + spec)
    assert repr(m) == repr(t)
    assert {k: tuple(v.shape) for k, v in t.state_dict().items()} == {k: p.shape for k, p in params.items()}
    t.load_state_dict({k: torch.tensor(v) for k, v in params.items()})
    xm, xt = minitorch.tensor(x).requires_grad_(True), torch.tensor(x).requires_grad_(True)
    om, ot = m(xm), t(xt)
    np.testing.assert_allclose(om.detach().numpy(), ot.detach().numpy(), atol=1e-5, rtol=1e-5)
    w = np.random.default_rng(2).standard_normal(tuple(ot.shape)).astype(np.float32)
    (om * minitorch.tensor(w)).sum().backward()
    (ot * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), atol=1e-4, rtol=1e-4)
    for (k, p), (_, q) in zip(m.named_parameters(), t.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), atol=1e-4, rtol=1e-4, err_msg=k)


def test_conv_transpose_parameters_init_and_output_size():
    minitorch.manual_seed(0)
    m = nn.ConvTranspose2d(4, 6, (3, 2), stride=2, groups=2)
    assert tuple(m.weight.shape) == (4, 3, 3, 2) and m.transposed and m.output_padding == (0, 0)
    bound = 1 / np.sqrt(3 * 3 * 2)  # fan_in = weight.size(1) * kH * kW
    assert np.abs(m.weight.detach().numpy()).max() <= bound and np.abs(m.bias.detach().numpy()).max() <= bound
    x = minitorch.randn(1, 4, 4, 4)
    assert tuple(m(x).shape) == (1, 6, 9, 8)
    assert tuple(m(x, output_size=(10, 9)).shape) == (1, 6, 10, 9)
    assert tuple(m(x, output_size=[1, 6, 10, 8]).shape) == (1, 6, 10, 8)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(x, output_size=(11, 9))
    m1 = nn.ConvTranspose1d(2, 4, 3, stride=3)
    assert tuple(m1.weight.shape) == (2, 4, 3)
    assert tuple(m1(minitorch.randn(2, 2, 5), output_size=[17]).shape) == (2, 4, 17)
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose2d'):
        nn.ConvTranspose2d(2, 2, 2, padding_mode="reflect")


def test_conv1d_module_attributes_and_errors():
    c = nn.Conv1d(4, 6, 3, stride=2, groups=2)
    assert (c.kernel_size, c.stride, c.padding, c.dilation, c.output_padding) == ((3,), (2,), (0,), (1,), (0,))
    assert tuple(c.weight.shape) == (6, 2, 3)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv1d(2, 2, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv1d(3, 2, 3, groups=2)
