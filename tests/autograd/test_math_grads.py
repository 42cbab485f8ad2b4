"""Backward formulas of the elementwise math (csrc/autograd/formulas_math.c): unary functions,
activations, powers, division with rounding, remainders, clamps, maximum/minimum, where,
masked_fill, baddbmm and addmv. Each gradient is checked against finite differences and
PyTorch's (check_grad), on non-contiguous layouts and broadcast shapes; node names and the
in-place forms against PyTorch's."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, check_grad
from unary_table import UNARY, off_zero

rng = np.random.default_rng(0)


def r(*shape):
    return rng.standard_normal(shape)


def pos(*shape):
    """Inside the domain of log, sqrt and reciprocal, away from 0."""
    return rng.uniform(0.5, 2.0, shape)


F = lambda m: m.nn.functional  # noqa: E731

@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", [name for name, row in UNARY.items() if row.grad])
def test_unary(name, layout):
    """Each row of the unary table (tests/unary_table.py) with a gradient check, on the inputs its
    row draws."""
    fn, make = UNARY[name].fn, UNARY[name].grad
    check_grad(fn, [make(3, 4)], layout=layout)
    check_grad(fn, [make()])  # 0-dim


BINARY = [
    ("pow_tensors", lambda m, x, y: m.pow(x, y), [pos(3, 1), r(1, 4)]),
    ("pow_number", lambda m, x: x ** 3 + m.pow(x, 2.5) + x ** 0, [pos(2, 3)]),
    ("pow_negative", lambda m, x: x.pow(-1.5), [pos(4)]),
    ("pow_base", lambda m, x: 2 ** x + m.pow(0.5, x), [r(2, 3)]),
    ("true_divide", lambda m, x, y: m.true_divide(x, y) + m.true_divide(x, 3), [r(3, 4), pos(4)]),
    ("div_floor", lambda m, x, y: m.div(x, y, rounding_mode="floor") + x, [3 * r(3, 4), pos(4)]),
    ("div_trunc", lambda m, x, y: m.div(x, y, rounding_mode="trunc") + y, [3 * r(2, 3), pos(2, 1)]),
    ("remainder", lambda m, x, y: m.remainder(x, y), [3 * r(3, 4), pos(4)]),
    ("remainder_negative", lambda m, x, y: x % -y, [3 * r(2, 3), pos(2, 3)]),
    ("remainder_number", lambda m, x: x % 1.5, [3 * r(5)]),
    ("fmod", lambda m, x, y: m.fmod(x, y), [3 * r(1, 4), pos(3, 1)]),
    ("fmod_number", lambda m, x: m.fmod(x, 0.7), [3 * r(5)]),
    ("clamp_numbers", lambda m, x: x.clamp(-0.5, 0.5) + m.clamp(x, min=0.2) + x.clamp(max=-0.1), [r(3, 4)]),
    ("clamp_tensors", lambda m, x, lo, hi: m.clamp(x, lo, hi), [r(3, 4), r(4) - 0.5, r(3, 1) + 0.5]),
    ("clamp_crossed_bounds", lambda m, x, lo, hi: x.clamp(lo, hi), [r(5), r(5) + 1.0, r(5) - 1.0]),
    ("clamp_tensor_min", lambda m, x, lo: m.clamp(x, min=lo), [r(3, 4), r(4)]),
    ("clamp_tensor_max", lambda m, x, hi: m.clamp(x, max=hi), [r(3, 4), r(3, 1)]),
    ("clamp_max", lambda m, x: x.clamp_max(0.3) + m.clamp_max(x, -0.2), [r(3, 4)]),
    ("maximum", lambda m, x, y: m.maximum(x, y), [r(3, 4), r(4)]),
    ("minimum", lambda m, x, y: x.minimum(y), [r(3, 1), r(1, 4)]),
    ("where", lambda m, c, x, y: m.where(c, x, y), [r(3, 4) > 0, r(3, 1), r(4)]),
    ("where_numbers", lambda m, c, x: m.where(c, x, 0.5) + m.where(c, 2.0, x), [r(3, 4) > 0, r(3, 4)]),
    ("masked_fill", lambda m, x, k: x.masked_fill(k, 0.5), [r(3, 4), r(4) > 0]),
    ("masked_fill_tensor", lambda m, x, k, v: m.masked_fill(x, k, v), [r(3, 4), r(3, 4) > 0, r()]),
    ("baddbmm", lambda m, s, a, b: m.baddbmm(s, a, b, beta=0.5, alpha=2), [r(2, 3, 4), r(2, 3, 2), r(2, 2, 4)]),
    ("baddbmm_broadcast", lambda m, s, a, b: s.baddbmm(a, b), [r(3, 1), r(2, 3, 2), r(2, 2, 4)]),
    ("addmv", lambda m, s, a, v: m.addmv(s, a, v, beta=0.5, alpha=-2), [r(3), r(3, 4), r(4)]),
    ("addmv_broadcast", lambda m, s, a, v: s.addmv(a, v), [r(1), r(3, 2), r(2)]),
    ("outer_ger", lambda m, x, y: m.outer(x, y) + x.ger(y), [r(3), r(4)]),
]


@pytest.mark.parametrize("name, fn, arrays", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, fn, arrays):
    check_grad(fn, arrays)


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_binary_layouts(layout):
    check_grad(lambda m, x, y: m.pow(x, y) + m.maximum(x, y) + m.remainder(x, y), [pos(3, 4), pos(3, 4)], layout=layout)
    check_grad(lambda m, x, lo, hi: m.clamp(x, lo, hi) * m.fmod(x, hi), [r(2, 3), r(2, 3) - 1, pos(2, 3)], layout=layout)


def test_pow_of_zero():
    """0 ** e: no gradient to e where e >= 0 (log 0 would give NaN), PyTorch's rule; finite
    differences cannot step below 0 for a fractional e, so PyTorch is the reference."""
    x, e = np.array([0.0, 0.0, 1.0, 2.0]), np.array([1.5, 0.0, 2.0, -1.0])
    check_grad(lambda m, x, e: m.pow(x, e) + m.pow(0, e), [x, e], gradcheck=False)


def test_ties_split_the_gradient():
    x, y = np.array([1.0, 2.0, 3.0, -1.0]), np.array([1.0, 0.0, 3.0, 0.0])
    check_grad(lambda m, x, y: m.maximum(x, y) * 3 + m.minimum(x, y), [x, y], gradcheck=False)
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    minitorch.maximum(x, minitorch.tensor([1.0, 5.0])).sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), [0.5, 0.0])


def test_clamp_at_the_bounds():
    """PyTorch's subgradient: 1 for self at a bound, 0 for the bound."""
    x, lo, hi = np.array([0.0, 1.0, 0.5]), np.array([0.0, 0.0, 0.0]), np.array([1.0, 1.0, 1.0])
    check_grad(lambda m, x, lo, hi: m.clamp(x, lo, hi), [x, lo, hi], gradcheck=False)
    check_grad(lambda m, x: m.clamp(x, 0.0, 1.0) + x.clamp_max(1.0) + x.abs() + x.sign(), [x], gradcheck=False)


def test_gelu_backward_kernel():
    g, x = np.array([1.0, -2.0, 0.5, 3.0]), np.array([0.0, 1.0, -1.5, 4.0])
    for approximate in ("none", "tanh"):
        got = minitorch._C.gelu_backward(minitorch.tensor(g), minitorch.tensor(x), approximate=approximate)
        assert got.dtype == minitorch.float64
        torch = pytest.importorskip("torch")
        want = torch.ops.aten.gelu_backward(torch.tensor(g), torch.tensor(x), approximate=approximate)
        np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=1e-12)
    f32 = minitorch._C.gelu_backward(minitorch.ones(2), minitorch.zeros(2))
    assert f32.dtype == minitorch.float32 and f32.tolist() == [0.5, 0.5]
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        minitorch._C.gelu_backward(minitorch.ones(2), minitorch.zeros(2), approximate="erf")


# ---- in place, on non-leaf tensors: the same formulas, self's old value where needed ----

INPLACE = [
    ("sqrt_", lambda y: y.sqrt_(), pos),
    ("rsqrt_", lambda y: y.rsqrt_(), pos),
    ("sin_", lambda y: y.sin_(), r),
    ("cos_", lambda y: y.cos_(), r),
    ("abs_", lambda y: y.abs_(), off_zero),
    ("sign_", lambda y: y.sign_(), off_zero),
    ("log1p_", lambda y: y.log1p_(), pos),
    ("exp2_", lambda y: y.exp2_(), r),
    ("expm1_", lambda y: y.expm1_(), r),
    ("log2_", lambda y: y.log2_(), pos),
    ("log10_", lambda y: y.log10_(), pos),
    ("reciprocal_", lambda y: y.reciprocal_(), pos),
    ("square_", lambda y: y.square_(), r),
    ("pow_", lambda y: y.pow_(3), pos),
    ("pow_tensor", lambda y: y.pow_(y.detach() * 0 + 1.5), pos),
    ("true_divide_", lambda y: y.true_divide_(2.5), r),
    ("div_rounding", lambda y: y.div_(0.7, rounding_mode="floor"), r),
    ("remainder_", lambda y: y.remainder_(0.9), r),
    ("fmod_", lambda y: y.fmod_(0.9), r),
    ("clamp_", lambda y: y.clamp_(-0.3, 0.4), r),
    ("clamp_max_", lambda y: y.clamp_max_(0.1), r),
    ("masked_fill_", lambda y: y.masked_fill_(y.detach() > 0.3, 2.0), r),
]


@pytest.mark.parametrize("name, op, make", INPLACE, ids=[i[0] for i in INPLACE])
def test_inplace(name, op, make):
    def fn(m, x):
        y = x * 1
        out = op(y)
        assert out is y
        return y * x  # the old x still reaches the gradient through its own edge

    check_grad(fn, [make(2, 3)])


def test_inplace_two_inputs():
    def fn(m, x, w):
        y = x * 1
        y.clamp_(w - 0.4, w + 0.5)
        y.masked_fill_(w > 1.2, m.tensor(0.5, dtype=m.float64))
        return y.pow_(w)  # saves its result: last

    check_grad(fn, [pos(2, 3), pos(3)])


# ---- node names: PyTorch's, for the same call ----

NAMES = [
    ("sqrt", lambda m, x, y: x.sqrt()),
    ("rsqrt", lambda m, x, y: x.rsqrt()),
    ("sin", lambda m, x, y: x.sin()),
    ("cos", lambda m, x, y: x.cos()),
    ("abs", lambda m, x, y: x.abs()),
    ("sign", lambda m, x, y: x.sign()),
    ("log1p", lambda m, x, y: x.log1p()),
    ("exp2", lambda m, x, y: x.exp2()),
    ("expm1", lambda m, x, y: x.expm1()),
    ("log2", lambda m, x, y: x.log2()),
    ("log10", lambda m, x, y: x.log10()),
    ("reciprocal", lambda m, x, y: x.reciprocal()),
    ("gelu", lambda m, x, y: F(m).gelu(x, approximate="tanh")),
    ("silu", lambda m, x, y: F(m).silu(x)),
    ("pow_number", lambda m, x, y: x ** 2),
    ("square", lambda m, x, y: x.square()),
    ("true_divide", lambda m, x, y: m.true_divide(x, y)),
    ("div", lambda m, x, y: m.div(x, 2)),
    ("floor_divide", lambda m, x, y: m.floor_divide(x, y)),
    ("remainder_number", lambda m, x, y: x % 2),
    ("fmod_number", lambda m, x, y: m.fmod(x, 2)),
    ("clamp_numbers", lambda m, x, y: x.clamp(0.2, 0.8)),
    ("clamp_max", lambda m, x, y: x.clamp_max(0.5)),
    ("maximum", lambda m, x, y: m.maximum(x, y)),
    ("minimum", lambda m, x, y: m.minimum(x, y)),
    ("where", lambda m, x, y: m.where(x > 0.7, x, 2.0)),
    ("masked_fill_number", lambda m, x, y: x.masked_fill(x > 0.7, 1.0)),
    ("baddbmm", lambda m, x, y: m.baddbmm(x.view(1, 1, 3), x.view(1, 3, 1), y.view(1, 1, 3))),
    ("addmv", lambda m, x, y: m.addmv(x, x.view(3, 1) * y[:1], y[:1])),
    ("outer", lambda m, x, y: m.outer(x, y)),
    ("inplace", lambda m, x, y: (x * 1).sqrt_().clamp_(0.1, 0.9).pow_(2)),
]
# One op here, several overloads (and node names) in PyTorch: the name follows the call once
# autograd.c's record() asks mt_autograd_math_node_name for it.
OVERLOADS = [
    ("pow_tensors", lambda m, x, y: x ** y),
    ("pow_base", lambda m, x, y: 2 ** x),
    ("div_rounding", lambda m, x, y: m.div(x, y, rounding_mode="floor")),
    ("remainder_tensors", lambda m, x, y: m.remainder(x, y)),
    ("remainder_of_number", lambda m, x, y: m.remainder(2, x)),
    ("fmod_tensors", lambda m, x, y: m.fmod(x, y)),
    ("clamp_tensors", lambda m, x, y: x.clamp(y * 0, y)),
    ("masked_fill_tensor", lambda m, x, y: x.masked_fill(x > 0.7, y[0])),
]


def node_names(fn):
    torch = pytest.importorskip("torch")
    a, b = rng.uniform(0.5, 1.0, 3), rng.uniform(0.5, 1.0, 3)
    names = []
    for lib in (minitorch, torch):
        x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
        names.append(type(fn(lib, x, y).grad_fn).__name__)
    return names


@pytest.mark.parametrize("name, fn", NAMES, ids=[c[0] for c in NAMES])
def test_node_names(name, fn):
    ours, theirs = node_names(fn)
    assert ours == theirs


@pytest.mark.parametrize("name, fn", OVERLOADS, ids=[c[0] for c in OVERLOADS])
def test_overload_node_names(name, fn):
    ours, theirs = node_names(fn)
    assert ours == theirs


# ---- what PyTorch refuses, and saved tensors modified in place ----

@pytest.mark.parametrize("fn", [
    lambda m, x, y: m.floor_divide(x, y),
    lambda m, x, y: x // 2,
    lambda m, x, y: m.remainder(2, x),
])
def test_no_derivative_like_pytorch(fn):
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        x, y = lib.tensor([1.5, 2.5], requires_grad=True), lib.tensor([0.5, 0.7], requires_grad=True)
        out = fn(lib, x, y)
        assert out.requires_grad
        with pytest.raises(RuntimeError, match="derivative for aten::(floor_divide|remainder) is not implemented"):
            out.sum().backward()


def test_saved_tensors_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        x = lib.tensor([1.0, 4.0], requires_grad=True)
        y = x.sqrt()  # saves its result
        y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        y = x ** 2  # saves only self for a number exponent
        y.add_(1)
        y.sum().backward()
        np.testing.assert_array_equal(np.asarray(x.grad.tolist()), [2.0, 8.0])


def test_float32_gradients():
    x = minitorch.tensor([0.5, 1.5, 2.0], requires_grad=True)
    y = (x.sqrt() + x.pow(2.0) + minitorch.nn.functional.gelu(x) + x.clamp(0.6, 1.8)).sum()
    y.backward()
    assert x.grad.dtype == minitorch.float32
    ref = 0.5 / np.sqrt([0.5, 1.5, 2.0]) + 2 * np.array([0.5, 1.5, 2.0]) + [0.0, 1.0, 0.0]
    torch = pytest.importorskip("torch")
    t = torch.tensor([0.5, 1.5, 2.0], requires_grad=True)
    torch.nn.functional.gelu(t).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), ref + t.grad.numpy(), rtol=1e-6)
