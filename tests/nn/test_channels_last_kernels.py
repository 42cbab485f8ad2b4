"""The CPU kernels that write channels-last results in place (issue 21): conv2d through its direct
kernel and through im2col + gemm (each image, or a chunk of images at once), the poolings, and
batch_norm. Each case runs a channels-last input (and weight) at 1 and 2 threads; the result must
keep PyTorch's strides, equal NumPy's float64 values (conv2d, batch_norm) and PyTorch's, and equal
minitorch's own row-major result, which the row-major loops compute (the poolings: bit for bit,
indices too). Fresh memory is poisoned (tests/conftest.py), so an element a kernel skipped fails."""
import numpy as np
import pytest

import minitorch
from tests.helpers import as_numpy, check, to_layout

try:
    import torch
except ImportError:  # the sanitizer run: the NumPy checks still run
    torch = None

RNG = np.random.default_rng(21)


def np_conv2d(x, w, b=None, stride=1, pad=0, dil=1, groups=1):
    """float64 conv2d: (N, C, H, W) * (OC, C/groups, KH, KW), square stride/padding/dilation."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, _, _ = xp.shape
    oc, cg, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(xp, ((kh - 1) * dil + 1, (kw - 1) * dil + 1), axis=(2, 3))
    win = win[:, :, ::stride, ::stride, ::dil, ::dil]
    oh, ow = win.shape[2:4]
    win = win.reshape(n, groups, cg, oh, ow, kh, kw)
    out = np.einsum("ngchwij,gocij->ngohw", win, w.reshape(groups, oc // groups, cg, kh, kw))
    out = out.reshape(n, oc, oh, ow)
    return out if b is None else out + b[None, :, None, None]


def strides_of(t):
    """The strides that say the layout: those of the dims of size other than 1."""
    return tuple(s if n != 1 else None for s, n in zip(t.stride(), t.shape))


def same_layout_as_torch(got, fn, arrays):
    if torch is None:
        return
    want = fn(torch, *[torch.tensor(a).contiguous(memory_format=torch.channels_last) if a.ndim == 4
                       else torch.tensor(a) for a in arrays])
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        assert strides_of(g) == strides_of(w), f"strides {g.stride()} != PyTorch's {w.stride()}"


# (input shape, weight shape, stride, padding, dilation, groups, bias): the direct kernel (float32,
# few taps: whole and partial blocks of 8 channels, rows of 16, narrow rows, a single output row,
# width strides) and im2col + gemm (float64; float32 with many taps on narrow rows, a 1x1 kernel,
# groups, images too big for one block of col)
CONV_CASES = [
    ((2, 3, 20, 19), (16, 3, 3, 3), 1, 1, 1, 1, True),
    ((2, 3, 9, 7), (5, 3, 3, 3), 2, 1, 1, 1, True),
    ((3, 4, 6, 6), (12, 4, 3, 3), 1, 1, 1, 1, False),
    ((2, 2, 1, 40), (8, 2, 1, 5), 1, (0, 2), 1, 1, True),
    ((2, 6, 11, 11), (6, 2, 3, 3), 1, 0, 2, 3, True),
    ((2, 64, 4, 4), (24, 64, 3, 3), 1, 1, 1, 1, True),
    ((3, 8, 5, 5), (10, 8, 1, 1), 1, 0, 1, 1, True),
    ((2, 8, 7, 6), (12, 4, 3, 3), 1, 1, 1, 2, False),
    ((1, 64, 40, 40), (16, 64, 3, 3), 1, 1, 1, 1, True),
    ((1, 64, 7, 13), (64, 32, 3, 3), 1, 1, 1, 2, True),  # 2 groups of 32: blocks of 8 pixels
    # conv_nhwc.c's register kernel from its padded copy: 64 channels in blocks of 6 pixels with
    # a few left to its simple loop; 2 groups with strides and dilation; runs of one tap (dw = 2);
    # images padded one at a time (each padded copy over 4 MiB, so two chunks)
    ((3, 3, 13, 11), (64, 3, 3, 3), 1, 1, 1, 1, True),
    ((2, 64, 9, 11), (64, 32, 3, 3), 2, 2, 2, 2, True),
    ((2, 3, 13, 11), (48, 3, 3, 3), 1, 2, 2, 1, False),
    ((2, 260, 64, 64), (12, 260, 1, 1), 1, 1, 1, 1, True),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_writes_channels_last(case, dtype, threads):
    xs, ws, stride, pad, dil, groups, bias = case
    arrays = [RNG.standard_normal(xs).astype(dtype), RNG.standard_normal(ws).astype(dtype)]
    arrays += [RNG.standard_normal(ws[0]).astype(dtype)] if bias else []
    pads = pad if isinstance(pad, tuple) else (pad, pad)

    def fn(lib, x, w, b=None):
        return lib.nn.functional.conv2d(x, w, b, stride, pads, dil, groups)

    def ref(x, w, b=None):
        if pads[0] != pads[1]:
            x = np.pad(x, ((0, 0), (0, 0), (0, 0), (pads[1] - pads[0],) * 2))
        return np_conv2d(x, w, b, stride, pads[0], dil, groups)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    out = check(fn, ref, arrays, layout="channels_last", **tol)
    assert out.is_contiguous(memory_format=minitorch.channels_last)
    same_layout_as_torch(out, fn, arrays)
    rows = fn(minitorch, *[minitorch.tensor(a) for a in arrays])
    np.testing.assert_allclose(as_numpy(out), as_numpy(rows), **tol)


def test_conv2d_integers_keep_their_layout_through_the_copy():
    """int64 has no BLAS: its loops write row-major, and the dispatcher's copy lays it out."""
    x, w = RNG.integers(-5, 5, (2, 3, 6, 6)), RNG.integers(-5, 5, (4, 3, 3, 3))
    out = minitorch.nn.functional.conv2d(to_layout(x, "channels_last"), to_layout(w, "channels_last"), padding=1)
    assert out.is_contiguous(memory_format=minitorch.channels_last)
    np.testing.assert_array_equal(as_numpy(out), np_conv2d(x, w, pad=1).astype(np.int64))


def test_conv2d_empty_batch_is_channels_last():
    x = to_layout(np.zeros((0, 3, 5, 5), np.float32), "channels_last")
    out = minitorch.nn.functional.conv2d(x, to_layout(np.ones((8, 3, 3, 3), np.float32), "channels_last"))
    assert tuple(out.shape) == (0, 8, 3, 3)


POOLS = {
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x, 2),
    "max_pool2d_indices": lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1, 2, True, True),
    "avg_pool2d": lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1),
    "avg_pool2d_no_pad": lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, True, False),
    "avg_pool2d_divisor": lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, divisor_override=3),
    "adaptive_avg_pool2d": lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (3, 4)),
    "adaptive_max_pool2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, (4, 3), True),
    "max_pool3d_indices": lambda lib, x: lib.nn.functional.max_pool3d(x, 2, 2, 1, 1, False, True),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", POOLS)
def test_pooling_writes_channels_last(name, dtype, threads):
    fn = POOLS[name]
    if dtype == "int64" and ("adaptive" in name or "divisor" in name or "no_pad" in name):
        pytest.skip("no integer kernel (adaptive), or a mean PyTorch truncates otherwise")
    shape = (2, 19, 4, 9, 8) if name.endswith("3d_indices") else (3, 19, 9, 10)
    a = (RNG.standard_normal(shape) * 10).astype(dtype)
    if dtype != "int64":
        a.flat[::37] = np.nan  # a NaN wins its window (and a later NaN again)
        a.flat[5::41] = np.inf
    x = to_layout(a, "channels_last")
    got = fn(minitorch, x)
    rows = fn(minitorch, minitorch.tensor(a))  # the row-major loops'
    got, rows = (got if isinstance(got, tuple) else (got,)), (rows if isinstance(rows, tuple) else (rows,))
    fmt = minitorch.channels_last_3d if len(shape) == 5 else minitorch.channels_last
    for g, r in zip(got, rows):
        assert g.is_contiguous(memory_format=fmt), g.stride()
        np.testing.assert_array_equal(as_numpy(g), as_numpy(r))
    if torch is not None:
        want = fn(torch, torch.tensor(a).contiguous(
            memory_format=torch.channels_last_3d if len(shape) == 5 else torch.channels_last))
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            assert strides_of(g) == strides_of(w)
            np.testing.assert_allclose(as_numpy(g).astype(np.float64), w.double().numpy(), rtol=1e-6, atol=1e-6)


def test_pooling_of_a_strided_channels_last_input():
    """A channels-last slice (not dense) is laid out densely first; the result is PyTorch's."""
    a = RNG.standard_normal((2, 8, 10, 12))
    x = to_layout(a, "channels_last")[:, 1:7, :, ::2]
    got = minitorch.nn.functional.max_pool2d(x, 2, return_indices=True)
    want = minitorch.nn.functional.max_pool2d(minitorch.tensor(np.ascontiguousarray(a[:, 1:7, :, ::2])), 2,
                                              return_indices=True)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(as_numpy(g), as_numpy(w))
    if torch is not None:
        t = torch.tensor(a).contiguous(memory_format=torch.channels_last)[:, 1:7, :, ::2]
        assert strides_of(got[0]) == strides_of(torch.nn.functional.max_pool2d(t, 2))


def np_batch_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=(0, 2, 3), keepdims=True)
    var = x.var(axis=(0, 2, 3), keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w[None, :, None, None] + b[None, :, None, None]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 3, 9, 7), (2, 64, 20, 21), (1, 5, 1, 1)])
def test_batch_norm_training_writes_channels_last(shape, dtype, threads):
    arrays = [(RNG.standard_normal(shape) * 3 + 2).astype(dtype), RNG.standard_normal(shape[1]).astype(dtype),
              RNG.standard_normal(shape[1]).astype(dtype)]
    if shape[0] * shape[2] * shape[3] == 1:
        pytest.skip("one value per channel: PyTorch refuses to train on it")

    def fn(lib, x, w, b):
        return lib.nn.functional.batch_norm(x, None, None, w, b, training=True)

    tol = {"atol": 1e-4, "rtol": 1e-4} if dtype == "float32" else {}
    out = check(fn, np_batch_norm, arrays, layout="channels_last", **tol)
    assert out.is_contiguous(memory_format=minitorch.channels_last)
    same_layout_as_torch(out, fn, arrays)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_running_statistics_channels_last(training, threads):
    a = RNG.standard_normal((3, 6, 5, 4)).astype(np.float32)
    rm, rv = RNG.standard_normal(6).astype(np.float32), RNG.random(6).astype(np.float32) + 0.5

    def run(lib, x):
        m, v = lib.tensor(rm), lib.tensor(rv)
        y = lib.nn.functional.batch_norm(x, m, v, None, None, training=training, momentum=0.3)
        return y, m, v

    got = run(minitorch, to_layout(a, "channels_last"))
    rows = run(minitorch, minitorch.tensor(a))
    assert got[0].is_contiguous(memory_format=minitorch.channels_last)
    for g, r in zip(got, rows):
        np.testing.assert_allclose(as_numpy(g), as_numpy(r), rtol=1e-6, atol=1e-6)
    if torch is not None:
        want = run(torch, torch.tensor(a).contiguous(memory_format=torch.channels_last))
        assert strides_of(got[0]) == strides_of(want[0])
        for g, w in zip(got, want):
            np.testing.assert_allclose(as_numpy(g), w.numpy(), rtol=1e-5, atol=1e-5)


# ---- the backward ops of a channels-last forward write channels-last gradients ----

def raw_grads(lib, fn, arrays, layout):
    """fn's output and the raw gradients (autograd.grad, which keeps each backward op's layout)
    of its float inputs for a fixed random grad_output laid out as the output."""
    make = (lambda a: to_layout(a, layout)) if lib is minitorch else (
        lambda a: torch.tensor(a).contiguous(memory_format=torch.channels_last) if a.ndim == 4 and
        layout == "channels_last" else torch.tensor(a))
    xs = [make(a).requires_grad_(True) for a in arrays]
    y = fn(lib, *xs)
    y = y[0] if isinstance(y, tuple) else y
    go = np.random.default_rng(5).standard_normal(tuple(y.shape)).astype(arrays[0].dtype)
    go = make(go) if lib is minitorch else torch.tensor(go).contiguous(memory_format=torch.channels_last)
    return lib.autograd.grad(y, xs, go)


BACKWARD = {
    "max_pool2d": (lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1), [(3, 19, 9, 10)]),
    "avg_pool2d": (lambda lib, x: lib.nn.functional.avg_pool2d(x, 3, 2, 1, False, False), [(3, 19, 9, 10)]),
    "adaptive_avg_pool2d": (lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (4, 3)), [(2, 7, 9, 10)]),
    "adaptive_max_pool2d": (lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, (4, 3)), [(2, 7, 9, 10)]),
    "batch_norm": (lambda lib, x, w, b: lib.nn.functional.batch_norm(x, None, None, w, b, training=True),
                   [(4, 20, 9, 7), (20,), (20,)]),
    "conv2d_direct": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), [(2, 3, 20, 19), (16, 3, 3, 3)]),
    "conv2d_gemm": (lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1), [(2, 64, 4, 4), (24, 64, 3, 3)]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", BACKWARD)
def test_gradients_of_channels_last_forwards(name, dtype, threads):
    """The gradients keep PyTorch's layout, and equal the row-major forward's (the poolings: bit
    for bit) and PyTorch's."""
    fn, shapes = BACKWARD[name]
    arrays = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    got = raw_grads(minitorch, fn, arrays, "channels_last")
    rows = raw_grads(minitorch, fn, arrays, "contiguous")
    exact = "pool" in name
    for g, r in zip(got, rows):
        if exact:
            np.testing.assert_array_equal(as_numpy(g), as_numpy(r))
        else:
            tol = 1e-4 if dtype == "float32" else 1e-10
            np.testing.assert_allclose(as_numpy(g), as_numpy(r), rtol=tol, atol=tol)
    assert got[0].is_contiguous(memory_format=minitorch.channels_last), got[0].stride()
    if torch is not None:
        want = raw_grads(torch, fn, arrays, "channels_last")
        for g, w in zip(got, want):
            assert strides_of(g) == strides_of(w), f"{g.stride()} != PyTorch's {w.stride()}"
            tol = 1e-4 if dtype == "float32" else 1e-8
            np.testing.assert_allclose(as_numpy(g), w.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["batch_norm", "max_pool2d", "avg_pool2d"])
def test_gradients_of_channels_last_forwards_against_finite_differences(name):
    fn, shapes = BACKWARD[name]
    arrays = [RNG.standard_normal(s)[:2, :5] if len(s) == 4 else RNG.standard_normal(5) for s in shapes]
    xs = [to_layout(a, "channels_last").requires_grad_(True) for a in arrays]
    minitorch.autograd.gradcheck(lambda *t: fn(minitorch, *t), xs, atol=1e-5, rtol=1e-4)
