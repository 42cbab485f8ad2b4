"""torch.special's functions with kernels of their own (the modified Bessel functions i0, i0e, i1,
i1e, k0, k1 and their scaled forms, the Bessel functions j0, j1, y0, y1, spherical_bessel_j0, ndtri,
log_ndtr, erfcx, the Hurwitz zeta, the Hermite polynomials), the incomplete gamma functions, gcd,
lcm, nextafter and frexp: values against float64 references (mpmath's arbitrary precision where installed; NumPy and
math identities always), against PyTorch (values, dtypes, layouts, broadcasting, NaN, infinities,
negative and large arguments, float32 and float64, integer inputs), gradients with check_grad,
PyTorch's refusals, the forms (in place, method, out=) and bad calls."""
import math

import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, check, check_grad, same_as_torch, to_layout, torch

NAN, INF = float("nan"), float("inf")
RNG = np.random.default_rng(1919)
EDGES = [NAN, INF, -INF, 0.0, -0.0, 1e-300, -1e-300, 1e-6, 0.5, 2.0, 5.0, 8.0, -8.0, 30.0, -30.0, 200.0, 700.0]


def sample(n=60, low=-20.0, high=20.0, edges=True):
    a = RNG.uniform(low, high, n)
    return np.concatenate([np.array(EDGES), a]) if edges else a


# name: (minitorch/torch function of the library, mpmath reference or None, its domain for
# random points (the edges are always added))
SPECIAL = {
    "i0": (lambda m, x: m.special.i0(x), "besseli0", (-50, 50)),
    "i0_top": (lambda m, x: m.i0(x), "besseli0", (-50, 50)),
    "i0e": (lambda m, x: m.special.i0e(x), "i0e", (-50, 50)),
    "i1": (lambda m, x: m.special.i1(x), "besseli1", (-50, 50)),
    "i1e": (lambda m, x: m.special.i1e(x), "i1e", (-50, 50)),
    "modified_bessel_i0": (lambda m, x: m.special.modified_bessel_i0(x), "besseli0", (-50, 50)),
    "modified_bessel_i1": (lambda m, x: m.special.modified_bessel_i1(x), "besseli1", (-50, 50)),
    "modified_bessel_k0": (lambda m, x: m.special.modified_bessel_k0(x), "besselk0", (0.01, 50)),
    "modified_bessel_k1": (lambda m, x: m.special.modified_bessel_k1(x), "besselk1", (0.01, 50)),
    "scaled_modified_bessel_k0": (lambda m, x: m.special.scaled_modified_bessel_k0(x), "k0e", (0.01, 50)),
    "scaled_modified_bessel_k1": (lambda m, x: m.special.scaled_modified_bessel_k1(x), "k1e", (0.01, 50)),
    "bessel_j0": (lambda m, x: m.special.bessel_j0(x), "besselj0", (-40, 40)),
    "bessel_j1": (lambda m, x: m.special.bessel_j1(x), "besselj1", (-40, 40)),
    "bessel_y0": (lambda m, x: m.special.bessel_y0(x), "bessely0", (0.01, 40)),
    "bessel_y1": (lambda m, x: m.special.bessel_y1(x), "bessely1", (0.01, 40)),
    "spherical_bessel_j0": (lambda m, x: m.special.spherical_bessel_j0(x), "sinc", (-40, 40)),
    "ndtri": (lambda m, x: m.special.ndtri(x), "ndtri", (0.0, 1.0)),
    "log_ndtr": (lambda m, x: m.special.log_ndtr(x), "log_ndtr", (-40, 10)),
    "erfcx": (lambda m, x: m.special.erfcx(x), "erfcx", (-10, 60)),
}


def _mp_ref(name):
    mpmath = pytest.importorskip("mpmath")
    mp = mpmath.mp
    mp.dps = 40
    f = {
        "besseli0": lambda x: mp.besseli(0, x), "besseli1": lambda x: mp.besseli(1, x),
        "i0e": lambda x: mp.besseli(0, x) * mp.exp(-abs(x)), "i1e": lambda x: mp.besseli(1, x) * mp.exp(-abs(x)),
        "besselk0": lambda x: mp.besselk(0, x), "besselk1": lambda x: mp.besselk(1, x),
        "k0e": lambda x: mp.besselk(0, x) * mp.exp(x), "k1e": lambda x: mp.besselk(1, x) * mp.exp(x),
        "besselj0": lambda x: mp.besselj(0, x), "besselj1": lambda x: mp.besselj(1, x),
        "bessely0": lambda x: mp.bessely(0, x), "bessely1": lambda x: mp.bessely(1, x),
        "sinc": lambda x: mp.sin(x) / x if x != 0 else mp.mpf(1),
        "ndtri": lambda p: mp.sqrt(2) * mp.erfinv(2 * p - 1),  # 2p - 1 needs the digits of a tiny p
        "log_ndtr": lambda x: mp.log(mp.ncdf(x)) if x < 0 else mp.log1p(-mp.ncdf(-x)),
        "erfcx": lambda x: mp.exp(x * x) * mp.erfc(x),
    }[name]

    def ref(a):
        with mp.workdps(700):
            return np.array([float(f(mp.mpf(float(v)))) for v in a.ravel()]).reshape(a.shape)
    return ref if name == "ndtri" else lambda a: np.array([float(f(mp.mpf(float(v)))) for v in a.ravel()]).reshape(
        a.shape)


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_values_against_mpmath(name):
    """float64 results within 1e-13 of the exact values (relative), but for J0, J1, Y0 and Y1:
    PyTorch's rational approximations (which these are, to match its values) are good to about
    2e-7 absolute, so these are checked to 1e-6 absolute (and against PyTorch to 1e-13 in
    test_same_as_torch)."""
    fn, ref, (low, high) = SPECIAL[name]
    x = RNG.uniform(low, high, 200)
    if name == "ndtri":
        x = np.concatenate([x, [1e-300, 1e-20, 1e-5, 0.01, 0.99, 1 - 1e-10]])
    want = _mp_ref(ref)(x)
    got = as_numpy(fn(minitorch, minitorch.tensor(x)))
    if name.startswith("bessel_"):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15 if name == "spherical_bessel_j0" else 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_same_as_torch(name, layout, dtype):
    """PyTorch's values (NaN, infinities, 0 and -0, tiny, negative and large arguments), dtype and
    shape, in every layout; float32 and float64."""
    fn, _, (low, high) = SPECIAL[name]
    a = sample(low=low, high=high)
    a = np.concatenate([a, a[:4]]).reshape(9, 9).astype(dtype)  # 77 values and 4 again
    rtol, atol = (1e-5, 1e-30) if dtype == "float32" else (1e-11, 1e-290)
    if name.startswith(("bessel_", "spherical")):
        atol = 1e-6 if dtype == "float32" else 1e-13
    same_as_torch(fn, [a], layout=layout, grad=False, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(SPECIAL))
@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_and_bool_inputs_compute_in_the_default_float(name, dtype):
    fn, _, _ = SPECIAL[name]
    a = (np.arange(-3, 9) % 2 == 1) if dtype == "bool" else np.arange(-3, 9).astype(dtype)
    out = fn(minitorch, minitorch.tensor(a))
    assert out.dtype == minitorch.float32
    if torch is not None:
        np.testing.assert_allclose(as_numpy(out), fn(torch, torch.tensor(a)).numpy(), rtol=1e-5, atol=1e-6)


def test_identities_without_references():
    """Checks that need neither mpmath nor PyTorch: NumPy's i0, sin(x)/x, math.erfc, the normal
    distribution's inverse, I and K's Wronskian, J and Y's."""
    x = np.linspace(-30, 30, 601)
    t = minitorch.tensor(x)
    sp = minitorch.special
    np.testing.assert_allclose(as_numpy(minitorch.i0(t)), np.i0(x), rtol=1e-13)
    np.testing.assert_allclose(as_numpy(sp.i0e(t)), np.i0(x) * np.exp(-np.abs(x)), rtol=1e-13)
    nz = x[x != 0]
    np.testing.assert_allclose(as_numpy(sp.spherical_bessel_j0(minitorch.tensor(nz))), np.sin(nz) / nz, rtol=1e-13,
                               atol=1e-16)
    small = np.linspace(-6, 6, 121)
    erfcx = [math.exp(v * v) * math.erfc(v) for v in small]
    np.testing.assert_allclose(as_numpy(sp.erfcx(minitorch.tensor(small))), erfcx, rtol=1e-13)
    r2 = math.sqrt(2)
    log_ndtr = [math.log(0.5 * math.erfc(-v / r2)) if v < 0 else math.log1p(-0.5 * math.erfc(v / r2)) for v in small]
    np.testing.assert_allclose(as_numpy(sp.log_ndtr(minitorch.tensor(small))), log_ndtr, rtol=1e-13)
    p = np.linspace(0.001, 0.999, 999)
    back = [0.5 * math.erfc(-v / math.sqrt(2)) for v in as_numpy(sp.ndtri(minitorch.tensor(p)))]
    np.testing.assert_allclose(back, p, rtol=1e-13)
    z = minitorch.tensor(np.linspace(0.1, 40, 400))
    # I0 K1 + I1 K0 = 1/x, J1 Y0 - J0 Y1 = 2/(pi x)
    w = sp.i0e(z) * sp.scaled_modified_bessel_k1(z) + sp.i1e(z) * sp.scaled_modified_bessel_k0(z)
    np.testing.assert_allclose(as_numpy(w * z), 1.0, rtol=1e-13)
    w = sp.modified_bessel_i0(z) * sp.modified_bessel_k1(z) + sp.modified_bessel_i1(z) * sp.modified_bessel_k0(z)
    np.testing.assert_allclose(as_numpy(w * z), 1.0, rtol=1e-12)
    w = sp.bessel_j1(z) * sp.bessel_y0(z) - sp.bessel_j0(z) * sp.bessel_y1(z)
    np.testing.assert_allclose(as_numpy(w * z), 2 / math.pi, atol=2e-5)  # PyTorch's J, Y: ~2e-7


def test_edge_values():
    sp = minitorch.special
    t = minitorch.tensor([0.0, -0.0, INF, -INF, NAN, -1.0])
    assert as_numpy(sp.modified_bessel_k0(t)).tolist()[:2] == [INF, INF]
    assert math.isnan(as_numpy(sp.modified_bessel_k1(t))[5])
    assert as_numpy(sp.bessel_y0(t))[0] == -INF and math.isnan(as_numpy(sp.bessel_y1(t))[5])
    assert as_numpy(sp.ndtri(minitorch.tensor([0.0, 1.0]))).tolist() == [-INF, INF]
    assert np.isnan(as_numpy(sp.ndtri(minitorch.tensor([-0.1, 1.1, NAN])))).all()
    assert as_numpy(sp.erfcx(minitorch.tensor([-30.0, INF]))).tolist() == [INF, 0.0]
    assert as_numpy(sp.spherical_bessel_j0(minitorch.tensor([INF, -INF, 0.0]))).tolist() == [0.0, 0.0, 1.0]


# ---- the binary functions ----

BINARY = {
    "zeta": (lambda m, x, q: m.special.zeta(x, q), (1.0, 12.0), (-5.0, 20.0)),
    "igamma": (lambda m, a, x: m.igamma(a, x), (0.0, 30.0), (0.0, 60.0)),
    "gammainc": (lambda m, a, x: m.special.gammainc(a, x), (0.0, 30.0), (0.0, 60.0)),
    "igammac": (lambda m, a, x: m.igammac(a, x), (0.0, 30.0), (0.0, 60.0)),
    "gammaincc": (lambda m, a, x: m.special.gammaincc(a, x), (0.0, 30.0), (0.0, 60.0)),
    "nextafter": (lambda m, x, y: m.nextafter(x, y), (-5.0, 5.0), (-5.0, 5.0)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_same_as_torch(name, layout, dtype):
    """Broadcast (4, 1, 6) with (5, 6), edges (NaN, infinities, 0, negatives, equal pairs) mixed in."""
    fn, (lo1, hi1), (lo2, hi2) = BINARY[name]
    a = RNG.uniform(lo1, hi1, (4, 1, 6))
    b = RNG.uniform(lo2, hi2, (5, 6))
    a.flat[:6] = [NAN, INF, 0.0, -1.0, 2.0, 1.0]
    b[0] = [1.0, INF, NAN, 0.0, -2.0, 2.0]
    b[1, :3] = a.flat[3:6]
    # PyTorch's igamma is good to ~1e-9 where a ~ x (its asymptotic series), so that tolerance
    tol = dict(rtol=1e-4, atol=1e-6) if dtype == "float32" else dict(rtol=1e-8, atol=1e-12)
    same_as_torch(fn, [a.astype(dtype), b.astype(dtype)], layout=layout, grad=False, **tol)


# ---- the Hermite polynomials: H_n(x) (physicists') and He_n(x) (probabilists'), n a float ----

HERMITE = {
    "hermite_polynomial_h": (lambda m, x, n: m.special.hermite_polynomial_h(x, n), np.polynomial.hermite.hermval),
    "hermite_polynomial_he": (lambda m, x, n: m.special.hermite_polynomial_he(x, n),
                              np.polynomial.hermite_e.hermeval),
}


def _degree(n):
    """PyTorch's degree of a float n: truncated toward 0; NaN, negative or past int64 is none (-1)."""
    return math.trunc(n) if -1 < n < 2.0 ** 63 else -1


def _hermite_ref(series):
    def ref(x, n):
        x, n = np.broadcast_arrays(x, n)
        out = [series(xi, [0.0] * _degree(ni) + [1.0]) if _degree(ni) >= 0 else 0.0 for xi, ni in zip(x.flat, n.flat)]
        return np.array(out, dtype=np.float64).reshape(x.shape)
    return ref


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(HERMITE))
def test_hermite_against_numpy(name, layout):
    """float64 against NumPy's Hermite series (whole and fractional degrees, negative ones, which
    give 0), broadcast (4, 1, 6) with (5, 6), in every layout."""
    fn, series = HERMITE[name]
    x = RNG.uniform(-3, 3, (4, 1, 6))
    n = np.concatenate([np.arange(-2, 11), RNG.uniform(-2, 11, 17)]).reshape(5, 6)
    check(fn, _hermite_ref(series), [x, n], layout=layout, atol=1e-6, rtol=1e-10, dtype=minitorch.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(HERMITE))
def test_hermite_same_as_torch(name, dtype):
    """PyTorch's values at the edges: NaN and infinite x, NaN, infinite, negative, fractional and
    past-int64 degrees (0 for those), overflow to NaN; and at random points, float32 and float64."""
    fn, _ = HERMITE[name]
    x = np.array([NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 2.5, 30.0])[:, None]
    n = np.array([NAN, INF, -INF, -1.0, -0.5, -0.0, 0.9, 1.0, 2.0, 3.0, 7.5, 40.0, 1e19, 1e300])
    same_as_torch(fn, [x.astype(dtype), n.astype(dtype)], grad=False, rtol=1e-5 if dtype == "float32" else 1e-12)
    x = RNG.uniform(-1.5, 1.5, (7, 5))
    n = RNG.integers(0, 7, (7, 5)).astype(float)
    tol = dict(rtol=1e-4, atol=5e-3) if dtype == "float32" else dict(rtol=1e-10, atol=1e-9)
    same_as_torch(fn, [x.astype(dtype), n.astype(dtype)], grad=False, **tol)
    same_as_torch(lambda m, x: fn(m, x, 3), [x.astype(dtype)], grad=False, **tol)
    same_as_torch(lambda m, n: fn(m, 0.5, n), [n.astype(dtype)], grad=False, **tol)


def test_incomplete_gamma_against_references():
    a = RNG.uniform(0.05, 40, 300)
    x = RNG.uniform(0.0, 80, 300)
    p = as_numpy(minitorch.special.gammainc(minitorch.tensor(a), minitorch.tensor(x)))
    q = as_numpy(minitorch.special.gammaincc(minitorch.tensor(a), minitorch.tensor(x)))
    np.testing.assert_allclose(p + q, 1.0, rtol=1e-13)
    # P(1, x) = 1 - e^-x, P(1/2, x) = erf(sqrt(x))
    xs = np.linspace(0.01, 30, 300)
    ones = minitorch.ones(300, dtype=minitorch.float64)
    np.testing.assert_allclose(as_numpy(minitorch.igammac(ones, minitorch.tensor(xs))), np.exp(-xs), rtol=1e-13)
    np.testing.assert_allclose(as_numpy(minitorch.igamma(ones * 0.5, minitorch.tensor(xs))),
                               [math.erf(math.sqrt(v)) for v in xs], rtol=1e-13)
    mpmath = pytest.importorskip("mpmath")
    want = [float(mpmath.gammainc(mpmath.mpf(ai), 0, mpmath.mpf(xi), regularized=True)) for ai, xi in zip(a, x)]
    np.testing.assert_allclose(p, want, rtol=1e-11, atol=1e-300)


def test_zeta_against_references():
    # its own generator: the module's RNG hands each test what the tests before it in the same
    # process left, which differs between pytest-xdist's workers. Cephes' zeta (PyTorch's, which
    # we equal bit for bit: below) is within about 1.5e-8 of mpmath's for large x and q, not
    # 1e-12 as the first inputs this test drew happened to be
    rng = np.random.default_rng(256)
    x = rng.uniform(1.01, 15, 200)
    q = rng.uniform(0.1, 30, 200)
    got = as_numpy(minitorch.special.zeta(minitorch.tensor(x), minitorch.tensor(q)))
    np.testing.assert_allclose(as_numpy(minitorch.special.zeta(2.0, minitorch.tensor([1.0], dtype=minitorch.float64))),
                               [math.pi ** 2 / 6], rtol=1e-14)
    mpmath = pytest.importorskip("mpmath")
    np.testing.assert_allclose(got, [float(mpmath.zeta(xi, qi)) for xi, qi in zip(x, q)], rtol=3e-8)
    if torch is not None:
        np.testing.assert_array_equal(got, torch.special.zeta(torch.tensor(x), torch.tensor(q)).numpy())


def test_zeta_takes_numbers_on_either_side():
    q = np.array([0.5, 1.0, 2.0, 7.5])
    check(lambda m, t: m.special.zeta(3.0, t), lambda t: np.array([sum((k + v) ** -3.0 for k in range(200000))
                                                                    for v in t]), [q], rtol=1e-9)
    if torch is not None:
        same_as_torch(lambda m, t: m.special.zeta(t, 2.0), [np.array([1.5, 2.0, 0.5, 7.0])], grad=False)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8"])
def test_gcd_lcm(name, dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(max(info.min, -60), min(info.max, 60), (3, 1, 5)).astype(dtype)
    b = RNG.integers(max(info.min, -60), min(info.max, 60), (4, 5)).astype(dtype)
    a.flat[:3] = 0
    b[0, :2] = 0
    ref = {"gcd": np.gcd, "lcm": np.lcm}[name]
    for layout in LAYOUTS:
        out = getattr(minitorch, name)(to_layout(a, layout), to_layout(b, layout))
        assert out.dtype == getattr(minitorch, dtype)
        np.testing.assert_array_equal(as_numpy(out), ref(a, b).astype(dtype))
    if torch is not None:
        same_as_torch(lambda m, x, y: getattr(m, name)(x, y), [a, b], grad=False)


def test_gcd_lcm_extremes_as_torch():
    lo = np.iinfo(np.int64).min
    a = np.array([0, -4, 6, lo, lo, 7, -7], dtype=np.int64)
    b = np.array([0, 6, -4, 0, lo, -1, 0], dtype=np.int64)
    np.testing.assert_array_equal(as_numpy(minitorch.gcd(minitorch.tensor(a), minitorch.tensor(b)))[:3], [0, 2, 2])
    if torch is not None:
        for name in ("gcd", "lcm"):
            same_as_torch(lambda m, x, y: getattr(m, name)(x, y), [a, b], grad=False)


def test_nextafter_steps_one_ulp():
    x = np.array([0.0, 1.0, -1.0, 1e308, INF, NAN, 5.0], dtype=np.float64)
    y = np.array([1.0, 2.0, -2.0, INF, 0.0, 0.0, 5.0], dtype=np.float64)
    for dtype in ("float32", "float64"):
        out = minitorch.nextafter(minitorch.tensor(x.astype(dtype)), minitorch.tensor(y.astype(dtype)))
        np.testing.assert_array_equal(as_numpy(out), np.nextafter(x.astype(dtype), y.astype(dtype)))


# ---- frexp ----

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_frexp(dtype, layout):
    a = np.concatenate([[0.0, -0.0, INF, -INF, NAN, 1e-310, 0.5, 1.0, -3.0, 1e300],
                        RNG.uniform(-1e6, 1e6, 14)]).reshape(4, 6).astype(dtype)
    res = minitorch.frexp(to_layout(a, layout))
    m, e = np.frexp(a)
    assert type(res).__name__ == "frexp" and res.mantissa is res[0] and res.exponent is res[1]
    assert res.exponent.dtype == minitorch.int32 and res.mantissa.dtype == getattr(minitorch, dtype)
    np.testing.assert_array_equal(as_numpy(res.mantissa), m)
    np.testing.assert_array_equal(as_numpy(res.exponent), np.where(np.isfinite(a), e, 0))
    if torch is not None:
        want = torch.frexp(torch.tensor(a))
        np.testing.assert_array_equal(as_numpy(res.mantissa), want.mantissa.numpy())
        np.testing.assert_array_equal(as_numpy(res.exponent), want.exponent.numpy())
    moderate = np.abs(np.where(np.isfinite(a), e, 0)) < 100  # ldexp's 2^e is a float32, as PyTorch's
    back = minitorch.ldexp(res.mantissa, res.exponent)
    np.testing.assert_array_equal(as_numpy(back)[moderate], a[moderate])


def test_frexp_forms_and_errors():
    x = minitorch.tensor([1.5, -6.0, 0.1])
    m, e = x.frexp()
    om, oe = minitorch.empty(3), minitorch.empty(3, dtype=minitorch.int32)
    r = minitorch.frexp(x, out=(om, oe))
    assert r[0] is om and r[1] is oe
    np.testing.assert_array_equal(as_numpy(om), as_numpy(m))
    np.testing.assert_array_equal(as_numpy(oe), [1, 3, -3])
    with pytest.raises(RuntimeError, match=r"torch.frexp\(\) only supports floating-point dtypes"):
        minitorch.frexp(minitorch.tensor([1, 2]))


# ---- gradients and PyTorch's refusals ----

GRADS = {
    "i0": (lambda m, x: m.i0(x), (-12, 12)),
    "i0e": (lambda m, x: m.special.i0e(x), (-12, 12)),
    "i1": (lambda m, x: m.special.i1(x), (-12, 12)),
    "i1e": (lambda m, x: m.special.i1e(x), (-12, 12)),
    "ndtri": (lambda m, x: m.special.ndtri(x), (0.02, 0.98)),
    "log_ndtr": (lambda m, x: m.special.log_ndtr(x), (-12, 6)),
    "erfcx": (lambda m, x: m.special.erfcx(x), (-3, 12)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name, layout):
    fn, (low, high) = GRADS[name]
    a = RNG.uniform(low, high, (3, 4))
    check_grad(fn, [a], layout=layout)


def test_i1_gradients_at_zero_are_one_half():
    for f, want in ((minitorch.special.i1, 0.5), (minitorch.special.i1e, 0.5)):
        x = minitorch.tensor([0.0, -0.0], dtype=minitorch.float64, requires_grad=True)
        f(x).sum().backward()
        np.testing.assert_array_equal(as_numpy(x.grad), [want, want])


def test_second_argument_gradients():
    a = RNG.uniform(0.5, 6, (2, 3))
    x = RNG.uniform(0.5, 9, (2, 3))
    for fn in (lambda m, x: m.igamma(m.tensor(a), x), lambda m, x: m.special.gammaincc(m.tensor(a), x),
               lambda m, x: m.special.zeta(m.tensor(a) + 1, x)):
        check_grad(fn, [x])
    check_grad(lambda m, x, y: m.nextafter(x, y), [x, a], gradcheck=False)  # a step function of y


@pytest.mark.parametrize("fn, what", [
    (lambda m, a, x: m.igamma(a, x), "igamma: input"),
    (lambda m, a, x: m.igammac(a, x), "igammac: input"),
    (lambda m, a, x: m.special.zeta(a + 1, x), "zeta"),
])
def test_first_argument_gradients_refused(fn, what):
    a = minitorch.tensor([1.5, 2.5], requires_grad=True)
    x = minitorch.tensor([1.0, 2.0])
    with pytest.raises(NotImplementedError, match=f"the derivative for '{what}' is not implemented."):
        fn(minitorch, a, x).sum().backward()


def test_frexp_gradient():
    check_grad(lambda m, x: m.frexp(x).mantissa * 3, [RNG.uniform(-50, 50, (3, 4))])
    x = minitorch.tensor([3.0], requires_grad=True)
    assert minitorch.frexp(x).mantissa.grad_fn.name() == "FrexpBackward0"
    assert not minitorch.frexp(x).exponent.requires_grad


@pytest.mark.parametrize("name", [n for n in sorted(SPECIAL) if n.startswith(("bessel", "modified", "scaled",
                                                                               "spherical"))])
def test_bessel_results_have_no_grad_fn(name):
    """As PyTorch's: not differentiable, so their results need no grad whatever the input."""
    x = minitorch.tensor([0.5, 1.5], requires_grad=True)
    out = SPECIAL[name][0](minitorch, x)
    assert out.grad_fn is None and not out.requires_grad


def test_node_names():
    x = minitorch.tensor([0.5, 1.5], requires_grad=True)
    y = minitorch.tensor([1.5, 2.0], requires_grad=True)
    sp = minitorch.special
    names = [minitorch.i0(x), sp.i0e(x), sp.i1(x), sp.i1e(x), sp.ndtri(x / 2), sp.log_ndtr(x), sp.erfcx(x),
             minitorch.igamma(x, y), minitorch.igammac(x, y), sp.zeta(2.0, y), sp.zeta(y, 2.0), sp.zeta(y, y),
             minitorch.nextafter(x, y)]
    assert [t.grad_fn.name() for t in names] == [
        "I0Backward0", "SpecialI0EBackward0", "SpecialI1Backward0", "SpecialI1EBackward0", "SpecialNdtriBackward0",
        "SpecialLogNdtrBackward0", "SpecialErfcxBackward0", "IgammaBackward0", "IgammacBackward0",
        "SpecialZetaBackward1", "SpecialZetaBackward2", "SpecialZetaBackward0", "NextafterBackward0"]


# ---- forms and bad calls ----

def test_in_place_method_and_out_forms():
    a = np.array([0.5, 1.5, -2.0, 3.0])
    b = np.array([2.0, 1.0, 0.5, 4.0])
    x = minitorch.tensor(a)
    want = as_numpy(minitorch.i0(x))
    np.testing.assert_array_equal(as_numpy(x.i0()), want)
    y = x.clone()
    assert y.i0_() is y
    np.testing.assert_array_equal(as_numpy(y), want)
    y = x.clone()
    minitorch.i0_(y)
    np.testing.assert_array_equal(as_numpy(y), want)
    out = minitorch.empty(4, dtype=minitorch.float64)
    assert minitorch.special.i0e(x, out=out) is out
    np.testing.assert_array_equal(as_numpy(out), as_numpy(minitorch.special.i0e(x)))
    for name in ("igamma", "igammac", "nextafter"):
        t = minitorch.tensor(np.abs(a))
        want = as_numpy(getattr(minitorch, name)(t, minitorch.tensor(b)))
        np.testing.assert_array_equal(as_numpy(getattr(t, name)(minitorch.tensor(b))), want)
        assert getattr(t, name + "_")(minitorch.tensor(b)) is t
        np.testing.assert_array_equal(as_numpy(t), want)
    i = minitorch.tensor([12, 18, -8])
    assert minitorch.gcd_(i, minitorch.tensor([8, 12, 6])) is i
    np.testing.assert_array_equal(as_numpy(i), [4, 6, 2])
    i.lcm_(minitorch.tensor([6, 4, 3]))
    np.testing.assert_array_equal(as_numpy(i), [12, 12, 6])


@pytest.mark.parametrize("fn", [
    lambda m: m.gcd(m.tensor([1.0]), m.tensor([2.0])),
    lambda m: m.lcm(m.tensor([True]), m.tensor([True])),
    lambda m: m.igamma(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.nextafter(m.tensor([1, 2]), m.tensor([1, 2])),
    lambda m: m.i0_(m.tensor([1, 2])),
    lambda m: m.igamma(m.tensor([1.0]), 2.0),
    lambda m: m.gcd(m.tensor([1, 2]), m.tensor([1, 2, 3])),
    lambda m: m.special.hermite_polynomial_h(m.ones(2), m.ones(3)),
    lambda m: m.special.hermite_polynomial_he(m.tensor([1, 2]), m.tensor([1, 2]), out=m.empty(2, dtype=m.int64)),
])
def test_bad_calls_raise_as_torch(fn):
    with pytest.raises(Exception) as got:
        fn(minitorch)
    if torch is not None:
        with pytest.raises(Exception) as want:
            fn(torch)
        assert isinstance(got.value, type(want.value)) or isinstance(want.value, type(got.value))
        assert str(got.value).split("\n")[0] == str(want.value).split("\n")[0]


def test_dtype_promotion_as_torch():
    if torch is None:
        pytest.skip("needs PyTorch")
    for fn in (lambda m, x, y: m.special.zeta(x, y), lambda m, x, y: m.igamma(x.float(), y),
               lambda m, x, y: m.nextafter(x.double(), y.float())):
        same_as_torch(fn, [np.array([2, 3]), np.array([1.5, 2.5], dtype=np.float32)], grad=False)


def test_the_ops_under_their_table_names():
    """minitorch.special's functions are the _C ops of the table, called here by those names; the
    in-place forms; frexp's two parts."""
    x = minitorch.tensor([0.25, 1.5, 7.0], dtype=minitorch.float64)
    C, sp = minitorch._C, minitorch.special
    pairs = [
        (C.special_i0e(x), sp.i0e(x)), (C.special_i1(x), sp.i1(x)), (C.special_i1e(x), sp.i1e(x)),
        (C.special_ndtri(x / 8), sp.ndtri(x / 8)), (C.special_log_ndtr(x), sp.log_ndtr(x)),
        (C.special_erfcx(x), sp.erfcx(x)), (C.special_bessel_j0(x), sp.bessel_j0(x)),
        (C.special_bessel_j1(x), sp.bessel_j1(x)), (C.special_bessel_y0(x), sp.bessel_y0(x)),
        (C.special_bessel_y1(x), sp.bessel_y1(x)), (C.special_modified_bessel_i0(x), minitorch.i0(x)),
        (C.special_modified_bessel_i1(x), sp.i1(x)), (C.special_modified_bessel_k0(x), sp.modified_bessel_k0(x)),
        (C.special_modified_bessel_k1(x), sp.modified_bessel_k1(x)),
        (C.special_scaled_modified_bessel_k0(x), sp.scaled_modified_bessel_k0(x)),
        (C.special_scaled_modified_bessel_k1(x), sp.scaled_modified_bessel_k1(x)),
        (C.special_spherical_bessel_j0(x), sp.spherical_bessel_j0(x)), (C.special_zeta(x + 1, x), sp.zeta(x + 1, x)),
        (C._frexp_mantissa(x), minitorch.frexp(x).mantissa),
        (C.special_hermite_polynomial_h(x, 4.0), sp.hermite_polynomial_h(x, 4.0)),
        (C.special_hermite_polynomial_he(x, 4.0), sp.hermite_polynomial_he(x, 4.0)),
        (C._frexp_exponent(x).to(minitorch.int32), minitorch.frexp(x).exponent),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(as_numpy(got), as_numpy(want))
    y = minitorch.tensor([1.0, 2.0, 3.0], dtype=minitorch.float64)
    for inplace, fn in ((lambda t: t.igamma_(y), minitorch.igamma), (lambda t: t.igammac_(y), minitorch.igammac),
                        (lambda t: t.nextafter_(y), minitorch.nextafter)):
        t = x.clone()
        assert inplace(t) is t
        np.testing.assert_array_equal(as_numpy(t), as_numpy(fn(x, y)))
