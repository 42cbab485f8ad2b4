"""torch.special's orthogonal polynomials with kernels of their own (Chebyshev T, U, V, W, plain
and shifted to [0, 1], Legendre's P and Laguerre's L; the Hermite ones are in
test_special_functions.py but for their forms, checked here with the others) and Airy's Ai: float64 values against NumPy's series and identities
(mpmath for Ai), PyTorch's values at the edges (the endpoints, the trigonometric forms of large
degrees, NaN, infinities, negative, fractional and huge degrees), broadcasting, layouts, dtypes,
out=, no gradient (as PyTorch's), bad calls."""
import math

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, check, raises_like_torch, same_as_torch

NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng(1920)
C = np.polynomial.chebyshev


def _basis(n):
    return [0.0] * n + [1.0]


def _u(x, n):
    """U_n = T_n+1' / (n + 1)"""
    return C.chebval(x, C.chebder(_basis(n + 1))) / (n + 1)


def _v(x, n):
    return _u(x, n) - (_u(x, n - 1) if n else 0.0)


def _w(x, n):
    return _u(x, n) + (_u(x, n - 1) if n else 0.0)


_PLAIN = {
    "chebyshev_polynomial_t": lambda x, n: C.chebval(x, _basis(n)),
    "chebyshev_polynomial_u": _u,
    "chebyshev_polynomial_v": _v,
    "chebyshev_polynomial_w": _w,
    "legendre_polynomial_p": lambda x, n: np.polynomial.legendre.legval(x, _basis(n)),
    "laguerre_polynomial_l": lambda x, n: np.polynomial.laguerre.lagval(x, _basis(n)),
}
# name: float64 reference of one degree n >= 0 at the points x
POLY = dict(_PLAIN)
for _kind in "tuvw":
    POLY[f"shifted_chebyshev_polynomial_{_kind}"] = (lambda f: lambda x, n: f(2 * x - 1, n))(
        _PLAIN[f"chebyshev_polynomial_{_kind}"])


def _degree(n):
    """PyTorch's degree of a float n: truncated toward 0; NaN, negative or past int64 is none."""
    return math.trunc(n) if -1 < n < 2.0 ** 63 else -1


def _ref(name):
    def ref(x, n):
        x, n = np.broadcast_arrays(x, n)
        out = [POLY[name](xi, _degree(ni)) if _degree(ni) >= 0 else 0.0 for xi, ni in zip(x.flat, n.flat)]
        return np.array(out, dtype=np.float64).reshape(x.shape)
    return ref


def _fn(name):
    return lambda m, x, n: getattr(m.special, name)(x, n)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(POLY))
def test_against_numpy(name, layout):
    """float64 against NumPy's series, broadcast (4, 1, 6) with (5, 6), in every layout: degrees
    0 to 12 (past every switch to the trigonometric forms), fractional and negative ones."""
    low = 0.0 if name.startswith(("shifted", "laguerre")) else -1.0
    x = RNG.uniform(low, 1.0, (4, 1, 6))
    n = np.concatenate([np.arange(-2, 13), RNG.uniform(-2, 13, 15)]).reshape(5, 6)
    check(_fn(name), _ref(name), [x, n], layout=layout, atol=1e-9, rtol=1e-9, dtype=minitorch.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(POLY))
def test_same_as_torch(name, dtype):
    """PyTorch's values at the edges (x at -1, 0, 1 and just inside, NaN and infinities; NaN,
    infinite, negative, fractional and past-int64 degrees, a degree large enough to overflow) and
    at random points, outside [-1, 1] too, float32 and float64, scalar x or n."""
    fn = _fn(name)
    x = np.array([NAN, INF, -INF, -1.0, -0.999, -0.5, 0.0, -0.0, 0.3, 0.5, 0.999, 1.0, 1.5, -2.5])[:, None]
    n = np.array([NAN, INF, -INF, -1.0, -0.5, -0.0, 0.9, 1.0, 2.0, 3.0, 5.0, 7.5, 9.0, 12.0, 40.0, 1e19, 1e300])
    tol = dict(rtol=2e-5, atol=1e-5) if dtype == "float32" else dict(rtol=1e-11, atol=1e-11)
    same_as_torch(fn, [x.astype(dtype), n.astype(dtype)], grad=False, **tol)
    x = RNG.uniform(-1.5, 1.5, (7, 5))
    n = RNG.integers(0, 14, (7, 5)).astype(float)
    same_as_torch(fn, [x.astype(dtype), n.astype(dtype)], grad=False, **tol)
    same_as_torch(lambda m, x: fn(m, x, 6), [x.astype(dtype)], grad=False, **tol)
    same_as_torch(lambda m, n: fn(m, 0.25, n), [n.astype(dtype)], grad=False, **tol)


# test_values_dtypes_and_forms's references: these and the Hermite polynomials'
FORMS = dict(POLY, hermite_polynomial_h=lambda x, n: np.polynomial.hermite.hermval(x, _basis(n)),
             hermite_polynomial_he=lambda x, n: np.polynomial.hermite_e.hermeval(x, _basis(n)))


@pytest.mark.parametrize("name", sorted(FORMS))
def test_values_dtypes_and_forms(name):
    """degree 3 against its closed form; integer and bool inputs compute in the default float;
    out=; a huge degree outside [-1, 1] ends (NaN once the values overflow) rather than looping n
    times; no gradient, as PyTorch's."""
    fn = _fn(name)
    x = np.array([-0.75, -0.5, 0.0, 0.25, 0.6])
    want = FORMS[name](x, 3)
    np.testing.assert_allclose(as_numpy(fn(minitorch, minitorch.tensor(x), 3)), want, rtol=1e-13, atol=1e-14)
    assert fn(minitorch, minitorch.tensor([1, 2]), minitorch.tensor([2, 3])).dtype == minitorch.float32
    assert fn(minitorch, minitorch.tensor([True]), minitorch.tensor([True])).dtype == minitorch.float32
    out = minitorch.empty(5, dtype=minitorch.float64)
    assert getattr(minitorch.special, name)(minitorch.tensor(x), 3, out=out) is out
    np.testing.assert_allclose(as_numpy(out), want, rtol=1e-13, atol=1e-14)
    if not name.startswith(("legendre", "laguerre")):
        assert np.isnan(as_numpy(fn(minitorch, minitorch.tensor([3.0, 7.0]), 1e18))).all()
    t = minitorch.tensor([0.5, 0.25], requires_grad=True)
    got = fn(minitorch, t, 2.0)
    assert got.grad_fn is None and not got.requires_grad


# ---- Airy's Ai ----

def _airy_ref(x):
    mpmath = pytest.importorskip("mpmath")
    with mpmath.mp.workdps(40):
        return np.array([float(mpmath.airyai(mpmath.mpf(float(v)))) for v in x.ravel()]).reshape(x.shape)


def test_airy_ai_against_mpmath():
    """float64 within 1e-12 relative of mpmath's across the series (|x| < 2.09) and the decaying
    right side; on the oscillating left side the asymptotic form (Cephes', PyTorch's: the same
    values, test_airy_ai_same_as_torch) is good to about 3e-6 absolute, so checked to 5e-6."""
    x = np.concatenate([RNG.uniform(-2.09, 30, 200), [0.0, 2.08, 2.1, -2.08, 8.0, 50.0, 100.0]])
    got = as_numpy(minitorch.special.airy_ai(minitorch.tensor(x)))
    np.testing.assert_allclose(got, _airy_ref(x), rtol=1e-12, atol=1e-15)
    x = np.concatenate([RNG.uniform(-30, -2.09, 100), [-2.1, -5.0, -29.9]])
    got = as_numpy(minitorch.special.airy_ai(minitorch.tensor(x)))
    np.testing.assert_allclose(got, _airy_ref(x), rtol=0, atol=5e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_airy_ai_same_as_torch(layout, dtype):
    """PyTorch's values, NaN for both infinities, 0 past its underflow, in every layout."""
    x = np.concatenate([[NAN, INF, -INF, 0.0, -0.0, 103.0, 104.0, 1e30, -1e5], RNG.uniform(-40, 40, 72)])
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)
    same_as_torch(lambda m, x: m.special.airy_ai(x), [x.reshape(9, 9).astype(dtype)], layout=layout, grad=False,
                  **tol)


def test_airy_ai_forms():
    x = minitorch.tensor([0, 1, -1])
    assert minitorch.special.airy_ai(x).dtype == minitorch.float32
    out = minitorch.empty(3, dtype=minitorch.float64)
    assert minitorch.special.airy_ai(x.double(), out=out) is out
    np.testing.assert_allclose(as_numpy(out), _airy_ref(np.array([0.0, 1.0, -1.0])), rtol=1e-13)
    t = minitorch.tensor([0.5], requires_grad=True)
    assert minitorch.special.airy_ai(t).grad_fn is None


@pytest.mark.parametrize("fn", [
    lambda m: m.special.chebyshev_polynomial_t(m.ones(2), m.ones(3)),
    lambda m: m.special.legendre_polynomial_p(m.tensor([1, 2]), m.tensor([1, 2]), out=m.empty(2, dtype=m.int64)),
    lambda m: m.special.shifted_chebyshev_polynomial_w(m.ones(1), m.ones(1), out=m.empty(1, dtype=m.bool)),
    lambda m: m.special.airy_ai(m.ones(2), out=m.empty(2, dtype=m.int32)),
])
def test_bad_calls_raise_as_torch(fn):
    raises_like_torch(fn)


def test_the_ops_under_their_table_names():
    """minitorch.special's functions are the _C ops of the table, called here by those names."""
    x = minitorch.tensor([0.25, 0.5, 0.75], dtype=minitorch.float64)
    C, sp = minitorch._C, minitorch.special
    pairs = [
        (C.special_chebyshev_polynomial_t(x, 5.0), sp.chebyshev_polynomial_t(x, 5.0)),
        (C.special_chebyshev_polynomial_u(x, 5.0), sp.chebyshev_polynomial_u(x, 5.0)),
        (C.special_chebyshev_polynomial_v(x, 5.0), sp.chebyshev_polynomial_v(x, 5.0)),
        (C.special_chebyshev_polynomial_w(x, 5.0), sp.chebyshev_polynomial_w(x, 5.0)),
        (C.special_shifted_chebyshev_polynomial_t(x, 5.0), sp.shifted_chebyshev_polynomial_t(x, 5.0)),
        (C.special_shifted_chebyshev_polynomial_u(x, 5.0), sp.shifted_chebyshev_polynomial_u(x, 5.0)),
        (C.special_shifted_chebyshev_polynomial_v(x, 5.0), sp.shifted_chebyshev_polynomial_v(x, 5.0)),
        (C.special_shifted_chebyshev_polynomial_w(x, 5.0), sp.shifted_chebyshev_polynomial_w(x, 5.0)),
        (C.special_legendre_polynomial_p(x, 5.0), sp.legendre_polynomial_p(x, 5.0)),
        (C.special_laguerre_polynomial_l(x, 5.0), sp.laguerre_polynomial_l(x, 5.0)),
        (C.special_airy_ai(x), sp.airy_ai(x)),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(as_numpy(got), as_numpy(want))
    np.testing.assert_allclose(as_numpy(pairs[0][0]), np.cos(5 * np.arccos([0.25, 0.5, 0.75])), rtol=1e-13)
