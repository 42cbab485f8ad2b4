"""What the tensor-like classes built on one dense tensor share (sparse tensors on their values,
nested tensors on their buffer): dtype, device and autograd come from that tensor, `_v`."""
from __future__ import annotations

from . import _C

# The operators of a tensor-like class that act element by element (x + y, x * 2, -x, x == y).
DUNDERS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
           "__pow__", "__rpow__", "__neg__", "__abs__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
# The ops that act element by element: those the elementwise front end computes, and the few
# composites over them that nn.functional calls.
POINTWISE = frozenset(name for name in _C.OPS if _C._op_info(name)["front"] == "elementwise") | {
    "relu", "relu6", "dropout", "square", "rsub", "selu", "celu", "softsign", "tanhshrink", "logit", "float_power",
} | set(DUNDERS)


def install_dunders(cls, pointwise) -> None:
    """Gives cls the operators in DUNDERS as pointwise(Tensor's operator, (self, *operands), {})."""
    from ._tensor import Tensor

    def make(name: str):
        def method(self, *args):
            return pointwise(getattr(Tensor, name), (self,) + args, {})

        method.__name__ = name
        return method

    for name in DUNDERS:
        setattr(cls, name, make(name))
    cls.__hash__ = object.__hash__  # == is elementwise, so identity hashing is kept explicitly


class BackedByValues:
    """The attributes read off the dense tensor `_v` that holds the elements."""

    _v: object

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def device(self):
        return self._v.device

    @property
    def is_cuda(self) -> bool:
        return self._v.is_cuda

    @property
    def requires_grad(self) -> bool:
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._v.requires_grad = flag

    def requires_grad_(self, requires_grad: bool = True):
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._v.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._v.is_leaf


class PointwiseMethods:
    """Tensor's pointwise functions and methods (minitorch.exp(x), x.add(1), x.relu()) for a class
    whose static _pointwise(fn, args, kwargs) applies a Tensor function to its dense parts; the
    other functions it takes are in its _functions table (name -> handler(*args, **kwargs)),
    reached through __torch_function__ (minitorch/overrides.py)."""

    _pointwise = None
    _functions: dict = {}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        if name in POINTWISE:
            return cls._pointwise(func, args, kwargs)
        handler = cls._functions.get(name)
        if handler is None:
            raise NotImplementedError(f"{cls.__name__} does not support {name}")
        return handler(*args, **kwargs)

    def __getattr__(self, name: str):
        from ._tensor import Tensor

        fn = getattr(Tensor, name, None) if name in POINTWISE else None
        if fn is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return lambda *args, **kwargs: type(self)._pointwise(fn, (self,) + args, kwargs)
