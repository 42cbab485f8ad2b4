"""The torch.sym_* helpers and the control-flow operators torch.cond and torch.while_loop, as they
run eagerly. PyTorch's tracer gives them symbolic meaning (SymInt sizes, a graph per branch);
without one, each is the plain Python it stands for: sym_max(a, b) is max(a, b), cond calls the
branch its predicate picks, while_loop runs its body while its condition holds."""
from __future__ import annotations

import builtins
import math
from typing import Any, Callable, Iterable

from ._tensor import Tensor


def sym_int(a) -> int:
    """int(a), rounding towards zero."""
    return math.trunc(a) if isinstance(a, float) else builtins.int(a)


def sym_float(a) -> float:
    return builtins.float(a)


def sym_max(a, b):
    """The larger of a and b, a float where either is one (as PyTorch's)."""
    m = builtins.max(a, b)
    return builtins.float(m) if isinstance(a, float) or isinstance(b, float) else m


def sym_min(a, b):
    m = builtins.min(a, b)
    return builtins.float(m) if isinstance(a, float) or isinstance(b, float) else m


def sym_not(a) -> bool:
    return not a


def sym_ite(b, t, f):
    """t if b else f."""
    return t if b else f


def sym_sqrt(a) -> float:
    return math.sqrt(a)


def sym_sum(args: Iterable):
    return builtins.sum(args)


_INT64_RANGE = (-(2 ** 63), 2 ** 63 - 1)  # the bounds an unbounded side stands for, as PyTorch prints them


def _constrain(name: str, size, lo, hi) -> None:
    if isinstance(size, Tensor):
        if size.dim() != 0:
            raise TypeError(f"{name}(): argument 'size' (position 1) must be Number, not Tensor")
        size = size.item()
    if not lo <= size <= hi:
        raise RuntimeError(f"Invalid value range for {size} between [{lo}, {hi}].")


def sym_constrain_range(size, *, min=None, max=None) -> None:  # noqa: A002 - PyTorch's names
    """Checks that size lies in [min, max] (a symbolic size gets that range when traced)."""
    _constrain("sym_constrain_range", size, _INT64_RANGE[0] if min is None else min,
               _INT64_RANGE[1] if max is None else max)


def sym_constrain_range_for_size(size, *, min=None, max=None) -> None:  # noqa: A002
    """sym_constrain_range for a size: min defaults to 0."""
    _constrain("sym_constrain_range_for_size", size, 0 if min is None else min,
               _INT64_RANGE[1] if max is None else max)


def sym_fresh_size(expr):
    """expr itself: a fresh unbacked size only exists under tracing."""
    return expr


def _predicate(pred) -> bool:
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
        return builtins.bool(pred.item())
    return builtins.bool(pred)


def cond(pred, true_fn: Callable, false_fn: Callable, operands: tuple | list = ()) -> Any:
    """true_fn(*operands) if pred else false_fn(*operands); pred a bool, number or one-element
    tensor."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple that only "
                           f"consists of tensor leaves, but got {operands}.")
    return (true_fn if _predicate(pred) else false_fn)(*operands)


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: tuple | list):
    """The carried values after body_fn(*carried) replaced them while cond_fn(*carried) held."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    while _predicate(cond_fn(*carried)):
        out = body_fn(*carried)
        carried = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return carried


class _SymNodeValue:
    """A value of PyTorch's symbolic shapes: it wraps a node of the tracer's graph (`node`) and
    redirects each operation to it. minitorch traces no shapes, so no size or number it gives is
    one: `isinstance(n, SymInt)` is False for every int here, as in PyTorch's eager mode."""

    def __init__(self, node):
        self.node = node

    def __repr__(self) -> str:
        return repr(self.node)


class SymInt(_SymNodeValue):
    """Like an int, on a node of the symbolic shapes (torch.SymInt)."""


class SymFloat(_SymNodeValue):
    """Like a float, on a node of the symbolic shapes (torch.SymFloat)."""


class SymBool(_SymNodeValue):
    """Like a bool, on a node of the symbolic shapes (torch.SymBool)."""


__all__ = ["SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt", "sym_sum", "cond",
           "while_loop", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size"]
