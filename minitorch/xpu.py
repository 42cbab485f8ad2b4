"""minitorch.xpu: Intel GPUs, which minitorch has no backend for. The queries scripts make before
picking a device answer as a PyTorch built without XPU does; anything else raises its error."""
from __future__ import annotations


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def _lazy_init() -> None:
    raise AssertionError("Torch not compiled with XPU enabled")


def init() -> None:
    _lazy_init()


def current_device() -> int:
    _lazy_init()
    return 0


def set_device(device) -> None:
    _lazy_init()


def synchronize(device=None) -> None:
    _lazy_init()


def manual_seed(seed: int) -> None:
    """A no-op without XPU devices, as PyTorch's."""


def manual_seed_all(seed: int) -> None:
    """A no-op without XPU devices, as PyTorch's."""
