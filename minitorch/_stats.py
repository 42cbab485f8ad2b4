"""The statistics functions whose overloads or results PyTorch picks in its Python layer.

median and nanmedian are a full reduction without dim and (values, indices) along one with it
(the ops median / median_dim); histogram takes bins as a count (with an optional range) or as
the edges themselves (the ops histogram / histogram_bins); unique_consecutive returns the output
and, as asked, the inverse and the counts (torch/functional.py's _unique_consecutive_impl). Each
is one op call; nothing is computed here.
"""
from __future__ import annotations

from . import _C

__all__ = ["histogram", "median", "nanmedian", "unique_consecutive"]


def _dim_overload(name, full, along):
    def overloaded(input, dim=None, keepdim=False):
        if dim is None and not keepdim:
            return full(input)
        return along(input, dim, keepdim)

    overloaded.__name__ = overloaded.__qualname__ = name
    overloaded.__doc__ = (f"{name}(input) -> Tensor; {name}(input, dim, keepdim=False) -> (values, indices)")
    return overloaded


median = _dim_overload("median", _C.median, _C.median_dim)
nanmedian = _dim_overload("nanmedian", _C.nanmedian, _C.nanmedian_dim)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges): bins equal bins over range (input's own range without it), or the bins
    the 1-D tensor `bins` of edges bounds; weight sums weights, density normalises."""
    if isinstance(bins, _C.TensorBase):
        return _C.histogram_bins(input, bins, weight=weight, density=density)
    lo, hi = (None, None) if range is None else range
    return _C.histogram(input, bins, lo, hi, weight=weight, density=density)


def _results(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """input without the repeats of each run of equal consecutive elements (slices along dim)."""
    output, inverse, counts = _C.unique_consecutive(input, return_inverse, return_counts, dim)
    return _results(output, inverse, counts, return_inverse, return_counts)
