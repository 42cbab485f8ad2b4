"""nn.functional's layers and losses against NumPy (float64) and PyTorch: softmax, dropout,
layer_norm, batch_norm, embedding, one_hot, mse/l1/nll/cross-entropy/binary cross-entropy losses
over random shapes, dtypes, weights, ignore_index, label smoothing and reductions, and bad calls."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, check, layouts, raises_like_torch, same_as_torch, shapes

FLOATS = ("float32", "float64")
REDUCTIONS = ("none", "mean", "sum")
MT = {"float32": minitorch.float32, "float64": minitorch.float64}


def reduce_np(loss, reduction):
    return loss if reduction == "none" else loss.mean() if reduction == "mean" else loss.sum()


def log_softmax_np(x, axis):
    m = x.max(axis=axis, keepdims=True) if x.size else 0
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# ---- softmax ----

@given(data=st.data(), layout=layouts)
def test_softmax_and_log_softmax(data, layout):
    dtype = data.draw(st.sampled_from(FLOATS))
    a = data.draw(arrays(dtype, shapes(min_dims=1, max_side=4)))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    check(lambda m, x: m.nn.functional.log_softmax(x, dim), lambda x: log_softmax_np(x, dim), [a],
          layout=layout, atol=1e-5, dtype=MT[dtype])
    check(lambda m, x: m.nn.functional.softmax(x, dim=dim), lambda x: np.exp(log_softmax_np(x, dim)),
          [a], layout=layout, atol=1e-6, dtype=MT[dtype])
    out = check(lambda m, x: m.nn.functional.softmax(x, dim, dtype=m.float64),
                lambda x: np.exp(log_softmax_np(x, dim)), [a], atol=1e-12)
    assert out.dtype == minitorch.float64


def test_softmax_implicit_dim_warns_and_picks_pytorchs_dim():
    F = minitorch.nn.functional
    x = minitorch.randn(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        np.testing.assert_allclose(F.softmax(x).sum(1).numpy(), np.ones(2), rtol=1e-6)
    with pytest.warns(UserWarning, match="log_softmax"):
        assert F.log_softmax(minitorch.randn(3)).shape == (3,)


# ---- dropout ----

def test_dropout_statistics_and_scaling():
    F = minitorch.nn.functional
    minitorch.manual_seed(0)
    x = minitorch.ones(200, 100)
    for p in (0.2, 0.5, 0.9):
        y = F.dropout(x, p).numpy()
        zeroed = (y == 0).mean()
        assert abs(zeroed - p) < 0.02, (p, zeroed)
        np.testing.assert_allclose(y[y != 0], 1 / (1 - p), rtol=1e-6)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    assert (F.dropout(x, 1.0).numpy() == 0).all()
    y = minitorch.ones(4, 4, dtype=minitorch.float64)
    assert F.dropout(y, 0.3, inplace=True) is y and y.dtype == minitorch.float64
    assert set(np.unique(y.numpy())) <= {0.0, 1 / 0.7}
    assert minitorch.dropout(x, 0.5, False) is x and minitorch.dropout_(y, 0.5, True) is y


def test_bernoulli_():
    minitorch.manual_seed(1)
    t = minitorch.empty(10000).bernoulli_(0.25)
    assert set(np.unique(t.numpy())) == {0.0, 1.0} and abs(t.numpy().mean() - 0.25) < 0.02
    assert (minitorch.empty(5).bernoulli_(1).numpy() == 1).all()
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"):
        minitorch.empty(3).bernoulli_(1.5)


def test_dropout_bad_p():
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        minitorch.nn.functional.dropout(minitorch.ones(3), 1.5)
    raises_like_torch(lambda m, x: m.nn.functional.dropout(x, -0.1), np.ones(3, np.float32))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [1, 0])
def test_log_softmax_keeps_precision_of_confident_logits(dtype, dim, device):
    # log_softmax was x - (max + log(sum)): max + log(sum) rounds to max's precision (ulp(100) in
    # float32 is 8e-6) before x is subtracted, so a confident target's log-prob (about -5e-3)
    # kept 3 digits; (x - max) - log(sum) is exact near the max, as PyTorch's.
    rng = np.random.default_rng(0)
    n, c = 500, 10
    x = rng.standard_normal((n, c))
    target = rng.integers(0, c, n)
    x[np.arange(n), target] += 8
    x = (x + 100).astype(dtype)
    x64 = x.astype(np.float64)
    shifted = x64 - x64.max(1, keepdims=True)
    want = (shifted - np.log(np.exp(shifted).sum(1, keepdims=True)))[np.arange(n), target]
    t = minitorch.tensor(x).to(device)
    got = minitorch.nn.functional.log_softmax(t if dim == 1 else t.T.contiguous(), dim)
    got = (got if dim == 1 else got.T).cpu().numpy()[np.arange(n), target]
    loss = minitorch.nn.functional.cross_entropy(t, minitorch.tensor(target).to(device), reduction="none")
    tol = 200 * np.finfo(dtype).eps
    for g in (got, -loss.cpu().numpy()):
        assert np.median(np.abs(g.astype(np.float64) - want) / np.abs(want)) < tol


# ---- layer_norm, batch_norm ----

def layer_norm_np(x, k, w=None, b=None, eps=1e-5):
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps)
    return y * (1 if w is None else w) + (0 if b is None else b)


@given(data=st.data(), layout=layouts)
def test_layer_norm(data, layout):
    dtype = data.draw(st.sampled_from(FLOATS))
    a = data.draw(arrays(dtype, shapes(min_dims=1, max_side=4)))
    k = data.draw(st.integers(1, a.ndim))
    ns = a.shape[a.ndim - k:]
    w = data.draw(arrays(dtype, ns))
    b = data.draw(arrays(dtype, ns))
    atol = 1e-4 if dtype == "float32" else 1e-9
    check(lambda m, x: m.nn.functional.layer_norm(x, ns), lambda x: layer_norm_np(x, k), [a],
          layout=layout, atol=atol, rtol=1e-4, dtype=MT[dtype])
    check(lambda m, x, w, b: m.nn.functional.layer_norm(x, ns, w, b, eps=0.1),
          lambda x, w, b: layer_norm_np(x, k, w, b, eps=0.1), [a, w, b], layout=layout, atol=atol * 10,
          rtol=1e-4)


def test_layer_norm_bad_calls():
    F = lambda m: m.nn.functional  # noqa: E731
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with shape "
                                           r"\[\*, 4\], but got input of size\[3, 5\]"):
        F(minitorch).layer_norm(minitorch.tensor(x), (4,))
    raises_like_torch(lambda m, x: F(m).layer_norm(x, (4,)), x)
    raises_like_torch(lambda m, x: F(m).layer_norm(x, ()), x)
    raises_like_torch(lambda m, x, w: F(m).layer_norm(x, (5,), w), x, np.ones(4, np.float32))
    raises_like_torch(lambda m, x, w: F(m).layer_norm(x, (5,), w), x, np.ones(5))
    raises_like_torch(lambda m, x: F(m).layer_norm(x, 5), x)
    raises_like_torch(lambda m, x: F(m).layer_norm(x, (5,)), x.astype(np.int64))


def batch_norm_np(x, mean, var, w, b, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * w.reshape(shape) + b.reshape(shape)


@given(data=st.data(), layout=layouts)
def test_batch_norm_eval(data, layout):
    dtype = data.draw(st.sampled_from(FLOATS))
    a = data.draw(arrays(dtype, shapes(min_dims=2, min_side=1, max_side=4)))
    c = a.shape[1]
    rm = data.draw(arrays(dtype, (c,)))
    rv = data.draw(arrays(dtype, (c,), low=0.5, high=4))
    w = data.draw(arrays(dtype, (c,)))
    b = data.draw(arrays(dtype, (c,)))
    check(lambda m, x, rm, rv, w, b: m.nn.functional.batch_norm(x, rm, rv, w, b, eps=1e-3),
          lambda x, rm, rv, w, b: batch_norm_np(x, rm, rv, w, b, 1e-3), [a, rm, rv, w, b],
          layout=layout, atol=1e-4, rtol=1e-4, dtype=MT[dtype])


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 2)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_batch_norm_training_updates_running_stats_as_pytorch(shape, dtype):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).normal(size=shape).astype(dtype)
    c = shape[1]
    outs = {}
    for m in (minitorch, torch):
        rm, rv = m.zeros(c, dtype=getattr(m, dtype)), m.ones(c, dtype=getattr(m, dtype))
        w, b = m.tensor(np.linspace(0.5, 2, c).astype(dtype)), m.tensor(np.linspace(-1, 1, c).astype(dtype))
        y = m.nn.functional.batch_norm(m.tensor(a), rm, rv, w, b, training=True, momentum=0.3)
        outs[m.__name__] = [np.asarray(t.numpy(), np.float64) for t in (y, rm, rv)]
    for got, want in zip(outs["minitorch"], outs["torch"]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    axes = (0,) + tuple(range(2, len(shape)))
    n = a.size // c
    np.testing.assert_allclose(outs["minitorch"][2], 0.7 + 0.3 * a.astype(np.float64).var(axis=axes) * n / (n - 1),
                               rtol=1e-5)


@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4), (2, 3, 0)])
def test_batch_norm_training_on_empty_batch_keeps_running_stats(shape, device):
    # An empty batch has no statistics (its mean is 0/0): PyTorch returns an empty output and
    # leaves the running statistics as they were, where minitorch wrote NaN into them.
    torch = pytest.importorskip("torch")
    for m in (minitorch, torch):
        dev = device if m is minitorch else "cpu"
        rm, rv = m.arange(3.0).to(dev), m.ones(3).to(dev) * 2
        x = m.zeros(shape).to(dev).requires_grad_()
        w, b = m.ones(3).to(dev).requires_grad_(), m.zeros(3).to(dev).requires_grad_()
        y = m.nn.functional.batch_norm(x, rm, rv, w, b, training=True)
        y.sum().backward()
        assert tuple(y.shape) == shape
        np.testing.assert_array_equal(rm.cpu().numpy(), [0, 1, 2])
        np.testing.assert_array_equal(rv.cpu().numpy(), [2, 2, 2])
        np.testing.assert_array_equal(w.grad.cpu().numpy(), [0, 0, 0])
        np.testing.assert_array_equal(b.grad.cpu().numpy(), [0, 0, 0])
        assert tuple(x.grad.shape) == shape


def test_batch_norm_without_running_stats_trains_on_batch_stats():
    x = np.random.default_rng(1).normal(size=(5, 3)).astype(np.float32)
    check(lambda m, x: m.nn.functional.batch_norm(x, None, None, training=True),
          lambda x: (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), [x], atol=1e-5)


def test_batch_norm_bad_calls():
    F = lambda m: m.nn.functional  # noqa: E731
    x = np.zeros((3, 5), np.float32)
    raises_like_torch(lambda m, x, rm, rv: F(m).batch_norm(x, rm, rv), x, np.zeros(4, np.float32),
                      np.ones(4, np.float32))
    with pytest.raises(RuntimeError, match="running_mean should contain 5 elements not 4"):
        F(minitorch).batch_norm(minitorch.tensor(x), minitorch.zeros(4), minitorch.ones(4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        F(minitorch).batch_norm(minitorch.zeros(1, 5), None, None, training=True)
    raises_like_torch(lambda m, x: F(m).batch_norm(x, None, None, training=True), np.zeros((1, 5), np.float32))
    raises_like_torch(lambda m, x: F(m).batch_norm(x, None, None), x)
    raises_like_torch(lambda m, x: F(m).batch_norm(x, None, None, training=True, eps=0.0), x)
    raises_like_torch(lambda m, x, rm, rv: F(m).batch_norm(x, rm, rv), x, np.zeros(5), np.ones(5))


# ---- embedding, one_hot ----

@given(data=st.data(), layout=layouts)
def test_embedding(data, layout):
    dtype = data.draw(st.sampled_from(FLOATS + ("int64",)))
    v, d = data.draw(st.integers(1, 6)), data.draw(st.integers(0, 4))
    w = data.draw(arrays(dtype, (v, d)))
    idx = data.draw(arrays("int64", shapes(max_dims=3, max_side=4), low=0, high=v - 1))
    check(lambda m, w, i: m.nn.functional.embedding(i, w), lambda w, i: w[i], [w, idx], layout=layout,
          dtype=minitorch.tensor(w).dtype)
    check(lambda m, w, i: m.embedding(w, i), lambda w, i: w[i], [w, idx.astype(np.int32)])


def test_embedding_padding_idx_and_bad_calls():
    F = lambda m: m.nn.functional  # noqa: E731
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    check(lambda m, w, i: F(m).embedding(i, w, padding_idx=-1), lambda w, i: w[i], [w, np.array([3, 0])])
    with pytest.raises(IndexError, match="index out of range in self"):
        F(minitorch).embedding(minitorch.tensor([4]), minitorch.tensor(w))
    raises_like_torch(lambda m, w, i: F(m).embedding(i, w), w, np.array([4]))
    raises_like_torch(lambda m, w, i: F(m).embedding(i, w), w, np.array([-1]))
    raises_like_torch(lambda m, w, i: F(m).embedding(i, w), w, np.array([1.0]))
    raises_like_torch(lambda m, w, i: F(m).embedding(i, w), w[0], np.array([1]))
    raises_like_torch(lambda m, w, i: F(m).embedding(i, w, padding_idx=4), w, np.array([1]))
    raises_like_torch(lambda m, w, i: F(m).embedding(i, w, padding_idx=-5), w, np.array([1]))


@given(idx=arrays("int64", shapes(max_dims=3, max_side=4), low=0, high=5), extra=st.integers(0, 2))
def test_one_hot(idx, extra):
    n = int(idx.max()) + 1 + extra if idx.size else 1 + extra
    out = check(lambda m, i: m.nn.functional.one_hot(i, n), lambda i: np.eye(n, dtype=np.int64)[i], [idx])
    assert out.dtype == minitorch.int64
    if idx.size:
        check(lambda m, i: m.nn.functional.one_hot(i), lambda i: np.eye(int(i.max()) + 1, dtype=np.int64)[i], [idx])


def test_one_hot_bad_calls():
    one_hot = lambda m: m.nn.functional.one_hot  # noqa: E731
    for msg, args in [("Class values must be smaller than num_classes.", ([1, 3], 2)),
                      ("Class values must be non-negative.", ([1, -1], 4)),
                      ("Can not infer total number of classes from empty tensor.", ([], -1))]:
        with pytest.raises(RuntimeError, match=msg):
            minitorch._C.one_hot(minitorch.tensor(args[0], dtype=minitorch.int64), args[1])
        raises_like_torch(lambda m, i: one_hot(m)(i, args[1]), np.array(args[0], np.int64))
    raises_like_torch(lambda m, i: one_hot(m)(i), np.array([1.0, 2.0]))
    raises_like_torch(lambda m, i: one_hot(m)(i, 3), np.array([1], np.int32))


# ---- losses ----

@given(data=st.data(), layout=layouts, reduction=st.sampled_from(REDUCTIONS))
def test_mse_and_l1_loss(data, layout, reduction):
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = data.draw(shapes(max_side=4))
    a, b = data.draw(arrays(dtype, shape)), data.draw(arrays(dtype, shape))
    atol = 1e-3 if dtype == "float32" else 1e-9
    check(lambda m, x, y: m.nn.functional.mse_loss(x, y, reduction=reduction),
          lambda x, y: reduce_np((x - y) ** 2, reduction), [a, b], layout=layout, atol=atol, rtol=1e-5,
          dtype=MT[dtype])
    check(lambda m, x, y: m.nn.functional.l1_loss(x, y, reduction=reduction),
          lambda x, y: reduce_np(np.abs(x - y), reduction), [a, b], layout=layout, atol=atol, rtol=1e-5,
          dtype=MT[dtype])
    w = data.draw(arrays(dtype, shape, low=0.5, high=2))
    check(lambda m, x, y, w: m.nn.functional.mse_loss(x, y, reduction=reduction, weight=w),
          lambda x, y, w: (((x - y) ** 2 * w).sum() / w.sum() if reduction == "mean"
                           else reduce_np((x - y) ** 2 * w, reduction)), [a, b, w], atol=atol, rtol=1e-5)


def test_pointwise_losses_broadcast_warn_and_promote():
    F = minitorch.nn.functional
    with pytest.warns(UserWarning, match="Using a target size"):
        out = F.mse_loss(minitorch.ones(3, 2), minitorch.zeros(3, 1))
    assert out.item() == 1.0
    x, y = np.ones((2, 2), np.float32), np.zeros((2, 2))
    check(lambda m, x, y: m.nn.functional.l1_loss(x, y), lambda x, y: np.abs(x - y).mean(), [x, y],
          dtype=minitorch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert F.mse_loss(minitorch.ones(2), minitorch.zeros(2), size_average=False).item() == 2.0
        assert F.l1_loss(minitorch.ones(2), minitorch.zeros(2), reduce=False).shape == (2,)


def nll_np(logp, t, w, ignore, reduction):
    """-w[t] logp[n, t, ...] over (C,) or (N, C, d...) inputs; mean divides by the kept weights."""
    if logp.ndim == 1:
        logp, t = logp[None], np.asarray(t).reshape(1)
        squeeze = True
    else:
        squeeze = False
    c = logp.shape[1]
    w = np.ones(c) if w is None else w
    keep = t != ignore
    tc = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, tc[:, None], axis=1)[:, 0]
    wt = np.where(keep, w[tc], 0.0)
    loss = -wt * picked
    if reduction == "none":
        return loss[0] if squeeze else loss
    if reduction == "sum":
        return loss.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return loss.sum() / wt.sum()


def smoothing_np(logp, t, w, ignore, reduction):
    """PyTorch's label-smoothing term: -sum_c w_c logp_c, 0 where ignored; mean by kept weights."""
    one = logp.ndim == 1
    if one:
        logp, t = logp[None], np.asarray(t).reshape(1)
    c = logp.shape[1]
    wv = np.ones(c) if w is None else w
    shape = (1, c) + (1,) * (logp.ndim - 2)
    keep = t != ignore
    s = np.where(keep, -(logp * wv.reshape(shape)).sum(1), 0.0)
    if reduction == "none":
        return s[0] if one else s
    if reduction == "sum":
        return s.sum()
    denom = np.where(keep, wv[np.where(keep, t, 0)], 0.0).sum() if w is not None else keep.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return s.sum() / denom


def class_problem(data, min_n=0):
    """(input, target) for C classes: input (C,), (N, C) or (N, C, d1, ...), some targets ignored."""
    dtype = data.draw(st.sampled_from(FLOATS))
    c = data.draw(st.integers(1, 5))
    kind = data.draw(st.sampled_from(["1d", "2d", "nd"]))
    n = data.draw(st.integers(min_n, 4))
    extra = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)) if kind == "nd" else []
    shape = (c,) if kind == "1d" else (n, c, *extra)
    tshape = () if kind == "1d" else (n, *extra)
    x = data.draw(arrays(dtype, shape, low=-5, high=5))
    ignore = data.draw(st.sampled_from([-100, 0, c - 1]))
    t = data.draw(arrays("int64", tshape, low=0, high=c - 1))
    if t.ndim and t.size and data.draw(st.booleans()):
        t.flat[0] = ignore if ignore >= 0 else -100
    w = data.draw(st.none() | arrays(dtype, (c,), low=0.25, high=2))
    return x, t, w, ignore


@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS))
def test_nll_loss(data, reduction):
    x, t, w, ignore = class_problem(data)
    atol = 1e-4 if x.dtype == np.float32 else 1e-9
    kw = dict(ignore_index=ignore, reduction=reduction)
    if w is None:
        out = check(lambda m, x, t: m.nn.functional.nll_loss(x, t, **kw), lambda x, t: nll_np(x, t, None, ignore, reduction),
                    [x, t], atol=atol, rtol=1e-5)
    else:
        out = check(lambda m, x, t, w: m.nn.functional.nll_loss(x, t, w, **kw),
                    lambda x, t, w: nll_np(x, t, w, ignore, reduction), [x, t, w], atol=atol, rtol=1e-5)
    assert out.dtype == minitorch.tensor(x).dtype


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(700, 100), (40, 30, 9), (0, 50)])
def test_nll_loss_and_cross_entropy_backward_on_threads(threads, reduction, shape):
    # nll_loss_backward zeroes and fills each sample's (C, K) block of the gradient on the thread
    # that owns it: blocks enough to split (over 32768 elements), spatial targets (K = 9), an
    # ignored class, class weights; the gradients as PyTorch's, at 1 and 2 threads
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape).astype(np.float32)
    t = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    w = rng.uniform(0.25, 2, shape[1]).astype(np.float32)
    kw = dict(ignore_index=int(t.flat[0]) if t.size else -100, reduction=reduction)
    same_as_torch(lambda m, x, t: m.nn.functional.cross_entropy(x, t, **kw), [x, t], atol=1e-5)
    same_as_torch(lambda m, x, t, w: m.nn.functional.nll_loss(x, t, w, **kw), [x, t, w], atol=1e-5)
    same_as_torch(lambda m, x, t: m.nn.functional.nll_loss(x.double(), t), [x, t], atol=1e-9)


@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS), layout=layouts)
def test_cross_entropy_class_indices(data, reduction, layout):
    x, t, w, ignore = class_problem(data)
    eps = data.draw(st.sampled_from([0.0, 0.1, 1.0]))
    atol = 1e-4 if x.dtype == np.float32 else 1e-9
    cdim = 0 if x.ndim == 1 else 1

    def ref(x, t, w=None):
        logp = log_softmax_np(x, cdim)
        c = x.shape[cdim]
        out = (1 - eps) * nll_np(logp, t, w, ignore, reduction)
        if eps:
            out = out + eps / c * smoothing_np(logp, t, w, ignore, reduction)
        return out

    kw = dict(ignore_index=ignore, reduction=reduction, label_smoothing=eps)
    if w is None:
        check(lambda m, x, t: m.nn.functional.cross_entropy(x, t, **kw), ref, [x, t], atol=atol, rtol=1e-4,
              layout=layout)
    else:
        check(lambda m, x, t, w: m.nn.functional.cross_entropy(x, t, w, **kw), ref, [x, t, w], atol=atol,
              rtol=1e-4, layout=layout)


@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS))
def test_cross_entropy_class_probabilities(data, reduction):
    x, t, w, _ = class_problem(data, min_n=1)
    eps = data.draw(st.sampled_from([0.0, 0.2]))
    cdim = 0 if x.ndim == 1 else 1
    p = np.exp(log_softmax_np(data.draw(arrays(x.dtype.name, x.shape)), cdim)).astype(x.dtype)
    c = x.shape[cdim]

    def ref(x, p, w=None):
        q = p * (1 - eps) + eps / c
        shape = [1] * x.ndim
        shape[cdim] = c
        term = log_softmax_np(x, cdim) * q * (1 if w is None else w.reshape(shape))
        if reduction == "none":
            return -term.sum(cdim)
        return -term.sum() / (x.size / c if reduction == "mean" else 1)

    atol = 1e-4 if x.dtype == np.float32 else 1e-9
    kw = dict(reduction=reduction, label_smoothing=eps)
    if w is None:
        check(lambda m, x, p: m.nn.functional.cross_entropy(x, p, **kw), ref, [x, p], atol=atol, rtol=1e-4)
    else:
        check(lambda m, x, p, w: m.nn.functional.cross_entropy(x, p, w, **kw), ref, [x, p, w], atol=atol, rtol=1e-4)


def test_cross_entropy_goes_through_log_softmax_and_nll_loss():
    from minitorch._journey import record

    x, t = minitorch.randn(3, 4), minitorch.tensor([0, 1, 3])
    _, events = record(minitorch._C.cross_entropy_loss, x, t)
    ops = [e.name for e in events if e.layer == "Op"]
    assert ops == ["cross_entropy_loss", "log_softmax", "nll_loss"]
    np.testing.assert_allclose(minitorch._C.nll_loss(x.log_softmax(1), t).item(),
                               minitorch._C.cross_entropy_loss(x, t, None, 1, -100, 0.0).item(), rtol=1e-6)


def test_class_losses_bad_calls():
    F = lambda m: m.nn.functional  # noqa: E731
    x = np.zeros((3, 5), np.float32)
    for loss in ("nll_loss", "cross_entropy"):
        fn = lambda m, x, t: getattr(F(m), loss)(x, t)  # noqa: E731
        with pytest.raises(IndexError, match="Target 5 is out of bounds."):
            getattr(F(minitorch), loss)(minitorch.tensor(x), minitorch.tensor([0, 1, 5]))
        raises_like_torch(fn, x, np.array([0, 1, 5]))
        raises_like_torch(fn, x, np.array([0, 1, -1]))
        raises_like_torch(fn, x, np.array([0, 1, 2], np.int32))
        raises_like_torch(fn, x, np.array([0, 1]))
        raises_like_torch(fn, np.zeros((3, 5, 2), np.float32), np.zeros(3, np.int64))
        raises_like_torch(fn, np.zeros(5, np.float32), np.zeros(3, np.int64))
        raises_like_torch(lambda m, x, t, w: getattr(F(m), loss)(x, t, w), x, np.zeros(3, np.int64),
                          np.ones(4, np.float32))
        raises_like_torch(lambda m, x, t: getattr(F(m), loss)(x, t, reduction="bad"), x, np.zeros(3, np.int64))
    with pytest.raises(ValueError, match="bad is not a valid value for reduction"):
        F(minitorch).nll_loss(minitorch.tensor(x), minitorch.tensor([0, 1, 2]), reduction="bad")
    raises_like_torch(lambda m, x: F(m).nll_loss(x, x.long()), np.zeros((), np.float32))
    raises_like_torch(lambda m, x, t: F(m).cross_entropy(x, t, label_smoothing=1.5), x, np.zeros(3, np.int64))
    raises_like_torch(lambda m, x, t: F(m).cross_entropy(x, t, ignore_index=1), x, x)
    raises_like_torch(lambda m, x, t, w: F(m).nll_loss(x, t, w), x, np.zeros(3, np.int64), np.ones(5))


def test_class_losses_all_ignored_and_empty_give_nan():
    F = minitorch.nn.functional
    x = minitorch.randn(3, 5)
    assert math.isnan(F.nll_loss(x, minitorch.tensor([-100, -100, -100])).item())
    assert math.isnan(F.cross_entropy(minitorch.randn(0, 5), minitorch.zeros(0, dtype=minitorch.int64)).item())
    assert F.cross_entropy(x, minitorch.tensor([-100, 1, 2]), reduction="none").tolist()[0] == 0.0


def bce_np(x, t):
    return -(t * np.maximum(np.log(x), -100) + (1 - t) * np.maximum(np.log1p(-x), -100))


@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS), layout=layouts)
def test_binary_cross_entropy(data, reduction, layout):
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = data.draw(shapes(max_side=4))
    x = data.draw(arrays(dtype, shape, low=0, high=1))
    t = data.draw(arrays(dtype, shape, low=0, high=1))
    atol = 1e-3 if dtype == "float32" else 1e-9
    with np.errstate(divide="ignore"):
        check(lambda m, x, t: m.nn.functional.binary_cross_entropy(x, t, reduction=reduction),
              lambda x, t: reduce_np(bce_np(x, t), reduction), [x, t], layout=layout, atol=atol, rtol=1e-4,
              dtype=MT[dtype])
        w = data.draw(arrays(dtype, shape[-1:], low=0, high=2))
        check(lambda m, x, t, w: m.nn.functional.binary_cross_entropy(x, t, w, reduction=reduction),
              lambda x, t, w: reduce_np(bce_np(x, t) * w, reduction), [x, t, w], atol=atol, rtol=1e-4)


def test_binary_cross_entropy_clamps_log_at_minus_100():
    out = check(lambda m, x, t: m.nn.functional.binary_cross_entropy(x, t, reduction="none"),
                lambda x, t: np.array([100.0, 100.0, 0.0]),
                [np.array([0.0, 1.0, 1.0], np.float32), np.array([1.0, 0.0, 1.0], np.float32)])
    assert out.dtype == minitorch.float32


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy_results_are_new_and_broadcast_inputs(reduction):
    """The loss of inputs the front end makes dense (a transposed input, a pos_weight and a weight
    broadcast along the rows, a float64 target promoted with float32 logits) is PyTorch's, and
    the result is a new tensor at version 0 however the weight was applied."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x = rng.uniform(0.05, 0.95, (7, 5)).astype(np.float32)
    t = rng.uniform(0, 1, (5, 7)).astype(np.float32).T
    w, pw = rng.uniform(0, 2, 5).astype(np.float32), rng.uniform(0, 3, 5).astype(np.float32)
    for lib in (minitorch, torch):
        F = lib.nn.functional
        got = [F.binary_cross_entropy(lib.tensor(x.T).t(), lib.tensor(t), lib.tensor(w), reduction=reduction),
               F.binary_cross_entropy_with_logits(lib.tensor(x * 8 - 4), lib.tensor(t.astype(np.float64)),
                                                  lib.tensor(w), reduction=reduction, pos_weight=lib.tensor(pw))]
        if lib is minitorch:
            mine = got
    for a, b in zip(mine, got):
        assert a.dtype == getattr(minitorch, str(b.dtype).split(".")[1]) and tuple(a.shape) == tuple(b.shape)
        assert a._version == b._version == 0
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    manual = bce_np(x.astype(np.float64), t.astype(np.float64)) * w
    np.testing.assert_allclose(mine[0].numpy(), reduce_np(manual, reduction), rtol=1e-5)


def test_binary_cross_entropy_on_threads_finds_a_bad_value_anywhere():
    """A large input runs on several threads: a value outside [0, 1] in any part raises, and the
    loss of a good one is the NumPy loss everywhere."""
    n = 1 << 18
    x = np.linspace(0.01, 0.99, n).astype(np.float32)
    t = np.linspace(1.0, 0.0, n).astype(np.float32)
    F = minitorch.nn.functional
    out = F.binary_cross_entropy(minitorch.tensor(x), minitorch.tensor(t), reduction="none")
    np.testing.assert_allclose(out.numpy(), bce_np(x.astype(np.float64), t.astype(np.float64)), rtol=1e-4)
    for k in (0, n // 2 + 7, n - 1):
        bad = x.copy()
        bad[k] = 1.5
        with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
            F.binary_cross_entropy(minitorch.tensor(bad), minitorch.tensor(t))
        bad_t = t.copy()
        bad_t[k] = -0.5
        with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
            F.binary_cross_entropy(minitorch.tensor(x), minitorch.tensor(bad_t))


def softplus_np(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS), layout=layouts)
def test_binary_cross_entropy_with_logits(data, reduction, layout):
    dtype = data.draw(st.sampled_from(FLOATS))
    shape = data.draw(shapes(min_dims=1, max_side=4))
    x = data.draw(arrays(dtype, shape, low=-100, high=100))
    t = data.draw(arrays(dtype, shape, low=0, high=1))
    pw = data.draw(arrays(dtype, shape[-1:], low=0, high=3))
    w = data.draw(arrays(dtype, shape[-1:], low=0, high=2))
    atol = 1e-3 if dtype == "float32" else 1e-9
    # -(pw t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), log sigmoid(x) = -softplus(-x)
    check(lambda m, x, t: m.nn.functional.binary_cross_entropy_with_logits(x, t, reduction=reduction),
          lambda x, t: reduce_np(t * softplus_np(-x) + (1 - t) * softplus_np(x), reduction), [x, t],
          layout=layout, atol=atol, rtol=1e-4, dtype=MT[dtype])
    check(lambda m, x, t, w, pw: m.nn.functional.binary_cross_entropy_with_logits(
              x, t, w, reduction=reduction, pos_weight=pw),
          lambda x, t, w, pw: reduce_np(w * (pw * t * softplus_np(-x) + (1 - t) * softplus_np(x)), reduction),
          [x, t, w, pw], atol=atol, rtol=1e-4)


def test_binary_losses_bad_calls():
    F = lambda m: m.nn.functional  # noqa: E731
    x = np.full(3, 0.5, np.float32)
    bce = lambda m, x, t: F(m).binary_cross_entropy(x, t)  # noqa: E731
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F(minitorch).binary_cross_entropy(minitorch.tensor(x + 1), minitorch.tensor(x))
    raises_like_torch(bce, x + 1, x)
    raises_like_torch(bce, x, x + 1)
    raises_like_torch(bce, x, x.astype(np.float64))
    raises_like_torch(bce, x, np.full(4, 0.5, np.float32))
    raises_like_torch(lambda m, x, t: F(m).binary_cross_entropy(x, t, reduction="x"), x, x)
    logits = lambda m, x, t: F(m).binary_cross_entropy_with_logits(x, t)  # noqa: E731
    raises_like_torch(logits, x, np.full(4, 0.5, np.float32))
    with pytest.raises(ValueError, match=r"Target size \(minitorch.Size\(\[4\]\)\) must be the same as input size"):
        logits(minitorch, minitorch.tensor(x), minitorch.full((4,), 0.5))
    check(logits, lambda x, t: np.log(2.0), [x * 0, x.astype(np.float64)], dtype=minitorch.float64)
