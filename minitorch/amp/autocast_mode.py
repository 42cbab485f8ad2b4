"""autocast, as torch.amp.autocast: a context manager and decorator that turns autocasting on or
off per device type, thread by thread. minitorch has no float16/bfloat16 yet, so an enabled
region runs every op in its own dtype (PyTorch's results, less the speed), and says so once."""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Optional

import minitorch

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_local = threading.local()  # .enabled: device type -> bool, this thread's autocast switches
_told = False


def _switches() -> dict:
    if not hasattr(_local, "enabled"):
        _local.enabled = {}
    return _local.enabled


def _device_type(device_type: Optional[str]) -> str:
    device_type = "cuda" if device_type is None else device_type
    return minitorch.device(device_type).type  # PyTorch's RuntimeError for an unknown device string


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    """Whether autocast is on for device_type ('cuda' when omitted, as PyTorch's) in this thread."""
    return _switches().get(_device_type(device_type), False)


def is_autocast_available(device_type: str) -> bool:
    return device_type in ("cpu", "cuda")


def _tell_once() -> None:
    global _told
    if not _told:
        _told = True
        warnings.warn("minitorch.autocast: minitorch has no float16/bfloat16 yet; ops inside autocast run in "
                      "their own dtype", stacklevel=3)


class autocast:
    """torch.amp.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)."""

    def __init__(self, device_type: str, dtype: Optional[Any] = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device_type(device_type)
        self.fast_dtype = dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if self.device == "cuda" and enabled and not minitorch.cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> None:
        switches = _switches()
        self.prev = switches.get(self.device, False)
        switches[self.device] = self._enabled
        if self._enabled:
            _tell_once()

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        _switches()[self.device] = self.prev
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """torch.amp.custom_fwd: nothing to cast in minitorch, so the forward is returned as it is."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str):
    """torch.amp.custom_bwd: returned as it is."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
