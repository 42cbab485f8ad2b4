"""Double backward through the layers that gradient penalties go through: for
each layer, second derivatives by autograd.gradgradcheck in float64 (central differences of the
first backward), and a WGAN-GP penalty ((|d D(x) / d x| - 1)^2).mean() through it whose gradients
(of x and of every parameter) are PyTorch's. The normalisations' backward records as ops where
it must (create_graph), the losses', gelu's and embedding's backward ops have formulas."""
import numpy as np
import pytest

import minitorch
from helpers import torch

RNG = np.random.default_rng(20)


def data(*shape, scale=1.0):
    return RNG.standard_normal(shape) * scale


IDX = np.array([0, 2, 1, 2])
TARGET = np.array([0, 2, 1])

# name: (fn(lib, x, *params), x, params): fn gives the critic's output
LAYERS = {
    "conv1d": (lambda m, x, w, b: m.nn.functional.conv1d(x, w, b, padding=1), data(2, 2, 5), [data(3, 2, 3), data(3)]),
    "conv2d": (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=2, padding=1), data(2, 2, 4, 4), [data(2, 2, 3, 3)]),
    "conv3d": (lambda m, x, w: m.nn.functional.conv3d(x, w), data(1, 1, 3, 3, 3), [data(2, 1, 2, 2, 2)]),
    "conv_transpose2d": (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2), data(1, 2, 3, 3),
                         [data(2, 1, 2, 2)]),
    "max_pool2d": (lambda m, x: m.nn.functional.max_pool2d(x, 2), data(2, 2, 4, 4), []),
    "avg_pool2d": (lambda m, x: m.nn.functional.avg_pool2d(x, 2), data(2, 2, 4, 4), []),
    "adaptive_avg_pool2d": (lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 3), data(2, 2, 5, 5), []),
    "batch_norm_train": (lambda m, x, w, b: m.nn.functional.batch_norm(x, None, None, w, b, training=True),
                         data(4, 3, 2), [data(3), data(3)]),
    "batch_norm_eval": (lambda m, x, w, b: m.nn.functional.batch_norm(
        x, m.tensor([0.1, -0.2, 0.3], dtype=m.float64), m.tensor([1.5, 0.5, 2.0], dtype=m.float64), w, b,
        training=False), data(4, 3), [data(3), data(3)]),
    "layer_norm": (lambda m, x, w, b: m.nn.functional.layer_norm(x, (4,), w, b), data(3, 4), [data(4), data(4)]),
    "layer_norm_2d": (lambda m, x: m.nn.functional.layer_norm(x, (2, 3)), data(2, 2, 3), []),
    "group_norm": (lambda m, x, w, b: m.nn.functional.group_norm(x, 2, w, b), data(2, 4, 3), [data(4), data(4)]),
    "instance_norm": (lambda m, x: m.nn.functional.instance_norm(x), data(2, 3, 4), []),
    "cross_entropy": (lambda m, x: m.nn.functional.cross_entropy(x, m.tensor(TARGET), reduction="none"),
                      data(3, 4), []),
    "cross_entropy_smooth": (lambda m, x: m.nn.functional.cross_entropy(x, m.tensor(TARGET), label_smoothing=0.1),
                             data(3, 4), []),
    "nll_loss_weighted": (lambda m, x: m.nn.functional.nll_loss(
        x, m.tensor(TARGET), weight=m.tensor([1.0, 2.0, 0.5, 1.0], dtype=m.float64)), data(3, 4), []),
    "mse_loss": (lambda m, x, y: m.nn.functional.mse_loss(x, y), data(3, 4), [data(3, 4)]),
    "smooth_l1_loss": (lambda m, x, y: m.nn.functional.smooth_l1_loss(x, y), data(3, 4), [data(3, 4)]),
    "huber_loss": (lambda m, x, y: m.nn.functional.huber_loss(x, y, delta=0.5), data(3, 4), [data(3, 4)]),
    "bce_with_logits": (lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(
        x, m.tensor(np.full((3, 4), 0.3))), data(3, 4), []),
    "kl_div": (lambda m, x: m.nn.functional.kl_div(
        x.log_softmax(-1), m.tensor(np.full((3, 4), 0.25)), reduction="batchmean"), data(3, 4), []),
    "embedding": (lambda m, x, w: m.nn.functional.embedding(m.tensor(IDX), w) * x, data(4, 3), [data(3, 3)]),
    "gelu": (lambda m, x: m.nn.functional.gelu(x), data(3, 4), []),
    "gelu_tanh": (lambda m, x: m.nn.functional.gelu(x, approximate="tanh"), data(3, 4), []),
    "silu": (lambda m, x: m.nn.functional.silu(x), data(3, 4), []),
    "mish": (lambda m, x: m.nn.functional.mish(x), data(3, 4), []),
    "elu": (lambda m, x: m.nn.functional.elu(x), data(3, 4), []),
    "softplus": (lambda m, x: m.nn.functional.softplus(x), data(3, 4), []),
    "softmax": (lambda m, x: m.nn.functional.softmax(x, -1) * m.tensor(np.arange(4.0)), data(3, 4), []),
    "log_softmax": (lambda m, x: m.nn.functional.log_softmax(x, -1), data(3, 4), []),
    "interpolate_bilinear": (lambda m, x, w: m.nn.functional.interpolate(x * w, scale_factor=2, mode="bilinear"),
                             data(1, 1, 3, 3), [data(1, 1, 3, 3)]),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_gradgradcheck(name):
    fn, x, params = LAYERS[name]
    xs = [minitorch.tensor(a, requires_grad=True) for a in [x, *params]]
    # the output weighted, so that the sum of a normalisation's output is not constant
    wt = minitorch.tensor(RNG.standard_normal(np.shape(fn(minitorch, *xs).detach().numpy())))
    assert minitorch.autograd.gradgradcheck(lambda *a: fn(minitorch, *a) * wt, xs)


def penalty_grads(lib, name):
    fn, x, params = LAYERS[name]
    xt = lib.tensor(x, requires_grad=True)
    ps = [lib.tensor(p, requires_grad=True) for p in params]
    out = fn(lib, xt, *ps)
    score = (out * lib.tensor(np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape)))).sum()
    (gx,) = lib.autograd.grad(score, xt, create_graph=True)
    gp = ((gx.reshape(gx.shape[0], -1).norm(2, dim=1) - 1) ** 2).mean()
    gp.backward()
    return [gp.detach().numpy()] + [t.grad.numpy() if t.grad is not None else None for t in [xt, *ps]]


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("name", list(LAYERS))
def test_gradient_penalty_matches_torch(name):
    got, want = penalty_grads(minitorch, name), penalty_grads(torch, name)
    for k, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None or not np.any(g), f"{name}: gradient {k}"
            continue
        np.testing.assert_allclose(g, w, atol=1e-9, rtol=1e-7, err_msg=f"{name}: result {k}")


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_embedding_padding_idx_second_derivative():
    # padding_idx's row has no gradient, so its first backward's gradient skips it too
    res, w0, x0 = [], data(3, 3), data(4, 3)
    for lib in (minitorch, torch):
        w = lib.tensor(w0, requires_grad=True)
        x = lib.tensor(x0, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor(IDX), w, padding_idx=1) * x
        (g,) = lib.autograd.grad((out * out).sum(), w, create_graph=True)
        assert type(g.grad_fn).__name__ == "EmbeddingDenseBackwardBackward0"
        res.append([t.numpy() for t in lib.autograd.grad((g * lib.tensor(np.arange(9.0).reshape(3, 3))).sum(), [x, w])])
    for got, want in zip(*res):
        np.testing.assert_allclose(got, want, atol=1e-12)


def test_embedding_scale_grad_by_freq_refuses_a_second_derivative():
    w = minitorch.tensor(data(3, 2), requires_grad=True)
    out = minitorch.nn.functional.embedding(minitorch.tensor(IDX), w, scale_grad_by_freq=True)
    (g,) = minitorch.autograd.grad((out ** 2).sum(), w, create_graph=True)
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq=True is not implemented"):
        g.sum().backward()
