"""3-D pooling (max_pool3d with indices, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d),
max unpooling (1-D, 2-D, 3-D), conv_transpose3d and their modules: values, indices and gradients
against PyTorch on the same inputs (non-contiguous, empty batch, NaN), finite differences in
float64, double backward, errors with PyTorch's classes and messages."""
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


# ---- max_pool3d ----

MAX3D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=(2, 3, 2), stride=(1, 2, 1), padding=(1, 1, 0), dilation=(2, 1, 2)),
    dict(kernel_size=2, stride=2, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
]


@pytest.mark.parametrize("kw", MAX3D)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_max_pool3d_matches_torch(kw, layout):
    x = randn(2, 3, 5, 6, 7)
    same_as_torch(lambda lib, x: F(lib).max_pool3d(x, **kw), [x], layout=layout)
    same_as_torch(lambda lib, x: F(lib).max_pool3d(x, return_indices=True, **kw)[1], [x], layout=layout,
                  grad=False)


def test_max_pool3d_unbatched_empty_batch_nan_ints_and_function_form():
    x = randn(3, 4, 5, 6)
    x[0, 1, 2, 3] = np.nan
    x[1, 0, 0, 0] = np.nan
    x[1, 0, 0, 1] = np.nan
    same_as_torch(lambda lib, x: F(lib).max_pool3d(x, 2, return_indices=True)[1], [x], grad=False)
    same_as_torch(lambda lib, x: F(lib).max_pool3d(x, 2, 1), [x])
    same_as_torch(lambda lib, x: lib.max_pool3d(x, [2, 2, 3], [], 1, 1, True), [x])
    same_as_torch(lambda lib, x: F(lib).max_pool3d(x, 2), [randn(0, 2, 4, 4, 4)])
    ints = rng.integers(-50, 50, (2, 3, 4, 5, 6))
    same_as_torch(lambda lib, x: F(lib).max_pool3d(x, 2, padding=1, return_indices=True)[0], [ints])


def test_max_pool3d_gradients_finite_differences_and_node():
    # distinct values, so that no window's maximum is a tie a finite difference would split
    x = rng.permutation(2 * 2 * 4 * 5 * 4).reshape(2, 2, 4, 5, 4).astype(np.float64) / 7
    check_grad(lambda m, x: F(m).max_pool3d(x, 3, stride=(1, 2, 1), padding=1, dilation=(1, 1, 2)), [x])
    t = minitorch.tensor(x, requires_grad=True)
    assert F(minitorch).max_pool3d(t, 2).grad_fn.name() == "MaxPool3DWithIndicesBackward0"
    assert nn.MaxPool3d(2)(t.detach()).grad_fn is None


# ---- avg_pool3d ----

AVG3D = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 0, 1), ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=2, stride=1, padding=1, divisor_override=3),
]


@pytest.mark.parametrize("kw", AVG3D)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_avg_pool3d_matches_torch(kw, layout):
    same_as_torch(lambda lib, x: F(lib).avg_pool3d(x, **kw), [randn(2, 3, 5, 6, 7)], layout=layout, atol=1e-5)


def test_avg_pool3d_unbatched_empty_long_and_gradients():
    same_as_torch(lambda lib, x: F(lib).avg_pool3d(x, 2, 1, 1, True, False), [randn(3, 4, 4, 5)], atol=1e-5)
    same_as_torch(lambda lib, x: F(lib).avg_pool3d(x, 2), [randn(0, 2, 4, 4, 4)])
    same_as_torch(lambda lib, x: F(lib).avg_pool3d(x, 2, padding=1), [rng.integers(-50, 50, (1, 2, 4, 5, 6))])
    check_grad(lambda m, x: F(m).avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
               [randn(2, 2, 5, 4, 6)])
    check_grad(lambda m, x: F(m).avg_pool3d(x, 2, 1, 1, divisor_override=5), [randn(1, 2, 3, 4, 3)])


# ---- adaptive pools ----

@pytest.mark.parametrize("size", [2, (3, 2, 4), (None, 3, 1), (5, 7, 6), 1, (4, 1, 3), (0, 2, 2)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_adaptive_avg_pool3d_matches_torch(size, layout):
    same_as_torch(lambda lib, x: F(lib).adaptive_avg_pool3d(x, size), [randn(2, 3, 5, 7, 6)], layout=layout,
                  atol=1e-5)


@pytest.mark.parametrize("size", [2, (3, 2, 4), (None, 3, 1), (5, 7, 6), 1])
@pytest.mark.parametrize("layout", ["contiguous", "sliced"])
def test_adaptive_max_pool3d_matches_torch(size, layout):
    x = randn(2, 3, 5, 7, 6)
    same_as_torch(lambda lib, x: F(lib).adaptive_max_pool3d(x, size), [x], layout=layout)
    same_as_torch(lambda lib, x: F(lib).adaptive_max_pool3d(x, size, return_indices=True)[1], [x], layout=layout,
                  grad=False)


def test_adaptive_pools_3d_unbatched_empty_and_gradients():
    x = randn(3, 4, 5, 6)
    same_as_torch(lambda lib, x: F(lib).adaptive_avg_pool3d(x, (2, 3, 4)), [x], atol=1e-5)
    same_as_torch(lambda lib, x: F(lib).adaptive_max_pool3d(x, (2, 3, 4), True)[1], [x], grad=False)
    same_as_torch(lambda lib, x: F(lib).adaptive_avg_pool3d(x, 2), [randn(0, 2, 3, 3, 3)])
    same_as_torch(lambda lib, x: F(lib).adaptive_max_pool3d(x, 2), [randn(0, 2, 3, 3, 3)])
    check_grad(lambda m, x: F(m).adaptive_avg_pool3d(x, (2, 3, 2)), [randn(2, 2, 5, 4, 3)])
    distinct = rng.permutation(2 * 4 * 5 * 3).reshape(1, 2, 4, 5, 3).astype(np.float64)
    check_grad(lambda m, x: F(m).adaptive_max_pool3d(x, (3, 2, 2)), [distinct])
    t = minitorch.randn(1, 2, 4, 4, 4, requires_grad=True)
    assert F(minitorch).avg_pool3d(t, 2).grad_fn.name() == "AvgPool3DBackward0"
    assert F(minitorch).adaptive_avg_pool3d(t, 3).grad_fn.name() == "AdaptiveAvgPool3DBackward0"


def test_backward_ops_match_atens():
    C = minitorch._C
    x = randn(2, 3, 5, 4, 6).astype(np.float64)
    mx = minitorch.tensor(x)
    pool = ([3, 2, 3], [2, 1, 2], [1, 1, 1])
    out, idx = C.max_pool3d_with_indices(mx, *pool, [1, 1, 1], True)
    g = randn(*out.shape).astype(np.float64)
    mg = minitorch.tensor(g)
    got = C.max_pool3d_with_indices_backward(mg, mx, *pool, [1, 1, 1], True, idx)
    with pytest.raises(IndexError, match=r"^max_pool3d_with_indices_backward: an index is outside its plane of 120 "):
        C.max_pool3d_with_indices_backward(mg, mx, *pool, [1, 1, 1], True, idx + 1000)
    avg = C.avg_pool3d_backward(mg, mx, *pool, True, False, None)
    adaptive = C._adaptive_avg_pool3d_backward(minitorch.tensor(g[:, :, :2]), mx)
    assert tuple(got.shape) == tuple(avg.shape) == tuple(adaptive.shape) == x.shape
    if torch is None:
        return
    aten, tx = torch.ops.aten, torch.tensor(x)
    t_out, t_idx = aten.max_pool3d_with_indices(tx, *pool, [1, 1, 1], True)
    np.testing.assert_array_equal(np.asarray(idx), t_idx.numpy())
    np.testing.assert_allclose(np.asarray(out), t_out.numpy())
    tg = torch.tensor(g)
    np.testing.assert_allclose(np.asarray(got), aten.max_pool3d_with_indices_backward(
        tg, tx, *pool, [1, 1, 1], True, t_idx).numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(avg), aten.avg_pool3d_backward(tg, tx, *pool, True, False, None).numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(adaptive), aten._adaptive_avg_pool3d_backward(tg[:, :, :2], tx).numpy(),
                               atol=1e-12)


# ---- double backward (gradient penalties) ----

def _grad_of_grad(lib, fn, x):
    t = lib.tensor(x).requires_grad_(True)
    out = fn(lib, t)
    weight = lib.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    (g,) = lib.autograd.grad((out * weight).sum(), t, create_graph=True)
    (g * g * lib.tensor(np.random.default_rng(2).standard_normal(tuple(g.shape)))).sum().backward()
    return g.detach().numpy(), None if t.grad is None else t.grad.numpy()


@pytest.mark.parametrize("fn", [
    lambda lib, x: F(lib).avg_pool3d(x, 2, 1, 1) * x.sum(),
    lambda lib, x: F(lib).avg_pool2d(x[0], 3, 2, 1, count_include_pad=False) * x.sum(),
    lambda lib, x: F(lib).adaptive_avg_pool3d(x, (2, 3, 2)) * x.sum(),
    lambda lib, x: F(lib).adaptive_avg_pool2d(x[0], (3, 2)) * x.sum(),
    lambda lib, x: F(lib).max_pool3d(x, 2, 1) * x.sum(),
])
def test_pool_double_backward_matches_torch(fn):
    x = rng.permutation(2 * 3 * 4 * 5).reshape(1, 2, 3, 4, 5).astype(np.float64) / 11
    got = _grad_of_grad(minitorch, fn, x)
    if torch is not None:
        want = _grad_of_grad(torch, fn, x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, atol=1e-9, rtol=1e-9)


# ---- errors ----

@pytest.mark.parametrize("call", [
    lambda lib, x: F(lib).max_pool3d(x, 0),
    lambda lib, x: F(lib).max_pool3d(x, 2, 0),
    lambda lib, x: F(lib).max_pool3d(x, 2, 1, 0, 0),
    lambda lib, x: F(lib).max_pool3d(x, (2, 2)),
    lambda lib, x: F(lib).max_pool3d(x, 2, (1, 1)),
    lambda lib, x: F(lib).max_pool3d(x, 2, 1, (1, 1)),
    lambda lib, x: F(lib).max_pool3d(x, 2, 1, 0, (1, 1)),
    lambda lib, x: F(lib).max_pool3d(x[0, 0], 2),
    lambda lib, x: F(lib).max_pool3d(x[:, :0], 2),
    lambda lib, x: F(lib).max_pool3d(x[0, :0], 2),
    lambda lib, x: F(lib).max_pool3d(x, 3, 1, 2),
    lambda lib, x: F(lib).max_pool3d(x, 5),
    lambda lib, x: F(lib).max_pool3d(x, -1),
    lambda lib, x: F(lib).max_pool3d(x, 2, padding=-1),
    lambda lib, x: F(lib).avg_pool3d(x, 0),
    lambda lib, x: F(lib).avg_pool3d(x, (2, 2)),
    lambda lib, x: F(lib).avg_pool3d(x, 2, (1, 1)),
    lambda lib, x: F(lib).avg_pool3d(x, 2, 1, (1, 1)),
    lambda lib, x: F(lib).avg_pool3d(x, 2, divisor_override=0),
    lambda lib, x: F(lib).avg_pool3d(x, 5),
    lambda lib, x: F(lib).avg_pool3d(x, 3, 1, 2),
    lambda lib, x: F(lib).avg_pool3d(x[0, 0], 2),
    lambda lib, x: F(lib).avg_pool3d(x[:, :0], 2),
    lambda lib, x: F(lib).avg_pool3d(x.int(), 2),
    lambda lib, x: F(lib).adaptive_avg_pool3d(x, (2, 2)),
    lambda lib, x: F(lib).adaptive_avg_pool3d(x, (-1, 2, 2)),
    lambda lib, x: F(lib).adaptive_avg_pool3d(x[0, 0], 2),
    lambda lib, x: F(lib).adaptive_avg_pool3d(x[:, :0], 2),
    lambda lib, x: F(lib).adaptive_avg_pool3d(x.long(), 2),
    lambda lib, x: F(lib).adaptive_max_pool3d(x, (-1, 2, 2)),
    lambda lib, x: F(lib).adaptive_max_pool3d(x[0, 0], 2),
    lambda lib, x: F(lib).adaptive_max_pool3d(x[:, :0], 2),
    lambda lib, x: F(lib).adaptive_max_pool3d(x.long(), 2),
    lambda lib, x: F(lib).adaptive_max_pool2d(x[0].long(), 2),
])
def test_pool3d_errors(call):
    same_error(call, randn(2, 3, 4, 5, 6))


# ---- max unpooling ----

@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_max_unpool_inverts_max_pool_like_torch(layout):
    x1, x2, x3 = randn(2, 3, 9), randn(2, 3, 6, 7), randn(2, 2, 4, 5, 6)
    same_as_torch(lambda lib, x: F(lib).max_unpool1d(*F(lib).max_pool1d(x, 3, 2, 1, return_indices=True), 3, 2, 1),
                  [x1], layout=layout)
    same_as_torch(lambda lib, x: F(lib).max_unpool2d(*F(lib).max_pool2d(x, 2, return_indices=True), 2,
                                                     output_size=(7, 7)), [x2], layout=layout)
    same_as_torch(lambda lib, x: F(lib).max_unpool2d(*F(lib).max_pool2d(x, 3, (2, 1), 1, return_indices=True),
                                                     3, (2, 1), 1), [x2], layout=layout)
    same_as_torch(lambda lib, x: F(lib).max_unpool3d(*F(lib).max_pool3d(x, 2, return_indices=True), 2,
                                                     output_size=[2, 2, 5, 5, 7]), [x3], layout=layout)
    same_as_torch(lambda lib, x: nn.MaxUnpool3d(2, 1)(*F(lib).max_pool3d(x, 2, 1, return_indices=True))
                  if lib is minitorch else lib.nn.MaxUnpool3d(2, 1)(*F(lib).max_pool3d(x, 2, 1, return_indices=True)),
                  [x3], layout=layout)


def test_max_unpool_gradients_and_nodes():
    x = randn(2, 3, 4, 4).astype(np.float64)
    idx = rng.permutation(36)[:16].reshape(1, 1, 4, 4).repeat(2, 0).repeat(3, 1)
    check_grad(lambda m, x, i: F(m).max_unpool2d(x, i, 3, 1, output_size=(6, 6)), [x, idx])
    x3 = randn(1, 2, 2, 2, 2).astype(np.float64)
    i3 = rng.permutation(27)[:8].reshape(1, 1, 2, 2, 2).repeat(2, 1)
    check_grad(lambda m, x, i: F(m).max_unpool3d(x, i, 2, 1), [x3, i3])
    same_as_torch(lambda lib, x: F(lib).max_unpool2d(x, lib.zeros(0, 3, 2, 2, dtype=lib.int64), 2),
                  [randn(0, 3, 2, 2)])


@pytest.mark.parametrize("call", [
    lambda lib, x, i: F(lib).max_unpool2d(x, i + 100, 2),
    lambda lib, x, i: F(lib).max_unpool2d(x, i - 1, 2),
    lambda lib, x, i: F(lib).max_unpool2d(x, i, 2, output_size=(9, 9)),
    lambda lib, x, i: F(lib).max_unpool2d(x, i, 2, output_size=(4, 4, 4)),
    lambda lib, x, i: F(lib).max_unpool2d(x, i.int(), 2),
    lambda lib, x, i: F(lib).max_unpool2d(x, i[..., :1], 2),
    lambda lib, x, i: F(lib).max_unpool2d(x[0, 0], i[0, 0], 2),
    lambda lib, x, i: F(lib).max_unpool2d(x[:, :0], i[:, :0], 2),
    lambda lib, x, i: F(lib).max_unpool1d(x[0], i[0] + 100, 2),
    lambda lib, x, i: F(lib).max_unpool3d(x, i + 100, 2),
    lambda lib, x, i: F(lib).max_unpool3d(x[0], i[0], 2),
    lambda lib, x, i: F(lib).max_unpool3d(x, i[..., :1], 2),
])
def test_max_unpool_errors(call):
    same_error(call, randn(1, 2, 2, 2), np.zeros((1, 2, 2, 2), dtype=np.int64))


# ---- conv_transpose3d ----

CONVT3D = [
    dict(),
    dict(stride=2),
    dict(stride=2, padding=1, output_padding=1),
    dict(stride=(2, 1, 3), padding=(1, 0, 1), output_padding=(1, 0, 2), dilation=(1, 2, 1)),
    dict(dilation=2, padding=1),
    dict(groups=2, stride=(1, 2, 2)),
]


@pytest.mark.parametrize("kw", CONVT3D)
@pytest.mark.parametrize("layout", ["contiguous", "sliced"])
def test_conv_transpose3d_matches_torch(kw, layout):
    x, w, b = randn(2, 4, 3, 4, 3), randn(4, 3, 2, 3, 2), randn(3 * kw.get("groups", 1))
    same_as_torch(lambda lib, x, w, b: F(lib).conv_transpose3d(x, w, b, **kw), [x, w, b], layout=layout,
                  atol=1e-4, rtol=1e-4)


def test_conv_transpose3d_unbatched_empty_function_form_and_gradients():
    x, w = randn(4, 2, 3, 3), randn(4, 2, 2, 2, 2)
    same_as_torch(lambda lib, x, w: lib.conv_transpose3d(x, w, None, 2, 0, 1, 1, 1), [x, w], atol=1e-5)
    same_as_torch(lambda lib, x, w: F(lib).conv_transpose3d(x, w), [randn(0, 4, 2, 2, 2), w], atol=1e-5)
    check_grad(lambda m, x, w, b: F(m).conv_transpose3d(x, w, b, stride=2, padding=1, output_padding=1),
               [randn(1, 2, 2, 3, 2), randn(2, 2, 3, 2, 3), randn(2)])


@pytest.mark.parametrize("call", [
    lambda lib, x, w: F(lib).conv_transpose3d(x, w, stride=1, output_padding=1),
    lambda lib, x, w: F(lib).conv_transpose3d(x, w, stride=2, output_padding=(1, 2, 1)),
    lambda lib, x, w: F(lib).conv_transpose3d(x[:, :3], w),
    lambda lib, x, w: F(lib).conv_transpose3d(x[0, :, 0], w),
    lambda lib, x, w: F(lib).conv_transpose3d(x, w, w[0, :, 0, 0]),
    lambda lib, x, w: F(lib).conv_transpose3d(x, w, stride=0),
    lambda lib, x, w: F(lib).conv_transpose3d(x, w, stride=(1, 2)),
    lambda lib, x, w: F(lib).conv_transpose3d(x, w[:, :, 0]),
    lambda lib, x, w: F(lib).conv_transpose3d(x, w, groups=3),
])
def test_conv_transpose3d_errors(call):
    same_error(call, randn(2, 4, 3, 5, 6), randn(4, 3, 2, 3, 3))


# ---- modules ----

def test_modules_match_torch_with_the_same_weights():
    if torch is None:
        pytest.skip("needs PyTorch")
    x = randn(2, 4, 4, 5, 6)
    pairs = [
        (nn.MaxPool3d(2, 1, 1), torch.nn.MaxPool3d(2, 1, 1)),
        (nn.AvgPool3d(3, 2, 1, count_include_pad=False), torch.nn.AvgPool3d(3, 2, 1, count_include_pad=False)),
        (nn.AdaptiveAvgPool3d((2, None, 3)), torch.nn.AdaptiveAvgPool3d((2, None, 3))),
        (nn.AdaptiveMaxPool3d(2), torch.nn.AdaptiveMaxPool3d(2)),
    ]
    conv, tconv = nn.ConvTranspose3d(4, 6, 3, stride=2, padding=1, groups=2), torch.nn.ConvTranspose3d(
        4, 6, 3, stride=2, padding=1, groups=2)
    conv.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in tconv.state_dict().items()})
    pairs.append((conv, tconv))
    for mine, theirs in pairs:
        assert repr(mine) == repr(theirs)
        got, want = mine(minitorch.tensor(x)), theirs(torch.tensor(x))
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-5, rtol=1e-5)
    out = conv(minitorch.tensor(x), output_size=[7, 9, 11])
    assert tuple(out.shape) == tuple(tconv(torch.tensor(x), output_size=[7, 9, 11]).shape)
    assert repr(nn.MaxUnpool2d(2)) == repr(torch.nn.MaxUnpool2d(2))
    assert repr(nn.MaxUnpool1d(3, 2, 1)) == repr(torch.nn.MaxUnpool1d(3, 2, 1))
