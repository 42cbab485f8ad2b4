"""minitorch.accelerator: the current accelerator, as torch.accelerator. minitorch has one kind,
CUDA; where its backend is not built there is none (current_accelerator() is None)."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

from . import cuda as _cuda
from ._device import device as _device

_NONE = "Cannot access accelerator device when none is available."


def current_accelerator(check_available: bool = False) -> Optional[_device]:
    """device('cuda') where the CUDA backend was built (and, with check_available, a device is
    usable now), else None."""
    if not _cuda.is_built() or (check_available and not _cuda.is_available()):
        return None
    return _device("cuda")


def is_available() -> bool:
    return _cuda.is_available()


def device_count() -> int:
    return _cuda.device_count()


def _require() -> None:
    if not is_available():
        raise RuntimeError(_NONE)


def current_device_index() -> int:
    _require()
    return _cuda.current_device()


def set_device_index(device: Any) -> None:
    _require()
    _cuda.set_device(device)


def synchronize(device: Any = None) -> None:
    _require()
    _cuda.synchronize(device)


@contextlib.contextmanager
def device_index(device: Optional[int]) -> Iterator[None]:
    """The block runs with `device` current (nothing changes for None), as torch.accelerator.device_index."""
    if device is None:
        yield
        return
    before = current_device_index()
    set_device_index(device)
    try:
        yield
    finally:
        set_device_index(before)


current_device_idx = current_device_index
set_device_idx = set_device_index
