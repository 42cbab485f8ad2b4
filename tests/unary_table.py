"""The one table of the elementwise unary ops for the tests: a row per op (and per overload or
Python form worth its own row) with the domain its inputs are drawn from, the dtypes it takes,
its result dtype, its NumPy/SciPy reference, its in-place form and how its gradient is checked.

It drives the values and dtypes against NumPy and PyTorch (tests/ops/test_unary_compare.py), the
edges, small dtypes and in-place forms against PyTorch (tests/ops/test_pointwise_ew.py), the
gradients (tests/autograd/test_math_grads.py) and the CUDA device against the CPU
(tests/cuda/test_cuda_pointwise_ew.py). A new unary op is one row here."""
import math
import os
from typing import Callable, NamedTuple, Optional

import numpy as np

import minitorch

ALL = ("float32", "float64", "int64", "int32", "bool")
NUMERIC = ("float32", "float64", "int64", "int32")
FLOATS = ("float32", "float64")

try:
    import scipy.special as special
except ImportError:  # the rows on SciPy's references are left out (tests/ops skips them too)
    special = None
# Under the sanitizers too: SciPy's C++ functions (erfinv's Boost) throw and catch a C++ exception
# for an argument outside their domain, and with libasan preloaded before libstdc++ the runtime's
# __cxa_throw interceptor has no real function to call and aborts the run (make test-sanitize
# did, at erfinv(inf)). That run checks minitorch's memory, not SciPy's numbers.
if os.environ.get("MINITORCH_SANITIZE_RUN") == "1":
    special = None


# The result dtype of a unary op for an input dtype.
def to_float(dtype):
    """exp, log, ...: integers and bools give the default float dtype."""
    return dtype if dtype in FLOATS else "float32"


def keep(dtype):
    """abs, sign, floor, ...: the input's dtype."""
    return dtype


def to_bool(dtype):
    """isfinite, signbit, ...: bool."""
    return "bool"


def promote_bool(dtype):
    """square: bool is squared as int64."""
    return "int64" if dtype == "bool" else dtype


# The inputs of a gradient check, as (shape) -> float64 array.
_rng = np.random.default_rng(0)


def normal(*shape):
    return _rng.standard_normal(shape)


def positive(*shape):
    """Inside the domain of log, sqrt and reciprocal, away from 0."""
    return _rng.uniform(0.5, 2.0, shape)


def off_zero(*shape):
    """Away from abs's and sign's kink at 0."""
    x = normal(*shape)
    return np.sign(x) * (0.2 + np.abs(x))


class Unary(NamedTuple):
    fn: Callable  # fn(lib, x) for lib = minitorch and torch
    ref: Callable  # NumPy's (SciPy's), in float64 for float inputs
    domain: tuple  # (low, high) of the inputs drawn
    dtypes: tuple  # the dtypes the values are drawn in
    result: Callable  # input dtype -> result dtype
    rtol: float = 2e-5
    inplace: Optional[Callable] = None  # x -> x.op_(), which returns x
    grad: Optional[Callable] = None  # the inputs of its gradient check, or None


def f64(f):
    """f in float64 (NumPy computes a bool array in float16)."""
    return lambda x: f(np.asarray(x, dtype=np.float64))


def nn_or_top(m, name):
    """gelu and silu are torch.nn.functional.* in PyTorch, minitorch.* functions here."""
    return getattr(m, name) if m is minitorch else getattr(m.nn.functional, name)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_tanh_ref(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def _signbit(x):
    return np.signbit(x.astype(np.float64)) if x.dtype == bool else np.signbit(x)


def _scipy(name, *args):
    """SciPy's special.<name>(*args, x) in float64, read when called."""
    return f64(lambda x: getattr(special, name)(*args, x))


UNARY = {
    "exp": Unary(lambda m, x: m.exp(x), f64(np.exp), (-10, 10), ALL, to_float, 1e-5, lambda x: x.exp_(), normal),
    "log": Unary(lambda m, x: m.log(x), f64(np.log), (0.125, 10), ALL[:-1], to_float, 1e-5, lambda x: x.log_(),
                 positive),
    "log1p": Unary(lambda m, x: x.log1p(), f64(np.log1p), (-0.875, 10), ALL, to_float, 1e-5, lambda x: x.log1p_(),
                   positive),
    "sqrt": Unary(lambda m, x: m.sqrt(x), f64(np.sqrt), (0, 10), ALL, to_float, 1e-5, lambda x: x.sqrt_(), positive),
    "rsqrt": Unary(lambda m, x: m.rsqrt(x), f64(lambda x: 1 / np.sqrt(x)), (0.125, 10), ALL[:-1], to_float, 1e-5,
                   lambda x: x.rsqrt_(), positive),
    "sin": Unary(lambda m, x: m.sin(x), f64(np.sin), (-10, 10), ALL, to_float, 1e-5, lambda x: x.sin_(), normal),
    "cos": Unary(lambda m, x: x.cos(), f64(np.cos), (-10, 10), ALL, to_float, 1e-5, lambda x: x.cos_(), normal),
    "tanh": Unary(lambda m, x: m.tanh(x), f64(np.tanh), (-10, 10), ALL, to_float, 1e-5, lambda x: x.tanh_(), normal),
    "sigmoid": Unary(lambda m, x: m.sigmoid(x), f64(lambda x: 1 / (1 + np.exp(-x))), (-10, 10), ALL, to_float, 1e-5,
                     lambda x: x.sigmoid_(), normal),
    "abs": Unary(lambda m, x: m.abs(x), np.abs, (-10, 10), NUMERIC, keep, 1e-5, lambda x: x.abs_(), off_zero),
    "sign": Unary(lambda m, x: x.sign(), lambda x: x if x.dtype == bool else np.sign(x), (-10, 10), ALL, keep, 1e-5,
                  lambda x: x.sign_(), off_zero),
    "neg": Unary(lambda m, x: m.neg(x), np.negative, (-10, 10), NUMERIC, keep, 1e-5, lambda x: x.neg_(), normal),
    "relu": Unary(lambda m, x: m.relu(x), lambda x: np.maximum(x, 0).astype(x.dtype), (-10, 10), NUMERIC, keep, 1e-5,
                  lambda x: x.relu_()),
    "gelu": Unary(lambda m, x: nn_or_top(m, "gelu")(x), lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), (-10, 10),
                  FLOATS, keep, 1e-5, None, normal),
    "gelu_none": Unary(lambda m, x: nn_or_top(m, "gelu")(x, approximate="none"),
                       lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), (-10, 10), FLOATS, keep),
    "gelu_tanh": Unary(lambda m, x: nn_or_top(m, "gelu")(x, approximate="tanh"), gelu_tanh_ref, (-10, 10), FLOATS,
                       keep, 2e-5, None, normal),
    "silu": Unary(lambda m, x: nn_or_top(m, "silu")(x), lambda x: x / (1 + np.exp(-x)), (-10, 10), FLOATS, keep, 1e-5,
                  None, normal),
    "square": Unary(lambda m, x: m.square(x), np.square, (-10, 10), ALL, promote_bool, 2e-5, None, normal),
    "square_method": Unary(lambda m, x: x.square(), np.square, (-10, 10), ALL, promote_bool),
    "reciprocal": Unary(lambda m, x: m.reciprocal(x), lambda x: 1 / x, (0.5, 10), NUMERIC, to_float, 2e-5, None,
                        positive),
    "exp2": Unary(lambda m, x: m.exp2(x), np.exp2, (-10, 10), ALL, to_float, 2e-5, None, normal),
    # (PyTorch's expm1 of a 0-dim bool is 1.71875: bool is left out)
    "expm1": Unary(lambda m, x: x.expm1(), np.expm1, (-10, 10), NUMERIC, to_float, 2e-5, None, normal),
    "log2": Unary(lambda m, x: m.log2(x), np.log2, (0.5, 10), NUMERIC, to_float, 2e-5, None, positive),
    "log10": Unary(lambda m, x: x.log10(), np.log10, (0.5, 10), NUMERIC, to_float, 2e-5, None, positive),
    "isnan": Unary(lambda m, x: m.isnan(x), np.isnan, (-10, 10), ALL, to_bool),
    "isinf": Unary(lambda m, x: x.isinf(), np.isinf, (-10, 10), ALL, to_bool),
    "logical_not": Unary(lambda m, x: m.logical_not(x), np.logical_not, (-10, 10), ALL, to_bool),
    "floor": Unary(lambda m, x: m.floor(x), np.floor, (-10, 10), NUMERIC, keep, inplace=lambda x: x.floor_()),
    "ceil": Unary(lambda m, x: x.ceil(), np.ceil, (-10, 10), NUMERIC, keep, inplace=lambda x: x.ceil_()),
    "trunc": Unary(lambda m, x: m.trunc(x), np.trunc, (-10, 10), NUMERIC, keep, inplace=lambda x: x.trunc_()),
    "fix": Unary(lambda m, x: m.fix(x), np.trunc, (-10, 10), NUMERIC, keep, inplace=lambda x: x.fix_()),
    "round": Unary(lambda m, x: m.round(x), np.round, (-10, 10), NUMERIC, keep, inplace=lambda x: x.round_()),
    "round_decimals": Unary(lambda m, x: m.round(x, decimals=2), lambda x: np.round(x, 2), (-10, 10), FLOATS, keep),
    "round_negative_decimals": Unary(lambda m, x: x.round(decimals=-1), lambda x: np.round(x, -1), (-100, 100),
                                     FLOATS, keep),
    "frac": Unary(lambda m, x: m.frac(x), lambda x: x - np.trunc(x), (-10, 10), FLOATS, keep,
                  inplace=lambda x: x.frac_()),
    "isfinite": Unary(lambda m, x: m.isfinite(x), np.isfinite, (-10, 10), ALL, to_bool),
    "isposinf": Unary(lambda m, x: m.isposinf(x), lambda x: np.isposinf(x.astype(np.float64)), (-10, 10), ALL,
                      to_bool),
    "isneginf": Unary(lambda m, x: x.isneginf(), lambda x: np.isneginf(x.astype(np.float64)), (-10, 10), ALL, to_bool),
    "signbit": Unary(lambda m, x: m.signbit(x), _signbit, (-10, 10), ALL, to_bool),
    "isreal": Unary(lambda m, x: m.isreal(x), lambda x: np.ones(x.shape, bool), (-10, 10), ALL, to_bool),
    "erf": Unary(lambda m, x: m.erf(x), _scipy("erf"), (-4, 4), ALL, to_float, inplace=lambda x: x.erf_()),
    "erfc": Unary(lambda m, x: x.erfc(), _scipy("erfc"), (-4, 4), ALL, to_float, inplace=lambda x: x.erfc_()),
    "erfinv": Unary(lambda m, x: m.erfinv(x), _scipy("erfinv"), (-0.96875, 0.96875), FLOATS, to_float, 1e-4,
                    inplace=lambda x: x.erfinv_()),
    "lgamma": Unary(lambda m, x: m.lgamma(x), _scipy("gammaln"), (0.125, 10), NUMERIC, to_float,
                    inplace=lambda x: x.lgamma_()),
    "digamma": Unary(lambda m, x: m.digamma(x), _scipy("digamma"), (0.125, 10), NUMERIC, to_float, 1e-4,
                     inplace=lambda x: x.digamma_()),
    "trigamma": Unary(lambda m, x: m.polygamma(1, x), _scipy("polygamma", 1), (0.125, 10), NUMERIC, to_float, 1e-4),
    "polygamma2": Unary(lambda m, x: x.polygamma(2), _scipy("polygamma", 2), (0.5, 10), FLOATS, to_float, 1e-4),
    "polygamma3": Unary(lambda m, x: x.polygamma(3), _scipy("polygamma", 3), (0.5, 10), FLOATS, to_float, 1e-4),
    "sinh": Unary(lambda m, x: m.sinh(x), f64(np.sinh), (-5, 5), ALL, to_float, inplace=lambda x: x.sinh_()),
    "cosh": Unary(lambda m, x: x.cosh(), f64(np.cosh), (-5, 5), ALL, to_float, inplace=lambda x: x.cosh_()),
    "tan": Unary(lambda m, x: m.tan(x), f64(np.tan), (-1.5, 1.5), ALL, to_float, 1e-4, inplace=lambda x: x.tan_()),
    "asin": Unary(lambda m, x: m.asin(x), f64(np.arcsin), (-0.96875, 0.96875), FLOATS, to_float,
                  inplace=lambda x: x.asin_()),
    "acos": Unary(lambda m, x: x.acos(), f64(np.arccos), (-0.96875, 0.96875), FLOATS, to_float,
                  inplace=lambda x: x.acos_()),
    "atan": Unary(lambda m, x: m.atan(x), f64(np.arctan), (-10, 10), ALL, to_float, inplace=lambda x: x.atan_()),
    "asinh": Unary(lambda m, x: m.asinh(x), f64(np.arcsinh), (-10, 10), ALL, to_float, inplace=lambda x: x.asinh_()),
    "acosh": Unary(lambda m, x: x.acosh(), f64(np.arccosh), (1, 10), NUMERIC, to_float, inplace=lambda x: x.acosh_()),
    "atanh": Unary(lambda m, x: m.atanh(x), f64(np.arctanh), (-0.96875, 0.96875), FLOATS, to_float,
                   inplace=lambda x: x.atanh_()),
    "deg2rad": Unary(lambda m, x: m.deg2rad(x), f64(np.deg2rad), (-360, 360), ALL, to_float,
                     inplace=lambda x: x.deg2rad_()),
    "rad2deg": Unary(lambda m, x: x.rad2deg(), f64(np.rad2deg), (-7, 7), ALL, to_float,
                     inplace=lambda x: x.rad2deg_()),
    "nan_to_num": Unary(lambda m, x: m.nan_to_num(x), np.nan_to_num, (-10, 10), ALL, keep,
                        inplace=lambda x: x.nan_to_num_()),
    "nan_to_num_values": Unary(lambda m, x: x.nan_to_num(nan=2.0), lambda x: np.nan_to_num(x, nan=2.0), (-10, 10),
                               ALL, keep),
    "clip": Unary(lambda m, x: x.clip(-1, 1), lambda x: np.clip(x, -1, 1), (-3, 3), NUMERIC, keep),
}


def _special_row(name, scipy_name, domain, *args, top=False):
    """A torch.special function with a kernel of its own (minitorch.<name> as well when top):
    integers compute in float32; its reference SciPy's special.<scipy_name>(*args, x)."""
    fn = (lambda m, x: getattr(m, name)(x)) if top else (lambda m, x: getattr(m.special, name)(x))
    return Unary(fn, _scipy(scipy_name, *args), domain, NUMERIC, to_float, 1e-4)


# torch.special's functions of one tensor (tests/cuda/test_cuda_special.py runs them on the device
# at float32's and float64's precision)
SPECIAL_UNARY = {
    "i0": _special_row("i0", "i0", (-60, 60), top=True),
    "i0e": _special_row("i0e", "i0e", (-60, 60)),
    "i1": _special_row("i1", "i1", (-60, 60)),
    "i1e": _special_row("i1e", "i1e", (-60, 60)),
    "ndtri": _special_row("ndtri", "ndtri", (0, 1)),
    "log_ndtr": _special_row("log_ndtr", "log_ndtr", (-40, 10)),
    "erfcx": _special_row("erfcx", "erfcx", (-9, 60)),  # float32 overflows below -9.3
    "bessel_j0": _special_row("bessel_j0", "j0", (-40, 40)),
    "bessel_j1": _special_row("bessel_j1", "j1", (-40, 40)),
    "bessel_y0": _special_row("bessel_y0", "y0", (0, 40)),
    "bessel_y1": _special_row("bessel_y1", "y1", (0, 40)),
    "modified_bessel_i0": _special_row("modified_bessel_i0", "i0", (-60, 60)),
    "modified_bessel_i1": _special_row("modified_bessel_i1", "i1", (-60, 60)),
    "modified_bessel_k0": _special_row("modified_bessel_k0", "k0", (0, 60)),
    "modified_bessel_k1": _special_row("modified_bessel_k1", "k1", (0, 60)),
    "scaled_modified_bessel_k0": _special_row("scaled_modified_bessel_k0", "k0e", (0, 60)),
    "scaled_modified_bessel_k1": _special_row("scaled_modified_bessel_k1", "k1e", (0, 60)),
    # (sin(x)/x: SciPy's spherical_jn looks for torch through its array API and fails where the
    # no-torch run hides it)
    "spherical_bessel_j0": _special_row("spherical_bessel_j0", "spherical_jn", (-40, 40), 0)._replace(
        ref=f64(lambda x: np.sinc(x / np.pi))),
}
UNARY.update(SPECIAL_UNARY)

# The rows whose reference is SciPy's, which the tests against references skip without it.
NEEDS_SCIPY = {"erf", "erfc", "erfinv", "lgamma", "digamma", "trigamma", "polygamma2", "polygamma3", *SPECIAL_UNARY}


def draw_values(rng, name, shape, dtype, special_values=True):
    """A float64 array of shape in the row's domain (integers for an integer dtype), its first
    values NaN, +-inf, +-0 and 1 when special_values and dtype is a float's."""
    low, high = UNARY[name].domain
    if dtype in FLOATS or dtype == "float16":
        a = rng.uniform(low, high, shape)
        if special_values and a.size > 6:
            a.flat[:6] = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0]
        return a
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(np.float64)
    return rng.integers(math.ceil(low), math.floor(high) + 1, shape).astype(np.float64)
