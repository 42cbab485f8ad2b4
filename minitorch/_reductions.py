"""max and min: PyTorch's three overloads in one name.

`max(input)` is the full reduction, `max(input, dim, keepdim=False)` gives the named tuple
(values, indices) along a dim, and `max(input, other)` is `maximum`. The op table has one op per
overload (max, max_dim, maximum); this module only picks which one a call means.
"""
from __future__ import annotations

from . import _C

_SIGNATURES = (" * (Tensor input, *, Tensor out = None)\n * (Tensor input, Tensor other, *, Tensor out = None)\n"
               " * (Tensor input, int dim, bool keepdim = False, *, tuple of Tensors out = None)")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _pick(name, full, along, pairwise):
    def overloaded(input=None, *args, **kwargs):
        if not isinstance(input, _C.TensorBase):
            got = "()" if input is None else f"({type(input).__name__}, ...)"
            raise TypeError(f"{name}() received an invalid combination of arguments - got {got}, "
                            f"but expected one of:\n{_SIGNATURES}")
        if not args and set(kwargs) <= {"out"}:
            return full(input, **kwargs)
        dim = args[0] if args else kwargs.get("dim", kwargs.get("axis", kwargs.get("other")))
        rest = args[1:]
        if isinstance(dim, _C.TensorBase) and not rest and set(kwargs) <= {"other", "out"}:
            return pairwise(input, dim, out=kwargs.get("out"))
        if _is_int(dim) and len(rest) <= 1 and set(kwargs) <= {"dim", "axis", "keepdim", "keepdims", "out"}:
            return along(input, *args, **kwargs)  # the op binds dim/axis, keepdim/keepdims, out
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {got}), "
                        f"but expected one of:\n{_SIGNATURES}")

    overloaded.__name__ = overloaded.__qualname__ = name
    overloaded.__doc__ = (f"{name}(input) -> Tensor; {name}(input, dim, keepdim=False) -> "
                          f"(values, indices); {name}(input, other) -> Tensor; each with out=")
    return overloaded


max = _pick("max", _C.max, _C.max_dim, _C.maximum)  # noqa: A001
min = _pick("min", _C.min, _C.min_dim, _C.minimum)  # noqa: A001
