"""Third derivatives through ops whose backward reads their saved output (tanh, sigmoid, exp,
sqrt, softmax, ...): a physics-informed net's loss on u_xx needs them. The second backward's
formula saves the output again in the nodes it records (out * out for tanh); that saved tensor
must still lead back to the op when the third backward runs, or the terms through it vanish.
Checked against closed forms (float64) and against PyTorch."""
import numpy as np
import pytest

import minitorch
from helpers import torch

X = np.array([0.3, -0.7, 1.2, 0.05])


def derivatives(lib, fn, x, order=3):
    """d^k sum(fn(x)) / dx^k for k = 1..order, each taken from the previous one's sum."""
    x = lib.tensor(x, dtype=lib.float64, requires_grad=True)
    y = fn(lib, x).sum()
    out = []
    for k in range(order):
        (y,) = lib.autograd.grad(y, x, create_graph=k < order - 1)
        out.append(y.detach().numpy().copy())
        y = y.sum()
    return out


def closed_tanh(x):
    t = np.tanh(x)
    return [1 - t * t, -2 * t * (1 - t * t), -2 * (1 - t * t) * (1 - 3 * t * t)]


def closed_sigmoid(x):
    s = 1 / (1 + np.exp(-x))
    d1 = s * (1 - s)
    return [d1, d1 * (1 - 2 * s), d1 * (1 - 6 * s + 6 * s * s)]


def closed_sqrt(x):
    return [0.5 * x ** -0.5, -0.25 * x ** -1.5, 0.375 * x ** -2.5]


CLOSED = {
    "tanh": (lambda m, x: m.tanh(x), closed_tanh),
    "sigmoid": (lambda m, x: m.sigmoid(x), closed_sigmoid),
    "exp": (lambda m, x: m.exp(x), lambda x: [np.exp(x)] * 3),
}


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "exp"])
def test_third_derivative_closed_form(name):
    fn, closed = CLOSED[name]
    got = derivatives(minitorch, fn, X)
    for k, (g, e) in enumerate(zip(got, closed(X))):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"order {k + 1}")


def test_third_derivative_sqrt_closed_form():
    x = np.abs(X) + 0.5
    got = derivatives(minitorch, lambda m, t: m.sqrt(t), x)
    for k, (g, e) in enumerate(zip(got, closed_sqrt(x))):
        np.testing.assert_allclose(g, e, rtol=1e-10, err_msg=f"order {k + 1}")


SAVED_OUTPUT_OPS = {
    "tanh": lambda m, x: m.tanh(x),
    "sigmoid": lambda m, x: m.sigmoid(x) * x,
    "exp": lambda m, x: m.exp(x) * x,
    "rsqrt": lambda m, x: m.rsqrt(x * x + 1),
    "reciprocal": lambda m, x: m.reciprocal(x + 3),
    "expm1": lambda m, x: m.expm1(x) * x,
    "tan": lambda m, x: m.tan(x),
    "softmax": lambda m, x: m.softmax(x.view(2, 2), 1)[:, 0] * x.view(2, 2)[:, 1],
    "log_softmax": lambda m, x: m.log_softmax(x.view(2, 2), 1)[:, 0] ** 2,
    "logsumexp": lambda m, x: m.logsumexp(x * x, 0),
    "pow": lambda m, x: m.pow(x * x + 1, 2.5),
    "tanh_chain": lambda m, x: m.tanh(m.tanh(x) * 2),
}


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("name", list(SAVED_OUTPUT_OPS))
def test_third_derivative_matches_torch(name):
    fn = SAVED_OUTPUT_OPS[name]
    got = derivatives(minitorch, fn, X)
    ref = derivatives(torch, fn, X)
    for k, (g, r) in enumerate(zip(got, ref)):
        np.testing.assert_allclose(g, r, rtol=1e-9, atol=1e-12, err_msg=f"order {k + 1}")


def test_pinn_style_parameter_gradient_of_second_derivative():
    """A tanh MLP's u_xx (two autograd.grad calls with create_graph) differentiated with respect
    to the first layer's weight: the weight's gradient needs tanh's third derivative."""
    rng = np.random.default_rng(3)
    w1, b1, w2 = rng.standard_normal((4, 1)), rng.standard_normal(4), rng.standard_normal((1, 4))
    x = np.linspace(-1, 1, 5)[:, None]
    W1 = minitorch.tensor(w1, requires_grad=True)
    xt = minitorch.tensor(x, requires_grad=True)
    u = minitorch.tanh(xt @ W1.T + minitorch.tensor(b1)) @ minitorch.tensor(w2).T
    (u_x,) = minitorch.autograd.grad(u, xt, grad_outputs=minitorch.ones_like(u), create_graph=True)
    (u_xx,) = minitorch.autograd.grad(u_x, xt, grad_outputs=minitorch.ones_like(u_x), create_graph=True)
    (u_xx ** 2).mean().backward()
    # closed form: u_xx = sum_j w2_j w1_j^2 t''(z_j), z = x w1 + b1, t'' = -2 t (1 - t^2)
    z = x @ w1.T + b1
    t = np.tanh(z)
    d2 = -2 * t * (1 - t * t)
    d3 = -2 * (1 - t * t) * (1 - 3 * t * t)
    uxx = (d2 * w1[:, 0] ** 2) @ w2[0]
    # d u_xx / d w1_j = w2_j (2 w1_j t''(z) + w1_j^2 t'''(z) x)
    dw = (2 * uxx[:, None] / len(x)) * w2[0] * (2 * w1[:, 0] * d2 + w1[:, 0] ** 2 * d3 * x)
    np.testing.assert_allclose(u_xx.detach().numpy()[:, 0], uxx, rtol=1e-10)
    np.testing.assert_allclose(W1.grad.numpy()[:, 0], dw.sum(0), rtol=1e-9)


def test_third_derivatives_leave_no_nodes_behind():
    """The alias that a formula sees for a saved output holds its node; the nodes recorded with it
    must all be freed with the graph (a cycle node -> saved output -> node would keep them)."""
    import gc

    def step():
        x = minitorch.tensor([0.3, -0.7, 1.2], requires_grad=True)
        y = (minitorch.tanh(x * 2) + minitorch.sigmoid(x) * minitorch.exp(x)).sum()
        (g1,) = minitorch.autograd.grad(y, x, create_graph=True)
        (g2,) = minitorch.autograd.grad(g1.sum(), x, create_graph=True)
        (g2 ** 2).sum().backward()

    step()
    gc.collect()
    start = minitorch._C._live_objects()
    for _ in range(50):
        step()
    gc.collect()
    end = minitorch._C._live_objects()
    assert end["nodes"] - start["nodes"] <= 2 and end["tensors"] - start["tensors"] <= 4, (start, end)
