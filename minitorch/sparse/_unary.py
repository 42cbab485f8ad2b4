"""Unary elementwise ops on sparse tensors, as PyTorch runs them: only those that map 0 to 0
(abs, sqrt, sin, tanh, relu, sign, floor, pow with a nonzero number, ...), so the result has the
same entries, with the op applied to the values. A COO tensor is coalesced first except for the
linear ones (neg, positive, conj), as PyTorch's, since f(a + b) is not f(a) + f(b): a repeated
entry must be summed before f sees it. The in-place forms (abs_, ...) change the values; on an
uncoalesced COO tensor they raise, as PyTorch's. Any other function of a sparse tensor raises
PyTorch's error for an op the sparse backend lacks (exp(0) is 1: its result would be dense).
"""
from __future__ import annotations

import numbers

from ._copy import copy_into_dense

# the zero-preserving ops PyTorch 2.13 has for each layout
COO = frozenset(
    "abs sqrt sin tanh relu sign floor ceil round trunc frac expm1 log1p asin atan sinh asinh atanh tan sgn "
    "signbit erf erfinv rad2deg deg2rad nan_to_num isnan isinf isposinf isneginf square".split())
COMPRESSED = (COO - {"nan_to_num", "square"}) | {"angle"}
LINEAR = frozenset({"neg", "negative", "positive", "conj"})  # f(a + b) = f(a) + f(b): no coalescing
ALIASES = {"negative": "neg", "absolute": "abs", "arctan": "atan", "arcsin": "asin", "arcsinh": "asinh",
           "arctanh": "atanh", "fix": "trunc"}


def backend(t) -> str:
    """The dispatch key PyTorch names in its errors for t: SparseCPU, SparseCsrCUDA, ..."""
    kind = "Sparse" if t.layout._name == "sparse_coo" else "SparseCsr"
    return kind + ("CUDA" if t.device.type == "cuda" else "CPU")


def missing(name: str, t) -> NotImplementedError:
    return NotImplementedError(f"Could not run 'aten::{name}' with arguments from the '{backend(t)}' backend. "
                               "This could be because the operator doesn't exist for this backend (minitorch's "
                               "sparse tensors run only the zero-preserving unary ops)")


def supported(name: str, t) -> bool:
    name = ALIASES.get(name, name)
    return name in LINEAR or name in (COO if t.layout._name == "sparse_coo" else COMPRESSED)


def apply(t, name: str, args: tuple, kwargs: dict):
    """t.<name>(*args, **kwargs) for a unary op (its trailing _ for the in-place form)."""
    from .._tensor import Tensor

    inplace = name.endswith("_") and not name.endswith("__")
    base = ALIASES.get(name.rstrip("_"), name.rstrip("_"))
    coo = t.layout._name == "sparse_coo"
    if base not in LINEAR and coo and not t.is_coalesced():
        if inplace:
            raise RuntimeError(f"{name} requires coalesced input")
        t = t.coalesce()
    fn = getattr(Tensor, base + ("_" if inplace else ""))
    values = fn(t._v, *args, **kwargs)
    if inplace:
        return t
    return t._scaled(values)


def power(t, exponent):
    """t ** exponent for a number exponent other than 0 (whose result would be dense)."""
    if t.layout._name != "sparse_coo":
        raise RuntimeError(f"unsupported tensor layout: {backend(t)[:-3]}")
    if not isinstance(exponent, numbers.Number):
        raise missing("pow.Tensor_Tensor", t)
    if exponent == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make the result tensor "
                           "dense")
    t = t.coalesce()
    return t._scaled(t._v.pow(exponent))


class UnaryMethods:
    """Gives a sparse class the unary ops as methods (s.sin(), s.abs_()) and as functions
    (minitorch.sin(s), through __torch_function__), and routes an operator whose other operand
    is dense (dense + s) to the sparse class's reflected method."""

    def __getattr__(self, name: str):
        from .._tensor import Tensor

        if not name.startswith("_") and supported(name.rstrip("_"), self):
            return lambda *args, **kwargs: apply(self, name, args, kwargs)
        if not name.startswith("_") and callable(getattr(Tensor, name, None)):  # a Tensor method it lacks

            def unsupported(*args, **kwargs):
                raise missing(name, self)

            return unsupported
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def pow(self, exponent):
        return power(self, exponent)

    __pow__ = pow

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        self = args[0] if args else None
        if isinstance(self, UnaryMethods):
            method = getattr(self, name, None)
            if method is not None:
                return method(*args[1:], **kwargs)
        elif name == "copy_" and len(args) >= 2 and isinstance(args[1], UnaryMethods):  # dense.copy_(sparse)
            return copy_into_dense(*args, **kwargs)
        elif name in ("add", "add_", "sub", "sub_") and len(args) == 2 and hasattr(args[1], "_added_to"):
            alpha = kwargs.get("alpha", 1) * (-1 if name.startswith("sub") else 1)  # dense.add_(sparse)
            return args[1]._added_to(self, alpha, name.endswith("_"))
        elif len(args) == 2 and isinstance(args[1], UnaryMethods):  # dense @ sparse: sparse.__rmatmul__(dense)
            reflected = getattr(type(args[1]), f"__r{name.strip('_')}__", None)
            result = NotImplemented if reflected is None else reflected(args[1], self)
            if result is not NotImplemented:
                return result
        values = [v for a in list(args) + list(kwargs.values()) for v in (a if isinstance(a, (list, tuple)) else (a,))]
        raise missing(name, next(v for v in values if isinstance(v, UnaryMethods)))
