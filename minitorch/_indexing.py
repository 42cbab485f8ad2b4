"""The selection ops whose number of results depends on an argument: nonzero(as_tuple=...),
argwhere and unique. Each is one call of a C kernel (nonzero, _unique2, unique_dim) plus the choice of
what to return, as PyTorch's torch/functional.py does for unique."""
from __future__ import annotations

from . import _C, _stats


def nonzero(input, *, out=None, as_tuple: bool = False):
    """The indices of the nonzero elements: an (n, input.dim()) int64 tensor, or with
    as_tuple=True one 1-D tensor per dim (a 0-dim input counts as 1-D)."""
    if not as_tuple:
        return _C.nonzero(input, out=out)
    if out is not None:
        raise RuntimeError("nonzero does not support the out kwarg when as_tuple is True")
    x = input.reshape(1) if input.dim() == 0 else input
    nz = _C.nonzero(x)
    return tuple(nz[:, d] for d in range(x.dim()))


def argwhere(input):
    """nonzero(input): the (n, input.dim()) indices of its nonzero elements."""
    return _C.nonzero(input)


def unique(input, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False, dim=None):
    """The distinct elements of input (or its distinct slices along dim), ascending; with
    return_inverse the index of each element's (slice's) value among them, with return_counts
    how often each occurs."""
    if dim is not None:
        output, inverse, counts = _C.unique_dim(input, dim, sorted, return_inverse, return_counts)
    else:
        output, inverse, counts = _C._unique2(input, sorted, return_inverse, return_counts)
    return _stats._results(output, inverse, counts, return_inverse, return_counts)
