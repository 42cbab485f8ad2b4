"""The everyday pointwise ops against NumPy/SciPy (float64) and PyTorch: rounding,
value tests, trigonometric and special functions, xor and shifts, the float pairs, lerp,
addcmul/addcdiv, nan_to_num, clip, isclose/allclose/equal, float_power, heaviside, type_as,
as_tensor, count_nonzero, broadcasting, view(dtype), cumsum/cumprod dtypes, logcumsumexp:
values, dtypes, shapes (0-dim, empty, broadcast), layouts, NaN and inf, gradients, in-place
forms, operators, node names and bad calls (PyTorch's class and message). The binary ops' values
and gradients over broadcast shapes are also walked by tests/autograd/test_broadcast_grads.py."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import LAYOUTS, SMALL_DTYPES, arrays, as_numpy, check, check_grad, same_as_torch, shapes
from unary_table import UNARY

torch = pytest.importorskip("torch")
special = pytest.importorskip("scipy.special")

NAN, INF = float("nan"), float("inf")
ALL = ("float32", "float64", "int64", "int32", "bool")
NUMERIC = ("float32", "float64", "int64", "int32")
FLOATS = ("float32", "float64")


# Values at the edges of each domain, and beyond: NaN, +-inf, +-0, the poles.
EDGES = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.5, -3.0, 1e-30, 1e30, 0.999999,
                  -0.999999, 1.5, 10.0, -10.5, 100.0, 1e-8])


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", ALL)
def test_unary_same_as_torch_edges_and_grads(name, dtype):
    """Each row of the unary table (tests/unary_table.py; its values against NumPy are
    test_unary_compare.py's): values (NaN, inf, poles, signed zeros included) and gradients
    against PyTorch, every layout; an unsupported dtype raises PyTorch's class."""
    fn = UNARY[name].fn
    a = EDGES.reshape(2, 11)
    if name.startswith("gelu"):
        # PyTorch's vectorised float32 GELU gives NaN for +inf, its scalar path (and the formula) inf
        a = np.where(a == INF, 3.0, a)
    if dtype not in FLOATS:
        a = np.nan_to_num(a, posinf=7, neginf=-7).clip(-100, 100).astype(dtype)
    else:
        a = a.astype(dtype)
    for layout in LAYOUTS:
        same_as_torch(fn, [a], layout=layout, atol=1e-5, rtol=1e-4)
    same_as_torch(fn, [a[0, 0]])  # 0-dim
    same_as_torch(fn, [a[:0]])  # empty


# Known differences: clamp of a uint8 tensor with a negative bound (PyTorch casts -1 to uint8
# first, 255, so clip(x, -1, 1) is 1 everywhere; minitorch compares with -1).
KNOWN = {("clip", "uint8"): "clamp's negative bound on uint8 is not wrapped to 255 as in PyTorch"}
# torch.special's functions that PyTorch's CPU kernels (i1's and i1e's backward) refuse for Half:
# minitorch computes them in float32 as every other row.
KNOWN.update({(n, "float16"): f"PyTorch has no Half kernel for {n}; minitorch widens float16" for n in (
    "i1", "i1e", "ndtri", "log_ndtr", "erfcx", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
    "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0")})


@pytest.mark.parametrize("name, dtype", [
    pytest.param(n, d, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n, d])) if (n, d) in KNOWN else (n, d)
    for d in SMALL_DTYPES for n in UNARY])
def test_unary_small_dtypes_same_as_torch(name, dtype):
    """The small dtypes (float16 in float32 rounded once; uint8/int8/int16) against PyTorch, values
    and float16 gradients, every layout: float16 within two units in its last place, where libm's
    float32 result and PyTorch's differ by one before rounding."""
    fn = UNARY[name].fn
    a = EDGES.reshape(2, 11)
    if dtype != "float16":
        info = np.iinfo(dtype)
        a = np.nan_to_num(a, posinf=7, neginf=-7).clip(max(-100, info.min), 100).astype(dtype)
    else:
        a = a.astype(dtype)
        if name.startswith("gelu"):
            # as above: on a CPU with AVX-512, PyTorch's vectorised float16 GELU gives NaN for +inf
            # (1e30 among them, in float16)
            a = np.where(np.isposinf(a), np.float16(3.0), a)
    for layout in LAYOUTS:
        same_as_torch(fn, [a], layout=layout, atol=2e-3, rtol=2e-3)
    same_as_torch(fn, [a[:0]])  # empty


@pytest.mark.parametrize("name", [name for name, row in UNARY.items() if row.inplace])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_unary_in_place(name, dtype):
    """x.op_() writes op(x) into x (an integer x refuses a float result, as PyTorch), for each
    row of the unary table with an in-place form."""
    inplace = UNARY[name].inplace
    a = np.array([[0.25, -0.75, 0.5], [1.5, -2.5, 3.0]]).astype(dtype)
    if name == "acosh":
        a = np.abs(a) + 1

    def fn(lib, x):
        y = x.clone() if not x.requires_grad else x * 1
        r = inplace(y)
        assert r is y
        return y
    same_as_torch(fn, [a])
    same_as_torch(fn, [a], layout="transposed")


def test_torch_level_in_place_functions():
    x = minitorch.tensor([1.5, -2.5])
    for f in (minitorch.floor_, minitorch.ceil_, minitorch.trunc_, minitorch.round_, minitorch.frac_, minitorch.fix_,
              minitorch.erf_, minitorch.erfc_, minitorch.sinh_, minitorch.cosh_, minitorch.tan_, minitorch.atan_,
              minitorch.asinh_, minitorch.deg2rad_, minitorch.rad2deg_, minitorch.nan_to_num_, minitorch.clip_):
        assert f(x.clone(), *([0.0] if f is minitorch.clip_ else [])).shape == (2,)
    y = minitorch.tensor([0.5, -0.5])
    for f in (minitorch.asin_, minitorch.acos_, minitorch.atanh_):
        assert f(y.clone()).shape == (2,)
    assert minitorch.acosh_(minitorch.tensor([2.0])).item() == pytest.approx(math.acosh(2))
    z = minitorch.tensor([2.0])
    assert minitorch.xlogy_(z, 3.0) is z and z.item() == pytest.approx(2 * math.log(3))


# ---- rounding ----

def test_rounding_integers_bools_and_half_to_even():
    i = minitorch.tensor([1, -2, 3])
    for f in (minitorch.floor, minitorch.ceil, minitorch.trunc, minitorch.round, minitorch.fix):
        r = f(i)
        assert r.dtype == minitorch.int64 and r.tolist() == [1, -2, 3]
        assert r.data_ptr() != i.data_ptr()  # a copy, as PyTorch's
    assert minitorch.round(minitorch.tensor([0.5, 1.5, 2.5, -0.5, -1.5])).tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    for name in ("floor", "ceil", "round", "trunc"):
        with pytest.raises(NotImplementedError, match=f'"{name}_vml_cpu" not implemented for \'Bool\''):
            getattr(minitorch, name)(minitorch.tensor([True]))
    with pytest.raises(NotImplementedError, match="\"frac_cpu\" not implemented for 'Long'"):
        minitorch.frac(i)
    with pytest.raises(NotImplementedError, match="\"round_cpu\" not implemented for 'Long'"):
        minitorch.round(i, decimals=1)
    for d in (3, 1, 0, -1, -2):
        same_as_torch(lambda m, x, d=d: x.round(decimals=d), [np.array([1.2345, -9.8765, 125.0, 0.05, -250.0])])
        same_as_torch(lambda m, x, d=d: (x * 1).round_(decimals=d), [np.array([1.2345, -9.8765, 125.0])])


def test_round_decimals_grad_and_node_names():
    for fn in (lambda m, x: m.round(x), lambda m, x: m.round(x, decimals=2), lambda m, x: m.floor(x),
               lambda m, x: m.ceil(x), lambda m, x: m.trunc(x), lambda m, x: m.fix(x), lambda m, x: m.frac(x)):
        same_as_torch(fn, [np.array([0.26, -1.5, 2.75])])
        x = minitorch.tensor([0.26], requires_grad=True)
        t = torch.tensor([0.26], requires_grad=True)
        assert type(fn(minitorch, x).grad_fn).__name__ == type(fn(torch, t).grad_fn).__name__


# ---- special functions ----

def test_special_functions_at_their_poles_and_beyond():
    x = minitorch.tensor([0.0, -0.0, -1.0, -2.0, -0.5, 1.0, INF, -INF, NAN])
    t = torch.tensor(as_numpy(x))
    for name in ("lgamma", "digamma", "erfinv"):
        np.testing.assert_allclose(as_numpy(getattr(minitorch, name)(x)), getattr(torch, name)(t).numpy(), rtol=1e-5)
    for n in range(4):
        np.testing.assert_allclose(as_numpy(minitorch.polygamma(n, x)), torch.polygamma(n, t).numpy(), rtol=1e-4)
    big = minitorch.tensor([-3.7, -100.25, 0.001, 1e6], dtype=minitorch.float64)
    np.testing.assert_allclose(as_numpy(minitorch.digamma(big)), special.digamma(as_numpy(big)), rtol=1e-10)
    np.testing.assert_allclose(as_numpy(minitorch.polygamma(2, big)), special.polygamma(2, as_numpy(big)), rtol=1e-8)
    with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n\."):
        minitorch.polygamma(-1, x)


def test_polygamma_forms_and_second_derivatives():
    a = np.array([0.7, 1.5, 3.25])
    for n in range(4):
        same_as_torch(lambda m, x, n=n: m.polygamma(n, x), [a])
        same_as_torch(lambda m, x, n=n: x.polygamma(n), [a])
        same_as_torch(lambda m, x, n=n: (x * 1).polygamma_(n), [a])
    # lgamma's gradient is digamma's, digamma's trigamma: twice differentiable
    for name in ("lgamma", "digamma", "erf", "erfinv", "atan2"):
        f = (lambda m, x, y: m.atan2(x, y)) if name == "atan2" else (lambda m, x, y, name=name: getattr(m, name)(x) * y)
        check_grad(f, [a / 4, a + 1])
        x = minitorch.tensor(a / 4, requires_grad=True)
        (g,) = minitorch.autograd.grad(f(minitorch, x, minitorch.tensor(a + 1)).sum(), x, create_graph=True)
        (gg,) = minitorch.autograd.grad(g.sum(), x)
        tx = torch.tensor(a / 4, requires_grad=True)
        (tg,) = torch.autograd.grad(f(torch, tx, torch.tensor(a + 1)).sum(), tx, create_graph=True)
        (tgg,) = torch.autograd.grad(tg.sum(), tx)
        np.testing.assert_allclose(as_numpy(gg), tgg.numpy(), rtol=1e-6)


# ---- xor and shifts, abs ----

def test_xor_and_shift_operators():
    i = np.array([[5, -3, 0], [7, 1, -8]], np.int64)
    k = np.array([1, 2, 70], np.int64)
    for fn in (lambda m, x, y: x ^ y, lambda m, x, y: x << y, lambda m, x, y: x >> y, lambda m, x, y: 3 ^ x,
               lambda m, x, y: 2 << y, lambda m, x, y: 256 >> y, lambda m, x, y: x << 2, lambda m, x, y: x ^ True,
               lambda m, x, y: m.bitwise_xor(x, y), lambda m, x, y: m.bitwise_left_shift(x, -y),
               lambda m, x, y: m.bitwise_right_shift(x, -y), lambda m, x, y: x.bitwise_left_shift(y),
               lambda m, x, y: m.bitwise_right_shift(1024, y), lambda m, x, y: x.to(m.int32) << y.to(m.int32)):
        for layout in LAYOUTS:
            same_as_torch(fn, [i, k], layout=layout)
    b = np.array([True, False, True])
    same_as_torch(lambda m, x, y: x ^ y, [b, ~b])
    same_as_torch(lambda m, x, y: x << 1, [b, b])  # bool << int promotes to int64
    for fn in (lambda m, x: x << 1.5, lambda m, x: m.bitwise_xor(x, x), lambda m, x: x >> x):
        same_as_torch(fn, [np.array([1.5, 2.0])])  # both refuse floats
    same_as_torch(lambda m, x: m.bitwise_left_shift(x, x), [b])  # and bool shifts
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        minitorch.tensor([1.0]) << 1
    with pytest.raises(TypeError):
        minitorch.bitwise_left_shift(1, 2)


def test_in_place_operators():
    x = minitorch.tensor([5, 6, 7])
    y = x
    x ^= 3
    x <<= 2
    x >>= 1
    assert x is y and x.tolist() == [(5 ^ 3) << 2 >> 1, (6 ^ 3) << 2 >> 1, (7 ^ 3) << 2 >> 1]
    z = minitorch.tensor([1, 2])
    for f in (lambda t: t.bitwise_xor_(1), lambda t: t.bitwise_left_shift_(1), lambda t: t.bitwise_right_shift_(1),
              lambda t: t.logical_xor_(t)):
        assert f(z) is z
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \^="):
        z ^= "a"
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        minitorch.tensor([1]).bitwise_left_shift_(minitorch.tensor([1.0]))
    same_as_torch(lambda m, x, y: x.clone().bitwise_xor_(y), [np.array([1, 2]), np.array([1.5, 2.0])])


def test_abs_builtin():
    for a in (np.array([-1.5, 2.0, -0.0]), np.array([-3, 4]), np.array([-3, 4], np.int32)):
        same_as_torch(lambda m, x: abs(x), [a])
    with pytest.raises(NotImplementedError):
        abs(minitorch.tensor([True]))


def test_logical_xor():
    a, b = np.array([0.0, 1.5, NAN, -0.0]), np.array([1, 0, 0, 0])
    same_as_torch(lambda m, x, y: m.logical_xor(x, y), [a, b], grad=False)
    same_as_torch(lambda m, x, y: x.logical_xor(y), [b, a[:, None]], grad=False)
    x = minitorch.tensor([True, False])
    assert x.logical_xor_(minitorch.tensor([True, True])).tolist() == [False, True]
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        minitorch.logical_xor(x, 1)


# ---- the float pairs ----

PAIRS = {
    "atan2": lambda m, x, y: m.atan2(x, y),
    "copysign": lambda m, x, y: m.copysign(x, y),
    "copysign_number": lambda m, x, y: m.copysign(x, -1.5),
    "logaddexp": lambda m, x, y: m.logaddexp(x, y),
    "logaddexp2": lambda m, x, y: x.logaddexp2(y),
    "xlogy": lambda m, x, y: m.xlogy(x, y),
    "xlogy_number_self": lambda m, x, y: m.xlogy(2, y),
    "xlogy_number_other": lambda m, x, y: m.xlogy(x, 3.5),
    "fmax": lambda m, x, y: m.fmax(x, y),
    "fmin": lambda m, x, y: x.fmin(y),
    "heaviside": lambda m, x, y: m.heaviside(x, y),
    "float_power": lambda m, x, y: m.float_power(x, y),
    "float_power_number": lambda m, x, y: m.float_power(x, 2),
    "float_power_number_base": lambda m, x, y: m.float_power(2.5, y),
}
PAIR_REFS = {
    "atan2": np.arctan2, "copysign": np.copysign, "copysign_number": lambda x, y: np.copysign(x, -1.5),
    "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2,
    "xlogy": lambda x, y: special.xlogy(x, y), "xlogy_number_self": lambda x, y: special.xlogy(2, y),
    "xlogy_number_other": lambda x, y: special.xlogy(x, 3.5), "fmax": np.fmax, "fmin": np.fmin,
    "heaviside": np.heaviside, "float_power": np.float_power,
    "float_power_number": lambda x, y: np.float_power(x, 2), "float_power_number_base": lambda x, y: 2.5 ** y,
}


@pytest.mark.parametrize("name", PAIRS)
def test_float_pairs_against_numpy_and_torch(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    for dtype in ("float32", "float64"):
        for sa, sb in (((2, 3), (3,)), ((4, 1), (1, 5)), ((), (2,)), ((0, 3), (3,))):
            a = (rng.standard_normal(sa) * 3).astype(dtype)
            b = (rng.standard_normal(sb) * 3).astype(dtype)
            if name.startswith(("xlogy", "float_power")):
                b = np.abs(b) + 0.1
                a = np.abs(a) + 0.1 if name.startswith("float_power") else a
            check(PAIRS[name], PAIR_REFS[name], [a, b], rtol=2e-5, atol=1e-5)
            for layout in LAYOUTS:
                if a.ndim and b.ndim:
                    same_as_torch(PAIRS[name], [a, b], layout=layout, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", PAIRS)
def test_float_pairs_special_values_dtypes_and_grads(name):
    v = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -2.0, 0.5])
    a, b = np.repeat(v, 8), np.tile(v, 8)
    same_as_torch(PAIRS[name], [a, b])
    same_as_torch(PAIRS[name], [a.astype(np.float32), b.astype(np.float32)])
    ints = np.array([3, -2, 0, 1], np.int64)
    for x, y in ((ints, ints[::-1].copy()), (ints, np.array([0.5, 1.5, -2.0, 0.0])),
                 (np.array([True, False, True, False]), ints), (ints.astype(np.int32), ints)):
        same_as_torch(PAIRS[name], [x, y])


def test_pair_errors():
    f, i = minitorch.tensor([1.0, 2.0]), minitorch.tensor([1, 2])
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes."):
        minitorch.heaviside(i, f)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        minitorch.heaviside(f, 0.5)
    with pytest.raises(NotImplementedError, match="\"logaddexp_cpu\" not implemented for 'Long'"):
        minitorch.logaddexp(i, i)
    with pytest.raises(TypeError, match="must be Tensor, not int"):
        minitorch.atan2(f, 2)
    with pytest.raises(TypeError):
        minitorch.xlogy(1, 2)
    with pytest.raises(TypeError):
        minitorch.float_power(1, 2)
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float but the operation's "
                                           "result requires dtype Double"):
        f.clone().float_power_(2)
    x = minitorch.tensor([1.0, 2.0], dtype=minitorch.float64)
    assert x.float_power_(2) is x and x.tolist() == [1.0, 4.0]
    assert x.float_power_(minitorch.tensor([1, 2])).tolist() == [1.0, 16.0]
    h = minitorch.tensor([-1.0, 0.0, 2.0])
    assert h.heaviside_(minitorch.tensor([0.5])).tolist() == [0.0, 0.5, 1.0]
    y = minitorch.tensor([1.0, -2.0])
    assert y.copysign_(-1).tolist() == [-1.0, -2.0] and y.atan2_(minitorch.tensor([1.0, 1.0])).shape == (2,)
    assert minitorch.tensor([2.0]).xlogy_(minitorch.tensor([1.0])).tolist() == [0.0]


def test_heaviside_backward_refuses():
    x = minitorch.tensor([1.0, -1.0], requires_grad=True)
    y = minitorch.heaviside(x, minitorch.tensor([0.5]))
    assert type(y.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="heaviside"):
        y.sum().backward()


def test_pair_node_names():
    for fn in PAIRS.values():
        x = minitorch.tensor([0.5, 1.5], requires_grad=True)
        y = minitorch.tensor([2.0, 0.25], requires_grad=True)
        tx, ty = torch.tensor([0.5, 1.5], requires_grad=True), torch.tensor([2.0, 0.25], requires_grad=True)
        assert type(fn(minitorch, x, y).grad_fn).__name__ == type(fn(torch, tx, ty).grad_fn).__name__


# ---- lerp, addcmul, addcdiv ----

TERNARY = {
    "lerp_number": lambda m, x, y, w: m.lerp(x, y, 0.3),
    "lerp_number_high": lambda m, x, y, w: x.lerp(y, 0.75),
    "lerp_tensor": lambda m, x, y, w: m.lerp(x, y, w),
    "lerp_0dim_weight": lambda m, x, y, w: m.lerp(x, y, w.sum()),
    "addcmul": lambda m, x, y, w: m.addcmul(x, y, w),
    "addcmul_value": lambda m, x, y, w: x.addcmul(y, w, value=-0.5),
    "addcdiv": lambda m, x, y, w: m.addcdiv(x, y, w),
    "addcdiv_value": lambda m, x, y, w: m.addcdiv(x, y, w, value=2),
    "lerp_": lambda m, x, y, w: (x * 1).lerp_(y, w),
    "lerp_number_": lambda m, x, y, w: (x * 1).lerp_(y, 0.4),
    "addcmul_": lambda m, x, y, w: (x * 1).addcmul_(y, w, value=3),
    "addcdiv_": lambda m, x, y, w: (x * 1).addcdiv_(y, w, value=0.5),
}
TERNARY_REFS = {
    "lerp_number": lambda x, y, w: x + 0.3 * (y - x), "lerp_number_high": lambda x, y, w: x + 0.75 * (y - x),
    "lerp_tensor": lambda x, y, w: x + w * (y - x), "lerp_0dim_weight": lambda x, y, w: x + w.sum() * (y - x),
    "addcmul": lambda x, y, w: x + y * w, "addcmul_value": lambda x, y, w: x - 0.5 * y * w,
    "addcdiv": lambda x, y, w: x + y / w, "addcdiv_value": lambda x, y, w: x + 2 * y / w,
    "lerp_": lambda x, y, w: x + w * (y - x), "lerp_number_": lambda x, y, w: x + 0.4 * (y - x),
    "addcmul_": lambda x, y, w: x + 3 * y * w, "addcdiv_": lambda x, y, w: x + 0.5 * y / w,
}


@pytest.mark.parametrize("name", TERNARY)
def test_ternaries(name):
    rng = np.random.default_rng(sum(map(ord, name)))
    inplace = name.endswith("_")
    for dtype in ("float32", "float64"):
        shape_sets = [((2, 3), (2, 3), (2, 3))] if inplace else [((2, 3), (3,), (2, 1)), ((4, 1, 3), (2, 3), ()),
                                                                 ((0, 3), (3,), (1,)), ((), (), ())]
        shape_sets.append(((2, 3), (1, 3), (3,)))
        for sx, sy, sw in shape_sets:
            x, y = rng.standard_normal(sx).astype(dtype), rng.standard_normal(sy).astype(dtype)
            w = (rng.uniform(0.5, 2, sw) * rng.choice([-1, 1], sw)).astype(dtype)
            check(lambda m, *t: TERNARY[name](m, *t), TERNARY_REFS[name], [x, y, w], atol=1e-5, rtol=1e-5)
            for layout in LAYOUTS:
                if x.ndim and y.ndim and w.ndim:
                    same_as_torch(TERNARY[name], [x, y, w], layout=layout, atol=1e-5, rtol=1e-5)
            if not inplace and "number" not in name:
                check_grad(TERNARY[name], [x.astype(np.float64), y.astype(np.float64), w.astype(np.float64)])
            elif not inplace:
                check_grad(lambda m, a, b: TERNARY[name](m, a, b, None), [x.astype(np.float64), y.astype(np.float64)])


def test_lerp_is_exact_at_the_ends_and_keeps_nan():
    x, y = minitorch.tensor([1e8, -3.0, NAN]), minitorch.tensor([1.0, 7.0, 2.0])
    assert minitorch.lerp(x, y, 1.0).tolist()[:2] == [1.0, 7.0]
    assert minitorch.lerp(x, y, 0.0).tolist()[:2] == [1e8, -3.0]
    assert math.isnan(minitorch.lerp(x, y, 0.5).tolist()[2])


def test_ternary_dtypes_and_errors():
    f, i = np.array([1.5, -2.5]), np.array([2, -3])
    for fn in (lambda m, x, y: m.addcmul(y, y, y, value=2), lambda m, x, y: m.addcmul(y, y, y, value=0.5),
               lambda m, x, y: m.addcmul(x, y, y), lambda m, x, y: m.addcmul(y, x, x),
               lambda m, x, y: m.addcdiv(y, x, x), lambda m, x, y: m.addcmul(x, x.double(), y),
               lambda m, x, y: m.addcmul(y.bool(), y.bool(), y.bool()), lambda m, x, y: m.addcdiv(y, y, y),
               lambda m, x, y: m.addcdiv(x, y, y), lambda m, x, y: m.lerp(y, y, 0.5),
               lambda m, x, y: m.lerp(x, x.double(), 0.5), lambda m, x, y: m.lerp(x, x, x.double()),
               lambda m, x, y: m.lerp(y, y, y), lambda m, x, y: m.lerp(x, x, y.bool()),
               lambda m, x, y: m.lerp(x, x, m.tensor(0.5, dtype=m.float64))):
        same_as_torch(fn, [f.astype(np.float32), i])
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer supported, and in a future  "
                                           "release addcdiv will perform a true division"):
        minitorch.addcdiv(minitorch.ones(2), minitorch.tensor([1, 2]), minitorch.tensor([True, False]))
    with pytest.raises(RuntimeError, match="expected dtype float for `end` but got dtype double"):
        minitorch.lerp(minitorch.ones(2), minitorch.ones(2, dtype=minitorch.float64), 0.5)
    with pytest.raises(RuntimeError, match="expected dtype long int for `weight` but got dtype float"):
        minitorch.lerp(minitorch.tensor([1]), minitorch.tensor([1]), minitorch.ones(1))
    with pytest.raises(NotImplementedError, match="\"lerp_kernel_scalar\" not implemented for 'Long'"):
        minitorch.lerp(minitorch.tensor([1]), minitorch.tensor([1]), 0.5)
    with pytest.raises(NotImplementedError, match="\"addcmul_cpu_out\" not implemented for 'Bool'"):
        minitorch.addcmul(*[minitorch.tensor([True])] * 3)


def test_ternary_node_names():
    for fn in TERNARY.values():
        xs = [minitorch.tensor([0.5, 1.5], requires_grad=True) for _ in range(3)]
        ts = [torch.tensor([0.5, 1.5], requires_grad=True) for _ in range(3)]
        assert type(fn(minitorch, *xs).grad_fn).__name__ == type(fn(torch, *ts).grad_fn).__name__


# ---- nan_to_num, clip ----

def test_nan_to_num():
    a = np.array([NAN, INF, -INF, 1.5, -0.0])
    for dtype in FLOATS:
        for kw in ({}, {"nan": 2.0}, {"posinf": 1e3}, {"neginf": -7, "nan": -1}, {"posinf": 1e300}):
            check(lambda m, x, kw=kw: m.nan_to_num(x, **kw), lambda x, kw=kw: np.nan_to_num(
                x.astype(dtype), **kw).astype(np.float64), [a.astype(dtype)], atol=0, rtol=0)
            same_as_torch(lambda m, x, kw=kw: x.nan_to_num(**kw), [a.astype(dtype)])
            same_as_torch(lambda m, x, kw=kw: (x * 1).nan_to_num_(**kw), [a.astype(dtype)])
    i = minitorch.tensor([1, 2])
    assert minitorch.nan_to_num(i, nan=1.5).tolist() == [1, 2] and minitorch.nan_to_num(i) is not i
    assert i.nan_to_num_() is i
    assert minitorch.nan_to_num(minitorch.tensor([True])).dtype == minitorch.bool
    x = minitorch.tensor([NAN, 1.0], requires_grad=True)
    assert type(minitorch.nan_to_num(x).grad_fn).__name__ == "NanToNumBackward0"


def test_clip_is_clamp():
    a = np.array([[-2.0, 0.5, 3.0], [NAN, 1.0, -0.5]])
    for fn in (lambda m, x: m.clip(x, 0), lambda m, x: x.clip(max=0.7), lambda m, x: x.clip(-1, 1),
               lambda m, x: m.clip(x, min=m.tensor([0.0, 1.0, 2.0])), lambda m, x: (x * 1).clip_(-0.5, 0.6)):
        same_as_torch(fn, [a])
        same_as_torch(fn, [a], layout="transposed")
    with pytest.raises(RuntimeError, match="torch.clamp: At least one of 'min' or 'max' must not be None"):
        minitorch.clip(minitorch.ones(1))


# ---- comparisons returning Python values ----

def test_isclose():
    a = np.array([1.0, 1.0 + 1e-6, NAN, INF, -INF, 0.0, 1e-9, 2.0])
    b = np.array([1.0, 1.0, NAN, INF, INF, 1e-9, 0.0, 2.1])
    for kw in ({}, {"equal_nan": True}, {"rtol": 0, "atol": 0}, {"rtol": 0.1}, {"atol": 1e-8, "rtol": 0},
               {"rtol": 0, "atol": 0, "equal_nan": True}):
        for dtype in FLOATS:
            same_as_torch(lambda m, x, y, kw=kw: m.isclose(x, y, **kw), [a.astype(dtype), b.astype(dtype)],
                          grad=False)
            check(lambda m, x, y, kw=kw: x.isclose(y, **kw), lambda x, y, kw=kw: np.isclose(x, y, **kw),
                  [a.astype(dtype), b.astype(dtype)])
    i = np.array([1, 5, -3])
    for kw in ({}, {"atol": 1}, {"atol": 0.5, "rtol": 0}, {"rtol": 0.5}):
        same_as_torch(lambda m, x, y, kw=kw: m.isclose(x, y, **kw), [i, i + 1])
        same_as_torch(lambda m, x, y, kw=kw: m.isclose(x, y, **kw), [i > 0, i < 2])
    same_as_torch(lambda m, x, y: m.isclose(x, y), [a.reshape(2, 4), b[:4]])  # broadcast
    with pytest.raises(RuntimeError, match="^Long did not match Float$"):
        minitorch.isclose(minitorch.tensor([1]), minitorch.tensor([1.0]))
    with pytest.raises(RuntimeError, match="^rtol must be greater than or equal to zero, but got -1$"):
        minitorch.isclose(minitorch.ones(1), minitorch.ones(1), rtol=-1)
    with pytest.raises(RuntimeError, match="^atol must be greater than or equal to zero, but got -0.5$"):
        minitorch.isclose(minitorch.ones(1), minitorch.ones(1), atol=-0.5)
    x = minitorch.tensor([1.0], requires_grad=True)
    assert not minitorch.isclose(x, x * 2).requires_grad


def test_allclose_and_equal():
    f = minitorch.tensor([1.0, 2.0])
    assert minitorch.allclose(f, f + 1e-9) is True and f.allclose(f + 1) is False
    assert minitorch.allclose(f, f + 0.5, atol=0.5) and minitorch.allclose(f, f * 1.1, rtol=0.1)
    nan = minitorch.tensor([NAN])
    assert not minitorch.allclose(nan, nan) and minitorch.allclose(nan, nan, equal_nan=True)
    with pytest.raises(RuntimeError, match="^Float did not match Double$"):
        minitorch.allclose(f, f.double())
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\)"):
        minitorch.allclose(f, minitorch.ones(3))
    i = minitorch.tensor([1, -2, 3])
    assert minitorch.equal(i, i.double()) is True and minitorch.equal(i, i.float() + 0.5) is False
    assert minitorch.equal(i, i[:2]) is False and i.equal(i.clone())
    assert minitorch.equal(nan, nan) is False and minitorch.equal(minitorch.ones(0), minitorch.ones(0))
    assert minitorch.equal(minitorch.ones(2, 1), minitorch.ones(2)) is False  # sizes differ: no broadcasting
    with pytest.raises(TypeError, match=r"equal\(\): argument 'other' \(position 2\) must be Tensor, not list"):
        minitorch.equal(i, [1, 2, 3])
    for a, b in ((np.array([1, 2]), np.array([1.0, 2.0])), (np.array([True]), np.array([1])),
                 (np.array([[1.0, NAN]]), np.array([[1.0, NAN]]))):
        assert minitorch.equal(minitorch.tensor(a), minitorch.tensor(b)) == torch.equal(torch.tensor(a),
                                                                                        torch.tensor(b))


# ---- conversions ----

def test_type_as():
    x = minitorch.tensor([1.5, -2.5], requires_grad=True)
    assert x.type_as(minitorch.ones(1)) is x
    y = x.type_as(minitorch.tensor([1]))
    assert y.dtype == minitorch.int64 and y.tolist() == [1, -2]
    z = x.type_as(minitorch.ones(1, dtype=minitorch.float64))
    assert z.dtype == minitorch.float64 and type(z.grad_fn).__name__ == "ToCopyBackward0"
    z.sum().backward()
    assert x.grad.dtype == minitorch.float32 and x.grad.tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match=r"type_as\(\): argument 'other' \(position 1\) must be Tensor, not int"):
        x.type_as(1)


def test_as_tensor_shares_what_it_can():
    t = minitorch.ones(3)
    assert minitorch.as_tensor(t) is t and minitorch.as_tensor(t, dtype=minitorch.float32, device="cpu") is t
    d = minitorch.as_tensor(t, dtype=minitorch.float64)
    assert d.dtype == minitorch.float64 and d.data_ptr() != t.data_ptr()
    a = np.ones(3, np.float32)
    shared = minitorch.as_tensor(a)
    a[0] = 5
    assert shared.tolist() == [5.0, 1.0, 1.0]
    same = minitorch.as_tensor(a, dtype=minitorch.float32)
    copied = minitorch.as_tensor(a, dtype=minitorch.float64)
    a[1] = 7
    assert same.tolist() == [5.0, 7.0, 1.0] and copied.tolist() == [5.0, 1.0, 1.0]
    assert minitorch.as_tensor([1, 2]).dtype == minitorch.int64
    assert minitorch.as_tensor(3.5).shape == () and minitorch.as_tensor((1, 2.5)).dtype == minitorch.float32
    assert minitorch.as_tensor([1, 2], dtype=minitorch.float64).dtype == minitorch.float64
    with pytest.raises(ValueError, match="negative"):
        minitorch.as_tensor(np.arange(3.0)[::-1])


# ---- count_nonzero, broadcasting ----

@given(data=st.data(), dtype=st.sampled_from(ALL))
def test_count_nonzero(data, dtype):
    a = data.draw(arrays(dtype, shapes(min_dims=1, max_dims=3), low=-2, high=2))
    dims = [None] + list(range(-a.ndim, a.ndim)) + [tuple(range(a.ndim))]
    dim = data.draw(st.sampled_from(dims))
    out = check(lambda m, x: m.count_nonzero(x, dim=dim) if dim is not None else x.count_nonzero(),
                lambda x: np.count_nonzero(x, axis=dim), [a])
    assert out.dtype == minitorch.int64


def test_count_nonzero_forms():
    x = minitorch.tensor([[0.0, 1.0, NAN], [0.0, -0.0, 2.0]])
    t = torch.tensor(as_numpy(x))
    assert minitorch.count_nonzero(x).item() == torch.count_nonzero(t).item() == 3
    assert minitorch.count_nonzero(x, 1).tolist() == torch.count_nonzero(t, 1).tolist()
    assert x.count_nonzero((0, 1)).tolist() == torch.count_nonzero(t, (0, 1)).tolist()


def test_broadcast_to():
    a = np.array([1.5, -2.5, 0.5])
    for shape in ((2, 3), (4, 2, 3), (3,), (0, 3)):
        for layout in LAYOUTS:
            same_as_torch(lambda m, x, s=shape: m.broadcast_to(x, s), [a], layout=layout)
            same_as_torch(lambda m, x, s=shape: x.broadcast_to(s), [a], layout=layout)
    x = minitorch.tensor(a)
    assert minitorch.broadcast_to(x, (2, 3)).data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(2\) must match the existing size \(3\)"):
        minitorch.broadcast_to(x, (2,))


def test_broadcast_tensors():
    x, y = minitorch.tensor([1.5, -2.5, 0.5]), minitorch.tensor([[1], [2]])
    bx, by = minitorch.broadcast_tensors(x, y)
    tx, ty = torch.broadcast_tensors(torch.tensor([1.5, -2.5, 0.5]), torch.tensor([[1], [2]]))
    assert bx.tolist() == tx.tolist() and by.tolist() == ty.tolist() and bx.data_ptr() == x.data_ptr()
    assert minitorch.broadcast_tensors() == () and len(minitorch.broadcast_tensors(x)) == 1
    same_as_torch(lambda m, a, b: m.broadcast_tensors(a, b)[0] * m.broadcast_tensors(a, b)[1],
                  [np.array([1.0, 2.0]), np.array([[3.0], [4.0], [5.0]])])
    assert minitorch._C.broadcast_tensors([x, y])[1].shape == (2, 3)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(3\) must match the size of tensor b \(2\)"):
        minitorch.broadcast_tensors(x, minitorch.ones(2))


def test_broadcast_shapes():
    for shapes_ in (((2,), (3, 1), (1, 1, 1)), ((2, 1), 5), (), ((0, 1), (3,)), ([1, 2], minitorch.Size([3, 1])),
                    (None, (2,)), ((1,), (1,))):
        t_shapes = [torch.Size(s) if isinstance(s, minitorch.Size) else s for s in shapes_]
        assert tuple(minitorch.broadcast_shapes(*shapes_)) == tuple(torch.broadcast_shapes(*t_shapes))
        assert isinstance(minitorch.broadcast_shapes(*shapes_), minitorch.Size)
    with pytest.raises(RuntimeError, match=r"^Attempting to broadcast a dimension of length 3 at -2! Mismatching "
                                           r"argument at index 1 had \(3, 2\); but expected shape should be "
                                           r"broadcastable to \[2, 2\]$"):
        minitorch.broadcast_shapes((2, 1), (3, 2))
    with pytest.raises(ValueError, match="^Attempting to broadcast a dimension with negative length!$"):
        minitorch.broadcast_shapes((-1,))
    with pytest.raises(RuntimeError, match="Input shapes should be of type ints, a tuple of ints, or a list of ints"):
        minitorch.broadcast_shapes(minitorch.ones(2))


# ---- view(dtype) ----

DT = ("float32", "float64", "int64", "int32", "bool")


@pytest.mark.parametrize("src", DT)
@pytest.mark.parametrize("dst", DT)
def test_view_dtype_against_torch(src, dst):
    """Every pair of dtypes, over several geometries: PyTorch's values, shape and strides, or its
    error; the view shares the memory."""
    base = np.arange(48).reshape(4, 12) % 2 if src == "bool" else np.arange(48).reshape(4, 12)
    a = base.astype(src)
    cases = [lambda t: t, lambda t: t[:, 2:10], lambda t: t[1:, 4:], lambda t: t.t(), lambda t: t[:, ::2],
             lambda t: t[0], lambda t: t[0, 0], lambda t: t[:, 1:4], lambda t: t[:0]]
    for k, case in enumerate(cases):
        m = case(minitorch.tensor(a))
        t = case(torch.tensor(a))
        try:
            want = t.view(getattr(torch, dst))
        except RuntimeError as e:
            with pytest.raises(RuntimeError) as got:
                m.view(getattr(minitorch, dst))
            assert str(got.value) == str(e).split("\n")[0], k
            continue
        v = m.view(getattr(minitorch, dst))
        assert v.dtype == getattr(minitorch, dst) and tuple(v.shape) == tuple(want.shape), k
        assert v.stride() == want.stride() and v.storage_offset() == want.storage_offset(), k
        if dst == "bool":
            np.testing.assert_array_equal(as_numpy(v.to(minitorch.int64)), want.to(torch.int64).numpy())
        elif dst.startswith("float"):
            np.testing.assert_array_equal(np.ascontiguousarray(as_numpy(v)).view(np.int8),
                                          np.ascontiguousarray(want.numpy()).view(np.int8))
        else:
            np.testing.assert_array_equal(as_numpy(v), want.numpy())


def test_view_dtype_shares_memory_and_version_and_no_grad():
    x = minitorch.tensor([1.0, 2.0, 3.0, 4.0])
    v = x.view(minitorch.int32)
    v[0] = 0
    assert x[0].item() == 0.0 and x._version == v._version
    assert x.view(dtype=minitorch.int64).shape == (2,)
    assert minitorch._C.view_dtype(x, minitorch.int64).shape == (2,)  # the op Tensor.view(dtype) calls
    r = minitorch.ones(4, requires_grad=True)
    assert not r.view(minitorch.int32).requires_grad and not r.view(minitorch.float32).requires_grad
    with pytest.raises(TypeError):
        x.view("float")
    assert x.view(2, 2).shape == (2, 2) and x.view((4,)).shape == (4,) and x.view(-1).shape == (4,)


# ---- scans ----

@pytest.mark.parametrize("dtype", ALL)
def test_cumsum_cumprod_dtypes(dtype):
    a = np.array([[1, 0, 1], [1, 1, 0]]).astype(dtype)
    for fn in (lambda m, x: m.cumsum(x, 0), lambda m, x: x.cumsum(1), lambda m, x: x.cumprod(1),
               lambda m, x: m.cumprod(x, dim=0, dtype=m.float64), lambda m, x: x.cumsum(-1, dtype=m.int32)):
        same_as_torch(fn, [a], grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp(dtype):
    rng = np.random.default_rng(0)
    for shape, dim in (((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -2), ((), 0), ((0, 3), 1), ((3, 0), 1)):
        a = (rng.standard_normal(shape) * 5).astype(dtype)
        check(lambda m, x: m.logcumsumexp(x, dim), lambda x: np.logaddexp.accumulate(x, axis=dim) if x.ndim else x,
              [a], atol=1e-5, rtol=1e-5)
        for layout in LAYOUTS:
            same_as_torch(lambda m, x: x.logcumsumexp(dim), [a], layout=layout, atol=1e-5, rtol=1e-5)
    # far apart values (the naive log(cumsum(exp)) underflows), infinities and NaN
    a = np.array([-1000.0, 0.0, -INF, INF, 1.0, NAN, 2.0]).astype(dtype)
    same_as_torch(lambda m, x: m.logcumsumexp(x, 0), [a])
    same_as_torch(lambda m, x: m.logcumsumexp(x, 0), [np.array([-INF, -INF, 3.0]).astype(dtype)])
    check_grad(lambda m, x: m.logcumsumexp(x, 1), [rng.standard_normal((3, 5))])
    x = minitorch.tensor([1.0, 2.0], requires_grad=True)
    assert type(minitorch.logcumsumexp(x, 0).grad_fn).__name__ == "LogcumsumexpBackward0"
    with pytest.raises(NotImplementedError, match="\"logcumsumexp_out_cpu\" not implemented for 'Long'"):
        minitorch.logcumsumexp(minitorch.tensor([1, 2]), 0)
    with pytest.raises(IndexError):
        minitorch.logcumsumexp(x, 1)


NUMBER_CALLS = [
    ("add_floats", lambda m: m.add(1.5, 2.5)),
    ("add_ints", lambda m: m.add(1, 2)),
    ("add_bools", lambda m: m.add(True, False)),
    ("add_alpha", lambda m: m.add(2, 3, alpha=2)),
    ("subtract_number_tensor", lambda m: m.subtract(3, m.arange(3))),
    ("sub_alpha", lambda m: m.sub(2, 1.5, alpha=2)),
    ("mul_number_half", lambda m: m.mul(2, m.ones(2, dtype=m.float16))),
    ("multiply_floats", lambda m: m.multiply(2.5, 2)),
    ("div_ints", lambda m: m.div(1, 2)),
    ("divide_floor", lambda m: m.divide(3, 2, rounding_mode="floor")),
    ("div_trunc_float", lambda m: m.div(-7.0, 2, rounding_mode="trunc")),
    ("true_divide", lambda m: m.true_divide(1, 4)),
    ("floor_divide_numbers", lambda m: m.floor_divide(7, 2)),
    ("floor_divide_number_tensor", lambda m: m.floor_divide(7, m.tensor([2, 3]))),
    ("mul_number_int32", lambda m: m.mul(2.5, m.tensor([1, 2], dtype=m.int32))),
    ("add_complex", lambda m: m.add(1 + 2j, 1)),
    ("copy_float", lambda m: m.zeros(2).copy_(1.5)),
    ("copy_int_into_int64", lambda m: m.zeros(2, dtype=m.int64).copy_(3)),
    ("copy_float_into_half", lambda m: m.zeros(2, 3, dtype=m.float16).copy_(2.5)),
    ("copy_float_into_bool", lambda m: m.zeros(2, dtype=m.bool).copy_(2.5)),
]


@pytest.mark.parametrize("name", [c[0] for c in NUMBER_CALLS])
def test_arithmetic_takes_numbers_for_every_tensor(name):
    # PyTorch lets add/sub/mul/div (and multiply, subtract, divide, true_divide, floor_divide, copy_)
    # take a Python number for any tensor (MIT 6.S191's torch.add(a, b) of two floats): a wrapped number
    torch = pytest.importorskip("torch")
    call = dict(NUMBER_CALLS)[name]
    want, got = call(torch), call(minitorch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", [lambda m: m.remainder(7, 2), lambda m: m.pow(2, 3), lambda m: m.atan2(1.0, 2.0),
                                  lambda m: m.add("a", 1), lambda m: m.mul(None, 2)])
def test_other_ops_refuse_two_numbers(call):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError):
        call(torch)
    with pytest.raises(TypeError):
        call(minitorch)
