"""torch.utils.dlpack: the DLPack exchange under its older names. to_dlpack gives the capsule a
consumer takes ownership of (a tensor's __dlpack__()); from_dlpack takes a capsule or any object
with __dlpack__ (a NumPy array, a CuPy or PyTorch tensor) and shares its memory."""
from __future__ import annotations

from typing import Any

from .._dlpack import from_dlpack

__all__ = ["to_dlpack", "from_dlpack"]


def to_dlpack(tensor: Any) -> Any:
    """A DLPack capsule of tensor's memory, shared, not copied."""
    return tensor.__dlpack__()
