"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode.

The flag is thread-local state in the C dispatcher (_C._set_grad_enabled), which the autograd
key will read; each class works as a context manager and as a decorator, as in PyTorch.
"""
from __future__ import annotations

import functools
import threading

from . import _C

is_grad_enabled = _C.is_grad_enabled


class _GradModeContext:
    _enabled: bool

    def __enter__(self) -> None:
        self._prev = _C.is_grad_enabled()
        _C._set_grad_enabled(self._enabled)

    def __exit__(self, *exc) -> None:
        _C._set_grad_enabled(self._prev)

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__.__new__(self.__class__)._clone(self):
                return fn(*args, **kwargs)

        return wrapper

    def _clone(self, other):
        self._enabled = other._enabled
        return self


class no_grad(_GradModeContext):
    """Disables gradient recording inside the block."""

    def __init__(self) -> None:
        self._enabled = False


class enable_grad(_GradModeContext):
    """Enables gradient recording inside the block."""

    def __init__(self) -> None:
        self._enabled = True


class set_grad_enabled(_GradModeContext):
    """Sets gradient recording on or off: at once, and back on leaving a with-block."""

    def __init__(self, mode: bool) -> None:
        self._prev = _C.is_grad_enabled()
        self._enabled = bool(mode)
        _C._set_grad_enabled(self._enabled)

    def __enter__(self) -> None:
        pass


_inference = threading.local()  # .on: whether this thread is inside an enabled inference_mode


def is_inference_mode_enabled() -> bool:
    """Whether this thread runs inside inference_mode() (grad recording is off there as well)."""
    return getattr(_inference, "on", False)


class inference_mode(_GradModeContext):
    """As no_grad (minitorch has no separate inference tensors), and is_inference_mode_enabled()
    says so inside; inference_mode(False) turns it off in a block."""

    def __init__(self, mode: bool = True) -> None:
        self._enabled = not mode

    def __enter__(self) -> None:
        super().__enter__()
        self._prev_inference = is_inference_mode_enabled()
        _inference.on = not self._enabled

    def __exit__(self, *exc) -> None:
        _inference.on = self._prev_inference
        super().__exit__(*exc)


for _cls in (no_grad, enable_grad, set_grad_enabled, inference_mode):
    _cls.__module__ = "minitorch.autograd.grad_mode"  # PyTorch's public home of them, which re-exports them
