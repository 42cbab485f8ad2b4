"""torch.masked's functional forms: reductions and normalizations of `input` that count only the
elements where `mask` is True (mask broadcasts to input; None means every element).

Each is one dense op on the input with the masked-out elements replaced by the reduction's
identity (0 for sum, 1 for prod, -inf for amax and softmax, ...), so autograd gives the
gradients, zero at masked-out elements. A slice with no element left gives what PyTorch's do:
the identity for sum, prod, amax, amin, norm and logsumexp, NaN for mean, var, std and median,
NaN rows from softmax and log_softmax. input may also be a MaskedTensor (its own mask is used).
"""
from __future__ import annotations

import math

from .. import _C
from .._tensor import Tensor

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logsumexp", "mean", "median",
           "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var"]


def _input_mask(input, mask):
    """(data, boolean mask of data's shape) from input (a tensor or a MaskedTensor) and mask."""
    if hasattr(input, "get_mask"):
        return input.get_data(), input.get_mask() if mask is None else mask & input.get_mask()
    if not isinstance(input, Tensor):
        raise TypeError(f"masked reductions expect a Tensor input, got {type(input).__name__}")
    if mask is None:
        return input, _C.ones(input.shape, dtype=_C.bool, device=input.device)
    if mask.dtype != _C.bool:
        mask = mask != 0
    return input, mask.expand(input.shape)


def _dims(dim, n: int) -> list:
    if dim is None:
        return list(range(n))
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if not -max(n, 1) <= d < max(n, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                             f"but got {d})")
    return sorted({d % max(n, 1) for d in dims})


def _filled(data, mask, value, dtype=None):
    if dtype is not None:
        data = data.to(dtype)
    return data.masked_fill(~mask, value)


def _lowest(dtype, sign: float) -> float:
    """-inf (sign -1) or inf for floats; an integer dtype's min or max."""
    if dtype.is_floating_point:
        return sign * math.inf
    from .._finfo import iinfo

    return iinfo(dtype).min if sign < 0 else iinfo(dtype).max


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:  # noqa: A001
    data, mask = _input_mask(input, mask)
    return _filled(data, mask, 0, dtype).sum(_dims(dim, data.dim()), keepdim=bool(keepdim))


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    out = _filled(data, mask, 1, dtype)
    if dim is None and not keepdim:
        return out.prod()
    for d in reversed(_dims(dim, data.dim())):
        out = out.prod(d, keepdim=bool(keepdim))
    return out


def _extreme(input, dim, keepdim, dtype, mask, name: str, sign: float) -> Tensor:
    data, mask = _input_mask(input, mask)
    out = _filled(data, mask, _lowest(dtype or data.dtype, sign), dtype)
    return getattr(out, name)(_dims(dim, data.dim()), keepdim=bool(keepdim))


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    return _extreme(input, dim, keepdim, dtype, mask, "amax", -1.0)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    return _extreme(input, dim, keepdim, dtype, mask, "amin", 1.0)


def _arg(input, dim, keepdim, dtype, mask, name: str, sign: float) -> Tensor:
    """argmax / argmin among the unmasked elements, in dtype (input's by default), as PyTorch's."""
    data, mask = _input_mask(input, mask)
    out = getattr(_filled(data, mask, _lowest(data.dtype, sign)), name)(dim, keepdim=bool(keepdim))
    return out.to(dtype or data.dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    return _arg(input, dim, keepdim, dtype, mask, "argmax", -1.0)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    return _arg(input, dim, keepdim, dtype, mask, "argmin", 1.0)


def _count(data, mask, dims, keepdim, dtype):
    return mask.sum(dims, keepdim=bool(keepdim)).to(dtype or data.dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    dims = _dims(dim, data.dim())
    total = _filled(data, mask, 0, dtype).sum(dims, keepdim=bool(keepdim))
    return total / _count(data, mask, dims, keepdim, total.dtype)


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The mean squared distance of the unmasked elements from their mean, over count - correction
    (correction 1 unless unbiased=False or correction says otherwise)."""
    if correction is None:
        correction = 0 if unbiased is False else 1
    data, mask = _input_mask(input, mask)
    dims = _dims(dim, data.dim())
    centre = mean(data, dims, keepdim=True, dtype=dtype, mask=mask)
    diff = _filled(data, mask, 0, dtype) - centre
    squares = diff.masked_fill(~mask, 0).square().sum(dims, keepdim=bool(keepdim))
    count = _count(data, mask, dims, keepdim, squares.dtype)
    return squares / (count - correction).clamp_min(0)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None) -> Tensor:
    return var(input, dim, unbiased, correction=correction, keepdim=keepdim, dtype=dtype, mask=mask).sqrt()


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """The vector ord-norm of the unmasked elements (masked ones count as 0, or as inf for ord < 0,
    which leaves a negative-order norm's sum unchanged)."""
    data, mask = _input_mask(input, mask)
    fill = math.inf if ord is not None and ord < 0 else 0.0
    from ..linalg import vector_norm

    return vector_norm(_filled(data, mask, fill, dtype), 2.0 if ord is None else ord, _dims(dim, data.dim()),
                       keepdim=bool(keepdim))


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    return _filled(data, mask, -math.inf, dtype).logsumexp(_dims(dim, data.dim()), keepdim=bool(keepdim))


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    out = _filled(data, mask, math.nan, dtype or (data.dtype if data.is_floating_point() else _C.float32))
    if data.dim() == 0:
        return out
    return out.nanmedian(dim, keepdim=bool(keepdim)).values


def softmax(input, dim, *, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    return _filled(data, mask, -math.inf, dtype).softmax(dim)


def log_softmax(input, dim, *, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    return _filled(data, mask, -math.inf, dtype).log_softmax(dim)


def softmin(input, dim, *, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    return (-_filled(data, mask, math.inf, dtype)).softmax(dim)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None) -> Tensor:
    """The unmasked elements divided by their ord-norm along dim (at least eps); masked ones 0."""
    data, mask = _input_mask(input, mask)
    size = norm(data, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return _filled(data, mask, 0, dtype) / size.clamp_min(eps)


def cumsum(input, dim, *, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    return _filled(data, mask, 0, dtype).cumsum(dim)


def cumprod(input, dim, *, dtype=None, mask=None) -> Tensor:
    data, mask = _input_mask(input, mask)
    return _filled(data, mask, 1, dtype).cumprod(dim)
