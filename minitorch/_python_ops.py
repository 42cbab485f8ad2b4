"""The functions written in Python that are PyTorch ops of their own (its CompositeExplicitAutograd
ones, and those its Python binding calls whole): the factories new_zeros, new_ones, new_empty,
new_full, zeros_like, ones_like, empty_like, full_like, rand_like, randn_like; allclose, equal;
unsafe_split. While a TorchDispatchMode is on, or an argument's class has a __torch_dispatch__, each
reaches it whole, as the OpOverload PyTorch sends (aten.new_zeros.default), with the arguments
PyTorch's binding boxes (a size as a list, trailing defaults left out, the factories' options given
and pin_memory=False); a factory's requires_grad= stays the binding's, applied to the result.
Otherwise the function just runs, and this module costs one check.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_NEW = "(Tensor self, SymInt[] size, {fill}*, " + _OPTIONS + ") -> Tensor"
_LIKE = "(Tensor self, {fill}*, " + _OPTIONS + ", MemoryFormat? memory_format=None) -> Tensor"
# name -> (overload, signature), as PyTorch's schemas
SCHEMAS = {
    **{name: ("default", _NEW.format(fill="")) for name in ("new_empty", "new_zeros", "new_ones")},
    "new_full": ("default", _NEW.format(fill="Scalar fill_value, ")),
    **{name: ("default", _LIKE.format(fill=""))
       for name in ("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like")},
    "full_like": ("default", _LIKE.format(fill="Scalar fill_value, ")),
    "allclose": ("default",
                 "(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool"),
    "equal": ("default", "(Tensor self, Tensor other) -> bool"),
    "unsafe_split": ("Tensor", "(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"),
}

_pd: Any = None
_overloads: Dict[str, Any] = {}


def wanted(*tensors) -> bool:
    """Whether a call with these tensor arguments goes to __torch_dispatch__: a mode is on, or
    the class of one has one."""
    global _pd
    if _pd is None:
        from .utils import _python_dispatch

        _pd = _python_dispatch
    return bool(_pd._stack.modes) or bool(_pd._overloaded(tensors, {}))


def trimmed(args: tuple, defaults: tuple) -> tuple:
    """args without the trailing ones that equal their defaults (the last len(defaults) params')."""
    n = len(args)
    while defaults and n > len(args) - len(defaults):
        given, default = args[n - 1], defaults[n - 1 - (len(args) - len(defaults))]
        if type(given) is not type(default) or given != default:
            break
        n -= 1
    return args[:n]


def options(dtype=None, device=None, memory_format=None) -> dict:
    """The keyword arguments PyTorch's binding boxes: those given, in the schema's order, and
    pin_memory=False."""
    kwargs = {"dtype": dtype} if dtype is not None else {}
    if device is not None:
        kwargs["device"] = device
    kwargs["pin_memory"] = False
    if memory_format is not None:
        kwargs["memory_format"] = memory_format
    return kwargs


def dispatch(name: str, impl: Callable, args: tuple, kwargs: dict, requires_grad: bool = False):
    """aten.<name>.<overload>(*args, **kwargs) through __torch_dispatch__, impl running it; then a
    factory's requires_grad as the binding sets it."""
    func = _overloads.get(name)
    if func is None:
        from ._ops import OpOverload

        overload, signature = SCHEMAS[name]
        qualified = name if overload == "default" else f"{name}.{overload}"
        func = _overloads[name] = OpOverload("aten", name, overload, impl, f"aten::{qualified}{signature}")
    out = _pd._dispatch_func(func, args, kwargs)
    return out.requires_grad_(True) if requires_grad else out
