"""torch's numerical calculus and Vandermonde functions, as composites of ops: trapezoid (and its
older name trapz), cumulative_trapezoid, gradient and vander.

Each follows ATen's decomposition (native/Integration.cpp, ReduceOps.cpp's gradient,
TensorFactories' vander) with its argument checks and messages, so dtypes promote as PyTorch's
do (an integer input gives the default float where a division is involved) and gradients flow
through the pieces. Python only binds arguments and slices: no element is computed here.
"""
from __future__ import annotations

import numbers
from typing import List, Optional, Sequence, Tuple, Union

from . import _C
from ._checks import _tensors

__all__ = ["cumulative_trapezoid", "gradient", "trapezoid", "trapz", "vander"]

_Number = Union[int, float, bool]


def _wrap_dim(dim: int, ndim: int) -> int:
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim % ndim


def _slice(t, dim: int, start: Optional[int], stop: Optional[int]):
    index = [slice(None)] * t.dim()
    index[dim] = slice(start, stop)
    return t[tuple(index)]


def _spacing_view(y, x, dim: int):
    """x as trapezoid reads it: a 1-D x laid along dim, a shorter one padded with leading 1s."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError("trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        return x.view(sizes)
    if x.dim() < y.dim():
        return x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    return x


def _pick(name: str, y, x, dx, dim: int):
    _tensors(name, y=y)
    if x is not None and dx is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: give either x or dx, not both")
    if x is not None and not isinstance(x, _C.TensorBase):
        raise TypeError(f"{name}(): argument 'x' (position 2) must be Tensor, not {type(x).__name__}")
    return _wrap_dim(dim, y.dim())


def trapezoid(y, x=None, *, dx: Optional[_Number] = None, dim: int = -1):
    """The trapezoidal rule's integral of y along dim, at points x or spaced dx (default 1)."""
    d = _pick("trapezoid", y, x, dx, dim)
    if y.shape[d] == 0:
        shape = list(y.shape)
        del shape[d]
        return y.new_zeros(shape)  # y's dtype, as ATen's zeros_like_except
    if x is None:
        step = 1 if dx is None else dx
        ends = _slice(y, d, 0, 1).squeeze(d) + _slice(y, d, -1, None).squeeze(d)
        return (y.sum(d) - ends * 0.5) * step
    xv = _spacing_view(y, x, d)
    steps = _slice(xv, d, 1, None) - _slice(xv, d, 0, -1)
    return (steps * (_slice(y, d, 1, None) + _slice(y, d, 0, -1))).sum(d) / 2.0


def trapz(y, x=None, *, dx: Optional[float] = None, dim: int = -1):
    """trapezoid's older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx: Optional[_Number] = None, dim: int = -1):
    """The running trapezoidal integral of y along dim (one element fewer than y there)."""
    d = _pick("cumulative_trapezoid", y, x, dx, dim)
    pairs = _slice(y, d, 1, None) + _slice(y, d, 0, -1)
    if x is None:
        return ((1 if dx is None else dx) / 2.0 * pairs).cumsum(d)
    xv = _spacing_view(y, x, d)
    steps = _slice(xv, d, 1, None) - _slice(xv, d, 0, -1)
    return ((steps * pairs) / 2.0).cumsum(d)


def _gradient_checks(input, n_spacing: Optional[int], dims: Optional[List[int]], edge_order: int) -> None:
    if input.dtype == _C.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if n_spacing is not None and dims is None and n_spacing != input.dim():
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
            f"'self.dim() = {input.dim()}', since dim argument was not given, but got a list of length {n_spacing}")
    if n_spacing is not None and dims is not None and n_spacing != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim arguments to have "
            f"the same length, but got a spacing argument of length {n_spacing} and a dim argument of length "
            f"{len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = [_wrap_dim(d, input.dim()) for d in dims] if dims is not None else list(range(input.dim()))
    if dims is not None and len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    for d in wrapped:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _gradient_uniform(f, d: int, h, edge_order: int):
    """numpy.gradient's differences over spacing h: central inside, one-sided (first or second
    order) at the two ends (ATen's gradient_helper_float)."""
    center = (_slice(f, d, 2, None) - _slice(f, d, 0, -2)) / h
    if edge_order == 1:
        first = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / h
        last = (_slice(f, d, -1, None) - _slice(f, d, -2, -1)) / h
    else:
        first = (_slice(f, d, 0, 1) * -1.5 + _slice(f, d, 1, 2) * 2 - _slice(f, d, 2, 3) * 0.5) / h
        last = (_slice(f, d, -3, -2) * 0.5 + _slice(f, d, -2, -1) * -2 + _slice(f, d, -1, None) * 1.5) / h
    return _C.cat([first, center / 2, last], d)


def _gradient_coordinates(f, d: int, x, edge_order: int):
    """The same at the coordinates x (a 1-D tensor): the second-order weights of uneven steps
    (ATen's gradient_helper)."""
    if x.dim() != 1:
        raise RuntimeError(
            f"torch.gradient expected each element of spacing to have one dimension, but got an element with "
            f"{x.dim()} dimensions!")
    shape = [1] * f.dim()
    shape[d] = -1
    h = x.diff(1, 0)
    h1, h2 = h[:-1], h[1:]
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _slice(f, d, 0, -2) + b * _slice(f, d, 1, -1) + c * _slice(f, d, 2, None)
    if edge_order == 1:
        first = (_slice(f, d, 1, 2) - _slice(f, d, 0, 1)) / h[0]
        last = (_slice(f, d, -1, None) - _slice(f, d, -2, -1)) / h[-1]
    else:
        s0, s1, e1, e2 = h[0], h[1], h[-1], h[-2]
        first = (-(2.0 * s0 + s1) / (s0 * (s0 + s1)) * _slice(f, d, 0, 1)
                 + (s0 + s1) / (s0 * s1) * _slice(f, d, 1, 2)
                 + (-s0) / (s1 * (s0 + s1)) * _slice(f, d, 2, 3))
        last = (e1 / (e2 * (e1 + e2)) * _slice(f, d, -3, -2)
                - (e1 + e2) / (e1 * e2) * _slice(f, d, -2, -1)
                + (2 * e1 + e2) / (e1 * (e1 + e2)) * _slice(f, d, -1, None))
    return _C.cat([first, center, last], d)


def gradient(input, *, spacing: Union[_Number, Sequence, None] = 1, dim: Union[int, Sequence[int], None] = None,
             edge_order: int = 1) -> Tuple:
    """The derivative of input sampled on a grid, along each of dim (default all), as a tuple:
    central differences inside, one-sided ones of edge_order (1 or 2) at the ends; spacing a
    number, one number per dim, or one coordinate tensor per dim."""
    _tensors("gradient", input=input)
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if spacing is None or isinstance(spacing, (numbers.Number, _C.TensorBase)) and (
            not isinstance(spacing, _C.TensorBase) or spacing.dim() == 0):
        n = input.dim() if dims is None else len(dims)
        steps = [1 if spacing is None else spacing] * n
        n_spacing = None
    else:
        steps = list(spacing)
        n_spacing = len(steps)
    _gradient_checks(input, n_spacing, dims, edge_order)
    wrapped = [_wrap_dim(d, input.dim()) for d in dims] if dims is not None else list(range(input.dim()))
    out = []
    for d, h in zip(wrapped, steps):
        if isinstance(h, _C.TensorBase) and h.dim() != 0:
            if h.device != input.device:
                raise RuntimeError(
                    "torch.gradient expected each tensor to be on the same device, but got devices "
                    f"{input.device} and {h.device}!")
            out.append(_gradient_coordinates(input, d, h, edge_order))
        else:
            out.append(_gradient_uniform(input, d, h.item() if isinstance(h, _C.TensorBase) else h, edge_order))
    return tuple(out)


def vander(x, N: Optional[int] = None, increasing: bool = False):
    """The Vandermonde matrix of x: its columns the powers x^(N-1) ... x^0 (increasing: x^0 first);
    integer and bool x give int64, as cumprod promotes them."""
    _tensors("vander", x=x)
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _C.promote_types(x.dtype, _C.int64)
    result = x.new_ones([x.shape[0], n], dtype=dtype)
    if n > 1:
        powers = x.unsqueeze(1).to(dtype).expand(x.shape[0], n - 1).cumprod(1)
        result = _C.cat([result[:, :1], powers], 1)
    return result if increasing else result.flip(1)
