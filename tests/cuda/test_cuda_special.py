"""torch.special's functions with kernels, the Hermite, Chebyshev, Legendre and Laguerre
polynomials, airy_ai, the incomplete gamma functions, gcd, lcm, nextafter, frexp and the numeric
composites (trapezoid, cumulative_trapezoid, gradient, vander, channel_shuffle) on the CUDA device
(a GPU or the emulated one) against the CPU: the generated elementwise kernels of each new row in
every layout, broadcast, with NaN and infinities, float32 and float64, gradients, and errors."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device, raises_alike
from unary_table import SPECIAL_UNARY

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(1919)
NAN, INF = float("nan"), float("inf")
sp = minitorch.special


def values(shape, dtype, low, high):
    a = RNG.uniform(low, high, shape)
    a.flat[:8] = [NAN, INF, -INF, 0.0, -0.0, 1e-30, -1.0, 1.0]
    return minitorch.tensor(a).to(dtype)


def layouts(x):
    yield x
    yield x.t().contiguous().t()
    yield minitorch.cat([x, x], 1)[:, ::2]


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("name", sorted(SPECIAL_UNARY))
def test_unary(name, dtype):
    """Each torch.special row of the unary table (tests/unary_table.py) on the device against the
    CPU, at float32's and float64's precision (test_cuda_pointwise_ew.py checks every row loosely)."""
    row = SPECIAL_UNARY[name]
    fn = lambda x: row.fn(minitorch, x)  # noqa: E731
    low, high = row.domain
    for x in layouts(values((6, 9), dtype, low, high)):
        check_device(fn, x, rtol=1e-6 if dtype == minitorch.float32 else 1e-13, atol=1e-30)
    check_device(fn, minitorch.tensor([[1, 2, 3]]))  # integers compute in float32


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("fn", [sp.zeta, minitorch.igamma, minitorch.igammac, minitorch.nextafter],
                         ids=["zeta", "igamma", "igammac", "nextafter"])
def test_binary(fn, dtype):
    a = values((4, 1, 6), dtype, 0.5, 12)
    b = values((5, 6), dtype, 0, 30)
    check_device(fn, a, b, rtol=1e-6 if dtype == minitorch.float32 else 1e-13, atol=1e-30)
    check_device(fn, a.transpose(0, 2), b.t()[:, :1], rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("fn", [sp.hermite_polynomial_h, sp.hermite_polynomial_he], ids=["h", "he"])
def test_hermite(fn, dtype):
    """Degrees 0 to 8 where the values do not cancel (|x| past the largest root; the edges 0, 1,
    -1 and 1e-30 compute exactly), and NaN, infinite, negative, fractional and past-int64 ones."""
    x = values((4, 1, 6), dtype, 5.5, 12)
    n = RNG.integers(0, 9, (5, 6)).astype(float)
    n[0] = [NAN, INF, -INF, -1.0, 2.5, 1e19]
    n = minitorch.tensor(n).to(dtype)
    tol = dict(rtol=1e-6 if dtype == minitorch.float32 else 1e-13, atol=1e-30)
    check_device(fn, x, n, **tol)
    check_device(fn, -x.transpose(0, 2), n.t()[:, :1], **tol)


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "legendre_polynomial_p", "laguerre_polynomial_l"]


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("name", POLYNOMIALS)
def test_orthogonal_polynomials(name, dtype):
    """Degrees 0 to 12 (the trigonometric forms past 4, 6 or 8 included) at points inside and
    outside [-1, 1], the endpoints, and NaN, infinite, negative, fractional and past-int64 ones."""
    fn = getattr(sp, name)
    x = values((4, 1, 6), dtype, -1.2, 1.2)
    n = RNG.integers(0, 13, (5, 6)).astype(float)
    n[0] = [NAN, INF, -INF, -1.0, 2.5, 1e19]
    n = minitorch.tensor(n).to(dtype)
    tol = dict(rtol=1e-5 if dtype == minitorch.float32 else 1e-12, atol=1e-6 if dtype == minitorch.float32 else 1e-12)
    check_device(fn, x, n, **tol)
    check_device(fn, -x.transpose(0, 2), n.t()[:, :1], **tol)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_airy_ai(dtype):
    for x in layouts(values((6, 9), dtype, -30, 30)):
        check_device(sp.airy_ai, x, rtol=1e-5 if dtype == minitorch.float32 else 1e-12, atol=1e-12)


def test_gcd_lcm_frexp():
    a = minitorch.tensor(RNG.integers(-50, 50, (4, 1, 6)))
    b = minitorch.tensor(RNG.integers(-50, 50, (5, 6)))
    for dtype in (minitorch.int64, minitorch.int32):
        check_device(minitorch.gcd, a.to(dtype), b.to(dtype), atol=0, rtol=0)
        check_device(minitorch.lcm, a.to(dtype).transpose(0, 2), b.to(dtype).t()[:, :1], atol=0, rtol=0)
    for dtype in (minitorch.float32, minitorch.float64):
        x = values((3, 8), dtype, -1e5, 1e5)
        assert_same(tuple(minitorch.frexp(x.cuda())), tuple(minitorch.frexp(x)), atol=0, rtol=0)


def test_in_place_and_errors():
    x = values((3, 4), minitorch.float64, 0.1, 5)
    y = x.cuda()
    y.i0_()
    assert_same(y, minitorch.i0(x), rtol=1e-13)
    raises_alike(minitorch.frexp, minitorch.tensor([1, 2]))
    # the kernel's name says the device, as PyTorch's ("gcd_cuda")
    for fn, args in ((minitorch.gcd, (1.0, 2.0)), (minitorch.igamma, (1, 2)), (minitorch.nextafter, (1, 2))):
        for device in ("cpu", "cuda"):
            with pytest.raises(NotImplementedError, match=f'"{fn.__name__}_{device}" not implemented for'):
                fn(*[minitorch.tensor([v], device=device) for v in args])


def test_gradients():
    for fn, low, high in ((minitorch.i0, -5, 5), (sp.i1e, -5, 5), (sp.ndtri, 0.1, 0.9), (sp.log_ndtr, -8, 4),
                          (sp.erfcx, -2, 8), (lambda t: minitorch.frexp(t).mantissa, -9, 9),
                          (lambda t: minitorch.igamma(t.detach() + 1, t), 0.5, 5)):
        a = RNG.uniform(low, high, (3, 4))
        grads = []
        for device in ("cpu", "cuda"):
            x = minitorch.tensor(a, device=device, requires_grad=True)
            fn(x).sum().backward()
            grads.append(x.grad)
        assert_same(grads[1], grads[0], rtol=1e-12)


def test_composites():
    y = values((4, 7), minitorch.float64, -3, 3)[1:]
    x = minitorch.tensor(np.cumsum(RNG.uniform(0.1, 1, 7)))
    check_device(minitorch.trapezoid, y, x, rtol=1e-12)
    check_device(lambda t: minitorch.trapz(t, dx=0.5, dim=0), y, rtol=1e-12)
    check_device(minitorch.cumulative_trapezoid, y, x, rtol=1e-12)
    g = minitorch.tensor(RNG.uniform(-3, 3, (5, 6)))
    for kw in ({}, {"edge_order": 2, "spacing": 0.5}, {"dim": 1, "spacing": [x[:6]]}):
        got = minitorch.gradient(g.cuda(), **{k: ([v.cuda() for v in val] if k == "spacing" and
                                                  isinstance(val, list) else val) for k, val in kw.items()})
        assert_same(got, minitorch.gradient(g, **kw), rtol=1e-12)
    check_device(minitorch.vander, minitorch.tensor([1.0, 2.0, -0.5]), atol=0, rtol=0)
    check_device(lambda t: minitorch.nn.functional.channel_shuffle(t, 3), g.reshape(1, 6, 5), atol=0, rtol=0)
