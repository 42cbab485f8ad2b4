"""minitorch.special: torch.special's functions.

They are the ops of the op table under their special names (expit is sigmoid, gammaln is
lgamma, psi is digamma, multigammaln is mvlgamma) and its special_* ops (ndtr, xlog1py, entr:
composites of csrc/ops/composite_special.c). softmax and log_softmax take PyTorch's keyword-only
dtype here. Not yet here: the Bessel functions (i0, i0e, i1, i1e), ndtri, log_ndtr, erfcx,
gammainc, gammaincc and zeta, which need kernels of their own.
"""
from __future__ import annotations

from . import _C

__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "log1p",
           "log_softmax", "logit", "logsumexp", "multigammaln", "ndtr", "polygamma", "psi", "round", "sinc",
           "softmax", "xlog1py", "xlogy"]

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


def round(input, *, decimals: int = 0, out=None):  # noqa: A001
    """input rounded half to even, to `decimals` decimal places."""
    result = _C.round(input, decimals=decimals)
    return out.copy_(result) if out is not None else result


def softmax(input, dim: int, *, dtype=None):
    """exp(input) / exp(input).sum(dim), computed stably (in dtype when given)."""
    return _C.softmax(input, dim, dtype)


def log_softmax(input, dim: int, *, dtype=None):
    """input - logsumexp(input, dim), computed stably (in dtype when given)."""
    return _C.log_softmax(input, dim, dtype)
