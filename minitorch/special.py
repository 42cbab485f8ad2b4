"""minitorch.special: torch.special's functions.

They are the ops of the op table under their special names (expit is sigmoid, gammaln is
lgamma, psi is digamma, multigammaln is mvlgamma) and its special_* ops (ndtr, xlog1py, entr:
composites of csrc/ops/composite_special.c), and the special_* ops with kernels of their own
(rows of csrc/ops/elementwise.def over core/math_special.h: the Bessel functions, ndtri, log_ndtr,
erfcx, zeta, airy_ai, the Hermite, Chebyshev (plain and shifted), Legendre and Laguerre polynomials;
gammainc and gammaincc are igamma and igammac, i0 is torch.i0). softmax and log_softmax take PyTorch's keyword-only dtype here.
"""
from __future__ import annotations

from . import _C

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
           "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
           "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
           "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
           "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
           "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
           "xlogy", "zeta"]

expit = _C.sigmoid
erf = _C.erf
erfc = _C.erfc
erfinv = _C.erfinv
gammaln = _C.lgamma
digamma = _C.digamma
psi = _C.digamma
polygamma = _C.polygamma
exp2 = _C.exp2
expm1 = _C.expm1
log1p = _C.log1p
xlogy = _C.xlogy
logsumexp = _C.logsumexp
logit = _C.logit
sinc = _C.sinc
multigammaln = _C.mvlgamma
ndtr = _C.special_ndtr
xlog1py = _C.special_xlog1py
entr = _C.special_entr
i0 = _C.i0
i0e = _C.special_i0e
i1 = _C.special_i1
i1e = _C.special_i1e
ndtri = _C.special_ndtri
log_ndtr = _C.special_log_ndtr
erfcx = _C.special_erfcx
bessel_j0 = _C.special_bessel_j0
bessel_j1 = _C.special_bessel_j1
bessel_y0 = _C.special_bessel_y0
bessel_y1 = _C.special_bessel_y1
modified_bessel_i0 = _C.special_modified_bessel_i0
modified_bessel_i1 = _C.special_modified_bessel_i1
modified_bessel_k0 = _C.special_modified_bessel_k0
modified_bessel_k1 = _C.special_modified_bessel_k1
scaled_modified_bessel_k0 = _C.special_scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _C.special_scaled_modified_bessel_k1
spherical_bessel_j0 = _C.special_spherical_bessel_j0
zeta = _C.special_zeta
hermite_polynomial_h = _C.special_hermite_polynomial_h
hermite_polynomial_he = _C.special_hermite_polynomial_he
airy_ai = _C.special_airy_ai
chebyshev_polynomial_t = _C.special_chebyshev_polynomial_t
chebyshev_polynomial_u = _C.special_chebyshev_polynomial_u
chebyshev_polynomial_v = _C.special_chebyshev_polynomial_v
chebyshev_polynomial_w = _C.special_chebyshev_polynomial_w
shifted_chebyshev_polynomial_t = _C.special_shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _C.special_shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _C.special_shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _C.special_shifted_chebyshev_polynomial_w
legendre_polynomial_p = _C.special_legendre_polynomial_p
laguerre_polynomial_l = _C.special_laguerre_polynomial_l
gammainc = _C.igamma
gammaincc = _C.igammac


def round(input, *, decimals: int = 0, out=None):  # noqa: A001
    """input rounded half to even, to `decimals` decimal places."""
    return _C.round(input, decimals=decimals, out=out)


def softmax(input, dim: int, *, dtype=None):
    """exp(input) / exp(input).sum(dim), computed stably (in dtype when given)."""
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim: int, *, dtype=None):
    """input - logsumexp(input, dim), computed stably (in dtype when given)."""
    return _C.log_softmax(input, dim, dtype)
