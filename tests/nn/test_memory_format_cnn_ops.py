"""channels_last through the CNN ops (issue 20): the results of conv2d/3d, conv_transpose2d,
batch_norm, the poolings, interpolate, relu, dropout and cat, and their gradients, keep the memory
format PyTorch's suggest_memory_format rule gives them. Each case runs in minitorch and PyTorch on
the same inputs, laid out row-major or channels-last (input, weight and grad_output apart), and
compares the strides of the output and of each raw gradient (autograd.grad, which keeps the
backward op's layout), and their values; NumPy checks the values of the channels-last inputs."""
import numpy as np
import pytest

import minitorch
from tests.helpers import as_numpy, check, check_grad, to_layout, torch_layout

try:
    import torch
except ImportError:  # the sanitizer run: the NumPy checks still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


@pytest.fixture(autouse=True)
def convolutions_without_tf32():
    """cuDNN's TF32 off (the emulated device rounds as TF32 does), as tests/cuda's conftest does:
    float32 values are compared with PyTorch's CPU ones."""
    cudnn = minitorch.backends.cudnn
    saved = cudnn.allow_tf32
    cudnn.allow_tf32 = False
    yield
    cudnn.allow_tf32 = saved


RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape)


def conv2d(lib, x, w, b=None, **kw):
    return lib.nn.functional.conv2d(x, w, b, **kw)


# name: (fn(lib, x, *params), x's shape, the params' arrays, whether the values are comparable)
CASES = {
    "conv2d": (lambda lib, x, w: conv2d(lib, x, w, padding=1), (2, 3, 8, 8), [rand(4, 3, 3, 3)]),
    "conv2d_bias_stride": (lambda lib, x, w, b: conv2d(lib, x, w, b, stride=2, padding=1),
                           (2, 3, 9, 7), [rand(5, 3, 3, 3), rand(5)]),
    "conv2d_dilation": (lambda lib, x, w: conv2d(lib, x, w, dilation=2), (2, 3, 9, 9), [rand(4, 3, 3, 3)]),
    "conv2d_groups": (lambda lib, x, w: conv2d(lib, x, w, groups=3), (2, 6, 7, 7), [rand(6, 2, 3, 3)]),
    "conv2d_1x1": (lambda lib, x, w: conv2d(lib, x, w), (2, 8, 5, 5), [rand(4, 8, 1, 1)]),
    "conv_transpose2d": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2),
                         (2, 3, 5, 5), [rand(3, 4, 3, 3)]),
    "conv3d": (lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding=1), (2, 3, 4, 5, 5),
               [rand(4, 3, 3, 3, 3)]),
    "conv3d_float32": (lambda lib, x, w: lib.nn.functional.conv3d(x.float(), w.float(), stride=(1, 2, 1)),
                       (2, 3, 4, 5, 5), [rand(4, 3, 2, 3, 3)]),
    "batch_norm": (lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
                   (3, 4, 5, 5), [rand(4), rand(4)]),
    "batch_norm_eval": (lambda lib, x, m, v: lib.nn.functional.batch_norm(x, m, v.abs() + 0.5),
                        (3, 4, 5, 5), [rand(4), rand(4)]),
    "batch_norm3d": (lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
                     (2, 3, 3, 4, 4), []),
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x, 2), (2, 3, 8, 8), []),
    "max_pool2d_padded": (lambda lib, x: lib.nn.functional.max_pool2d(x, 3, stride=2, padding=1),
                          (2, 3, 9, 8), []),
    "max_pool3d": (lambda lib, x: lib.nn.functional.max_pool3d(x, 2), (2, 3, 4, 4, 4), []),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, stride=2, padding=1), (2, 3, 8, 8), []),
    "avg_pool3d": (lambda lib, x: lib.nn.functional.avg_pool3d(x, 2), (2, 3, 4, 4, 4), []),
    "adaptive_avg_pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (3, 5)), (2, 3, 8, 8), []),
    "adaptive_max_pool2d": (lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, 3), (2, 3, 8, 8), []),
    "adaptive_avg_pool3d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, 2), (2, 3, 4, 4, 4), []),
    "interpolate_nearest": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2), (2, 3, 4, 5), []),
    "interpolate_bilinear": (lambda lib, x: lib.nn.functional.interpolate(x, size=(7, 9), mode="bilinear"),
                             (2, 3, 4, 5), []),
    "interpolate_bicubic": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bicubic",
                                                                         align_corners=True), (2, 3, 4, 5), []),
    "interpolate_trilinear": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="trilinear"),
                              (2, 3, 2, 3, 3), []),
    "relu": (lambda lib, x: lib.nn.functional.relu(x), (2, 3, 4, 5), []),
    "add_relu": (lambda lib, x: lib.relu(x + 1) * 2, (2, 3, 4, 5), []),
    "cat_channels": (lambda lib, x: lib.cat([x, x * 2], 1), (2, 3, 4, 5), []),
    "cat_batch": (lambda lib, x: lib.cat([x, x.sin()], 0), (2, 3, 4, 5), []),
    # constant_pad_nd allocates in the format self suggests (F.pad of a UNet's skip connection)
    "pad_constant": (lambda lib, x: lib.nn.functional.pad(x, (1, 2, 1, 1), value=0.5), (2, 3, 4, 5), []),
    "pad_constant_negative": (lambda lib, x: lib.nn.functional.pad(x, (1, -1, 2, 0)), (2, 3, 4, 5), []),
    # native_group_norm and its backward write in the format the input suggests
    "group_norm": (lambda lib, x: lib.nn.functional.group_norm(x, 2), (2, 4, 3, 5), []),
    "group_norm_affine": (lambda lib, x, w, b: lib.nn.functional.group_norm(x, 2, w, b), (2, 6, 3, 5),
                          [rand(6), rand(6)]),
    "group_norm3d": (lambda lib, x: lib.nn.functional.group_norm(x, 2), (2, 4, 2, 3, 3), []),
}
RUNNING_STATS = {"batch_norm_eval"}  # parameters that take no gradient
RANDOM = {"dropout": (lambda lib, x: lib.nn.functional.dropout(x, 0.5), (2, 3, 4, 5), [])}


def layout_of(t):
    """The strides of t's dims of size other than 1 (a size-1 dim's stride says nothing, and
    PyTorch's backends set it differently: its (4, 8, 1, 1) channels-last weight gradient has
    strides (8, 1, 8, 8) from oneDNN in float32, (8, 1, 1, 1) in float64), and which memory
    formats t is contiguous in."""
    lib = torch if isinstance(t, torch.Tensor) else minitorch
    fmts = {4: [lib.channels_last], 5: [lib.channels_last_3d]}.get(t.dim(), [])
    strides = tuple(s if n != 1 else None for s, n in zip(t.stride(), t.shape))
    return strides, [t.is_contiguous()] + [t.is_contiguous(memory_format=f) for f in fmts]


def run(lib, name, x_layout, p_layout, g_layout, device):
    fn, shape, params = CASES.get(name) or RANDOM[name]
    rng = np.random.default_rng(1)
    x_a = np.random.default_rng(2).standard_normal(shape)
    make = to_layout if lib is minitorch else (lambda a, layout: torch_layout(torch, a, layout))
    x = make(x_a, x_layout)
    ps = [make(a, p_layout) for a in params]
    if lib is minitorch and device != "cpu":
        x, ps = x.to(device), [p.to(device) for p in ps]
    leaves = [t.requires_grad_() for t in [x] + ([] if name in RUNNING_STATS else ps)]
    y = fn(lib, x, *ps)
    go = make(rng.standard_normal(tuple(y.shape)).astype(np.float32 if y.dtype == lib.float32 else np.float64),
              g_layout)
    if lib is minitorch and device != "cpu":
        go = go.to(device)
    grads = lib.autograd.grad(y, leaves, go)
    return y, grads


LAYOUTS = ("contiguous", "channels_last")
# input, parameters and grad_output each row-major or channels-last (the parameters only where one
# is 4-d or 5-d)
LAYOUT_CASES = [(name, x, p, g) for name, case in {**CASES, **RANDOM}.items() for x in LAYOUTS
                for p in (LAYOUTS if any(a.ndim >= 4 for a in case[2]) else LAYOUTS[:1]) for g in LAYOUTS]


@needs_torch
@pytest.mark.parametrize("name, x_layout, p_layout, g_layout", LAYOUT_CASES)
def test_output_and_gradient_layouts_match_pytorch(name, x_layout, p_layout, g_layout, device):
    minitorch.manual_seed(0)
    y, grads = run(minitorch, name, x_layout, p_layout, g_layout, device)
    cudnn_f64 = device == "cuda" and name.startswith("conv") and not name.endswith("float32")
    if cudnn_f64:  # cuDNN keeps float64 row-major (cudnn_conv_suggest_memory_format), as if no input were
        x_layout = p_layout = "contiguous"  # channels-last; PyTorch's CPU kernels here do not
    t_y, t_grads = run(torch, name, x_layout, p_layout, g_layout, "cpu")
    assert layout_of(y) == layout_of(t_y), f"output: {layout_of(y)} != PyTorch's {layout_of(t_y)}"
    for k, (g, t_g) in enumerate(zip(grads, t_grads)):
        assert layout_of(g) == layout_of(t_g), f"gradient {k}: {layout_of(g)} != PyTorch's {layout_of(t_g)}"
    if name in RANDOM:  # dropout's mask is its own in each library
        return
    np.testing.assert_allclose(as_numpy(y), t_y.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg="values")
    for k, (g, t_g) in enumerate(zip(grads, t_grads)):
        if t_g is not None:
            np.testing.assert_allclose(as_numpy(g), t_g.numpy(), rtol=1e-5, atol=1e-6, err_msg=f"gradient {k}")


# ---- values of channels-last inputs against NumPy (float64), and the result's format ----

def np_conv2d(x, w, b=None, stride=1, pad=0):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3))[:, :, ::stride, ::stride]
    out = np.einsum("nchwij,ocij->nohw", win, w)
    return out if b is None else out + b[None, :, None, None]


def np_conv3d(x, w, pad):
    xp = np.pad(x, ((0, 0), (0, 0)) + ((pad, pad),) * 3)
    win = np.lib.stride_tricks.sliding_window_view(xp, w.shape[2:], axis=(2, 3, 4))
    return np.einsum("ncdhwijk,ocijk->nodhw", win, w)


def np_batch_norm(x, w, b, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    mean, var = x.mean(axes, keepdims=True), x.var(axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


def np_pool(x, k, reduce):
    n, c, h, w = x.shape
    return reduce(x[:, :, :h // k * k, :w // k * k].reshape(n, c, h // k, k, w // k, k), axis=(3, 5))


NUMPY = {
    "conv2d": (lambda lib, x, w: conv2d(lib, x, w, padding=1), lambda x, w: np_conv2d(x, w, pad=1),
               [rand(2, 3, 8, 8), rand(4, 3, 3, 3)]),
    "conv2d_bias_stride": (lambda lib, x, w, b: conv2d(lib, x, w, b, stride=2),
                           lambda x, w, b: np_conv2d(x, w, b, stride=2), [rand(2, 3, 9, 7), rand(5, 3, 3, 3), rand(5)]),
    # float32: PyTorch's CPU conv3d keeps channels_last_3d in its oneDNN kernel only (no float64)
    "conv3d": (lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding=1), lambda x, w: np_conv3d(x, w, 1),
               [rand(2, 3, 3, 4, 4).astype(np.float32), rand(2, 3, 3, 3, 3).astype(np.float32)]),
    "batch_norm": (lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
                   np_batch_norm, [rand(3, 4, 5, 5), rand(4), rand(4)]),
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x, 2), lambda x: np_pool(x, 2, np.max),
                   [rand(2, 3, 8, 7)]),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x, 2), lambda x: np_pool(x, 2, np.mean),
                   [rand(2, 3, 8, 8)]),
    "adaptive_avg_pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, 4),
                            lambda x: np_pool(x, 2, np.mean), [rand(2, 3, 8, 8)]),
    "interpolate_nearest": (lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2),
                            lambda x: x.repeat(2, axis=2).repeat(2, axis=3), [rand(2, 3, 4, 5)]),
    "relu": (lambda lib, x: lib.nn.functional.relu(x), lambda x: np.maximum(x, 0), [rand(2, 3, 4, 5)]),
    "cat_channels": (lambda lib, x: lib.cat([x, x * 2], 1), lambda x: np.concatenate([x, x * 2], 1),
                     [rand(2, 3, 4, 5)]),
    "pad_constant": (lambda lib, x: lib.nn.functional.pad(x, (1, 2, 1, 1), value=0.5),
                     lambda x: np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 2)), constant_values=0.5), [rand(2, 3, 4, 5)]),
    "group_norm": (lambda lib, x: lib.nn.functional.group_norm(x, 2),
                   lambda x: ((lambda r: ((r - r.mean(-1, keepdims=True)) / np.sqrt(r.var(-1, keepdims=True) + 1e-5)))(
                       x.reshape(2, 2, -1))).reshape(x.shape), [rand(2, 4, 3, 5)]),
}


@pytest.mark.parametrize("name", list(NUMPY))
def test_channels_last_values_match_numpy_and_stay_channels_last(name, device):
    fn, ref, arrays = NUMPY[name]
    tol = 1e-4 if arrays[0].dtype == np.float32 else 1e-9
    out = check(fn, ref, arrays, layout="channels_last", device=device, atol=tol, rtol=tol)
    fmt = minitorch.channels_last if out.dim() == 4 else minitorch.channels_last_3d
    if device == "cuda" and name.startswith("conv") and arrays[0].dtype == np.float64:
        assert out.is_contiguous(), out.stride()  # cuDNN keeps float64 row-major, as PyTorch's does
    else:
        assert out.is_contiguous(memory_format=fmt) and not out.is_contiguous(), out.stride()


GRADS = {
    "conv2d": (lambda lib, x, w, b: conv2d(lib, x, w, b, padding=1), [rand(2, 3, 4, 4), rand(2, 3, 3, 3), rand(2)]),
    "conv2d_groups": (lambda lib, x, w: conv2d(lib, x, w, stride=2, groups=2), [rand(1, 4, 5, 5), rand(4, 2, 2, 2)]),
    "conv_transpose2d": (lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2),
                         [rand(2, 3, 3, 3), rand(3, 2, 2, 2)]),
    "batch_norm": (lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
                   [rand(3, 2, 3, 3), rand(2), rand(2)]),
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x, 2), [rand(2, 3, 4, 4)]),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, stride=2, padding=1), [rand(2, 3, 5, 4)]),
    "adaptive_avg_pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (2, 3)), [rand(2, 3, 5, 4)]),
    "interpolate_bilinear": (lambda lib, x: lib.nn.functional.interpolate(x, size=(5, 3), mode="bilinear"),
                             [rand(2, 3, 3, 4)]),
    "cat_channels": (lambda lib, x, y: lib.cat([x, y], 1), [rand(2, 3, 2, 3), rand(2, 1, 2, 3)]),
}


@pytest.mark.parametrize("name", list(GRADS))
def test_channels_last_gradients_match_finite_differences(name):
    """Autograd's gradients of channels-last inputs (and weights) equal float64 central
    differences (gradcheck) and PyTorch's."""
    fn, arrays = GRADS[name]
    check_grad(fn, arrays, layout="channels_last")


# ---- the rule's edges ----

def test_ambiguous_and_unbatched_layouts_stay_row_major(device):
    """N111 and 1-channel tensors suggest row-major (PyTorch's rule), and so does an unbatched
    conv2d input: its result is row-major whatever the weight's layout."""
    cl = minitorch.channels_last
    x = minitorch.randn(2, 3, 1, 1, device=device).contiguous(memory_format=cl)
    w = minitorch.randn(4, 3, 1, 1, device=device)
    assert minitorch.nn.functional.conv2d(x, w).stride() == (4, 1, 1, 1)
    y = minitorch.nn.functional.conv2d(minitorch.randn(3, 6, 6, device=device),
                                       minitorch.randn(4, 3, 3, 3, device=device).contiguous(memory_format=cl))
    assert y.stride() == (16, 4, 1)
    x = minitorch.randn(2, 3, 6, 6, device=device)[:, :, ::2]  # a sliced row-major tensor
    assert minitorch.nn.functional.max_pool2d(x, 1).is_contiguous()


@needs_torch
@pytest.mark.parametrize("B, C, L", [(4, 12, 7), (1, 3, 10), (2, 1, 9)])
def test_one_d_layouts_match_pytorch(B, C, L):
    """1-D convolutions and poolings of a permuted (N, L, C) -> (N, C, L) input, the way
    sequence models call them: conv1d and conv_transpose1d make the input contiguous first
    (only a channels-last-like weight, or a 1-channel input's size-1 strides, gives a
    channels-last-like result); max_pool1d is row-major unless it records a gradient. The
    layouts decide the order dropout's draws fill a later result, so a program's numbers follow
    them."""
    x = rand(B, L, C)
    w, wt_t = rand(6, 3, C), rand(C, 4, 3)
    got, ref = [], []
    for lib, out in ((minitorch, got), (torch, ref)):
        xt = lib.tensor(x).permute(0, 2, 1)
        wt = lib.tensor(w).permute(0, 2, 1)
        F = lib.nn.functional
        out += [F.conv1d(xt, wt.contiguous(), padding=1), F.conv1d(lib.tensor(x).transpose(1, 2).contiguous(), wt),
                F.conv_transpose1d(xt, lib.tensor(wt_t)), F.max_pool1d(xt, 2),
                F.max_pool1d(xt.clone().requires_grad_(), 2), F.avg_pool1d(xt, 2)]
    for g, r in zip(got, ref):  # a size-1 dim's stride says nothing of the layout
        assert [st for st, n in zip(g.stride(), g.shape) if n > 1] == \
            [st for st, n in zip(r.stride(), r.shape) if n > 1]
        np.testing.assert_allclose(as_numpy(g.detach()), r.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_cat_of_mixed_formats_is_row_major(device):
    cl = minitorch.channels_last
    a = minitorch.randn(2, 3, 4, 4, device=device)
    b = minitorch.randn(2, 3, 4, 4, device=device).contiguous(memory_format=cl)
    assert minitorch.cat([b, b], 1).is_contiguous(memory_format=cl)
    out = minitorch.cat([a, b], 1)
    assert out.is_contiguous()
    np.testing.assert_array_equal(as_numpy(out), np.concatenate([as_numpy(a), as_numpy(b)], 1))


@needs_torch
def test_empty_results_and_skipped_inputs_match_pytorch(device):
    """An empty channels-last result (strides of 0 outside its size-0 dim, as PyTorch's) is made
    without a copy; cat's format counts the empty 1-d inputs it skips, as PyTorch's does."""
    for lib in (minitorch, torch):
        dev = device if lib is minitorch else "cpu"
        F = lib.nn.functional
        x = lib.ones(2, 3, 4, 4, device=dev).contiguous(memory_format=lib.channels_last)
        for y in (F.adaptive_avg_pool2d(x, (0, 3)), F.adaptive_max_pool2d(x, (0, 3))):
            assert (tuple(y.shape), y.stride()) == ((2, 3, 0, 3), (0, 1, 9, 3)), lib
        assert lib.cat([lib.ones(0, device=dev), x], 1).is_contiguous()
        assert lib.cat([x, x], 0).stride() == (48, 1, 12, 3)


@needs_torch
def test_accumulated_grads_obey_the_layout_of_their_leaf(device):
    """.grad of a leaf is laid out as the leaf (PyTorch's AccumulateGrad layout contract): a
    channels-last parameter of a row-major convolution gets a channels-last .grad, and a row-major
    leaf a row-major one."""
    for lib in (minitorch, torch):
        dev = device if lib is minitorch else "cpu"
        lib.manual_seed(0)
        x = lib.randn(2, 3, 6, 6, device=dev).contiguous(memory_format=lib.channels_last).requires_grad_()
        w = lib.randn(4, 3, 3, 3, device=dev).requires_grad_()
        lib.nn.functional.conv2d(x, w).sum().backward()
        assert x.grad.stride() == x.stride() == (108, 1, 18, 3)
        assert w.grad.stride() == w.stride() == (27, 9, 3, 1)
        y = lib.randn(2, 3, 4, 4, device=dev).requires_grad_()
        (y.contiguous(memory_format=lib.channels_last) * 2).sum().backward()
        assert y.grad.is_contiguous()


@needs_torch
def test_module_and_tensor_conversions_match_pytorch(device):
    """Module.to(memory_format=), Tensor.to(memory_format=), and the preserve_format factories."""
    for lib in (minitorch, torch):
        dev = device if lib is minitorch else "cpu"
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4)).to(device=dev)
        m = m.to(memory_format=lib.channels_last)
        assert m[0].weight.stride() == (27, 1, 9, 3) and m[0].bias.stride() == (1,)
        x = lib.randn(2, 3, 5, 5, device=dev).to(memory_format=lib.channels_last)
        assert x.stride() == (75, 1, 15, 3)
        y = m(x)
        assert y.stride() == (36, 1, 12, 4)
        for like in (lib.empty_like(y), lib.zeros_like(y, memory_format=lib.preserve_format),
                     lib.ones_like(y)):
            assert like.stride() == y.stride()
        assert lib.zeros_like(y, memory_format=lib.contiguous_format).is_contiguous()
        v = lib.randn(1, 2, 2, 2, 2, device=dev).to(memory_format=lib.channels_last_3d)
        assert v.stride() == (16, 1, 8, 4, 2)


@needs_torch
@pytest.mark.parametrize("x_layout", LAYOUTS)
@pytest.mark.parametrize("i_layout", LAYOUTS)
def test_max_unpool2d_follows_its_input_layout(x_layout, i_layout):
    """ATen's max_unpool2d writes in the format its input (not the indices) suggests; values and
    the gradient are PyTorch's whatever the layout."""
    a = np.random.default_rng(3).standard_normal((2, 4, 6, 6))

    def run(lib):
        F = lib.nn.functional
        y, idx = F.max_pool2d(lib.tensor(a), 2, return_indices=True)
        y = (y.contiguous(memory_format=lib.channels_last) if x_layout == "channels_last" else y).requires_grad_()
        idx = idx.contiguous(memory_format=lib.channels_last) if i_layout == "channels_last" else idx.contiguous()
        out = F.max_unpool2d(y, idx, 2)
        out.backward(lib.tensor(np.arange(out.numel(), dtype=np.float64).reshape(out.shape)))
        return out, y.grad

    (out, g), (rout, rg) = run(minitorch), run(torch)
    assert layout_of(out) == layout_of(rout)
    np.testing.assert_array_equal(as_numpy(out), rout.detach().numpy())
    np.testing.assert_array_equal(as_numpy(g), rg.numpy())
