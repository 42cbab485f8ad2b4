"""minitorch.cpu, as torch.cpu: the CPU device module's queries, and cpu.amp."""
from . import amp

__all__ = ["amp", "current_device", "device_count", "is_available", "synchronize"]


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """CPU work is finished when the call returns: nothing to wait for."""
