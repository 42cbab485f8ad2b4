"""torch.masked.MaskedTensor: a tensor whose elements where `mask` is False are "not there".

A MaskedTensor holds two dense tensors of one shape: data and a boolean mask. A pointwise op
(exp, x + y, x * 2) is the op on data with the mask kept; binary ops need the same mask on
both MaskedTensor operands, as PyTorch's. A reduction is torch.masked's functional form over
the data and mask, and its result's mask says which slices had any element. Functions of
minitorch reach a MaskedTensor through __torch_function__ (minitorch/overrides.py); autograd
runs on data. Left out: sparse data, in-place ops, indexing.
"""
from __future__ import annotations

import functools

from .. import _C
from .._backed import BackedByValues, PointwiseMethods, install_dunders
from .._tensor import Tensor
from . import _ops

_SUPPORTED = ("float16", "float32", "float64", "bool", "int8", "int16", "int32", "int64")
_REDUCTIONS = ("sum", "mean", "amax", "amin", "argmax", "argmin", "prod")


def is_masked_tensor(obj) -> bool:
    return isinstance(obj, MaskedTensor)


class MaskedTensor(PointwiseMethods, BackedByValues):
    """data where mask is True; the other elements are masked out."""

    def __init__(self, data: Tensor, mask: Tensor, requires_grad: bool = False):
        if not isinstance(data, Tensor):
            raise TypeError("data must be a Tensor")
        if not isinstance(mask, Tensor):
            raise TypeError("mask must be a Tensor")
        if mask.dtype != _C.bool:
            raise TypeError("mask must have dtype bool.")
        if str(data.dtype).split(".")[-1] not in _SUPPORTED:
            raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
        if data.dim() != mask.dim():
            raise ValueError("data.dim() must equal mask.dim()")
        if tuple(data.shape) != tuple(mask.shape):
            raise ValueError("data.size() must equal mask.size()")
        self._v = data
        self._mask = mask
        if requires_grad:
            self._v.requires_grad_(True)

    # --- what it is -------------------------------------------------------------------------
    def get_data(self) -> Tensor:
        return self._v

    def get_mask(self) -> Tensor:
        return self._mask

    def to_tensor(self, value) -> Tensor:
        """The data with value in place of each masked-out element."""
        return self._v.masked_fill(~self._mask, value)

    @property
    def shape(self):
        return self._v.shape

    def size(self, dim=None):
        return self._v.size() if dim is None else self._v.size(dim)

    def dim(self) -> int:
        return self._v.dim()

    ndim = property(dim)

    def numel(self) -> int:
        return self._v.numel()

    @property
    def layout(self):
        return self._v.layout

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def grad(self):
        g = self._v.grad
        return None if g is None else MaskedTensor(g, self._mask)

    def backward(self, gradient=None, retain_graph=None, create_graph=False) -> None:
        if isinstance(gradient, MaskedTensor):
            gradient = gradient.get_data()
        self._v.backward(gradient, retain_graph=retain_graph, create_graph=create_graph)

    def detach(self) -> MaskedTensor:
        return MaskedTensor(self._v.detach(), self._mask)

    def clone(self) -> MaskedTensor:
        return MaskedTensor(self._v.clone(), self._mask.clone())

    def to(self, *args, **kwargs) -> MaskedTensor:
        data = self._v.to(*args, **kwargs)
        return MaskedTensor(data, self._mask.to(data.device))

    def __repr__(self) -> str:
        if self.dim() == 0:
            value = self._v.item()
            shown = _format(value) if self._mask.item() else "--"
            return f"MaskedTensor({shown}, {bool(self._mask.item())})"
        body = _render(self._v.tolist(), self._mask.tolist())
        return "MaskedTensor(\n" + "\n".join("  " + line for line in body.split("\n")) + "\n)"

    __str__ = __repr__


def _format(value) -> str:
    return f"{value:8.4f}" if isinstance(value, float) else str(value)


def _render(data, mask) -> str:
    """PyTorch's layout: a 1-D row `[  1.0000,       --]` (-- right-aligned to the widest cell,
    8 at least), higher dims as bracketed blocks of rows indented by two."""
    if not data or not isinstance(data[0], list):
        cells = [_format(v) for v in data]
        width = max([8 if not m else len(c) for c, m in zip(cells, mask)], default=0)
        return "[" + ", ".join(c if m else "--".rjust(width) for c, m in zip(cells, mask)) + "]"
    blocks = ["\n".join("  " + line for line in _render(d, m).split("\n")) for d, m in zip(data, mask)]
    return "[\n" + ",\n".join(blocks) + "\n]"


def _pointwise(func, args, kwargs):
    first = next(a for a in (*args, *kwargs.values()) if isinstance(a, MaskedTensor))

    def unwrap(a):
        if isinstance(a, MaskedTensor):
            if a is not first and not bool((a._mask == first._mask).all()):
                raise ValueError("Input masks must match. If you need support for this, please open an issue on "
                                 "Github.")
            return a._v
        return a

    out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    return MaskedTensor(out, first._mask) if isinstance(out, Tensor) else out


def _reduce(name, self, dim=None, keepdim=False, *, dtype=None):
    """A reduction of the unmasked elements; its mask: whether a slice had any."""
    data = getattr(_ops, name)(self, dim, keepdim=keepdim, dtype=dtype)
    if dim is None:
        mask = self._mask.any()
    else:
        mask = self._mask
        dims = [dim] if isinstance(dim, int) else list(dim)
        for d in sorted((d % max(self.dim(), 1) for d in dims), reverse=True):
            mask = mask.any(d, keepdim=bool(keepdim))
    return MaskedTensor(data, mask)


def _normalize(name, self, dim, _stacklevel=3, dtype=None):
    return MaskedTensor(getattr(_ops, name)(self, dim, dtype=dtype), self._mask)


def _install_methods() -> None:
    MaskedTensor._pointwise = staticmethod(_pointwise)
    MaskedTensor._functions = {name: functools.partial(_reduce, name) for name in _REDUCTIONS}
    MaskedTensor._functions.update({name: functools.partial(_normalize, name)
                                    for name in ("softmax", "log_softmax", "softmin")})
    install_dunders(MaskedTensor, _pointwise)
    for name in _REDUCTIONS:
        setattr(MaskedTensor, name, lambda self, dim=None, keepdim=False, *, dtype=None, _n=name: _reduce(
            _n, self, dim, keepdim, dtype=dtype))
    for name in ("softmax", "log_softmax"):
        setattr(MaskedTensor, name, lambda self, dim, dtype=None, _n=name: _normalize(_n, self, dim, dtype=dtype))


_install_methods()


def masked_tensor(data: Tensor, mask: Tensor, requires_grad: bool = False) -> MaskedTensor:
    """A MaskedTensor of a copy of data (a new leaf, which requires grad if asked)."""
    if not isinstance(data, Tensor):
        raise TypeError("data must be a Tensor")
    return MaskedTensor(data.detach().clone(), mask.clone() if isinstance(mask, Tensor) else mask, requires_grad)


def as_masked_tensor(data: Tensor, mask: Tensor) -> MaskedTensor:
    """A MaskedTensor of data itself, keeping its autograd history."""
    return MaskedTensor(data, mask)
