"""The statistics functions whose overloads or results PyTorch picks in its Python layer.

median and nanmedian are a full reduction without dim and (values, indices) along one with it
(the ops median / median_dim); histogram takes bins as a count (with an optional range) or as
the edges themselves (the ops histogram / histogram_bins); unique_consecutive returns the output
and, as asked, the inverse and the counts (torch/mt.py's _unique_consecutive_impl). Each
is one op call; nothing is computed here. histogramdd is PyTorch's Python-level composite: the
bin edges of each dimension, each point's flat bin index from searchsorted, one index_add_.
"""
from __future__ import annotations

import collections
import math
import operator

from . import _C
from ._checks import _to_out

__all__ = ["histogram", "histogramdd", "median", "nanmedian", "unique_consecutive"]


def _legacy(t):
    return "torch." + t.type().split(".")[-1]


def _check_median_out(input, values, indices):
    """PyTorch's checks of median's and nanmedian's out= pair (both name median): indices int64,
    then values in input's dtype"""
    for t in (values, indices):
        if not isinstance(t, _C.TensorBase):
            raise TypeError(f"median(): argument 'out' must be tuple of Tensors, not {type(t).__name__}")
    if indices.dtype != _C.int64:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                           f"{_legacy(indices)} instead (while checking arguments for median)")
    if values.dtype != input.dtype:
        raise RuntimeError(f"Expected tensor for 'values' to have the same type as tensor for argument #2 'self'; "
                           f"but type {_legacy(values)} does not equal {_legacy(input)} (while checking "
                           "arguments for median)")


def _dim_overload(name, full, along):
    def overloaded(input, dim=None, keepdim=False, *, out=None):
        if out is None and dim is None and not keepdim:
            return full(input)
        if out is not None:  # only the overload along a dim has out=, a (values, indices) pair
            if dim is None:
                raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
            if not isinstance(out, (tuple, list)):
                raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {type(out).__name__}")
            if len(out) != 2:
                raise TypeError(f"expected tuple of 2 elements but got {len(out)}")
            _check_median_out(input, *out)
        return _to_out(along(input, dim, keepdim), out, name)

    overloaded.__name__ = overloaded.__qualname__ = name
    overloaded.__doc__ = (f"{name}(input) -> Tensor; {name}(input, dim, keepdim=False, *, out=None) -> "
                          "(values, indices)")
    return overloaded


median = _dim_overload("median", _C.median, _C.median_dim)
nanmedian = _dim_overload("nanmedian", _C.nanmedian, _C.nanmedian_dim)


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """(hist, bin_edges): bins equal bins over range (input's own range without it), or the bins
    the 1-D tensor `bins` of edges bounds; weight sums weights, density normalises."""
    if isinstance(bins, _C.TensorBase):
        return _to_out(_C.histogram_bins(input, bins, weight=weight, density=density), out)
    lo, hi = (None, None) if range is None else range
    return _to_out(_C.histogram(input, bins, lo, hi, weight=weight, density=density), out)


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


_histogramdd_result = collections.namedtuple("histogramdd", ["hist", "bin_edges"])
_histogramdd_result.__module__ = "minitorch.return_types"


def _histogramdd_edges(points, bins, range, dtype) -> list:
    """One tensor of bin edges per dimension of points (M, D): the given edges, checked, or
    bins[d] equal bins over range[2d:2d+2], over the column's own range without it (0 to 1 when
    empty, widened by 1/2 each way when a single value), PyTorch's rules and messages"""
    import minitorch as mt

    d = points.shape[1]
    if isinstance(bins, _C.TensorBase):
        raise TypeError("histogramdd(): argument 'bins' must be an int, a sequence of ints or a sequence of "
                        "tensors, not Tensor")
    if not isinstance(bins, (list, tuple)):
        bins = [bins] * d
    if len(bins) != d:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    if all(isinstance(b, _C.TensorBase) for b in bins):
        for k, b in enumerate(bins):
            if b.dtype != dtype:
                raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, "
                                   f"but got input with dtype {_c_name(dtype)} and bins for dimension {k} with dtype "
                                   f"{_c_name(b.dtype)}")
            if b.dim() != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {b.dim()} "
                                   f"dimensions in the bins tensor for dimension {k}")
            if b.numel() == 0:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got 0 "
                                   f"elements in the bins tensor for dimension {k}")
        return list(bins)
    counts = [operator.index(b) for b in bins]
    if range is not None and len(range) != 2 * d:
        raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should have {2 * d} elements, "
                           f"but got {len(range)}")
    edges = []
    for k, n in enumerate(counts):
        if n <= 0:
            raise RuntimeError(f"torch.histogramdd: bins must be > 0, but got {n} for dimension {k}")
        if range is not None:
            lo, hi = float(range[2 * k]), float(range[2 * k + 1])
        elif points.shape[0] == 0:
            lo, hi = 0.0, 1.0
        else:
            col = points[:, k].detach()  # the range is no value to differentiate: no requires_grad warning
            lo, hi = float(col.min()), float(col.max())
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               f"dimension {k}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {k}'s range [{lo:g}, {hi:g}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(mt.linspace(lo, hi, n + 1, dtype=dtype, device=points.device))
    return edges


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """(hist, bin_edges): the points of input (..., D) counted (or their weights summed) in a
    D-dimensional grid of bins, bin k of dimension d being [edges[d][k], edges[d][k+1]) and the
    last one closed; points outside every grid, or NaN, are left out. density divides by the
    total and by each bin's volume."""
    import minitorch as mt

    if input.dim() < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    if not input.is_floating_point():
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{_dtype_title(input.dtype)}'")
    d = input.shape[-1]
    points = input.reshape(-1, d)
    if weight is not None and tuple(weight.shape) != tuple(input.shape[:-1]):
        raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                           "input tensor excluding its innermost dimension, but got input with shape "
                           f"{list(input.shape)} and weight with shape {list(weight.shape)}")
    edges = _histogramdd_edges(points, bins, range, input.dtype)
    sizes = [e.numel() - 1 for e in edges]
    flat = mt.zeros(points.shape[0], dtype=mt.int64, device=input.device)
    inside = mt.ones(points.shape[0], dtype=mt.bool, device=input.device)
    for k, e in enumerate(edges):
        col = points[:, k].contiguous()
        # bin of each value: the last edge at or below it, the right edge itself in the last bin
        idx = mt.searchsorted(e, col, right=True) - 1
        idx = mt.where(col == e[-1], max(sizes[k] - 1, 0), idx)
        inside = inside & (col >= e[0]) & (col <= e[-1])
        flat = flat * sizes[k] + idx.clamp(0, max(sizes[k] - 1, 0))
    values = mt.ones(points.shape[0], dtype=input.dtype, device=input.device) if weight is None else \
        weight.reshape(-1).to(input.dtype)
    hist = mt.zeros(math.prod(sizes), dtype=input.dtype, device=input.device)
    hist.index_add_(0, flat[inside], values[inside])
    hist = hist.reshape(sizes)
    if density:
        volume = mt.ones(sizes, dtype=input.dtype, device=input.device)
        for k, e in enumerate(edges):
            shape = [1] * d
            shape[k] = sizes[k]
            volume = volume * (e[1:] - e[:-1]).reshape(shape)
        hist = hist / (hist.sum() * volume)
    return _histogramdd_result(hist, list(edges))


def _c_name(dtype) -> str:
    """PyTorch's C++ scalar name of a dtype, as its messages print it (float, double, long, ...)"""
    name = str(dtype).split(".")[-1]
    return {"float32": "float", "float64": "double", "int64": "long", "int32": "int"}.get(name, name)


def _dtype_title(dtype) -> str:
    """PyTorch's C++ name of a dtype in "not implemented for" messages (Int, Long, Bool, ...)"""
    return {"int32": "Int", "int64": "Long", "bool": "Bool", "int16": "Short", "int8": "Char",
            "uint8": "Byte"}.get(str(dtype).split(".")[-1], str(dtype).split(".")[-1])
