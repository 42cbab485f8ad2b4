"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode.

The flag is thread-local state in the C dispatcher (_C._set_grad_enabled), which the autograd
key will read; each class works as a context manager and as a decorator, as in PyTorch.
"""
from __future__ import annotations

import functools

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
    """Enables gradient recording inside the block; a decorator with or without the call."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)  # @enable_grad without parentheses, as PyTorch's

    def __init__(self, orig_func=None) -> None:
        self._enabled = True


class set_grad_enabled(_GradModeContext):
    """Sets gradient recording on or off: at once, and back on leaving a with-block."""

    def __init__(self, mode: bool) -> None:
        self._prev = _C.is_grad_enabled()
        self._enabled = bool(mode)
        _C._set_grad_enabled(self._enabled)

    def __enter__(self) -> None:
        pass


is_inference_mode_enabled = _C.is_inference_mode_enabled  # thread-local, in the C core


class inference_mode(_GradModeContext):
    """Inference mode: grad recording off, and every tensor made inside (but a view of a tensor
    made outside) an inference tensor, which outside the mode cannot be updated in place, saved
    for backward or made to require grad (PyTorch's rules). inference_mode(False) turns it off in
    a block; as a decorator, with or without the call."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # @inference_mode without parentheses: mode is the function

    def __init__(self, mode: bool = True) -> None:
        self._mode = bool(mode)
        self._enabled = not mode

    def __enter__(self) -> None:
        self._prev_inference = _C.is_inference_mode_enabled()
        self._prev = _C.is_grad_enabled()
        _C._set_inference_mode(self._mode)
        _C._set_grad_enabled(self._enabled)  # as PyTorch's: inference_mode(False) turns grad on

    def __exit__(self, *exc) -> None:
        _C._set_inference_mode(self._prev_inference)
        _C._set_grad_enabled(self._prev)

    def _clone(self, other):
        self._mode = other._mode
        self._enabled = other._enabled
        return self


for _cls in (no_grad, enable_grad, set_grad_enabled, inference_mode):
    _cls.__module__ = "minitorch.autograd.grad_mode"  # PyTorch's public home of them, which re-exports them
