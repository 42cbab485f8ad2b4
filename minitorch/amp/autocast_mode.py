"""autocast, as torch.amp.autocast: a context manager and decorator that turns autocasting on or
off per device type, thread by thread. The casting itself is the dispatcher's (csrc/dispatch/
autocast.c, its policy per op in autocast.def): inside an enabled region the matrix products and
convolutions run in the region's dtype (bfloat16 on the CPU, float16 on CUDA), losses and the ops
PyTorch lists in float32, cat and friends in the widest dtype of their inputs. The CPU and CUDA
switches live in C; ipu and xla, which minitorch has no devices for, only keep theirs here."""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Optional

import minitorch
from minitorch import _C

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd"]

_local = threading.local()  # .enabled, .dtypes: ipu and xla's switches, per thread
_C_DEVICES = {"cpu": 0, "cuda": 1}  # the device types the dispatcher autocasts (autocast_device in C)


def _switches() -> dict:
    if not hasattr(_local, "enabled"):
        _local.enabled = {}
    return _local.enabled


# The dtype an enabled region computes in, per device type without a C switch (PyTorch's defaults)
_DEFAULT_DTYPES = {"ipu": "float16", "xla": "bfloat16"}
# The dtypes autocast(device_type) accepts (PyTorch's get_amp_supported_dtype)
_SUPPORTED = {"cpu": ("bfloat16", "float16"), "cuda": ("float16", "bfloat16")}


def _dtypes() -> dict:
    if not hasattr(_local, "dtypes"):
        _local.dtypes = {k: getattr(minitorch, v) for k, v in _DEFAULT_DTYPES.items()}
    return _local.dtypes


def _device_type(device_type: Optional[str]) -> str:
    device_type = "cuda" if device_type is None else device_type
    return minitorch.device(device_type).type  # PyTorch's RuntimeError for an unknown device string


def _is_enabled(device: str) -> bool:
    if device in _C_DEVICES:
        return _C._autocast_state(_C_DEVICES[device])[0]
    return _switches().get(device, False)


def _set_enabled(device: str, enabled: bool) -> None:
    if device in _C_DEVICES:
        _C._set_autocast_state(_C_DEVICES[device], enabled, _C._autocast_state(_C_DEVICES[device])[1])
    else:
        _switches()[device] = enabled


def _get_dtype(device: str):
    if device in _C_DEVICES:
        return _C._autocast_state(_C_DEVICES[device])[1]
    return _dtypes()[device]


def _set_dtype(device: str, dtype) -> None:
    if device in _C_DEVICES:
        _C._set_autocast_state(_C_DEVICES[device], _C._autocast_state(_C_DEVICES[device])[0], dtype)
    else:
        _dtypes()[device] = dtype


def is_autocast_enabled(device_type: Optional[str] = None) -> bool:
    """Whether autocast is on for device_type ('cuda' when omitted, as PyTorch's) in this thread."""
    return _is_enabled(_device_type(device_type))


def is_autocast_available(device_type: str) -> bool:
    return device_type in ("cpu", "cuda")


class autocast:
    """torch.amp.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)."""

    def __init__(self, device_type: str, dtype: Optional[Any] = None, enabled: bool = True,
                 cache_enabled: Optional[bool] = None) -> None:
        _check_device_type(device_type)
        self.device = _device_type(device_type)
        self.fast_dtype = dtype if dtype is not None else get_autocast_dtype(self.device)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if self.device == "cuda" and enabled and not minitorch.cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        elif enabled and self.device in _SUPPORTED and self.device != "cuda" and \
                self.fast_dtype not in [getattr(minitorch, d) for d in _SUPPORTED[self.device]]:
            name = self.device.upper()
            supported = ", ".join(f"torch.{d}" for d in _SUPPORTED[self.device])
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. Disabling autocast.\n"
                          f"{name} Autocast only supports dtypes of {supported} currently.", stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self) -> "autocast":
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = _is_enabled(self.device)
        self.prev_fastdtype = _get_dtype(self.device)
        _set_enabled(self.device, self._enabled)
        _set_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> bool:
        # the cached casts of weights live until the outermost region ends
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        _set_enabled(self.device, self.prev)
        _set_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return decorate_autocast


def _check_device_type(device_type) -> None:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def _cast_inputs(value, device_type: str, dtype):
    """value with its floating-point tensors on device_type (float64 aside) cast to dtype, looking
    into lists, tuples and dicts as PyTorch's custom_fwd does; anything else as it is."""
    if isinstance(value, minitorch.Tensor):
        wanted = value.is_floating_point() and value.device.type == device_type and value.dtype != minitorch.float64
        return value.to(dtype) if wanted else value
    if isinstance(value, dict):
        return {k: _cast_inputs(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """torch.amp.custom_fwd: decorates an autograd.Function's forward. With cast_inputs, inside an
    enabled region, its floating-point tensor arguments are cast to that dtype and it runs with
    autocast off; without, it runs in the region as it is. Either way ctx remembers the region for
    custom_bwd."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def forward_in_region(ctx, *args, **kwargs):
        ctx._dtype = get_autocast_dtype(device_type)
        in_region = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = in_region and cast_inputs is None
        if cast_inputs is None or not in_region:
            return fwd(ctx, *args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(ctx, *_cast_inputs(args, device_type, cast_inputs),
                       **_cast_inputs(kwargs, device_type, cast_inputs))

    return forward_in_region


def custom_bwd(bwd=None, *, device_type: str):
    """torch.amp.custom_bwd: the backward runs in the autocast state its forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def backward_in_region(ctx, *args, **kwargs):
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(ctx, *args, **kwargs)

    return backward_in_region


# ---- the switches as functions (torch.set_autocast_enabled, get_autocast_dtype, ...) ----

def get_autocast_dtype(device_type: str):
    """The dtype autocast regions on device_type compute in (cpu: bfloat16, cuda: float16)."""
    return _get_dtype(_device_type(device_type))


def set_autocast_dtype(device_type: str, dtype) -> None:
    _set_dtype(_device_type(device_type), dtype)


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
    _set_enabled(_device_type(device_type), enabled)


def is_autocast_cache_enabled() -> bool:
    """Whether casts of weights are kept for reuse until the outermost region ends."""
    return _C._autocast_cache_enabled()


def set_autocast_cache_enabled(enabled: bool) -> None:
    _C._set_autocast_cache_enabled(bool(enabled))


def clear_autocast_cache() -> None:
    """Drops this thread's cached casts of weights (leaving the outermost region does)."""
    _C._clear_autocast_cache()


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
        return _is_enabled(device)

    def set_enabled(enabled: bool) -> None:
        _deprecated(f"set_autocast_{key}_enabled", f"set_autocast_enabled('{device}', enabled)")
        _set_enabled(device, bool(enabled))

    def get_dtype():
        _deprecated(f"get_autocast_{key}_dtype", f"get_autocast_dtype('{device}')")
        return _get_dtype(device)

    def set_dtype(dtype) -> None:
        _deprecated(f"set_autocast_{key}_dtype", f"set_autocast_dtype('{device}', dtype)")
        _set_dtype(device, dtype)

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
