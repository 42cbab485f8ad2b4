"""torch.autograd.grad_mode: the grad-mode switches under their module path, and
set_multithreading_enabled. minitorch runs a backward pass on the calling thread whatever the
devices, so the multithreading switch changes nothing but is_multithreading_enabled(); it is
per thread, as PyTorch's autograd state."""
from __future__ import annotations

import functools
import threading

from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "set_multithreading_enabled"]

_state = threading.local()


def is_multithreading_enabled() -> bool:
    return getattr(_state, "multithreading", True)


class set_multithreading_enabled:
    """Sets the mode at once and back on leaving a with-block, as set_grad_enabled; as a
    decorator, the mode holds inside each call only."""

    def __init__(self, mode: bool) -> None:
        self._prev = is_multithreading_enabled()
        self._mode = bool(mode)
        _state.multithreading = self._mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _state.multithreading = self._prev

    def __call__(self, fn):
        _state.multithreading = self._prev  # decorating does not change the mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper

    def clone(self) -> "set_multithreading_enabled":
        return self.__class__(self._mode)
