"""minitorch.masked (PyTorch's torch.masked): MaskedTensor, masked_tensor, as_masked_tensor, and the
functional forms that reduce or normalize only the elements a mask keeps (torch.masked.sum(x, dim,
mask=m), mean, amax, amin, argmax, argmin, prod, var, std, norm, logsumexp, median, softmax,
log_softmax, softmin, normalize, cumsum, cumprod)."""
from ._ops import (  # noqa: F401
    amax, amin, argmax, argmin, cumprod, cumsum, log_softmax, logsumexp, mean, median, norm, normalize, prod,
    softmax, softmin, std, sum, var,
)
from .maskedtensor import MaskedTensor, as_masked_tensor, is_masked_tensor, masked_tensor  # noqa: F401
from . import _ops  # noqa: F401

__all__ = ["MaskedTensor", "as_masked_tensor", "is_masked_tensor", "masked_tensor"]
