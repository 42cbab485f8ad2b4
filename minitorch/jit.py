"""minitorch.jit: TorchScript's entry points where they are harmless in eager mode. script and
trace return what they were given (the eager model computes the same), the decorators leave
functions alone; saving or loading TorchScript archives is not supported."""
from __future__ import annotations

from typing import Any, Callable, Optional


def script(obj: Any, optimize: Optional[bool] = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    return obj


def trace(func: Any, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Returns func itself: runs the eager function rather than a recording of one call (so it
    also follows data-dependent control flow, which a real trace would freeze)."""
    return func


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    return fn


def export(fn: Callable) -> Callable:
    return fn


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def _not_supported(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("minitorch.jit: TorchScript archives are not supported (minitorch runs eagerly); "
                              "save a state_dict with minitorch.save instead")


save = load = _not_supported
