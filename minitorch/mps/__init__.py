"""torch.mps, as PyTorch has it on a machine without Apple's Metal (MPS) backend, which minitorch
never has: device_count() is 0 and is_available() False, manual_seed is a no-op, and every call
that needs the device raises PyTorch's "Cannot execute ... without MPS backend." RuntimeError, so
device-agnostic programs take the branch they take under PyTorch on Linux."""
from __future__ import annotations

import os

from . import profiler
from .event import Event

__all__ = ["compile_shader", "load_metallib", "device_count", "get_rng_state", "manual_seed", "seed",
           "set_rng_state", "synchronize", "empty_cache", "set_per_process_memory_fraction",
           "current_allocated_memory", "driver_allocated_memory", "Event", "profiler", "recommended_max_memory",
           "is_available"]


def _no_backend(call: str) -> RuntimeError:
    return RuntimeError(f"Cannot execute {call}() without MPS backend.")


def device_count() -> int:
    """The number of MPS devices: none."""
    return 0


def is_available() -> bool:
    return device_count() > 0


def synchronize() -> None:
    raise _no_backend("deviceSynchronize")


def get_rng_state(device="mps"):
    raise _no_backend("getDefaultGenerator")


def set_rng_state(new_state, device="mps") -> None:
    raise _no_backend("getDefaultGenerator")


def manual_seed(seed: int) -> None:
    """Without the MPS backend there is no generator to seed: nothing happens (as PyTorch's)."""
    return None


def seed() -> None:
    raise _no_backend("getDefaultGenerator")


def empty_cache() -> None:
    raise _no_backend("emptyCache")


def set_per_process_memory_fraction(fraction) -> None:
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 2:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~2")
    raise _no_backend("setMemoryFraction")


def current_allocated_memory() -> int:
    raise _no_backend("getCurrentAllocatedMemory")


def driver_allocated_memory() -> int:
    raise _no_backend("getDriverAllocatedMemory")


def recommended_max_memory() -> int:
    raise _no_backend("getRecommendedMaxMemory")


def compile_shader(source: str):
    raise RuntimeError("MPS is not available")


def load_metallib(source):
    if isinstance(source, (bytes, bytearray, str, os.PathLike)):
        raise RuntimeError("MPS is not available")
    raise TypeError(f"expected bytes or path, got {type(source).__name__}")
