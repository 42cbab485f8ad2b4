"""Backward formulas of the nn ops (csrc/autograd/formulas_nn.c, formulas_norm.c): conv2d, pooling,
layer_norm, batch_norm, embedding, the losses; against finite differences and PyTorch
(check_grad), node names against PyTorch's, the backward ops called directly, and a small CNN's
parameter gradients against the same network in PyTorch."""
import numpy as np
import pytest

import minitorch
from helpers import check_grad, torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def u(*shape):
    return rng.uniform(0.1, 0.9, shape)


def const(m, values):
    """A float64 constant (no grad) of the same values in either library."""
    return m.tensor(np.asarray(values, dtype=np.float64))


def fn_of(m):
    return m.nn.functional


@pytest.mark.parametrize("kw, xs, ws", [
    (dict(), (2, 3, 5, 5), (4, 3, 3, 3)),
    (dict(stride=2, padding=1), (1, 2, 6, 5), (3, 2, 3, 3)),
    (dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2)), (2, 2, 6, 6), (2, 2, 2, 3)),
    (dict(groups=2, padding=1), (1, 4, 4, 4), (6, 2, 3, 3)),
    (dict(groups=3), (2, 3, 3, 3), (3, 1, 1, 1)),  # depthwise 1x1: no im2col
    (dict(padding="same", dilation=2), (1, 2, 5, 5), (2, 2, 2, 2)),
    (dict(padding=1), (4, 4, 4), (4, 2, 3, 3)),  # unbatched, groups below
])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d(kw, xs, ws, bias):
    kw = dict(kw)
    if len(xs) == 3:
        kw["groups"] = 2
    arrays = [r(*xs), r(*ws)] + ([r(ws[0])] if bias else [])
    check_grad(lambda m, x, w, *b: fn_of(m).conv2d(x, w, *b, **kw), arrays)


def test_conv2d_layouts():
    check_grad(lambda m, x, w, b: fn_of(m).conv2d(x, w, b, stride=2, padding=1),
               [r(2, 3, 5, 4), r(2, 3, 3, 2), r(2)], layout="transposed")


@pytest.mark.parametrize("fn", [
    lambda m, x: fn_of(m).max_pool2d(x, 2),
    lambda m, x: fn_of(m).max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda m, x: fn_of(m).max_pool2d(x, (2, 3), stride=1, dilation=(2, 1)),
    lambda m, x: fn_of(m).max_pool2d(x, 2, return_indices=True)[0],
    lambda m, x: fn_of(m).avg_pool2d(x, 2),
    lambda m, x: fn_of(m).avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda m, x: fn_of(m).avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    lambda m, x: fn_of(m).avg_pool2d(x, (2, 3), stride=(1, 2), padding=(1, 1), divisor_override=4),
    lambda m, x: fn_of(m).adaptive_avg_pool2d(x, (3, 2)),
    lambda m, x: fn_of(m).adaptive_avg_pool2d(x, 4),
])
def test_pooling(fn):
    check_grad(fn, [r(2, 2, 5, 5)])
    check_grad(fn, [r(2, 5, 6)], layout="sliced")


@pytest.mark.parametrize("shape, norm, affine", [
    ((3, 4), (4,), True),
    ((2, 3, 4), (3, 4), True),
    ((2, 3, 4), (4,), False),
])
def test_layer_norm(shape, norm, affine):
    if affine:
        check_grad(lambda m, x, w, b: fn_of(m).layer_norm(x, norm, w, b), [r(*shape), r(*norm), r(*norm)])
    else:
        check_grad(lambda m, x: fn_of(m).layer_norm(x, norm, eps=1e-3), [r(*shape)], layout="transposed")


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 4), (2, 3, 2, 2)])
def test_batch_norm_training(shape):
    c = shape[1]

    def fn(m, x, w, b):
        running = const(m, np.zeros(c)), const(m, np.ones(c))
        return fn_of(m).batch_norm(x, *running, w, b, training=True, momentum=0.3)
    check_grad(fn, [r(*shape), r(c), r(c)])
    check_grad(lambda m, x: fn_of(m).batch_norm(x, None, None, training=True), [r(*shape)])


def test_batch_norm_eval():
    mean, var = r(3), rng.uniform(0.5, 2, 3)
    check_grad(lambda m, x, w, b: fn_of(m).batch_norm(x, const(m, mean), const(m, var), w, b),
               [r(2, 3, 2), r(3), r(3)])


@pytest.mark.parametrize("kw", [dict(), dict(padding_idx=2), dict(padding_idx=-1), dict(scale_grad_by_freq=True)])
def test_embedding(kw):
    # padding_idx and scale_grad_by_freq define a gradient that is not the derivative: no gradcheck
    idx = np.array([[0, 2, 4], [2, 2, 1]])
    check_grad(lambda m, w, i: fn_of(m).embedding(i, w, **kw), [r(5, 3), idx], gradcheck=not kw)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, weighted):
    def f(m, x, t):
        w = const(m, [0.5, 2.0, 1.0, 3.0]) if weighted else None
        return fn_of(m).nll_loss(x, t, weight=w, reduction=reduction, ignore_index=1)
    check_grad(f, [r(5, 4), np.array([0, 1, 3, 2, 3])])
    check_grad(f, [r(2, 4, 3), np.array([[0, 1, 3], [2, 2, 0]])])
    check_grad(f, [r(4), np.array(3)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    check_grad(lambda m, x, t: fn_of(m).binary_cross_entropy(x, t, reduction=reduction), [u(2, 3), u(2, 3)])
    check_grad(lambda m, x, t: fn_of(m).binary_cross_entropy(x, t, weight=const(m, [1.0, 2.0, 0.5]),
                                                             reduction=reduction), [u(2, 3), u(2, 3)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(reduction):
    def f(m, x, t, weight=None, pos_weight=None):
        return fn_of(m).binary_cross_entropy_with_logits(x, t, weight=weight, pos_weight=pos_weight,
                                                         reduction=reduction)
    check_grad(f, [r(2, 3) * 3, u(2, 3)])
    check_grad(lambda m, x, t: f(m, x, t, const(m, [1.0, 2.0, 0.5]), const(m, [3.0, 0.5, 1.0])),
               [r(2, 3) * 3, u(2, 3)])


@pytest.mark.parametrize("fn", [
    lambda m, x, t: fn_of(m).mse_loss(x, t),
    lambda m, x, t: fn_of(m).l1_loss(x, t, reduction="sum"),
    lambda m, x, t: fn_of(m).cross_entropy(x, t),  # probabilities
    lambda m, x, t: fn_of(m).cross_entropy(x, t, label_smoothing=0.2, weight=const(m, [1, 2, 3, 0.5])),
])
def test_composite_losses(fn):
    check_grad(fn, [r(3, 4), u(3, 4)])


@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum", ignore_index=2), dict(label_smoothing=0.1),
                                dict(label_smoothing=0.3, weight=[1, 2, 3, 0.5], ignore_index=0),
                                dict(label_smoothing=0.1, reduction="none")])
def test_cross_entropy_class_targets(kw):
    kw = dict(kw)
    w = kw.pop("weight", None)
    check_grad(lambda m, x, t: fn_of(m).cross_entropy(x, t, weight=None if w is None else const(m, w), **kw),
               [r(5, 4), np.array([0, 2, 3, 1, 2])])
    check_grad(lambda m, x, t: fn_of(m).cross_entropy(x, t, weight=None if w is None else const(m, w), **kw),
               [r(2, 4, 3), np.array([[0, 2, 3], [1, 1, 0]])])


def test_dropout_grad_flows_through_its_mask():
    x = minitorch.ones(200, dtype=minitorch.float64, requires_grad=True)
    y = minitorch.nn.functional.dropout(x, 0.25)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.asarray(y.detach()))  # d(x*mask)/dx = mask
    x.grad = None
    minitorch.nn.functional.dropout(x, 0.25, training=False).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), np.ones(200))


def test_one_hot_is_not_differentiable():
    assert not minitorch.nn.functional.one_hot(minitorch.tensor([0, 2]), 3).requires_grad


@pytest.mark.parametrize("call", [
    lambda m, x: m.nn.functional.conv2d(x, m.ones(2, 3, 3, 3, requires_grad=True)),
    lambda m, x: m.nn.functional.max_pool2d(x, 2),
    lambda m, x: m.nn.functional.max_pool2d(x, 2, return_indices=True)[0],
    lambda m, x: m.nn.functional.avg_pool2d(x, 2),
    lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 3),
    lambda m, x: m.nn.functional.layer_norm(x, (4,)),
    lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True),
    lambda m, x: m.nn.functional.batch_norm(x, m.zeros(3), m.ones(3), m.ones(3, requires_grad=True)),
    lambda m, x: m.nn.functional.embedding(m.tensor([1, 0]), x.reshape(-1, 4)),
    lambda m, x: m.nn.functional.nll_loss(x.reshape(-1, 4), m.zeros(24, dtype=m.int64)),
    lambda m, x: m.nn.functional.cross_entropy(x.reshape(-1, 4), m.zeros(24, dtype=m.int64)),
    lambda m, x: m.nn.functional.binary_cross_entropy(x.sigmoid(), m.ones(2, 3, 4, 4)),
    lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(x, m.ones(2, 3, 4, 4)),
    lambda m, x: m.abs(x),
    lambda m, x: m.log_softmax(x, 1),
    lambda m, x: m.where(x > 0, x, 0.0),
])
@needs_torch
def test_node_names(call):
    x = minitorch.randn(2, 3, 4, 4, requires_grad=True)
    t = torch.randn(2, 3, 4, 4, requires_grad=True)
    assert type(call(minitorch, x).grad_fn).__name__ == type(call(torch, t).grad_fn).__name__


@needs_torch
def test_backward_ops_directly():
    """The backward ops as _C functions, against PyTorch's aten ops of the same names."""
    C, aten = minitorch._C, torch.ops.aten
    x, w, g = r(2, 4, 6, 5), r(6, 2, 3, 2), r(2, 6, 3, 2)
    mx, mw, mg = (minitorch.tensor(a) for a in (x, w, g))
    tx, tw, tg = (torch.tensor(a) for a in (x, w, g))
    args = ([2, 2], [1, 0], [1, 2], 2)  # stride, padding, dilation, groups
    np.testing.assert_allclose(np.asarray(C.convolution_backward_input(mg, mw, [2, 4, 6, 5], *args)),
                               torch.nn.grad.conv2d_input(x.shape, tw, tg, *args).numpy(), atol=1e-10)
    np.testing.assert_allclose(np.asarray(C.convolution_backward_weight(mg, mx, [6, 2, 3, 2], *args)),
                               torch.nn.grad.conv2d_weight(tx, w.shape, tg, *args).numpy(), atol=1e-10)
    with pytest.raises(RuntimeError, match="grad_output"):
        C.convolution_backward_input(mg, mw, [2, 4, 7, 5], *args)

    pool = ([3, 3], [2, 2], [1, 1])
    out, idx = C.max_pool2d_with_indices(mx, *pool, [1, 1], False)
    tidx = torch.tensor(np.asarray(idx))
    gp = r(*out.shape)
    np.testing.assert_allclose(
        np.asarray(C.max_pool2d_with_indices_backward(minitorch.tensor(gp), mx, *pool, [1, 1], False, idx)),
        aten.max_pool2d_with_indices_backward(torch.tensor(gp), tx, *pool, [1, 1], False, tidx).numpy())
    with pytest.raises(IndexError, match="^max_pool2d_with_indices_backward: an index is outside its plane"):
        C.max_pool2d_with_indices_backward(minitorch.tensor(gp), mx, *pool, [1, 1], False, idx + 100)
    np.testing.assert_allclose(
        np.asarray(C.avg_pool2d_backward(minitorch.tensor(gp), mx, *pool, False, False, None)),
        aten.avg_pool2d_backward(torch.tensor(gp), tx, *pool, False, False, None).numpy(), atol=1e-12)
    np.testing.assert_allclose(np.asarray(C._adaptive_avg_pool2d_backward(minitorch.tensor(gp), mx)),
                               aten._adaptive_avg_pool2d_backward(torch.tensor(gp), tx).numpy(), atol=1e-12)

    idx = np.array([[1, 3, 1], [0, 4, 3]])
    ge = r(2, 3, 4)
    np.testing.assert_allclose(
        np.asarray(C.embedding_dense_backward(minitorch.tensor(ge), minitorch.tensor(idx), 5, 3, True)),
        aten.embedding_dense_backward(torch.tensor(ge), torch.tensor(idx), 5, 3, True).numpy(), atol=1e-12)
    with pytest.raises(IndexError):
        C.embedding_dense_backward(minitorch.tensor(ge), minitorch.tensor(idx), 4, -1, False)

    logp, target, weight = r(4, 3), np.array([0, 2, 1, 2]), np.array([1.0, 2.0, 0.5])
    kept = weight[target][target != 1].sum()
    np.testing.assert_allclose(
        np.asarray(C.nll_loss_backward(minitorch.tensor(1.5), minitorch.tensor(logp), minitorch.tensor(target),
                                       minitorch.tensor(weight), 1, 1)),
        aten.nll_loss_backward(torch.tensor(1.5, dtype=torch.float64), torch.tensor(logp), torch.tensor(target),
                               torch.tensor(weight), 1, 1, torch.tensor(kept)).numpy(), atol=1e-12)

    x, gy, w = r(3, 2, 4), r(3, 2, 4), r(4)
    gx, gw, gb = C.layer_norm_backward(minitorch.tensor(gy), minitorch.tensor(x), [4], minitorch.tensor(w), 1e-5)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    tb = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    torch.nn.functional.layer_norm(tx, (4,), tw, tb).backward(torch.tensor(gy))
    for mine, ref in ((gx, tx), (gw, tw), (gb, tb)):
        np.testing.assert_allclose(np.asarray(mine), ref.grad.numpy(), atol=1e-10)

    gx, gw, gb = C.batch_norm_backward(minitorch.tensor(gy), minitorch.tensor(x), None, None, None, True, 1e-5)
    tx = torch.tensor(x, requires_grad=True)
    tw, tb = (torch.ones(2, dtype=torch.float64, requires_grad=True) for _ in range(2))
    torch.nn.functional.batch_norm(tx, None, None, tw, tb, training=True).backward(torch.tensor(gy))
    for mine, ref in ((gx, tx), (gw, tw), (gb, tb)):
        np.testing.assert_allclose(np.asarray(mine), ref.grad.numpy(), atol=1e-10)
    with pytest.raises(RuntimeError, match="running_mean must be defined"):
        C.batch_norm_backward(minitorch.tensor(gy), minitorch.tensor(x), None, None, None, False, 1e-5)


def _cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2, bias=False), nn.ReLU(),
        nn.AvgPool2d(2, ceil_mode=True), nn.Flatten(), nn.Linear(6 * 1 * 1, 16), nn.LayerNorm(16),
        nn.Dropout(0.0), nn.Linear(16, 5),
    )


@needs_torch
def test_small_cnn_matches_pytorch():
    torch.manual_seed(0)
    ref = _cnn(torch.nn)
    net = _cnn(minitorch.nn)
    state = {k: minitorch.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    net.load_state_dict(state)
    x, y = r(4, 1, 8, 8).astype(np.float32), np.array([0, 3, 1, 4])
    for label_smoothing in (0.0, 0.1):
        ref.zero_grad()
        net.zero_grad()
        t_loss = torch.nn.functional.cross_entropy(ref(torch.tensor(x)), torch.tensor(y), label_smoothing=label_smoothing)
        m_loss = minitorch.nn.functional.cross_entropy(net(minitorch.tensor(x)), minitorch.tensor(y),
                                                       label_smoothing=label_smoothing)
        t_loss.backward()
        m_loss.backward()
        np.testing.assert_allclose(m_loss.item(), t_loss.item(), rtol=1e-5)
        mine = dict(net.named_parameters())
        for name, p in ref.named_parameters():
            assert mine[name].grad is not None, name
            np.testing.assert_allclose(np.asarray(mine[name].grad), p.grad.numpy(), atol=1e-5, rtol=1e-4,
                                       err_msg=name)


def test_backward_ops_reject_bad_arguments():
    """Callable from Python, the backward ops check what they are given (no torch needed)."""
    C, t = minitorch._C, minitorch.tensor
    g, w, x = minitorch.ones(1, 2, 3, 3), minitorch.ones(2, 1, 2, 2), minitorch.ones(1, 1, 4, 4)
    with pytest.raises(RuntimeError, match="grad_output"):
        C.convolution_backward_weight(g, x, [2, 1, 3, 3], 1, 0, 1, 1)
    with pytest.raises(RuntimeError):
        C.convolution_backward_input(g, w, [1, 2, 4, 4], 1, 0, 1, 1)  # channels do not match
    with pytest.raises(RuntimeError):
        C.convolution_backward_input(g.long(), w.long(), [1, 1, 4, 4], 1, 0, 1, 1)
    gp = minitorch.ones(1, 1, 2, 2)
    with pytest.raises(IndexError):
        C.max_pool2d_with_indices_backward(gp, x, 2, 2, 0, 1, False, minitorch.full((1, 1, 2, 2), -1))
    with pytest.raises(RuntimeError):
        C.max_pool2d_with_indices_backward(gp, x, 2, 2, 0, 1, False, minitorch.zeros(1, 1, 2, 3).long())
    with pytest.raises(RuntimeError, match="does not fit"):
        C.avg_pool2d_backward(minitorch.ones(1, 1, 3, 3), x, 2, 2, 0, False, True, None)
    with pytest.raises(RuntimeError, match="does not fit"):
        C._adaptive_avg_pool2d_backward(minitorch.ones(1, 2, 3, 3), x)
    with pytest.raises(RuntimeError):
        C.layer_norm_backward(minitorch.ones(2, 3), minitorch.ones(2, 4), [4], None, 1e-5)
    with pytest.raises(RuntimeError):
        C.batch_norm_backward(minitorch.ones(2, 3), minitorch.ones(2, 3), minitorch.ones(2), None, None, True, 1e-5)
    with pytest.raises(RuntimeError):
        C.embedding_dense_backward(minitorch.ones(3, 2), t([[0, 1]]), 4, -1, False)
    with pytest.raises(IndexError, match="out of bounds"):
        C.nll_loss_backward(t(1.0), minitorch.ones(2, 3), t([0, 5]), None, 1, -100)
    with pytest.raises(RuntimeError):
        C.nll_loss_backward(minitorch.ones(3), minitorch.ones(2, 3), t([0, 1]), None, 0, -100)


def test_max_pool_gradient_on_ties_goes_to_one_position():
    x = minitorch.ones(1, 1, 2, 4, dtype=minitorch.float64, requires_grad=True)
    minitorch.nn.functional.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad)[0, 0], [[1, 0, 1, 0], [0, 0, 0, 0]])
