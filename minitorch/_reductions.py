"""max and min: PyTorch's three overloads in one name.

`max(input)` is the full reduction, `max(input, dim, keepdim=False)` gives the named tuple
(values, indices) along a dim, and `max(input, other)` is `maximum`. The op table has one op per
overload (max, max_dim, maximum); this module only picks which one a call means.
"""
from __future__ import annotations

from . import _C

_SIGNATURES = (" * (Tensor input)\n * (Tensor input, Tensor other)\n"
               " * (Tensor input, int dim, bool keepdim = False)")


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _pick(name, full, along, pairwise):
    def overloaded(input=None, *args, **kwargs):
        if not isinstance(input, _C.TensorBase):
            got = "()" if input is None else f"({type(input).__name__}, ...)"
            raise TypeError(f"{name}() received an invalid combination of arguments - got {got}, "
                            f"but expected one of:\n{_SIGNATURES}")
        if not args and not kwargs:
            return full(input)
        dim = args[0] if args else kwargs.get("dim", kwargs.get("other"))
        rest = args[1:]
        if isinstance(dim, _C.TensorBase) and not rest and set(kwargs) <= {"other"}:
            return pairwise(input, dim)
        if _is_int(dim) and len(rest) <= 1 and set(kwargs) <= ({"dim", "keepdim"} - ({"dim"} if args else set())):
            keepdim = rest[0] if rest else kwargs.get("keepdim", False)
            return along(input, dim, keepdim)
        got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, {got}), "
                        f"but expected one of:\n{_SIGNATURES}")

    overloaded.__name__ = overloaded.__qualname__ = name
    overloaded.__doc__ = (f"{name}(input) -> Tensor; {name}(input, dim, keepdim=False) -> "
                          f"(values, indices); {name}(input, other) -> Tensor")
    return overloaded


max = _pick("max", _C.max, _C.max_dim, _C.maximum)  # noqa: A001
min = _pick("min", _C.min, _C.min_dim, _C.minimum)  # noqa: A001
