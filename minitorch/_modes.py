"""Process-wide switches and queries of the top-level API: deterministic algorithms and their debug
mode, warn-always, flush-denormal, typename, get_device and the build's has_* flags.

The deterministic switch goes to the dispatcher (dispatch/deterministic.c): the ops PyTorch
documents as having no deterministic implementation raise its RuntimeError (or warn, under
warn_only) where minitorch has them, mostly on CUDA tensors, and empty() fills its memory while
utils.deterministic.fill_uninitialized_memory is on too.
"""
from __future__ import annotations

from typing import Any

from . import _C

_deterministic = {"enabled": False, "warn_only": False, "fill": True}
_warn_always = False

_DEBUG_MODES = ("default", "warn", "error")  # index = the mode's number


def _expect_bool(fname: str, name: str, value: Any, position: str = "") -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{fname}(): argument '{name}'{position} must be bool, not {type(value).__name__}")


def _push_deterministic() -> None:
    """The switches as they are now, to the dispatcher."""
    d = _deterministic
    _C._set_deterministic(d["enabled"], d["warn_only"], d["enabled"] and d["fill"])


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ops without a deterministic implementation raise (warn, with warn_only) while mode is
    True, and empty() memory is filled (see the module's note)."""
    _expect_bool("_set_deterministic_algorithms", "mode", mode, " (position 1)")
    _expect_bool("_set_deterministic_algorithms", "warn_only", warn_only)
    _deterministic["enabled"] = mode
    _deterministic["warn_only"] = warn_only
    _push_deterministic()


def _alert_not_deterministic(caller: str) -> None:
    """For the ops of PyTorch's list written in Python (max_unpool, put_): PyTorch's RuntimeError
    under use_deterministic_algorithms(True), its UserWarning under warn_only (the dispatcher's
    alerts, dispatch/deterministic.c, say the same for the C ops)."""
    if not _deterministic["enabled"]:
        return
    if _deterministic["warn_only"]:
        import warnings

        warnings.warn(f"{caller} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
                      "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic "
                      "support for this operation.", UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{caller} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this "
                       "operation, or you can use the 'warn_only=True' option, if that's acceptable for your "
                       "application. You can also file an issue at https://github.com/pytorch/pytorch/issues to "
                       "help us prioritize adding deterministic support for this operation.")


def are_deterministic_algorithms_enabled() -> bool:
    return _deterministic["enabled"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _deterministic["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    """0 or "default": off; 1 or "warn": on, warn only; 2 or "error": on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                               f"but got {debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif not isinstance(debug_mode, int) or isinstance(debug_mode, bool):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _deterministic["enabled"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


def set_warn_always(b: bool, /) -> None:
    """Whether warnings PyTorch gives once per process are given every time (a flag programs set
    and read; minitorch's own once-only warnings are few)."""
    global _warn_always
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _warn_always = b


def is_warn_always_enabled() -> bool:
    return _warn_always


def set_flush_denormal(mode: bool) -> bool:
    """Whether denormal floats could be flushed to zero: False, minitorch does not switch the CPU's
    FTZ/DAZ modes, which PyTorch's answer allows for (it returns False where unsupported)."""
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return False


def typename(obj: Any, /) -> str:
    """A tensor's legacy type name ('minitorch.FloatTensor'); else the object's module-qualified
    name, or its class's name when it has none of its own."""
    if isinstance(obj, _C.TensorBase):
        return obj.type()
    module = getattr(obj, "__module__", None)
    prefix = f"{module}." if module not in (None, "builtins", "__builtin__") else ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return prefix + (name if isinstance(name, str) else type(obj).__name__)


def get_device(input) -> int:
    """input.get_device(): the CUDA device index, -1 on the CPU."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"get_device(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.get_device()


def compiled_with_cxx11_abi() -> bool:
    """True, as PyTorch's builds: minitorch's extensions are C, with no C++ ABI of their own to
    disagree with a C++ extension built against the new one."""
    return True


# What the build has (PyTorch's has_* flags): LAPACK-style factorizations (in C, over OpenBLAS),
# FFTs, OpenMP threads (backends.openmp.is_available()); no MKL.
has_lapack = True
has_spectral = True
has_openmp = True
has_mkl = False


def is_vulkan_available() -> bool:
    """False: minitorch has no Vulkan backend."""
    return False


def init_num_threads() -> None:
    """Sets up this thread's intra-op thread pool, as PyTorch's: minitorch's starts on first use."""
    return None


def get_device_module(device: Any = None):
    """The module of a device's type (minitorch.cuda for 'cuda:1'); with no device, the current
    accelerator's, or minitorch.cpu where there is none."""
    import minitorch

    if isinstance(device, minitorch.device):
        kind = device.type
    elif isinstance(device, str):
        kind = minitorch.device(device).type
    elif device is None:
        acc = minitorch.accelerator.current_accelerator()
        kind = "cpu" if acc is None else acc.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    module = getattr(minitorch, kind, None)
    if module is None:
        raise RuntimeError(f"Device '{kind}' does not have a corresponding module registered as 'minitorch.{kind}'.")
    return module
