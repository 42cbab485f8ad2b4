"""RReLU (eval's mean slope, training's draws: PyTorch's values for the same seed), the
multi-class margin losses (MultiMarginLoss, MultiLabelMarginLoss) and pdist, with their modules:
values and gradients against PyTorch on the same inputs (non-contiguous, empty), finite
differences in float64, errors with PyTorch's classes and messages."""
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


# ---- rrelu ----

@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_rrelu_eval_is_leaky_relu_with_the_mean_slope(layout):
    x = randn(3, 4, 5)
    same_as_torch(lambda lib, x: F(lib).rrelu(x), [x], layout=layout)
    same_as_torch(lambda lib, x: F(lib).rrelu(x, 0.1, 0.5), [x], layout=layout)
    same_as_torch(lambda lib, x: lib.nn.RReLU(0.2, 0.4).eval()(x), [x], layout=layout)


def _train(lib, x, seed, **kw):
    lib.manual_seed(seed)
    t = lib.tensor(x).requires_grad_(True)
    out = F(lib).rrelu(t, training=True, **kw)
    (out * lib.tensor(np.arange(out.numel()).reshape(out.shape).astype(x.dtype))).sum().backward()
    return out.detach().numpy(), t.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rrelu_training_draws_per_negative_element(dtype):
    x = randn(4, 6, dtype=dtype)
    x[0, 0] = 0.0
    out, grad = _train(minitorch, x, 3)
    slope = np.where(x > 0, 1.0, out / np.where(x == 0, 1, x))
    neg = (x < 0)
    assert ((slope[neg] >= 1 / 8) & (slope[neg] <= 1 / 3)).all()
    assert len(np.unique(slope[neg])) == neg.sum()  # one draw per element
    np.testing.assert_array_equal(out[x > 0], x[x > 0])
    if torch is not None:  # the same generator and order of draws: PyTorch's values
        want, want_grad = _train(torch, x, 3)
        np.testing.assert_allclose(out, want, rtol=1e-6)
        np.testing.assert_allclose(grad, want_grad, rtol=1e-6)
        got = _train(minitorch, x, 5, lower=0.3, upper=0.6)
        np.testing.assert_allclose(got[0], _train(torch, x, 5, lower=0.3, upper=0.6)[0], rtol=1e-6)


def test_rrelu_module_inplace_and_errors():
    m = nn.RReLU(0.1, 0.3, inplace=True)
    assert repr(m) == "RReLU(lower=0.1, upper=0.3, inplace=True)"
    if torch is not None:
        assert repr(nn.RReLU()) == repr(torch.nn.RReLU())
    x = minitorch.tensor([-1.0, 2.0, -3.0])
    assert m.eval()(x) is x
    np.testing.assert_allclose(x.numpy(), [-0.2, 2.0, -0.6], rtol=1e-6)
    y = minitorch.tensor([-1.0, 2.0])
    F(minitorch).rrelu_(y, training=True)
    assert -1 / 3 <= float(y[0]) <= -1 / 8
    same_error(lambda lib, x: F(lib).rrelu(x, 0.5, 0.2, training=True), randn(3))
    same_error(lambda lib, x: F(lib).rrelu(x.long()), randn(3))


# ---- multi_margin_loss ----

@pytest.mark.parametrize("kw", [dict(), dict(p=2), dict(margin=0.5, reduction="sum"), dict(reduction="none"),
                                dict(p=2, margin=2.0, weight=True)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_multi_margin_loss_matches_torch(kw, layout):
    x, y, w = randn(5, 4), rng.integers(0, 4, 5), np.abs(randn(4))
    kw = dict(kw)
    if kw.pop("weight", False):
        same_as_torch(lambda lib, x, y: F(lib).multi_margin_loss(x, y, weight=lib.tensor(w), **kw), [x, y],
                      layout=layout)
        same_error(lambda lib, x, y, w: F(lib).multi_margin_loss(x, y, weight=w.requires_grad_()), x, y, w)
    else:
        same_as_torch(lambda lib, x, y: F(lib).multi_margin_loss(x, y, **kw), [x, y], layout=layout)
    same_as_torch(lambda lib, x, y: F(lib).multi_margin_loss(x[0], y[0], **kw), [x, y])


def test_multi_margin_loss_empty_gradients_and_module():
    # (PyTorch 2.13 sums an empty batch to an uninitialised value; its 'none' is checked)
    same_as_torch(lambda lib, x, y: F(lib).multi_margin_loss(x, y, reduction="none"),
                  [randn(0, 3), np.zeros(0, dtype=np.int64)])
    x, y = randn(4, 5).astype(np.float64), rng.integers(0, 5, 4)
    w = np.abs(randn(5)).astype(np.float64)
    check_grad(lambda m, x, y: F(m).multi_margin_loss(x, y, p=2, weight=m.tensor(w)), [x, y])
    if torch is not None:
        same_as_torch(lambda lib, x, y: lib.nn.MultiMarginLoss(2, 0.7, lib.tensor(w))(x, y), [x, y])
        assert repr(nn.MultiMarginLoss()) == repr(torch.nn.MultiMarginLoss())


@pytest.mark.parametrize("call", [
    lambda lib, x, y: F(lib).multi_margin_loss(x, y, p=3),
    lambda lib, x, y: F(lib).multi_margin_loss(x, y[:2]),
    lambda lib, x, y: F(lib).multi_margin_loss(x, y + 3),
    lambda lib, x, y: F(lib).multi_margin_loss(x, y - 1),
    lambda lib, x, y: F(lib).multi_margin_loss(x, y, weight=lib.ones(3)),
    lambda lib, x, y: F(lib).multi_margin_loss(x[None], y),
    lambda lib, x, y: F(lib).multi_margin_loss(x[:, :0], y),
    lambda lib, x, y: F(lib).multi_margin_loss(x, y.float()),
    lambda lib, x, y: F(lib).multi_margin_loss(x.long(), y),
    lambda lib, x, y: F(lib).multi_margin_loss(x, y, reduction="bad"),
])
def test_multi_margin_loss_errors(call):
    same_error(call, randn(3, 4), np.array([0, 3, 1]))


# ---- multilabel_margin_loss ----

TARGETS = np.array([[0, 3, -1, 1], [1, -1, 2, 2], [-1, 0, 0, 0], [2, 2, 1, 0]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_multilabel_margin_loss_matches_torch(reduction, layout):
    x = randn(4, 4)
    same_as_torch(lambda lib, x, y: F(lib).multilabel_margin_loss(x, y, reduction=reduction), [x, TARGETS],
                  layout=layout)
    same_as_torch(lambda lib, x, y: F(lib).multilabel_margin_loss(x[0], y[0], reduction=reduction), [x, TARGETS])


def test_multilabel_margin_loss_empty_gradients_and_module():
    same_as_torch(lambda lib, x, y: F(lib).multilabel_margin_loss(x, y, reduction="none"),
                  [randn(0, 3), np.zeros((0, 3), dtype=np.int64)])
    check_grad(lambda m, x, y: F(m).multilabel_margin_loss(x, y), [randn(4, 4).astype(np.float64), TARGETS])
    if torch is not None:
        same_as_torch(lambda lib, x, y: lib.nn.MultiLabelMarginLoss(reduction="none")(x, y), [randn(4, 4), TARGETS])
        assert repr(nn.MultiLabelMarginLoss()) == repr(torch.nn.MultiLabelMarginLoss())


@pytest.mark.parametrize("call", [
    lambda lib, x, y: F(lib).multilabel_margin_loss(x, y[:2]),
    lambda lib, x, y: F(lib).multilabel_margin_loss(x, y + 4),
    lambda lib, x, y: F(lib).multilabel_margin_loss(x, y - 2),
    lambda lib, x, y: F(lib).multilabel_margin_loss(x[None], y),
    lambda lib, x, y: F(lib).multilabel_margin_loss(x, y.float()),
    lambda lib, x, y: F(lib).multilabel_margin_loss(x[:, :0], y[:, :0]),
])
def test_multilabel_margin_loss_errors(call):
    same_error(call, randn(4, 4), TARGETS)


# ---- pdist ----

@pytest.mark.parametrize("p", [2, 1, 0, 3.5, float("inf")])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_pdist_matches_torch(p, layout):
    same_as_torch(lambda lib, x: F(lib).pdist(x, p), [randn(5, 3)], layout=layout, atol=1e-5)


def test_pdist_small_empty_and_gradients():
    same_as_torch(lambda lib, x: F(lib).pdist(x), [randn(1, 3)])
    # no rows: PyTorch 2.13's pdist backward crashes there (a segfault), so minitorch alone
    x = minitorch.zeros(0, 3, requires_grad=True)
    out = F(minitorch).pdist(x)
    out.sum().backward()
    assert tuple(out.shape) == (0,) and tuple(x.grad.shape) == (0, 3)
    check_grad(lambda m, x: F(m).pdist(x, 3), [randn(4, 3).astype(np.float64)])
    check_grad(lambda m, x: F(m).pdist(x), [randn(5, 2).astype(np.float64)])


@pytest.mark.parametrize("call", [
    lambda lib, x: F(lib).pdist(x, -1),
    lambda lib, x: F(lib).pdist(x[0]),
    lambda lib, x: F(lib).pdist(x.long()),
])
def test_pdist_errors(call):
    same_error(call, randn(3, 4))


# ---- AdaptiveLogSoftmaxWithLoss ----

def _asm_pair(**kw):
    mine = nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], **kw)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(16, 20, [4, 10, 15], **kw)
    mine.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return mine, theirs


@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax_matches_torch(head_bias):
    if torch is None:
        pytest.skip("needs PyTorch")
    mine, theirs = _asm_pair(head_bias=head_bias, div_value=2.0)
    assert sorted(mine.state_dict()) == sorted(theirs.state_dict())
    x = randn(7, 16)
    y = np.array([0, 3, 4, 9, 10, 19, 12])
    mx, tx = minitorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, t_out = mine(mx, minitorch.tensor(y)), theirs(tx, torch.tensor(y))
    np.testing.assert_allclose(out.output.detach().numpy(), t_out.output.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(float(out.loss), float(t_out.loss), atol=1e-5)
    out.loss.backward()
    t_out.loss.backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-5)
    for (name, p), (_, tp) in zip(mine.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), atol=1e-5, err_msg=name)
    np.testing.assert_allclose(mine.log_prob(mx).detach().numpy(), theirs.log_prob(tx).detach().numpy(), atol=1e-5)
    np.testing.assert_array_equal(mine.predict(mx).numpy(), theirs.predict(tx).numpy())
    single = mine(mx[0], minitorch.tensor(y[0]))
    assert tuple(single.output.shape) == ()


def test_adaptive_log_softmax_errors():
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 3])
    with pytest.raises(ValueError, match="length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 10, [])
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
        m(minitorch.randn(2, 8), minitorch.tensor([1, 10]))
    with pytest.raises(RuntimeError, match="same size in the batch dimension"):
        m(minitorch.randn(3, 8), minitorch.tensor([1, 2]))
