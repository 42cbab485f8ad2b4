"""The CPU's vectorised float32 transcendentals (csrc/cpu/vmath.h): exp, log, log1p, erf and the
GELU (exact and tanh forms), SiLU, mish, softplus, elu and logsigmoid built on them, forward and backward, against
float64 NumPy (math's erf) over wide ranges with subnormals, +-inf, NaN and the overflow edges, in
units of the float32 spacing at the exact value; on every layout, in place and at 1 and 2 threads.

The ULP bounds are the kernels' stated ones (vmath.h's comments); the maxima measured over every
float32 are there too."""
import math

import numpy as np
import pytest

import minitorch
from helpers import check_grad, to_layout, torch

rng = np.random.default_rng(21)
F32 = np.float32
TINY = np.finfo(F32).smallest_subnormal


def ulps(got, exact):
    """|got - exact| in float32 spacings at exact (float64), where exact is a finite float32."""
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = exact.astype(F32)
        spacing = np.maximum(np.spacing(np.abs(rounded)).astype(np.float64), float(TINY))
        return np.where(np.isfinite(rounded), np.abs(got.astype(np.float64) - exact) / spacing, 0.0)


def same_specials(got, exact):
    """NaN where the exact value is NaN, and the same infinities."""
    with np.errstate(over="ignore"):
        rounded = exact.astype(F32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(rounded))
    inf = np.isinf(rounded)
    np.testing.assert_array_equal(got[inf], rounded[inf])


SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, TINY, -TINY, 1e-40, -1e-40, 1.1754944e-38, 1e-38,
                     3.4028235e38, -3.4028235e38, 1.0, -1.0, 2.0, 0.5, 1e-8, -1e-8, 0.70710677, 1.4142135],
                    F32)


def spread(lo_exp, hi_exp, n=200_001, sign=1):
    """n float32s spread log-uniformly over [10^lo_exp, 10^hi_exp] (subnormals where lo_exp < -38)."""
    return (sign * np.logspace(lo_exp, hi_exp, n)).astype(F32)


def exact(fn, x):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.frompyfunc(fn, 1, 1)(x.astype(np.float64)).astype(np.float64)


def _log(v):
    return math.log(v) if v > 0 else (-math.inf if v == 0 else math.nan) if v == v and v != math.inf else v


def _log1p(v):
    return math.log1p(v) if v > -1 else (-math.inf if v == -1 else math.nan) if v == v and v != math.inf else v


def _exp(v):
    return math.exp(v) if v < 709 else math.inf if v == v else v


# exp's 2^n, n = -150 .. 128, spans subnormal results (x < -87.34) and the last binade before
# inf; its edges: MIN_X, ln(2^-149) and TINY_X, MAX_X and the floats beside them
EXP_EDGES = np.array([-87.336548, -87.33654, -87.33655, -103.27893, -103.97208, -104.0, -104.00001,
                      -110.0, 88.0, 88.5, 88.72283, 88.722839, 88.72284, 89.0], F32)

CASES = {
    # name: (the call, the exact function, the ULP bound, the inputs)
    "exp": (lambda t: t.exp(), _exp, 2.0,
            np.concatenate([np.linspace(-110, 90, 400_001, dtype=F32), spread(-45.8, 1.9),
                            spread(-45.8, 1.9, sign=-1), EXP_EDGES])),
    "log": (lambda t: t.log(), _log, 1.0,
            np.concatenate([spread(-45.8, 38.5), spread(-0.5, 0.5, 100_001), spread(-3, 3, 2001, -1)])),
    "log1p": (lambda t: t.log1p(), _log1p, 2.0,
              np.concatenate([spread(-45.8, 38.5), spread(-45.8, -1e-7, 200_001, -1),
                              np.linspace(-1, 1, 200_001, dtype=F32)])),
    "erf": (lambda t: t.erf(), lambda v: math.erf(v) if v == v else v, 2.0,
            np.concatenate([spread(-45.8, 1.5), spread(-45.8, 1.5, sign=-1), np.linspace(-5, 5, 200_001, dtype=F32),
                            np.array([0.99999994, 1.0, 1.0000001, 3.9199998, 3.92, 3.9200001], F32)])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_ulps_against_float64(name, threads, vmath_path):
    call, fn, bound, x = CASES[name]
    x = np.concatenate([x, SPECIALS])
    got = call(minitorch.tensor(x)).numpy()
    want = exact(fn, x)
    assert got.dtype == F32 and got.shape == x.shape
    same_specials(got, want)
    assert ulps(got, want).max() <= bound
    # zeros keep their sign where the function is odd there (log1p, erf), subnormals included
    if name in ("log1p", "erf"):
        small = (np.abs(x) < 1e-30) & ~np.isnan(x)
        np.testing.assert_array_equal(np.signbit(got[small]), np.signbit(x[small]))
    if torch is not None:  # PyTorch's own float32 kernels (SLEEF's; erf's is 1e-7 off in absolute terms)
        t = call(torch.tensor(x)).numpy()
        np.testing.assert_allclose(got, t, rtol=3e-7, atol=2e-7, equal_nan=True)


def test_erf_float32_grid_against_float64_and_pytorch():
    """erf over every 257th float32 of [0, 10] (4.3M values, every exponent, mantissas spread; it
    is odd, so the negatives give the same with the sign) against float64 libm (minitorch's
    float64 erf): vmath.h's bound of 1.5 ulp (1.11 in the FMA clones, 1.42 in x86-64's over every
    float32 of the range, tools/fit_vmath.py --ulps 1: this check over all of them takes minutes),
    and PyTorch's float32 erf on the same values (SLEEF's, 0.77 ulp here), which may differ by no
    more than the two errors together."""
    top = int(np.array(10.0, F32).view(np.uint32))
    x = np.arange(0, top + 1, 257, dtype=np.uint32).view(F32)
    got = minitorch.tensor(x).erf().numpy()
    want = minitorch.tensor(x.astype(np.float64)).erf().numpy()
    ours = ulps(got, want).max()
    assert ours <= 1.5
    np.testing.assert_array_equal(minitorch.tensor(-x).erf().numpy(), -got)
    if torch is not None:
        theirs = torch.erf(torch.tensor(x)).numpy()
        spacing = np.spacing(np.abs(want.astype(F32))).astype(np.float64)
        assert (np.abs(got.astype(np.float64) - theirs) <= (1.5 + ulps(theirs, want).max()) * spacing).all()


def test_gelu_keeps_the_sign_of_zero():
    x = np.array([0.0, -0.0, TINY, -TINY], F32)
    got = minitorch.nn.functional.gelu(minitorch.tensor(x)).numpy()
    np.testing.assert_array_equal(np.signbit(got[:2]), [False, True])
    assert (np.abs(got[2:]) <= TINY).all()


def _gelu(v):
    return 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) if not math.isinf(v) else (v if v > 0 else math.nan)


def _gelu_grad(v):
    if math.isinf(v) or v != v:
        return math.nan
    return 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))) + v * math.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)


def _gelu_tanh(v):
    inner = math.sqrt(2 / math.pi) * (v + 0.044715 * v**3) if abs(v) < 1e12 else math.copysign(math.inf, v)
    return 0.5 * v * (1.0 + math.tanh(inner)) if not math.isinf(v) else (v if v > 0 else math.nan)


def _gelu_tanh_grad(v):
    if v != v or abs(v) > 1.8e19:  # x * x overflows float32: x (1 - t^2) 3 kappa x^2 is 0 * inf, NaN
        return math.nan
    if abs(v) > 1e6:  # t is +-1: (1 + t) / 2
        return 1.0 if v > 0 else 0.0
    b, k = math.sqrt(2 / math.pi), 0.044715
    t = math.tanh(b * (v + k * v**3))
    return 0.5 * (1 + t) + 0.5 * v * (1 - t * t) * b * (1 + 3 * k * v * v)


def _silu(v):
    return v / (1.0 + math.exp(-v)) if v > -700 else (0.0 * v if v != -math.inf else math.nan)


def _silu_grad(v):
    if v != v or math.isinf(v):  # x (1 - s) is inf * 0 at +inf, 0 * -inf at -inf: NaN, as PyTorch's
        return math.nan
    s = 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0
    return s * (1.0 + v * (1.0 - s))


ACTIVATIONS = {
    # name: (forward, exact forward, exact derivative or None)
    "gelu": (lambda m, t: m.nn.functional.gelu(t), _gelu, _gelu_grad),
    "gelu_tanh": (lambda m, t: m.nn.functional.gelu(t, approximate="tanh"), _gelu_tanh, _gelu_tanh_grad),
    "silu": (lambda m, t: m.nn.functional.silu(t), _silu, _silu_grad),
}


def activation_inputs():
    x = np.concatenate([np.linspace(-12, 12, 100_001, dtype=F32), rng.standard_normal(50_000).astype(F32) * 3,
                        spread(-45.8, 2), spread(-45.8, 2, sign=-1), SPECIALS])
    return x


def close(got, want, x, ulp_bound, cancel):
    """got within ulp_bound spacings of want, plus cancel * |x| * 2^-24 where 1 + erf or 1 + tanh of a
    negative argument cancels (that is the float formula's, libm's and PyTorch's error as well), plus
    |x| FLT_MIN: the vectorised sigmoid is 0 where it would be subnormal (x < -87.3), so SiLU's
    x sigmoid(x), under 1.1e-36 there, is 0."""
    finite = np.isfinite(want)
    err = np.abs(got[finite].astype(np.float64) - want[finite])
    with np.errstate(over="ignore"):
        spacing = np.maximum(np.spacing(np.abs(want[finite].astype(F32))).astype(np.float64), float(TINY))
    ax = np.abs(x[finite].astype(np.float64))
    allowed = ulp_bound * spacing + cancel * ax * 2.0**-24 + ax * 2.0**-126
    assert (err <= allowed).all(), (x[finite][err > allowed][:5], got[finite][err > allowed][:5],
                                    want[finite][err > allowed][:5])


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activation_against_float64(name, threads):
    fwd, fn, grad_fn = ACTIVATIONS[name]
    x = activation_inputs()
    got = fwd(minitorch, minitorch.tensor(x)).numpy()
    want = exact(fn, x)
    assert got.dtype == F32
    same_specials(got, want)
    close(got, want, x, 4, 2 if name != "silu" else 0)
    if grad_fn is not None:
        t = minitorch.tensor(x, requires_grad=True)
        g = rng.standard_normal(x.shape).astype(F32)
        (gx,) = minitorch.autograd.grad(fwd(minitorch, t), t, minitorch.tensor(g))
        want_g = g.astype(np.float64) * exact(grad_fn, x)
        same_specials(gx.numpy(), want_g)
        close(gx.numpy(), want_g, x, 6, 4 * np.abs(g[np.isfinite(want_g)]).max() + 2)
    if torch is not None:  # PyTorch's exact GELU gives NaN at +inf and inf at 3.4e38 (its erf's formula)
        t = fwd(torch, torch.tensor(x)).numpy()
        ordinary = np.abs(x) < 1e30
        np.testing.assert_allclose(got[ordinary], t[ordinary], rtol=1e-6, atol=2e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["log", "log1p", "erf", "gelu", "gelu_tanh", "silu"])
def test_layouts_inplace_and_grad(name, threads):
    a = np.abs(rng.standard_normal((70, 130)).astype(F32)) * 4 if name.startswith("log") else \
        rng.standard_normal((70, 130)).astype(F32) * 4
    a.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    if name in ACTIVATIONS:
        fwd = ACTIVATIONS[name][0]
        call = lambda t: fwd(minitorch, t)
    else:
        call = CASES[name][0]
    want = call(minitorch.tensor(a)).numpy()
    for layout in ("transposed", "sliced"):
        np.testing.assert_array_equal(call(to_layout(a, layout)).numpy(), want)
    np.testing.assert_array_equal(call(minitorch.tensor(a[:, :1]).expand(70, 130)).numpy(),
                                  np.broadcast_to(want[:, :1], (70, 130)))
    if name in CASES:
        t = minitorch.tensor(a)
        getattr(t, name + "_")()
        np.testing.assert_array_equal(t.numpy(), want)
    assert call(minitorch.tensor(np.zeros((0, 3), F32))).shape == (0, 3)
    b = rng.uniform(0.5, 3, (5, 6)).astype(F32)
    check_grad(lambda m, x: call(x) if m is minitorch else (fwd(m, x) if name in ACTIVATIONS else CASES[name][0](x)),
               [b], atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_layouts(approximate, threads):
    """The backward's two operands (the gradient and the input) strided and broadcast."""
    x = rng.standard_normal((40, 50)).astype(F32) * 3
    g = rng.standard_normal((40, 50)).astype(F32)
    fn = _gelu_grad if approximate == "none" else _gelu_tanh_grad
    want = g.astype(np.float64) * exact(fn, x)
    for layout in ("contiguous", "transposed", "sliced"):
        t = to_layout(x, layout).requires_grad_()
        (gx,) = minitorch.autograd.grad(minitorch.nn.functional.gelu(t, approximate=approximate), t,
                                        to_layout(g, layout))
        close(gx.numpy(), want, x, 6, 6)
    t = minitorch.tensor(x, requires_grad=True)
    (gx,) = minitorch.autograd.grad(minitorch.nn.functional.gelu(t, approximate=approximate), t,
                                    minitorch.tensor(g[:1]).expand(40, 50))
    close(gx.numpy(), np.broadcast_to(g[:1], (40, 50)) * exact(fn, x), x, 6, 6)


def _softplus(v, b=2.0, t=5.0):
    if v != v or v * b > t:
        return v
    return math.log1p(math.exp(v * b)) / b if v > -1e3 else 0.0


def _softplus_grad(v, b=2.0, t=5.0):
    if v != v:
        return v
    if v * b > t:
        return 1.0
    return 1.0 / (1.0 + math.exp(-v * b)) if v > -1e3 else 0.0


ALPHA = float(F32(0.7))  # the float32 alpha the kernel multiplies by


def _elu(v):
    return v if not v <= 0 else (ALPHA * math.expm1(v) if v > -1e3 else -ALPHA)


def _elu_grad(v):  # g scale where x <= 0 is false: NaN too, as PyTorch's
    return (ALPHA * math.exp(v) if v > -1e3 else 0.0) if v <= 0 else 1.0


def _mish(v):
    if v != v or v == math.inf:
        return v
    if v == -math.inf:  # -inf * tanh(0)
        return math.nan
    return v * math.tanh(math.log1p(math.exp(v))) if v < 700 else v


def _mish_grad(v):
    if v != v or math.isinf(v):  # x sigmoid(x) (1 - t^2) is inf * 0 at +-inf
        return math.nan
    sig = 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0
    t = math.tanh(math.log1p(math.exp(v))) if v < 700 else 1.0
    return t + v * sig * (1.0 - t * t)


def _logsigmoid(v):
    return v if v != v else min(v, 0.0) - math.log1p(math.exp(-abs(v)))


def _logsigmoid_grad(v):  # 1 - sigmoid(x)
    return v if v != v else (1.0 / (1.0 + math.exp(v)) if v < 700 else 0.0)


EXP_ACTIVATIONS = {
    # name: (forward, exact forward, exact derivative, ULP bound); softplus and elu with scalars
    # other than their defaults, to see them reach the loop
    "softplus": (lambda m, t: m.nn.functional.softplus(t, beta=2.0, threshold=5.0), _softplus, _softplus_grad, 4),
    "elu": (lambda m, t: m.nn.functional.elu(t, alpha=0.7), _elu, _elu_grad, 4),
    "mish": (lambda m, t: m.nn.functional.mish(t), _mish, _mish_grad, 8),
    "logsigmoid": (lambda m, t: m.nn.functional.logsigmoid(t), _logsigmoid, _logsigmoid_grad, 4),
}


@pytest.mark.parametrize("name", list(EXP_ACTIVATIONS))
def test_exp_activations_against_float64(name, threads, vmath_path):
    """Within the bound in ULPs plus an absolute 4 * 2^-24 (exp(x) - 1 cancels near 0 in elu's and
    mish's float formula, libm's and PyTorch's alike), forward and backward; the same on every
    layout; PyTorch's within 1e-6. logsigmoid's exp is exp16 where the AVX-512 loops run."""
    fwd, fn, grad_fn, bound = EXP_ACTIVATIONS[name]
    x = np.concatenate([np.linspace(-30, 30, 100_001, dtype=F32), rng.standard_normal(50_000).astype(F32) * 3,
                        spread(-45.8, 1.5), spread(-45.8, 1.5, sign=-1), SPECIALS])
    g = rng.standard_normal(x.shape).astype(F32)
    t = minitorch.tensor(x, requires_grad=True)
    y = fwd(minitorch, t)
    (gx,) = minitorch.autograd.grad(y, t, minitorch.tensor(g))
    ones = np.ones_like(x)
    for got, want, scale in ((y.detach().numpy(), exact(fn, x), ones), (gx.numpy(), g * exact(grad_fn, x), np.abs(g))):
        assert got.dtype == F32
        same_specials(got, want)
        finite = np.isfinite(want)
        err = np.abs(got[finite].astype(np.float64) - want[finite])
        with np.errstate(over="ignore"):
            spacing = np.maximum(np.spacing(np.abs(want[finite].astype(F32))).astype(np.float64), float(TINY))
        allowed = bound * spacing + 4 * 2.0**-24 * np.maximum(scale[finite], 1.0)
        assert (err <= allowed).all(), (x[finite][err > allowed][:5], got[finite][err > allowed][:5])
    a = rng.standard_normal((70, 130)).astype(F32) * 4
    a.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    want = fwd(minitorch, minitorch.tensor(a)).numpy()
    for layout in ("transposed", "sliced"):
        np.testing.assert_array_equal(fwd(minitorch, to_layout(a, layout)).numpy(), want)
    np.testing.assert_array_equal(fwd(minitorch, minitorch.tensor(a[:, :1]).expand(70, 130)).numpy(),
                                  np.broadcast_to(want[:, :1], (70, 130)))
    if torch is not None:
        ordinary = np.abs(x) < 1e30
        tt = torch.tensor(x, requires_grad=True)
        ty = fwd(torch, tt)
        (tg,) = torch.autograd.grad(ty, tt, torch.tensor(g))
        np.testing.assert_allclose(y.detach().numpy()[ordinary], ty.detach().numpy()[ordinary], rtol=1e-6,
                                   atol=2e-6, equal_nan=True)
        np.testing.assert_allclose(gx.numpy()[ordinary], tg.numpy()[ordinary], rtol=1e-6, atol=1e-5,
                                   equal_nan=True)


def test_silu_backward_op_layouts():
    """_C.silu_backward (SiluBackward0's kernel) on strided and broadcast operands, as PyTorch's."""
    x = rng.standard_normal((40, 50)).astype(F32) * 4
    g = rng.standard_normal((40, 50)).astype(F32)
    want = g.astype(np.float64) * exact(_silu_grad, x)
    for layout in ("contiguous", "transposed", "sliced"):
        got = minitorch._C.silu_backward(to_layout(g, layout), to_layout(x, layout)).numpy()
        close(got, want, x, 6, 6)
    got = minitorch._C.silu_backward(minitorch.tensor(g[:1]).expand(40, 50), minitorch.tensor(x)).numpy()
    close(got, np.broadcast_to(g[:1], (40, 50)) * exact(_silu_grad, x), x, 6, 6)
    if torch is not None:
        t = torch.ops.aten.silu_backward(torch.tensor(g), torch.tensor(x)).numpy()
        np.testing.assert_allclose(minitorch._C.silu_backward(minitorch.tensor(g), minitorch.tensor(x)).numpy(), t,
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("op", ["mish_backward", "softplus_backward", "mish", "softplus", "log_sigmoid",
                                "log_sigmoid_backward"])
def test_staged_loops_layouts_and_block_edges(op, threads, vmath_path):
    """mish, softplus, log_sigmoid and the first two's backwards run stage by stage over blocks
    of 256 elements (log_sigmoid's backward in one expression): every length around a block's
    edge, strided and broadcast operands give the contiguous result bit for bit, and that is the
    float64 formula's within the bounds above."""
    C = minitorch._C
    call = {"mish_backward": lambda g, x: C.mish_backward(g, x), "softplus_backward":
            lambda g, x: C.softplus_backward(g, x, 2.0, 5.0), "mish": lambda g, x: C.mish(x),
            "softplus": lambda g, x: C.softplus(x, 2.0, 5.0), "log_sigmoid": lambda g, x: C.log_sigmoid(x),
            "log_sigmoid_backward": lambda g, x: C.log_sigmoid_backward(g, x)}[op]
    fn = {"mish_backward": _mish_grad, "softplus_backward": _softplus_grad, "mish": _mish, "softplus": _softplus,
          "log_sigmoid": _logsigmoid, "log_sigmoid_backward": _logsigmoid_grad}[op]
    for n in (1, 255, 256, 257, 511, 513, 1000):
        x = rng.standard_normal(n).astype(F32) * 6
        g = rng.standard_normal(n).astype(F32) if op.endswith("backward") else np.ones(n, F32)
        got = call(minitorch.tensor(g), minitorch.tensor(x)).numpy()
        want = g.astype(np.float64) * exact(fn, x)
        err = np.abs(got.astype(np.float64) - want)
        assert (err <= 8 * np.spacing(np.abs(want).astype(F32)) + 4 * 2.0**-24 * np.maximum(np.abs(g), 1)).all(), n
    x = rng.standard_normal((70, 130)).astype(F32) * 4
    g = rng.standard_normal((70, 130)).astype(F32)
    x.reshape(-1)[:3] = [np.nan, np.inf, -np.inf]
    want = call(minitorch.tensor(g), minitorch.tensor(x)).numpy()
    for layout in ("transposed", "sliced"):
        np.testing.assert_array_equal(call(to_layout(g, layout), to_layout(x, layout)).numpy(), want)
    got = call(minitorch.tensor(g[:1]).expand(70, 130), minitorch.tensor(x)).numpy()
    np.testing.assert_array_equal(got, call(minitorch.tensor(np.broadcast_to(g[:1], (70, 130)).copy()),
                                            minitorch.tensor(x)).numpy())


# ---- pow ----

def pow_exact(x, y):
    with np.errstate(all="ignore"):
        return np.power(x.astype(np.float64), y.astype(np.float64))


POW_BASES = np.concatenate([spread(-45.8, 38.5, 100_001), spread(-45.8, 38.5, 20_001, -1),
                            np.linspace(0.5, 2, 50_001, dtype=F32), np.nextafter(F32(1), F32(2)) * np.ones(3, F32)])


@pytest.mark.parametrize("e", [2.5, 1.7, -0.3, 0.1, 7.0, -5.0, 33.3, -11.0, 4.0, 0.75, 1e-3])
def test_pow_by_a_number_within_half_an_ulp(e, threads):
    """x ** e for e a Python number: vmath.h's double-precision pow, its bound 0.5 ulp + 1e-5
    (0.500001 measured): NumPy's float64 pow rounded to float32 but at near-ties. PyTorch's
    float32 pow is less exact (up to 15 ulp off here, at x near 1e-8 with e = 1.7): within 2e-6
    of it."""
    x = np.concatenate([POW_BASES, SPECIALS])
    got = minitorch.tensor(x).pow(e).numpy()
    want = pow_exact(x, np.full_like(x, e))
    assert got.dtype == F32 and got.shape == x.shape
    same_specials(got, want)
    assert ulps(got, want).max() <= 0.50001
    if torch is not None:
        t = torch.tensor(x).pow(e).numpy()
        np.testing.assert_allclose(got, t, rtol=2e-6, atol=3e-45, equal_nan=True)  # subnormals: 1 ulp


def test_pow_by_a_tensor_of_exponents_and_every_special_pair(threads):
    """A tensor exponent (random bits as bases, exponents normal and integer), and every pair of
    special values: C's pow cases (pow(x, 0) and pow(1, y) are 1, NaN included; a negative finite
    base to a non-integer is NaN; zeros and infinities to odd integers keep the base's sign), bit
    for bit with NaN as NaN, as float64 NumPy rounded."""
    bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32).view(F32)
    for y in ((rng.standard_normal(200_000) * 3).astype(F32), rng.integers(-6, 7, 200_000).astype(F32)):
        got = minitorch.pow(minitorch.tensor(bits), minitorch.tensor(y)).numpy()
        want = pow_exact(bits, y)
        same_specials(got, want)
        assert ulps(got, want).max() <= 0.50001
    sp = np.concatenate([SPECIALS, np.array([3.0, -3.0, -2.0, 0.25, -0.5, 1e10, -1e10], F32)])
    x, y = (a.ravel() for a in np.meshgrid(sp, sp))
    got = minitorch.pow(minitorch.tensor(x), minitorch.tensor(y)).numpy()
    with np.errstate(all="ignore"):
        want = pow_exact(x, y).astype(F32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    close = ulps(got, pow_exact(x, y)) <= 0.50001
    exact_or_inf = (got == want) & (np.signbit(got) == np.signbit(want))
    assert np.all(nan | exact_or_inf | (close & np.isfinite(want)))
    np.testing.assert_array_equal(np.signbit(got[~nan & (want == 0)]), np.signbit(want[~nan & (want == 0)]))


@pytest.mark.parametrize("e", [2, 3, -1, -2, 2.0, 3.0])
def test_pow_by_pytorchs_special_exponents_bit_for_bit(e):
    """2, 3, -1 and -2 are products and quotients in PyTorch's kernel (x * x * x is 1.3 ulp off
    at worst, 1 / (x * x) 1.5): the same operations, so the same bits; on every layout."""
    x = np.concatenate([(rng.standard_normal(10_000) * 30).astype(F32), SPECIALS])
    for layout in ("contiguous", "transposed", "sliced"):
        got = to_layout(x, layout).pow(e).numpy()
        f = np.float32
        with np.errstate(all="ignore"):
            want = {2: x * x, 3: x * x * x, -1: f(1) / x, -2: f(1) / (x * x)}[int(e)]
        np.testing.assert_array_equal(got.view(np.uint32)[~np.isnan(want)], want.view(np.uint32)[~np.isnan(want)])
        if torch is not None:
            t = torch.tensor(x).pow(e).numpy()
            np.testing.assert_array_equal(got.view(np.uint32)[~np.isnan(t)], t.view(np.uint32)[~np.isnan(t)])


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_pow_layouts_block_edges_and_gradients(layout):
    for n in (1, 255, 256, 257, 600):
        x = (rng.random(n) * 4 + 0.1).astype(F32)
        got = to_layout(x, layout).pow(2.5).numpy()
        assert ulps(got, pow_exact(x, np.full_like(x, 2.5))).max() <= 0.50001
    x = (rng.random((3, 7)) * 3 + 0.2).astype(np.float32)
    y = (rng.standard_normal((3, 7))).astype(np.float32)
    check_grad(lambda m, a: m.pow(a, 2.5), [x.astype(np.float64)], layout=layout)
    check_grad(lambda m, a, b: m.pow(a, b), [x, y], layout=layout, gradcheck=False, atol=1e-4, rtol=1e-4)
