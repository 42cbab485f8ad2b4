"""torch.version: the versions this build of minitorch reports.

`cuda` is the CUDA runtime's version ("12.8") where the CUDA backend links a CUDA runtime, and
None otherwise, as on PyTorch's CPU builds (the emulated device of MINITORCH_CUDA_EMU=1 builds
has no CUDA runtime, so it is None there too)."""
from __future__ import annotations

import ctypes
from typing import Optional

from . import __version__ as _package_version

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = _package_version
debug = False
git_version = "Unknown"
hip: Optional[str] = None
rocm: Optional[str] = None
xpu: Optional[str] = None


def _cuda_runtime_version() -> Optional[str]:
    """cudaRuntimeGetVersion() of the runtime _C_cuda is linked with, as "major.minor"."""
    from . import cuda as _cuda

    lib = _cuda._C_cuda
    if lib is None or getattr(lib, "emulated", False):
        return None
    try:
        get_version = ctypes.CDLL(lib.__file__).cudaRuntimeGetVersion  # found in its dependencies
    except (OSError, AttributeError):
        return None
    number = ctypes.c_int(0)
    if get_version(ctypes.byref(number)) != 0 or number.value <= 0:
        return None
    return f"{number.value // 1000}.{number.value % 1000 // 10}"


cuda: Optional[str] = _cuda_runtime_version()
