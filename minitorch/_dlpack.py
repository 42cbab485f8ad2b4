"""DLPack: Tensor.__dlpack__, Tensor.__dlpack_device__ and minitorch.from_dlpack, as PyTorch's.

The capsules are made and consumed in C (csrc/python/dlpack.c); this module only does the
protocol's Python half: checking the stream, picking the capsule kind from max_version, and
asking a producer for the newest capsule it can make."""
from __future__ import annotations

from typing import Any

from . import _C


def tensor_dlpack(self, *, stream: Any = None, max_version=None, dl_device=None, copy=None):
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    # minitorch runs CUDA work on the default stream, synchronously with the host
    if self.device.type == "cpu" and stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    versioned = max_version is not None and max_version[0] >= 1
    return _C._to_dlpack(self, versioned, dl_device, copy)


def tensor_dlpack_device(self):
    return _C._dlpack_device(self)


def from_dlpack(ext_tensor: Any, *, device=None, copy=None):
    """A tensor sharing the memory of `ext_tensor` (any object with __dlpack__, or a DLPack
    capsule); copy=True copies, copy=False refuses to (a read-only source raises BufferError)."""
    if device is not None:
        raise NotImplementedError("minitorch.from_dlpack: device= is not supported yet")
    if not hasattr(ext_tensor, "__dlpack__"):
        return _C._from_dlpack_capsule(ext_tensor, copy)
    dev_type, _ = ext_tensor.__dlpack_device__()
    kwargs: dict[str, Any] = {"max_version": (1, 0)}
    if copy is not None:
        kwargs["copy"] = copy
    if int(dev_type) == 2:  # kDLCUDA: minitorch's CUDA work runs on the legacy default stream
        kwargs["stream"] = 1
    # Older producers know fewer keywords: retry without the newest ones, as PyTorch does.
    capsule = None
    producer_copied = True
    for drop in ((), ("max_version",), ("copy",)):
        for k in drop:
            kwargs.pop(k, None)
        if "copy" not in kwargs:
            producer_copied = copy is None
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
            break
        except TypeError:
            continue
    if capsule is None:
        capsule = ext_tensor.__dlpack__()
        producer_copied = copy is None
    # A producer that copied already needs no second copy here.
    return _C._from_dlpack_capsule(capsule, None if producer_copied and copy else copy)
