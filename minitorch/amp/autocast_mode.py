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


# The dtype an enabled region would compute in, per device type (PyTorch's defaults)
_DEFAULT_DTYPES = {"cpu": "bfloat16", "cuda": "float16", "ipu": "float16", "xla": "bfloat16"}


def _dtypes() -> dict:
    if not hasattr(_local, "dtypes"):
        _local.dtypes = {k: getattr(minitorch, v) for k, v in _DEFAULT_DTYPES.items()}
    return _local.dtypes


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
        self.fast_dtype = dtype if dtype is not None else get_autocast_dtype(self.device)
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if self.device == "cuda" and enabled and not minitorch.cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> None:
        switches = _switches()
        self.prev = switches.get(self.device, False)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        self.prev_cache_enabled = is_autocast_cache_enabled()
        switches[self.device] = self._enabled
        _dtypes()[self.device] = self.fast_dtype
        set_autocast_cache_enabled(self._cache_enabled)
        autocast_increment_nesting()
        if self._enabled:
            _tell_once()

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        _switches()[self.device] = self.prev
        _dtypes()[self.device] = self.prev_fastdtype
        set_autocast_cache_enabled(self.prev_cache_enabled)
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


# ---- the switches as functions (torch.set_autocast_enabled, get_autocast_dtype, ...) ----

def get_autocast_dtype(device_type: str):
    """The dtype autocast regions on device_type compute in (cpu: bfloat16, cuda: float16)."""
    return _dtypes()[_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype) -> None:
    _dtypes()[_device_type(device_type)] = dtype


def set_autocast_enabled(*args) -> None:
    """set_autocast_enabled(device_type, enabled), or set_autocast_enabled(enabled) for CUDA."""
    if len(args) == 1:
        device_type, enabled = "cuda", args[0]
    elif len(args) == 2:
        device_type, enabled = args
    else:
        raise TypeError(f"set_autocast_enabled() takes 1 or 2 positional arguments but {len(args)} were given")
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position {len(args)}) must be bool, "
                        f"not {type(enabled).__name__}")
    _switches()[_device_type(device_type)] = enabled


def is_autocast_cache_enabled() -> bool:
    """Whether casts of weights are kept for reuse inside a region (minitorch casts nothing)."""
    return getattr(_local, "cache_enabled", True)


def set_autocast_cache_enabled(enabled: bool) -> None:
    _local.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Drops the cached casts: minitorch keeps none, so there is nothing to drop."""


def autocast_increment_nesting() -> int:
    """Enters one level of autocast regions; returns the depth now."""
    _local.nesting = getattr(_local, "nesting", 0) + 1
    return _local.nesting


def autocast_decrement_nesting() -> int:
    """Leaves one level; returns the depth now (PyTorch's may go below 0, as this does)."""
    _local.nesting = getattr(_local, "nesting", 0) - 1
    return _local.nesting


def _deprecated(name: str, replacement: str) -> None:
    warnings.warn(f"torch.{name}() is deprecated. Please use torch.{replacement} instead.",
                  DeprecationWarning, stacklevel=3)


def _legacy_switches(device: str, key: str):
    """The deprecated per-device functions (is_autocast_cpu_enabled, set_autocast_gpu_dtype, ...)."""

    def is_enabled() -> bool:
        _deprecated(f"is_autocast_{key}_enabled", f"is_autocast_enabled('{device}')")
        return _switches().get(device, False)

    def set_enabled(enabled: bool) -> None:
        _deprecated(f"set_autocast_{key}_enabled", f"set_autocast_enabled('{device}', enabled)")
        _switches()[device] = bool(enabled)

    def get_dtype():
        _deprecated(f"get_autocast_{key}_dtype", f"get_autocast_dtype('{device}')")
        return _dtypes()[device]

    def set_dtype(dtype) -> None:
        _deprecated(f"set_autocast_{key}_dtype", f"set_autocast_dtype('{device}', dtype)")
        _dtypes()[device] = dtype

    out = {}
    for fn, name in ((is_enabled, f"is_autocast_{key}_enabled"), (set_enabled, f"set_autocast_{key}_enabled"),
                     (get_dtype, f"get_autocast_{key}_dtype"), (set_dtype, f"set_autocast_{key}_dtype")):
        fn.__name__ = fn.__qualname__ = name
        out[name] = fn
    return out


LEGACY = {}
for _device, _key in (("cpu", "cpu"), ("cuda", "gpu"), ("ipu", "ipu"), ("xla", "xla")):
    LEGACY.update(_legacy_switches(_device, _key))
del LEGACY["is_autocast_gpu_enabled"], LEGACY["set_autocast_gpu_enabled"]  # PyTorch has no such names
