"""conv2d, max_pool2d (with indices), avg_pool2d and adaptive_avg_pool2d against direct NumPy
float64 references and PyTorch: random small shapes, strides, paddings, dilations, groups,
ceil_mode, bias or none, batched and unbatched, non-contiguous layouts, float and integer
dtypes; the journey down to the BLAS; bad calls with PyTorch's exception class and message."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import sliding_window_view

import minitorch
from helpers import LAYOUTS, check, raises_like_torch, same_as_torch, to_layout
from minitorch._journey import record

F = minitorch.nn.functional


def pair(v):
    v = (v,) if isinstance(v, int) else tuple(v)
    return v * 2 if len(v) == 1 else v


def windows(x, k, stride, dilation):
    """x (..., H, W) -> (..., OH, OW, KH, KW): every (dilated, strided) window."""
    (kh, kw), (sh, sw), (dh, dw) = k, stride, dilation
    win = sliding_window_view(x, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(-2, -1))
    return win[..., ::sh, ::sw, ::dh, ::dw]


def pad2(x, ph, pw, value=0.0, extra=(0, 0)):
    """x (..., H, W) padded by (ph, pw) each side, plus `extra` more at the bottom and right."""
    width = [(0, 0)] * (x.ndim - 2) + [(ph, ph + extra[0]), (pw, pw + extra[1])]
    return np.pad(x, width, constant_values=value)


def conv2d_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """Direct convolution: each output is the sum over its window times the kernel."""
    if x.ndim == 3:
        return conv2d_ref(x[None], w, b, stride, padding, dilation, groups)[0]
    (ph, pw) = pair(padding)
    win = windows(pad2(x, ph, pw), w.shape[2:], pair(stride), pair(dilation))  # (N, C, OH, OW, KH, KW)
    cg, og = w.shape[1], w.shape[0] // groups
    out = np.concatenate(
        [np.einsum("nchwij,ocij->nohw", win[:, g * cg:(g + 1) * cg], w[g * og:(g + 1) * og])
         for g in range(groups)], axis=1)
    if b is not None:
        out = out + b[:, None, None]
    return out


def out_size(n, k, p, s, d, ceil_mode):
    o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    return o - 1 if ceil_mode and (o - 1) * s >= n + p else o


def pool_windows(x, k, stride, padding, dilation, ceil_mode, value):
    """The pooling windows (..., OH, OW, KH, KW) of x padded with value (beyond the end too)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k, stride, padding, dilation
    oh = out_size(x.shape[-2], kh, ph, sh, dh, ceil_mode)
    ow = out_size(x.shape[-1], kw, pw, sw, dw, ceil_mode)
    extra = (sh * oh + dh * kh, sw * ow + dw * kw)  # ample room for ceil_mode's last window
    return windows(pad2(x, ph, pw, value, extra), k, stride, dilation)[..., :oh, :ow, :, :]


def max_pool_ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    k = pair(kernel_size)
    s = k if stride is None else pair(stride)
    win = pool_windows(x.astype(np.float64), k, s, pair(padding), pair(dilation), ceil_mode, -np.inf)
    out = win.max(axis=(-2, -1))
    if x.dtype.kind == "i":  # a window of padding only gives the lowest integer
        out = np.where(np.isneginf(out), np.iinfo(x.dtype).min, out)
    return out.astype(x.dtype)


def max_pool_indices_ref(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """Flat h*W+w of each window's first maximum (inputs without NaN)."""
    k = pair(kernel_size)
    s = k if stride is None else pair(stride)
    args = (k, s, pair(padding), pair(dilation), ceil_mode)
    win = pool_windows(x.astype(np.float64), *args, -np.inf)
    flat = np.arange(x.shape[-2] * x.shape[-1], dtype=np.float64).reshape(x.shape[-2:])
    where = pool_windows(np.broadcast_to(flat, x.shape), *args, -1)
    shape = win.shape[:-2] + (-1,)
    at = np.nanargmax(win.reshape(shape), -1)[..., None]  # no NaN here: the first maximum
    return np.take_along_axis(where.reshape(shape), at, -1)[..., 0].astype(np.int64)


def window_counts(n, k, s, p, o):
    """Along one dim, for each of o windows: its taps within the padded input (not counting what
    ceil_mode's last window hangs past the padding), and its taps within the input itself."""
    starts = np.arange(o) * s - p
    ends = np.minimum(starts + k, n + p)
    return ends - starts, np.minimum(ends, n) - np.maximum(starts, 0)


def avg_pool_ref(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
    k, (ph, pw) = pair(kernel_size), pair(padding)
    s = k if stride is None else pair(stride)
    total = pool_windows(x.astype(np.float64), k, s, (ph, pw), (1, 1), ceil_mode, 0).sum(axis=(-2, -1))
    oh, ow = total.shape[-2:]
    pad_h, in_h = window_counts(x.shape[-2], k[0], s[0], ph, oh)
    pad_w, in_w = window_counts(x.shape[-1], k[1], s[1], pw, ow)
    div = divisor_override if divisor_override else np.outer(pad_h, pad_w) if count_include_pad else np.outer(in_h, in_w)
    if x.dtype.kind == "i":
        return np.trunc(total / div).astype(x.dtype)
    return total / div


def adaptive_avg_pool_ref(x, output_size):
    oh, ow = pair(output_size)
    h, w = x.shape[-2:]
    out = np.zeros(x.shape[:-2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            rows = slice(i * h // oh, -(-(i + 1) * h // oh))
            cols = slice(j * w // ow, -(-(j + 1) * w // ow))
            out[..., i, j] = x[..., rows, cols].mean(axis=(-2, -1))
    return out


def values(seed, shape, dtype, low=-2, high=2):
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return rng.integers(low, high + 1, shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


# ---- conv2d ----

@st.composite
def conv_cases(draw):
    groups = draw(st.integers(1, 3))
    cg, og = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = draw(st.sampled_from([1, 2, (1, 2), (3, 1)]))
    dilation = draw(st.sampled_from([1, 2, (2, 1)]))
    padding = draw(st.sampled_from([0, 1, (0, 2), (2, 1)]))
    (dh, dw), (ph, pw) = pair(dilation), pair(padding)
    h = draw(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 7))
    w = draw(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 7))
    batch = draw(st.sampled_from([None, 1, 2]))  # None: an unbatched (C, H, W) input
    x_shape = (groups * cg, h, w) if batch is None else (batch, groups * cg, h, w)
    return dict(x_shape=x_shape, w_shape=(groups * og, cg, kh, kw), groups=groups, stride=stride,
                padding=padding, dilation=dilation)


@given(case=conv_cases(), bias=st.booleans(), dtype=st.sampled_from(["float32", "float64"]),
       layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**16))
def test_conv2d(case, bias, dtype, layout, seed):
    x = values(seed, case["x_shape"], dtype)
    w = values(seed + 1, case["w_shape"], dtype)
    arrays = [x, w] + ([values(seed + 2, case["w_shape"][:1], dtype)] if bias else [])
    kw = {k: case[k] for k in ("stride", "padding", "dilation", "groups")}
    out = check(lambda m, x, w, b=None: m.nn.functional.conv2d(x, w, b, **kw), lambda *a: conv2d_ref(*a, **kw),
                arrays, layout=layout, atol=1e-4, rtol=1e-4, dtype=getattr(minitorch, dtype))
    assert out.is_contiguous()


@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_conv2d_integers(dtype):
    x, w, b = values(0, (2, 4, 6, 5), dtype, -5, 5), values(1, (6, 2, 3, 2), dtype, -5, 5), values(2, (6,), dtype)
    # PyTorch's dilated kernel has no int32
    kw = dict(stride=(2, 1), padding=1, dilation=(1, 2) if dtype == "int64" else 1, groups=2)
    check(lambda m, x, w, b: m.conv2d(x, w, b, **kw), lambda x, w, b: conv2d_ref(x, w, b, **kw), [x, w, b],
          atol=0, rtol=0, dtype=getattr(minitorch, dtype))


def test_conv2d_positional_int_and_list_forms():
    x, w, b = values(0, (1, 3, 7, 6), "float32"), values(1, (4, 3, 3, 3), "float32"), values(2, (4,), "float32")
    for args in [(2, 1, 1, 1), ([2, 1], (1, 0), [1, 2], 1), ((1,), [2])]:
        check(lambda m, x, w, b: m.conv2d(x, w, b, *args), lambda x, w, b: conv2d_ref(x, w, b, *args), [x, w, b],
              atol=1e-5)
    out = minitorch._C.conv2d(minitorch.tensor(x), minitorch.tensor(w), stride=[2, 1], groups=1)
    np.testing.assert_allclose(out.numpy(), conv2d_ref(x, w, stride=(2, 1)), atol=1e-5)


def test_conv2d_1x1_reads_the_image_as_it_lies():
    x, w = values(0, (2, 6, 5, 4), "float64"), values(1, (3, 6, 1, 1), "float64")
    check(lambda m, x, w: m.nn.functional.conv2d(x, w), conv2d_ref, [x, w], layout="transposed")
    check(lambda m, x, w: m.nn.functional.conv2d(x, w, groups=3), lambda x, w: conv2d_ref(x, w[:, :2], groups=3),
          [x, w[:, :2].copy()])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_conv2d_in_blocks_of_output_rows(dtype):
    # col of 576 rows x 40 columns per output row: the kernel fills and multiplies it a few rows at a time
    x, w, b = values(0, (2, 64, 21, 40), dtype), values(1, (6, 32, 3, 3), dtype), values(2, (6,), dtype)
    kw = dict(padding=(1, 2), groups=2)
    check(lambda m, x, w, b: m.conv2d(x, w, b, **kw), lambda x, w, b: conv2d_ref(x, w, b, **kw), [x, w, b],
          layout="transposed", atol=1e-4, rtol=1e-4)


def test_conv2d_empty_batch_and_channels():
    out = minitorch.conv2d(minitorch.zeros(0, 3, 5, 5), minitorch.zeros(4, 3, 3, 3))
    assert tuple(out.shape) == (0, 4, 3, 3)
    # No input channels: no output channels either, bias or not, as PyTorch 2.13 (its Empty
    # backend; tests/nn/test_conv_edge_cases.py compares the gradients with it)
    b = values(0, (4,), "float32")
    out = minitorch.conv2d(minitorch.zeros(2, 0, 5, 5), minitorch.zeros(4, 0, 3, 3), minitorch.tensor(b))
    assert tuple(out.shape) == (2, 0, 3, 3)


@pytest.mark.parametrize("kernel", [(3, 3), (4, 4), (2, 3), (1, 4)])
@pytest.mark.parametrize("dilation", [1, 2, (1, 3)])
def test_conv2d_padding_strings(kernel, dilation):
    x, w = values(0, (2, 2, 7, 11), "float32"), values(1, (3, 2) + kernel, "float32")
    d = pair(dilation)
    total = [di * (k - 1) for di, k in zip(d, kernel)]

    def same_ref(x, w):
        padded = np.pad(x, [(0, 0), (0, 0)] + [(t // 2, t - t // 2) for t in total])
        return conv2d_ref(padded, w, dilation=dilation)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = check(lambda m, x, w: m.nn.functional.conv2d(x, w, padding="same", dilation=dilation), same_ref, [x, w],
                    atol=1e-5)
    assert tuple(out.shape[2:]) == (7, 11) and out.is_contiguous()
    # an uneven split pads one more at the end, and PyTorch warns that it may copy the input
    assert any("zero-padded copy" in str(c.message) for c in caught) == any(t % 2 for t in total)
    check(lambda m, x, w: m.conv2d(x, w, padding="valid", dilation=dilation),
          lambda x, w: conv2d_ref(x, w, dilation=dilation), [x, w], atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2])
def test_conv2d_journey_reaches_the_blas(threads):
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(threads)
    try:
        x, w = minitorch.ones(2, 3, 6, 6), minitorch.ones(4, 3, 3, 3)
        # float32 with few taps (3*3*3) and unit width stride: the direct kernel, no BLAS
        _, events = record(minitorch.conv2d, x, w)
        assert [(e.depth, e.label) for e in events] == [(0, "Op::conv2d"), (1, "Kernel::mt_cpu_conv2d")]
        # many taps (64 * 9) on a small strided plane (4x10: a deep layer's) go through im2col,
        # both images' cols side by side: one gemm
        _, events = record(minitorch.conv2d, minitorch.ones(2, 64, 9, 21), minitorch.ones(4, 64, 3, 3), None, 2)
        labels = [(e.depth, e.label) for e in events]
        assert labels[:2] == [(0, "Op::conv2d"), (1, "Kernel::mt_cpu_conv2d")]
        assert labels[2:] == [(2, "Library::cblas_sgemm")]
        # with unit strides (3x9), Winograd's F(2x2, 3x3): a gemm per position of its 4x4 tiles
        _, events = record(minitorch.conv2d, minitorch.ones(2, 64, 5, 11), minitorch.ones(4, 64, 3, 3))
        assert [e.label for e in events if e.layer == "Library"] == ["Library::cblas_sgemm"] * 16
        # float64 through im2col: one gemm per image on one thread, one for a chunk of small
        # images on more
        gemms = 2 if threads == 1 else 1
        _, events = record(minitorch.conv2d, x.double(), w.double(), None, 1, 0, 1, 1)
        assert [e.label for e in events if e.layer == "Library"] == ["Library::cblas_dgemm"] * gemms
        # a 1x1 kernel reads each image in place: one gemm per image
        _, events = record(minitorch.conv2d, x, minitorch.ones(4, 3, 1, 1))
        assert [e.label for e in events if e.layer == "Library"] == ["Library::cblas_sgemm"] * 2
    finally:
        minitorch.set_num_threads(before)


# ---- pooling ----

@st.composite
def pool_cases(draw, dilation=True):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    stride = draw(st.sampled_from([None, 1, 2, (1, 2), (3, 2)]))
    dil = draw(st.sampled_from([1, 2, (1, 2)])) if dilation else 1
    ph, pw = draw(st.integers(0, kh // 2)), draw(st.integers(0, kw // 2))
    (dh, dw) = pair(dil)
    h = draw(st.integers(max(1, dh * (kh - 1) + 1 - 2 * ph), 7))
    w = draw(st.integers(max(1, dw * (kw - 1) + 1 - 2 * pw), 7))
    batch = draw(st.sampled_from([None, 1, 2]))
    c = draw(st.integers(1, 3))
    shape = (c, h, w) if batch is None else (batch, c, h, w)
    kernel = draw(st.sampled_from([(kh, kw), kh])) if kh == kw else (kh, kw)
    return dict(shape=shape, kernel_size=kernel, stride=stride, padding=(ph, pw) if ph != pw else ph,
                ceil_mode=draw(st.booleans()), **({"dilation": dil} if dilation else {}))


@given(case=pool_cases(), dtype=st.sampled_from(["float32", "float64", "int64", "int32"]),
       layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**16))
def test_max_pool2d(case, dtype, layout, seed):
    shape = case.pop("shape")
    x = values(seed, shape, dtype, -9, 9)
    check(lambda m, x: m.nn.functional.max_pool2d(x, **case), lambda x: max_pool_ref(x, **case), [x],
          layout=layout, atol=0, rtol=0, dtype=getattr(minitorch, dtype))
    if dtype.startswith("float"):  # distinct values: the argmax is unique
        x = np.random.default_rng(seed).permutation(x.size).reshape(shape).astype(dtype)
        out, idx = F.max_pool2d(to_layout(x, layout), **case, return_indices=True)
        np.testing.assert_array_equal(out.numpy(), max_pool_ref(x, **case))
        want = max_pool_indices_ref(x, **case)
        seen = want >= 0  # a window of padding only has no index to agree on (PyTorch's is out of the plane)
        np.testing.assert_array_equal(idx.numpy()[seen], want[seen])
        assert idx.dtype == minitorch.int64


def test_max_pool2d_with_indices_matches_torch():
    torch = pytest.importorskip("torch")
    x = values(0, (2, 3, 7, 6), "float32")
    for kw in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
               dict(kernel_size=(3, 2), stride=(1, 2), padding=(1, 0), dilation=(2, 3))]:
        out, idx = minitorch._C.max_pool2d_with_indices(minitorch.tensor(x), **kw)
        t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(x), **kw, return_indices=True)
        np.testing.assert_array_equal(out.numpy(), t_out.numpy())
        np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    assert isinstance(F.max_pool2d(minitorch.tensor(x), 2, return_indices=True), tuple)


def test_max_pool2d_nan_and_inf():
    x = values(0, (1, 2, 4, 4), "float32")
    x[0, 0, 1, 1] = np.nan
    x[0, 1, 0, 0] = -np.inf
    x[0, 1, 3, 3] = np.inf
    check(lambda m, x: m.max_pool2d(x, 2), lambda x: max_pool_ref(x, 2), [x], atol=0, rtol=0)
    out = minitorch.max_pool2d(minitorch.full((1, 1, 2, 2), -math.inf), 2, padding=1)
    assert out.tolist() == [[[[-math.inf, -math.inf], [-math.inf, -math.inf]]]]


@given(case=pool_cases(dilation=False), dtype=st.sampled_from(["float32", "float64", "int64"]),
       count_include_pad=st.booleans(), divisor=st.sampled_from([None, None, 1, 3, -2]),
       layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**16))
def test_avg_pool2d(case, dtype, count_include_pad, divisor, layout, seed):
    shape = case.pop("shape")
    x = values(seed, shape, dtype, -9, 9)
    kw = dict(case, count_include_pad=count_include_pad, divisor_override=divisor)
    check(lambda m, x: m.nn.functional.avg_pool2d(x, **kw), lambda x: avg_pool_ref(x, **kw), [x],
          layout=layout, atol=1e-5, dtype=getattr(minitorch, dtype))


@given(shape=st.sampled_from([(2, 3, 7, 6), (3, 5, 5), (1, 1, 1, 9), (0, 2, 4, 4), (2, 0, 3, 3)]),
       size=st.sampled_from([1, 2, 3, (4, 5), (7, 2), (9, 11), (1, 3), (0, 2)]),
       dtype=st.sampled_from(["float32", "float64"]), layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2**16))
def test_adaptive_avg_pool2d(shape, size, dtype, layout, seed):
    x = values(seed, shape, dtype)
    check(lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, size), lambda x: adaptive_avg_pool_ref(x, size), [x],
          layout=layout, atol=1e-5, dtype=getattr(minitorch, dtype))
    out = minitorch._C.adaptive_avg_pool2d(to_layout(x, layout), size)  # the kernel, without the 1x1 shortcut
    np.testing.assert_allclose(out.numpy(), adaptive_avg_pool_ref(x, size), atol=1e-5)


def test_adaptive_avg_pool2d_none_keeps_the_input_size():
    x = values(0, (2, 3, 6, 5), "float64")
    for size in [(None, 2), (3, None), (None, None)]:
        check(lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, size),
              lambda x: adaptive_avg_pool_ref(x, tuple(d or n for d, n in zip(size, x.shape[2:]))), [x])


BLOCK_POOLS = [  # the kinds of window of the row-major pools
    lambda L, x: L.nn.functional.max_pool2d(x, 2),
    lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1, ceil_mode=True),
    lambda L, x: L.nn.functional.max_pool2d(x, (3, 2), (1, 2), (1, 0), dilation=(2, 3)),
    lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda L, x: L.nn.functional.avg_pool2d(x, 2, divisor_override=3),
    lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, (3, 5)),
    lambda L, x: L.nn.functional.adaptive_max_pool2d(x, (3, 5)),
]


@pytest.mark.parametrize("planes", [8, 13 * 8 + 3, 300])  # one block; the last block short; many
@pytest.mark.parametrize("hw", [(4, 4), (7, 6), (33, 31)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_row_major_pools_in_blocks_of_planes(threads, planes, hw, layout):
    """8 planes or more of a row-major input pool a block of planes at a time, the block
    transposed so that the channels-last loop runs across its planes: values, indices and
    gradients as PyTorch's, NaN and infinities where they fall, every kind of window."""
    torch = pytest.importorskip("torch")
    x = values(planes, (planes // 4, 4) + hw if planes % 4 == 0 else (planes,) + hw, "float32", -9, 9)
    flat = x.reshape(-1)
    flat[::37], flat[5::41], flat[11::43] = np.nan, np.inf, -np.inf
    for fn in BLOCK_POOLS:
        same_as_torch(fn, [x], layout=layout)
    for k, kw in [(2, {}), (3, dict(stride=2, padding=1, ceil_mode=True))]:
        out, idx = F.max_pool2d(to_layout(x, layout), k, **kw, return_indices=True)
        t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(x), k, **kw, return_indices=True)
        np.testing.assert_array_equal(out.numpy(), t_out.numpy())
        np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
    _, idx = F.adaptive_max_pool2d(to_layout(x, layout), (3, 5), return_indices=True)
    _, t_idx = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), (3, 5), return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())


@pytest.mark.parametrize("dtype", ["float64", "int64", "int32"])
def test_row_major_pools_in_blocks_of_every_dtype(threads, dtype):
    """The blocks' transposes move 4- and 8-byte elements; max_pool3d's windows too."""
    torch = pytest.importorskip("torch")
    x = values(1, (3, 5, 9, 8), dtype, -50, 50)
    for fn in (lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1),
               lambda L, x: L.nn.functional.max_pool3d(x.unsqueeze(0), 2, 1),
               lambda L, x: L.nn.functional.avg_pool2d(x, 2)):
        same_as_torch(fn, [x], grad=dtype == "float64")  # (both refuse avg_pool2d of int32 alike)


def test_pooling_names_as_in_torch():
    assert callable(minitorch.max_pool2d) and callable(minitorch.conv2d)
    # PyTorch has no torch.avg_pool2d or torch.adaptive_avg_pool2d: only the nn.functional forms
    assert not hasattr(minitorch, "avg_pool2d") and not hasattr(minitorch, "adaptive_avg_pool2d")


# ---- bad calls: PyTorch's exception class and message ----

def same_error(fn, *arrays):
    cls = raises_like_torch(fn, *arrays)
    with pytest.raises(cls) as got:
        fn(minitorch, *[minitorch.tensor(a) for a in arrays])
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as want:
        fn(torch, *[torch.tensor(a) for a in arrays])
    assert str(got.value) == str(want.value)


def f32(*shape):
    return np.ones(shape, np.float32)


BAD_CONV = [
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(1, 4, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(3, 5, 5), f32(8, 4, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(1, 3, 2, 2), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, dilation=2, padding=(0, 1)), f32(1, 3, 4, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=2), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=2), f32(1, 4, 5, 5), f32(5, 2, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=0), f32(1, 4, 5, 5), f32(6, 2, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(2, 3, 5, 5), f32(0, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=0), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=(1, -1)), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, padding=-1, stride=0), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, dilation=(1, 0)), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=(1, 1, 1)), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, padding=[1, 1, 1]), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=[]), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(1, 1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(1, 3, 5, 5), f32(8, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(1, 3, 5, 5), f32(8, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w), f32(1, 3, 5, 5), f32(8, 3, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, m.ones(7)), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, m.ones(8, 1)), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, m.ones(8, dtype=m.float64)), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x.double(), w), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w.long()), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x.bool(), w.bool()), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x.bool(), w.bool(), dilation=2), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x.int(), w.int(), dilation=(1, 2)), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, padding="foo"), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, padding="same", stride=2), f32(1, 3, 5, 5), f32(8, 3, 3, 3)),
]

BAD_POOL = [
    (lambda m, x: m.nn.functional.max_pool2d(x, 3, padding=2), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 3, 1, 2, 2), f32(1, 3, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 0), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, -1, 1), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, stride=-1), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, padding=-1), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, dilation=(1, 0)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, (2, 2, 2)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, stride=(1, 1, 1)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, padding=(1, 1, 1)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2, dilation=(1, 1, 1)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 6), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2), f32(1, 4, 1, 1)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2), f32(4, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2), f32(1, 0, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x, 2), f32(3, 0, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x.bool(), 2), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.max_pool2d(x.bool(), 2, return_indices=True), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 2, padding=2), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 0), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 2, 0, -1), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 6), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, (2, 2, 2)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 2, stride=(2, 2, 2)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 2, 1, (1, 1, 1)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 2, divisor_override=0), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 1), f32(5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 1), f32(5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 1), f32(1, 1, 2, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x, 2), f32(1, 4, 5, 0)),
    (lambda m, x: m.nn.functional.avg_pool2d(x.int(), 2), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.avg_pool2d(x.bool(), 2), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (3, 2, 1)), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, -1), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 2), f32(5, 5)),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 2), f32(1, 1, 0, 5)),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x.long(), 2), f32(1, 4, 5, 5)),
    (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, (2, None)), f32(5, 5)),
]


@pytest.mark.parametrize("i", range(len(BAD_CONV)))
def test_conv2d_bad_calls(i):
    fn, *arrays = BAD_CONV[i]
    same_error(fn, *arrays)


@pytest.mark.parametrize("i", range(len(BAD_POOL)))
def test_pool_bad_calls(i):
    fn, *arrays = BAD_POOL[i]
    same_error(fn, *arrays)


def test_scalar_input_to_avg_pool2d():
    with pytest.raises(IndexError, match="Dimension specified as -3 but tensor has no dimensions"):
        F.avg_pool2d(minitorch.tensor(1.0), 1)
