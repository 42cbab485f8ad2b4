"""minitorch.cuda: the CUDA devices, as torch.cuda.

The CUDA backend is a second extension, minitorch._C_cuda, built only where a CUDA toolkit was
found. Importing minitorch never fails for its sake: without it (or without a driver or a GPU)
is_available() is False, _unavailable_reason() says why, and asking for a CUDA tensor raises
PyTorch's error (AssertionError "... not compiled with CUDA enabled" on a build without CUDA,
RuntimeError with CUDA's own message where the backend is built but no device is usable).
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Optional

from .. import _C

# MINITORCH_CUDA_EMU=1: the backend over the emulated CUDA device (cuda/emu/: the GPU's work runs
# on the CPU), to test the backend where there is no GPU. It stands in for _C_cuda everywhere.
_EMULATED = os.environ.get("MINITORCH_CUDA_EMU") == "1"
_MODULE = "minitorch._C_cuda_emu" if _EMULATED else "minitorch._C_cuda"

try:
    # import_module, not `from .. import`: a module that was not built must raise
    # ModuleNotFoundError naming it, not "cannot import name ... partially initialized module"
    _C_cuda: Any = importlib.import_module(_MODULE)
    _load_error: Optional[str] = None
except ImportError as e:  # not built (ModuleNotFoundError), or its libraries failed to load
    _C_cuda = None
    _load_error = None if isinstance(e, ModuleNotFoundError) and e.name == _MODULE else str(e)


class OutOfMemoryError(RuntimeError):
    """Raised when a CUDA allocation fails, as torch.cuda.OutOfMemoryError."""


_C._set_oom_error(OutOfMemoryError)

_NOT_COMPILED = "minitorch not compiled with CUDA enabled"


def _unavailable_reason() -> Optional[str]:
    """Why CUDA cannot be used (CUDA's error string, or why the backend did not load), or None."""
    if _C_cuda is None:
        if _load_error is not None:
            return f"{_MODULE} failed to load: {_load_error}"
        if _EMULATED:
            return ("MINITORCH_CUDA_EMU=1 asks for the emulated CUDA device, but minitorch was built without "
                    "it: build it with MINITORCH_CUDA_EMU=1 make build (make test does), or "
                    "MINITORCH_CUDA_EMU=1 pip install . in a checkout")
        return ("minitorch was built without CUDA (no CUDA toolkit and NVIDIA driver were found, or "
                "MINITORCH_CUDA=0); to see the CUDA backend run without a GPU, build the emulated device "
                "(MINITORCH_CUDA_EMU=1 make build) and run with MINITORCH_CUDA_EMU=1")
    return _C_cuda.unavailable_reason()


def _is_emulated() -> bool:
    """Whether the CUDA devices are the emulated ones (MINITORCH_CUDA_EMU=1): the backend's code
    runs, but on the CPU; nothing else (PyTorch, CuPy) can reach their memory."""
    return _C_cuda is not None and bool(getattr(_C_cuda, "emulated", 0))


def _emu_sync_count() -> int:
    """How many times the host has waited for the emulated device so far: each
    cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize and blocking device to host
    cudaMemcpy (the emulated runtime counts them; tests take differences). Only with
    MINITORCH_CUDA_EMU=1: a real GPU's runtime does not count."""
    if not _is_emulated():
        raise RuntimeError("_emu_sync_count needs the emulated CUDA device (MINITORCH_CUDA_EMU=1)")
    return int(_C_cuda.emu_sync_count())


def is_available() -> bool:
    """Whether a CUDA device can be used."""
    return _C_cuda is not None and _C_cuda.device_count() > 0


def is_built() -> bool:
    """Whether minitorch has its CUDA backend (torch.backends.cuda.is_built)."""
    return _C_cuda is not None


def device_count() -> int:
    """The number of usable CUDA devices; 0 where there is none, as in PyTorch."""
    return _C_cuda.device_count() if _C_cuda is not None else 0


def _lazy_init() -> None:
    if _C_cuda is None:
        raise AssertionError(_NOT_COMPILED)
    reason = _C_cuda.unavailable_reason()
    if reason is not None:
        raise RuntimeError(reason)


def _index(device: Any) -> int:
    from .._device import device as _device

    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return current_device() if d.index is None else d.index


def current_device() -> int:
    """The index of the calling thread's current device."""
    _lazy_init()
    return _C_cuda.current_device()


def set_device(device: Any) -> None:
    """Makes device the current one; a negative index does nothing, as in PyTorch."""
    idx = _index(device) if device is not None else -1
    if idx >= 0:
        _lazy_init()
        _C_cuda.set_device(idx)


class device:
    """Context manager that makes `device` the current one and restores the previous one on exit,
    as torch.cuda.device; None or a negative index does nothing."""

    def __init__(self, device: Any) -> None:
        self.idx = -1 if device is None else _index(device)
        self.prev_idx = -1

    def __enter__(self) -> None:
        if self.idx < 0:
            return
        self.prev_idx = current_device()
        if self.prev_idx != self.idx:
            _C_cuda.set_device(self.idx)

    def __exit__(self, *exc: Any) -> bool:
        if self.idx >= 0 and self.prev_idx != self.idx:
            _C_cuda.set_device(self.prev_idx)
        return False


class device_of(device):
    """device(tensor's device) for a CUDA tensor; does nothing for a CPU tensor (torch.cuda.device_of)."""

    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def synchronize(device: Any = None) -> None:
    """Waits for every kernel on device (default: the current one) to finish."""
    _lazy_init()
    _sync_debug.on_synchronize()
    _C_cuda.synchronize(_index(device))


def get_device_name(device: Any = None) -> str:
    """The device's name, as cudaGetDeviceProperties reports it ("NVIDIA H200")."""
    _lazy_init()
    return _C_cuda.get_device_name(_index(device))


class _CudaDeviceProperties:
    """What cudaGetDeviceProperties says of a device (the fields torch's scripts read most)."""

    def __init__(self, name: str, total_memory: int, major: int, minor: int, multi_processor_count: int) -> None:
        self.name = name
        self.total_memory = total_memory
        self.major = major
        self.minor = minor
        self.multi_processor_count = multi_processor_count

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    """The device's name, total_memory (bytes), compute capability (major, minor) and
    multi_processor_count."""
    _lazy_init()
    idx = _index(device)
    if idx < 0 or idx >= device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(*_C_cuda.get_device_properties(idx))


def get_device_capability(device: Any = None) -> tuple:
    """The device's compute capability, (major, minor)."""
    prop = get_device_properties(device)
    return prop.major, prop.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device computes in bfloat16: natively from compute capability 8.0, else
    (including_emulation) as minitorch's kernels do for every small dtype, in float32."""
    if not is_available():
        return False
    return get_device_properties(current_device()).major >= 8 or including_emulation


def is_tf32_supported() -> bool:
    """Whether the current device has TensorFloat-32 (those with native bfloat16)."""
    return is_bf16_supported(including_emulation=False)


def init() -> None:
    """Initialises CUDA now (it otherwise waits for the first use): raises where none is usable."""
    _lazy_init()


def is_initialized() -> bool:
    """Whether CUDA has been initialised (a device made current), as torch.cuda.is_initialized."""
    return _C_cuda is not None and _C_cuda.is_initialized()


from .memory import *  # noqa: E402,F401,F403  (they use the functions above)
from .memory import __all__ as _memory_all  # noqa: E402
from .streams import *  # noqa: E402,F401,F403
from .streams import __all__ as _streams_all  # noqa: E402
from .random import *  # noqa: E402,F401,F403
from .random import __all__ as _random_all  # noqa: E402
from .._legacy import CUDA_TYPES as _CUDA_TYPES  # noqa: E402

globals().update(_CUDA_TYPES)  # cuda.FloatTensor ... (legacy constructors and isinstance checks)

__all__ = ["OutOfMemoryError", "current_device", "device", "device_count", "device_of", "get_device_name", "is_available",
           "is_initialized", "set_device", "synchronize", "get_device_properties", "get_device_capability",
           "is_bf16_supported", "is_tf32_supported", "init"] + _memory_all + _streams_all + _random_all


def __getattr__(name: str) -> Any:
    """default_generators: each device's default Generator (none without CUDA), made on first use."""
    if name == "default_generators":
        return tuple(_C._cuda_default_generator(i) for i in range(device_count()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
from . import amp  # noqa: E402  (torch.cuda.amp; deprecated in PyTorch)
from . import _sync_debug  # noqa: E402
from ._sync_debug import get_sync_debug_mode, set_sync_debug_mode  # noqa: E402


def get_arch_list() -> list:
    """The architectures the CUDA backend's kernels were built for ("sm_90", ...): [] where CUDA is
    not available, as PyTorch. minitorch's build keeps no list of them, so the device's own
    architecture is given, which a working backend was necessarily built for (or JIT-compiled
    from PTX to)."""
    if not is_available():
        return []
    major, minor = get_device_capability()
    return [f"sm_{major}{minor}"]


__all__ += ["get_arch_list", "get_sync_debug_mode", "set_sync_debug_mode"]
from . import nvtx  # noqa: E402
