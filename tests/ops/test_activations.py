"""The activations of torch.nn.functional against NumPy (float64) and PyTorch: values
on every layout, empty and 0-dim shapes, NaN and inf; gradients (finite differences and
PyTorch's, with PyTorch's node names), second derivatives; the in-place forms; the backward ops
themselves; the modules (repr, forward, PReLU's weight); bad calls raise PyTorch's class and
message. Their CUDA kernels: tests/cuda/test_cuda_nn_functional.py."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, check, check_grad, layouts, same_as_torch, same_error, shapes

torch = pytest.importorskip("torch")

FLOATS = ("float32", "float64")
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def F(lib):
    return lib.nn.functional


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def relu6(x):
    return np.clip(x, 0, 6)


def logsigmoid(x):
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


# name: (the call, in minitorch and PyTorch alike; NumPy's float64 reference; PyTorch's node)
ACTS = {
    "leaky_relu": (lambda L, x: F(L).leaky_relu(x, 0.2), lambda a: np.where(a > 0, a, 0.2 * a), "LeakyReluBackward0"),
    "leaky_relu_default": (lambda L, x: F(L).leaky_relu(x), lambda a: np.where(a > 0, a, 0.01 * a), "LeakyReluBackward0"),
    "elu": (lambda L, x: F(L).elu(x, 0.7), lambda a: np.where(a > 0, a, 0.7 * np.expm1(a)), "EluBackward0"),
    "selu": (lambda L, x: F(L).selu(x), lambda a: SELU_SCALE * np.where(a > 0, a, SELU_ALPHA * np.expm1(a)), "EluBackward0"),
    "celu": (lambda L, x: F(L).celu(x, 0.6), lambda a: np.maximum(a, 0) + np.minimum(0, 0.6 * np.expm1(a / 0.6)), "CeluBackward0"),
    "softplus": (lambda L, x: F(L).softplus(x, 2.0, 5.0), lambda a: np.where(2 * a > 5, a, np.log1p(np.exp(2 * a)) / 2), "SoftplusBackward0"),
    "softsign": (lambda L, x: F(L).softsign(x), lambda a: a / (1 + np.abs(a)), "DivBackward0"),
    "hardtanh": (lambda L, x: F(L).hardtanh(x, -2.0, 1.5), lambda a: np.clip(a, -2, 1.5), "HardtanhBackward0"),
    "relu6": (lambda L, x: F(L).relu6(x), relu6, "HardtanhBackward0"),
    "mish": (lambda L, x: F(L).mish(x), lambda a: a * np.tanh(np.log1p(np.exp(a))), "MishBackward0"),
    "hardswish": (lambda L, x: F(L).hardswish(x), lambda a: a * relu6(a + 3) / 6, "HardswishBackward0"),
    "hardsigmoid": (lambda L, x: F(L).hardsigmoid(x), lambda a: relu6(a + 3) / 6, "HardsigmoidBackward0"),
    "logsigmoid": (lambda L, x: F(L).logsigmoid(x), logsigmoid, "LogSigmoidBackward0"),
    "tanhshrink": (lambda L, x: F(L).tanhshrink(x), lambda a: a - np.tanh(a), "SubBackward0"),
    "softshrink": (lambda L, x: F(L).softshrink(x, 0.7), lambda a: np.where(a > 0.7, a - 0.7, np.where(a < -0.7, a + 0.7, 0)), "SoftshrinkBackward0"),
    "hardshrink": (lambda L, x: F(L).hardshrink(x, 0.7), lambda a: np.where(np.abs(a) > 0.7, a, 0), "HardshrinkBackward0"),
    "threshold": (lambda L, x: F(L).threshold(x, 0.5, -2.0), lambda a: np.where(a > 0.5, a, -2.0), "ThresholdBackward0"),
    "glu": (lambda L, x: F(L).glu(x), lambda a: a[..., : a.shape[-1] // 2] * sigmoid(a[..., a.shape[-1] // 2:]),
            "GluBackward0"),
    "prelu": (lambda L, x: F(L).prelu(x, L.tensor([0.3], dtype=x.dtype)), lambda a: np.where(a > 0, a, 0.3 * a), "PreluKernelBackward0"),
}
# the torch.* and Tensor.* spellings PyTorch also has
TOP = {
    "selu": lambda L, x: L.selu(x), "celu": lambda L, x: L.celu(x, 0.6), "threshold": lambda L, x: L.threshold(x, 0.5, -2.0),
    "hardshrink": lambda L, x: x.hardshrink(0.7), "prelu": lambda L, x: x.prelu(L.tensor([0.3], dtype=x.dtype)),
}


def smooth(shape, dtype, seed=0):
    """Values away from every activation's kinks (0, the shrink and clamp bounds, +-3, 6)."""
    a = np.random.default_rng(seed).uniform(-4, 7, size=shape)
    kinks = np.array([-3, -2, -0.7, 0, 0.5, 0.7, 1.5, 3, 6])
    near = np.abs(a[..., None] - kinks).min(axis=-1) < 0.05
    return np.where(near, a + 0.1, a).astype(dtype)


@pytest.mark.parametrize("name", ACTS)
@given(data=st.data(), dtype=st.sampled_from(FLOATS), layout=layouts)
def test_values_match_numpy_and_torch(name, data, dtype, layout):
    fn, ref, _ = ACTS[name]
    shape = data.draw(shapes(max_dims=3))
    if name == "glu":  # halves of the last dim
        shape = shape[:-1] + (2 * shape[-1],) if shape else (2,)
    a = data.draw(arrays(dtype, shape))
    lay = layout if a.ndim else "contiguous"
    check(fn, ref, [a], layout=lay, atol=1e-5, rtol=1e-5)
    if name in TOP:
        check(TOP[name], ref, [a], layout=lay, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ACTS)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_gradients_match_finite_differences_and_torch(name, layout):
    fn, _, node = ACTS[name]
    a = smooth((3, 4), "float64")
    check_grad(fn, [a], layout=layout)
    y = fn(minitorch, minitorch.tensor(a, requires_grad=True))
    assert y.grad_fn.name() == node


@pytest.mark.parametrize("name", ACTS)
def test_nan_inf_and_empty_like_torch(name):
    fn = ACTS[name][0]
    a = np.array([[np.nan, np.inf, -np.inf, 0.0], [-0.0, 1e30, -1e30, 2.5]], np.float32)
    same_as_torch(fn, [a], grad=False, atol=0, rtol=1e-6)
    same_as_torch(fn, [np.zeros((0, 4), np.float32)])
    same_as_torch(fn, [np.zeros((3, 0), np.float32)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["hardswish", "hardsigmoid"])
def test_hardswish_hardsigmoid_bit_for_bit_like_torch(name, dtype):
    """core/math.h's relu6 inside hardswish and hardsigmoid gives PyTorch's bits, signs of zeros
    included: at the corners -3, 0, 3, 6 and a float either side, over a dense range, where x * 6
    overflows, at the subnormals, and at NaN and inf (vectorised and in the loop's tail)."""
    fn = ACTS[name][0]
    corners = np.array([-3.0, 0.0, 3.0, 6.0], dtype)
    a = np.concatenate([corners, np.nextafter(corners, -np.inf), np.nextafter(corners, np.inf),
                        np.linspace(-8, 8, 4001, dtype=dtype), [3e38, -3e38, 1e-45, -1e-45, -0.0, np.nan,
                                                                np.inf, -np.inf, 5.0]]).astype(dtype)
    got = fn(minitorch, minitorch.tensor(a)).numpy()
    want = fn(torch, torch.tensor(a)).numpy()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", [n for n in ACTS if n != "glu"])
def test_signed_zeros_and_specials_as_torch(name, dtype):
    """-0.0 and 0.0 (elu's family keeps -0.0, as PyTorch's expm1 does), NaN and infinities, in
    the vectorised body and in the loop's tail."""
    fn = ACTS[name][0]
    a = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf] * 7, dtype)
    got = fn(minitorch, minitorch.tensor(a)).numpy()
    want = fn(torch, torch.tensor(a)).numpy()
    np.testing.assert_array_equal(got, want)
    real = ~np.isnan(want)  # a NaN's sign bit is no part of the result
    np.testing.assert_array_equal(np.signbit(got)[real], np.signbit(want)[real])


@pytest.mark.parametrize("name", [n for n in ACTS if n not in ("glu", "prelu", "hardsigmoid")])
def test_second_derivatives_match_torch(name):
    fn = ACTS[name][0]
    a = smooth((2, 5), "float64", seed=3)
    outs = []
    for L in (minitorch, torch):
        x = L.tensor(a, requires_grad=True)
        (g,) = L.autograd.grad(fn(L, x).sum(), x, create_graph=True)
        if not g.requires_grad:  # piecewise linear: PyTorch's backward has no graph either
            outs.append(None)
            continue
        (gg,) = L.autograd.grad((g * g).sum(), x)
        outs.append(gg.detach().numpy())
    if outs[1] is None:
        assert outs[0] is None or not outs[0].any()
    else:
        np.testing.assert_allclose(outs[0], outs[1], atol=1e-10, rtol=1e-6)


def test_second_derivative_of_hardsigmoid():
    """PyTorch refuses it (no derivative of hardsigmoid_backward); it is 0, and minitorch gives 0."""
    x = minitorch.tensor(smooth((2, 5), "float64"), requires_grad=True)
    (g,) = minitorch.autograd.grad(F(minitorch).hardsigmoid(x).pow(2).sum(), x, create_graph=True)
    (gg,) = minitorch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), (np.abs(x.detach().numpy()) < 3) / 18.0, rtol=1e-6)
    t = torch.tensor(x.detach().numpy(), requires_grad=True)
    (tg,) = torch.autograd.grad(torch.nn.functional.hardsigmoid(t).pow(2).sum(), t, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for aten::hardsigmoid_backward is not implemented"):
        torch.autograd.grad(tg.sum(), t)


def test_second_derivatives_of_glu_and_prelu():
    a = smooth((3, 4), "float64", seed=5)
    w = np.array([0.2, -0.4, 0.6, 0.3])
    for fn in (lambda L, x, w: F(L).glu(x * w, 1), lambda L, x, w: F(L).prelu(x, w)):
        outs = []
        for L in (minitorch, torch):
            x, wt = L.tensor(a, requires_grad=True), L.tensor(w, requires_grad=True)
            gx, gw = L.autograd.grad(fn(L, x, wt).pow(2).sum(), (x, wt), create_graph=True)
            outs.append([t.detach().numpy() for t in L.autograd.grad((gx.sum() + gw.pow(2).sum()), (x, wt))])
        for m, t in zip(*outs):
            np.testing.assert_allclose(m, t, atol=1e-10, rtol=1e-7)


INPLACE = {
    "leaky_relu": (lambda L, x: F(L).leaky_relu(x, 0.2, inplace=True), "LeakyReluBackward1"),
    "elu": (lambda L, x: F(L).elu(x, 0.7, inplace=True), "EluBackward1"),
    "selu": (lambda L, x: F(L).selu(x, inplace=True), "EluBackward1"),
    "selu_": (lambda L, x: L.selu_(x), "EluBackward1"),
    "celu": (lambda L, x: F(L).celu(x, 0.6, inplace=True), "CeluBackward1"),
    "celu_": (lambda L, x: L.celu_(x, 0.6), "CeluBackward1"),
    "hardtanh": (lambda L, x: F(L).hardtanh(x, -2.0, 1.5, inplace=True), "HardtanhBackward0"),
    "relu6": (lambda L, x: F(L).relu6(x, inplace=True), "HardtanhBackward0"),
    "mish": (lambda L, x: F(L).mish(x, inplace=True), "MishBackward0"),
    "hardswish": (lambda L, x: F(L).hardswish(x, inplace=True), "HardswishBackward0"),
    "hardsigmoid": (lambda L, x: F(L).hardsigmoid(x, inplace=True), "HardsigmoidBackward0"),
    "threshold": (lambda L, x: F(L).threshold(x, 0.5, -2.0, inplace=True), "ThresholdBackward1"),
    "threshold_": (lambda L, x: L.threshold_(x, 0.5, -2.0), "ThresholdBackward1"),
    # nn.functional's bare in-place ops
    "F.relu_": (lambda L, x: F(L).relu_(x), "ReluBackward0"),
    "F.threshold_": (lambda L, x: F(L).threshold_(x, 0.5, -2.0), "ThresholdBackward1"),
    "F.leaky_relu_": (lambda L, x: F(L).leaky_relu_(x, 0.2), "LeakyReluBackward1"),
    "F.elu_": (lambda L, x: F(L).elu_(x, 0.7), "EluBackward1"),
    "F.selu_": (lambda L, x: F(L).selu_(x), "EluBackward1"),
    "F.celu_": (lambda L, x: F(L).celu_(x, 0.6), "CeluBackward1"),
    "F.hardtanh_": (lambda L, x: F(L).hardtanh_(x, -2.0, 1.5), "HardtanhBackward0"),
}


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_forms(name):
    fn, node = INPLACE[name]
    a = smooth((3, 4), "float64", seed=7)
    # on a tensor that needs no grad: the same tensor comes back, changed
    x = minitorch.tensor(a)
    assert fn(minitorch, x) is x
    np.testing.assert_allclose(x.numpy(), fn(torch, torch.tensor(a)).numpy(), rtol=1e-12)
    # on a non-leaf: the gradient reaches the leaf through the in-place node
    same_as_torch(lambda L, t: fn(L, t * 1), [a])
    y = fn(minitorch, minitorch.tensor(a, requires_grad=True) * 1)
    assert y.grad_fn.name() == node


def test_inplace_backward_with_a_negative_slope_is_refused_like_torch():
    a = smooth((5,), "float64")
    for fn in (lambda L, t: F(L).leaky_relu(t * 1, -0.1, inplace=True),
               lambda L, t: F(L).elu(t * 1, -0.5, inplace=True),
               lambda L, t: F(L).celu(t * 1, -0.5, inplace=True)):
        msgs = []
        for L in (minitorch, torch):
            y = fn(L, L.tensor(a, requires_grad=True))
            with pytest.raises(RuntimeError) as e:
                y.sum().backward()
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    # out of place a negative slope is fine
    same_as_torch(lambda L, t: F(L).leaky_relu(t, -0.1), [a])


@pytest.mark.parametrize("name", [n for n in ACTS if n not in ("hardtanh", "relu6", "threshold", "softsign", "tanhshrink")])
def test_integer_inputs_are_refused_like_torch(name):
    same_error(ACTS[name][0], np.array([1, -2, 3, 4], np.int64))


def test_integer_inputs_where_torch_takes_them():
    ints = np.array([[-3, 0, 2, 7]], np.int64)
    for fn in (ACTS["hardtanh"][0], ACTS["relu6"][0], ACTS["threshold"][0],
               lambda L, x: F(L).threshold(x, 1, 20), lambda L, x: F(L).hardtanh(x.int(), -1, 1)):
        same_as_torch(fn, [ints])
    same_error(lambda L, x: F(L).hardtanh(x), np.array([True, False]))
    same_error(lambda L, x: F(L).threshold(x, 0, 1), np.array([True, False]))


def test_argument_errors_like_torch():
    a = np.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]], np.float32)
    same_error(lambda L, x: F(L).softshrink(x, -1.0), a)
    same_error(lambda L, x: F(L).softshrink(x.double(), -0.5), a)
    same_error(lambda L, x: F(L).celu(x, 0.0), a)
    same_error(lambda L, x: L.celu_(x, 0.0), a)
    same_error(lambda L, x: F(L).hardtanh(x, 2.0, 1.0), a)
    same_error(lambda L, x: F(L).glu(x[0, 0]), a)
    same_error(lambda L, x: F(L).glu(x), a)
    same_error(lambda L, x: F(L).glu(x, 2), a)
    same_error(lambda L, x: F(L).prelu(x, L.ones(2)), a)
    same_error(lambda L, x: F(L).prelu(x, L.ones(3, dtype=L.float64)), a)
    same_error(lambda L, x: F(L).prelu(x, L.ones(1, 3)), a)
    same_error(lambda L, x: F(L).prelu(x[0, 0], L.ones(3)), a)
    same_error(lambda L, x: F(L).prelu(x[0], L.ones(3)), a)
    same_as_torch(lambda L, x: F(L).prelu(x, L.tensor(0.2)), [a])  # a 0-dim weight
    same_as_torch(lambda L, x: F(L).hardshrink(x, -1.0), [a])  # hardshrink takes any lambda


def test_prelu_weight_per_channel_like_torch():
    x = smooth((2, 3, 4, 5), "float32")
    w = np.array([0.1, -0.2, 0.5], np.float32)
    same_as_torch(lambda L, t, v: F(L).prelu(t, v), [x, w], layout="transposed", atol=1e-6)
    same_as_torch(lambda L, t, v: L._prelu_kernel(t, v.reshape(1, 3, 1, 1)), [x, w], atol=1e-6)
    same_as_torch(lambda L, t, v: F(L).prelu(t, v), [x[0, 0, 0], w[:1]], atol=1e-6)  # 1-D input, one weight


def test_backward_ops_match_torch():
    """The backward ops, called directly as PyTorch's aten ops, and their own gradients."""
    g, x = smooth((3, 4), "float64", seed=1), smooth((3, 4), "float64", seed=2)
    aten = torch.ops.aten
    calls = [
        (lambda L, a, b: L._C.leaky_relu_backward(a, b, 0.2, False), lambda a, b: aten.leaky_relu_backward(a, b, 0.2, False)),
        (lambda L, a, b: L._C.elu_backward(a, 0.7, 1.2, 0.9, False, b), lambda a, b: aten.elu_backward(a, 0.7, 1.2, 0.9, False, b)),
        (lambda L, a, b: L._C.elu_backward(a, 0.7, 1.2, 0.9, True, b), lambda a, b: aten.elu_backward(a, 0.7, 1.2, 0.9, True, b)),
        (lambda L, a, b: L._C.softplus_backward(a, b, 2.0, 5.0), lambda a, b: aten.softplus_backward(a, b, 2.0, 5.0)),
        (lambda L, a, b: L._C.hardtanh_backward(a, b, -2.0, 1.5), lambda a, b: aten.hardtanh_backward(a, b, -2.0, 1.5)),
        (lambda L, a, b: L._C.mish_backward(a, b), lambda a, b: aten.mish_backward(a, b)),
        (lambda L, a, b: L._C.hardswish_backward(a, b), lambda a, b: aten.hardswish_backward(a, b)),
        (lambda L, a, b: L._C.hardsigmoid_backward(a, b), lambda a, b: aten.hardsigmoid_backward(a, b)),
        (lambda L, a, b: L._C.log_sigmoid_backward(a, b),
         lambda a, b: aten.log_sigmoid_backward(a, b, aten.log_sigmoid_forward(b)[1])),
        (lambda L, a, b: L._C.softshrink_backward(a, b, 0.7), lambda a, b: aten.softshrink_backward(a, b, 0.7)),
        (lambda L, a, b: L._C.hardshrink_backward(a, b, 0.7), lambda a, b: aten.hardshrink_backward(a, b, 0.7)),
        (lambda L, a, b: L._C.threshold_backward(a, b, 0.5), lambda a, b: aten.threshold_backward(a, b, 0.5)),
        (lambda L, a, b: L._C.silu_backward(a, b), lambda a, b: aten.silu_backward(a, b)),
    ]
    for mine, theirs in calls:
        got = mine(minitorch, minitorch.tensor(g), minitorch.tensor(x))
        np.testing.assert_allclose(got.numpy(), theirs(torch.tensor(g), torch.tensor(x)).numpy(), rtol=1e-12)
        outs = []
        for L, f in ((minitorch, lambda a, b: mine(minitorch, a, b)), (torch, theirs)):
            a, b = L.tensor(g, requires_grad=True), L.tensor(x, requires_grad=True)
            try:
                grads = L.autograd.grad((f(a, b) ** 2).sum(), (a, b), allow_unused=True)
                outs.append([None if t is None else t.numpy() for t in grads])
            except (RuntimeError, NotImplementedError):  # none: mish_backward, silu_backward (in PyTorch hardsigmoid_backward too)
                outs.append(None)
        if outs[1] is None:
            assert outs[0] is None or mine is calls[7][0]
            continue
        for m, t in zip(*outs):
            if t is None:
                assert m is None or not m.any()
            else:
                np.testing.assert_allclose(m, t, atol=1e-12, rtol=1e-9)


MODULES = [
    lambda nn: nn.LeakyReLU(), lambda nn: nn.LeakyReLU(0.2, inplace=True), lambda nn: nn.ELU(alpha=0.5),
    lambda nn: nn.ELU(inplace=True), lambda nn: nn.SELU(), lambda nn: nn.SELU(True), lambda nn: nn.CELU(0.3),
    lambda nn: nn.Softplus(beta=2, threshold=10), lambda nn: nn.Softsign(), lambda nn: nn.Hardtanh(-2, 3),
    lambda nn: nn.Hardtanh(inplace=True), lambda nn: nn.ReLU6(), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.Mish(), lambda nn: nn.Mish(inplace=True), lambda nn: nn.Hardswish(), lambda nn: nn.Hardswish(True),
    lambda nn: nn.Hardsigmoid(), lambda nn: nn.LogSigmoid(), lambda nn: nn.GLU(), lambda nn: nn.GLU(dim=0),
    lambda nn: nn.PReLU(), lambda nn: nn.PReLU(4, init=0.1), lambda nn: nn.Tanhshrink(), lambda nn: nn.Softshrink(),
    lambda nn: nn.Softshrink(0.3), lambda nn: nn.Hardshrink(1.5), lambda nn: nn.Threshold(0.1, 20),
    lambda nn: nn.Threshold(0.1, 20, inplace=True),
]


@pytest.mark.parametrize("make", MODULES)
def test_modules_match_torch(make):
    m, t = make(minitorch.nn), make(torch.nn)
    assert repr(m) == repr(t)
    assert sorted(m.state_dict()) == sorted(t.state_dict())
    m.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in t.state_dict().items()})
    a = smooth((2, 4), "float32", seed=11)
    same_as_torch(lambda L, x: (m if L is minitorch else t)(x * 1), [a], atol=1e-6)
    if isinstance(m, minitorch.nn.PReLU):
        x = minitorch.tensor(a)
        m(x).sum().backward()
        t(torch.tensor(a)).sum().backward()
        np.testing.assert_allclose(m.weight.grad.numpy(), t.weight.grad.numpy(), rtol=1e-5)


def test_module_arguments_like_torch():
    same_error(lambda L: L.nn.Hardtanh(2, 1))
    with pytest.warns(FutureWarning, match="min_value"):
        h = minitorch.nn.Hardtanh(min_value=-3.0)
    assert h.min_val == -3.0
    p = minitorch.nn.PReLU(3, dtype=minitorch.float64)
    assert p.weight.dtype == minitorch.float64 and p.weight.tolist() == [0.25] * 3
    assert isinstance(minitorch.nn.ReLU6(), minitorch.nn.Hardtanh)


def test_c_level_ops_as_torch_c_nn():
    """The _C functions behind nn.functional, as torch._C._nn's (in place: the same tensor back)."""
    a = smooth((3, 4), "float64", seed=13)
    nn_c = torch._C._nn
    pairs = [
        (lambda x: minitorch._C.leaky_relu_(x, 0.3), lambda x: nn_c.leaky_relu_(x, 0.3)),
        (lambda x: minitorch._C.elu_(x, 0.5, 1.5, 0.8), lambda x: nn_c.elu_(x, 0.5, 1.5, 0.8)),
        (lambda x: minitorch._C.hardtanh_(x, -1.0, 2.0), lambda x: nn_c.hardtanh_(x, -1.0, 2.0)),
        (lambda x: minitorch._C.relu6_(x), lambda x: nn_c.relu6_(x)),
        (lambda x: minitorch._C.mish_(x), lambda x: nn_c.mish_(x)),
        (lambda x: minitorch._C.hardswish_(x), lambda x: nn_c.hardswish_(x)),
        (lambda x: minitorch._C.hardsigmoid_(x), lambda x: nn_c.hardsigmoid_(x)),
    ]
    for mine, theirs in pairs:
        x, t = minitorch.tensor(a), torch.tensor(a)
        assert mine(x) is x
        theirs(t)
        np.testing.assert_allclose(x.numpy(), t.numpy(), rtol=1e-12)
    x = minitorch.tensor(a)
    np.testing.assert_allclose(minitorch._C.log_sigmoid(x).numpy(), nn_c.log_sigmoid(torch.tensor(a)).numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(minitorch._C.elu(x, 0.5, 1.5, 0.8).numpy(),
                               nn_c.elu(torch.tensor(a), 0.5, 1.5, 0.8).numpy(), rtol=1e-12)
