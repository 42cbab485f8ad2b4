"""torch.overrides: the __torch_function__ protocol's helpers, for classes that stand in for
tensors and for functions written to accept them.

An op of the C core called with an argument it cannot take, where that argument (or an element
of a list argument) is a tensor-like object (its class defines __torch_function__ and is not a
Tensor), hands the call to that class's __torch_function__ with the public function
(minitorch.mean, or Tensor.mean for a method), as PyTorch's ops do: _handle_op below, reached only
from a call that failed to convert, so calls with tensors pay nothing for it. A Tensor subclass
that defines __torch_function__ gets minitorch's ops as they are (its instances convert). These
helpers let Python code written against PyTorch's protocol (a function that calls
has_torch_function / handle_torch_function) run with minitorch unchanged.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Iterable, List, Set

import minitorch

__all__ = ["get_ignored_functions", "handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic", "is_tensor_like", "is_tensor_method_or_property",
           "wrap_torch_function"]

# The top-level functions that take no tensor to dispatch on (factories, global switches),
# as PyTorch lists them among its ignored functions.
_IGNORED = (
    "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "scalar_tensor", "zeros", "ones", "empty",
    "empty_strided", "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
    "normal", "rand_like", "randn_like", "tril_indices", "triu_indices", "hamming_window", "hann_window",
    "bartlett_window", "blackman_window", "kaiser_window", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "get_default_dtype", "set_default_device", "get_default_device",
    "is_tensor", "is_storage", "typename", "set_grad_enabled", "is_grad_enabled", "is_inference_mode_enabled",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "set_printoptions",
    "promote_types", "can_cast", "result_type", "set_num_threads", "get_num_threads", "load", "save", "compile",
)


def _overrides(arg: Any) -> bool:
    """Whether arg's class takes part in the protocol (minitorch.Tensor itself defines no
    __torch_function__, so a plain tensor never does)."""
    return hasattr(type(arg), "__torch_function__")


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether any of relevant_args has a __torch_function__ to dispatch to."""
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    return _overrides(arg)


def has_torch_function_variadic(*args: Any) -> bool:
    return any(_overrides(a) for a in args)


def _dispatch_order(relevant_args: Iterable[Any]) -> List[Any]:
    """One argument per overriding class, in the order they come, except that a subclass goes
    before its base classes (their __torch_function__ is tried first)."""
    chosen: List[Any] = []
    for arg in relevant_args:
        cls = type(arg)
        if not _overrides(arg) or any(type(c) is cls for c in chosen):
            continue
        spot = next((i for i, c in enumerate(chosen) if issubclass(cls, type(c))), len(chosen))
        chosen.insert(spot, arg)
    return chosen


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
    """Calls the __torch_function__ of the overriding arguments' classes, subclasses first, with
    (public_api, types, args, kwargs); the first result other than NotImplemented is returned."""
    chosen = _dispatch_order(relevant_args)
    result = _first_answer(chosen, public_api, args, kwargs)
    if result is not NotImplemented:
        return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in chosen]}")


def _first_answer(chosen: List[Any], public_api: Callable, args: tuple, kwargs: dict) -> Any:
    """The first result other than NotImplemented of the chosen arguments' __torch_function__,
    or NotImplemented."""
    classes = tuple(type(a) for a in chosen)
    for arg in chosen:
        method = type(arg).__torch_function__
        if not isinstance(type(arg).__dict__.get("__torch_function__", classmethod(method)), classmethod):
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and will be an error "
                          "in future, please define it as a classmethod.", DeprecationWarning, stacklevel=3)
            method = functools.partial(method, arg)
        result = method(public_api, classes, args, kwargs)
        if result is not NotImplemented:
            return result
    return NotImplemented


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """A decorator: the function hands its call to handle_torch_function when one of the
    arguments dispatcher(*args, **kwargs) returns overrides it."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return decorate


def is_tensor_like(inp: Any) -> bool:
    """A minitorch.Tensor, or an object whose class has __torch_function__."""
    return type(inp) is minitorch.Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether func is a method of Tensor or the getter of one of its properties."""
    members = [v for cls in minitorch.Tensor.__mro__ for v in vars(cls).values()]
    return func in members or getattr(func, "__name__", None) == "__get__"


def get_ignored_functions() -> Set[Callable]:
    """The top-level functions that never dispatch to __torch_function__."""
    return {getattr(minitorch, n) for n in _IGNORED if hasattr(minitorch, n)}


def _relevant(values: Iterable[Any]) -> List[Any]:
    """The tensor-like values among values and the elements of list and tuple values."""
    found = []
    for v in values:
        for item in (v if isinstance(v, (list, tuple)) else (v,)):
            if not isinstance(item, minitorch.Tensor) and _overrides(item):
                found.append(item)
    return found


def _handle_op(name: str, is_method: bool, args: tuple, kwargs: dict) -> Any:
    """The call of the C core's op `name` (a Tensor method when is_method) that did not convert,
    handed to its tensor-like arguments' __torch_function__ (csrc/python/args.c)."""
    public = getattr(minitorch.Tensor, name, None) if is_method else getattr(minitorch, name, None)
    if public is None:
        public = getattr(minitorch._C, name)
    chosen = _dispatch_order(_relevant(list(args) + list(kwargs.values())))
    result = _first_answer(chosen, public, args, kwargs)
    if result is not NotImplemented:
        return result
    handlers = "".join(f"  - tensor subclass {type(a)}\n" for a in chosen)
    what = f"Tensor.{name}" if is_method else f"minitorch.{name}"
    raise TypeError(f"Multiple dispatch failed for '{what}'; all __torch_function__ handlers returned "
                    f"NotImplemented:\n\n{handlers}")
