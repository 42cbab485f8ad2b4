"""DLPack: Tensor.__dlpack__, Tensor.__dlpack_device__ and minitorch.from_dlpack, as PyTorch's.

The capsules are made and consumed in C (csrc/python/dlpack.c); this module only does the
protocol's Python half: checking the stream and making the consumer's stream wait for ours
(in C, _C_cuda.dlpack_stream_wait), picking the capsule kind from max_version, asking a
producer for the newest capsule it can make, and moving an import to the device asked for."""
from __future__ import annotations

from typing import Any

from . import _C

_KDL_CPU, _KDL_CUDA = 1, 2


def _cuda():
    from . import cuda  # not at import time: minitorch.cuda imports the package

    return cuda


def tensor_dlpack(self, *, stream: Any = -1, max_version=None, dl_device=None, copy=None):
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    is_cuda = self.device.type == "cuda"
    if is_cuda:
        current = _cuda().current_device()
        if self.device.index != current:
            raise BufferError("Can't export tensors on a different CUDA device index. "
                              f"Expected: {self.device.index}. Current device: {current}.")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if is_cuda and stream != -1:
        # None and 1: the legacy default stream; else a cudaStream_t (the per-thread default, 2,
        # is refused as PyTorch refuses it)
        stream = 1 if stream is None else stream
        if stream == 2:
            raise BufferError("per-thread default stream is not supported.")
        if stream <= 0:
            raise AssertionError(f"unsupported stream on CUDA: {stream}.")
    elif not is_cuda and stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    versioned = max_version is not None and max_version[0] >= 1
    capsule = _C._to_dlpack(self, versioned, dl_device, copy)
    if is_cuda and stream != -1:
        # after the export, so that the consumer also waits for a copy it asked for
        _cuda()._C_cuda.dlpack_stream_wait(self.device.index, stream)
    return capsule


def tensor_dlpack_device(self):
    return _C._dlpack_device(self)


def _dl_device(device) -> tuple[int, int]:
    """device (a minitorch.device or its name) as a DLPack (device_type, device_id)."""
    from ._device import device as _device

    if isinstance(device, str):
        device = _device(device)
    if not isinstance(device, _device):
        raise AssertionError(f"from_dlpack: unsupported device type: {type(device)}")
    if device.type == "cpu":
        return (_KDL_CPU, 0)
    return (_KDL_CUDA, _cuda().current_device() if device.index is None else device.index)


def _check_cuda_device(dev_id: int) -> None:
    """Memory on a device we do not have is refused now, not at its first use."""
    n = _cuda().device_count()
    if not 0 <= dev_id < n:
        _cuda()._lazy_init()  # a build or machine without CUDA says so first
        raise RuntimeError(f"CUDA error: invalid device ordinal (device cuda:{dev_id} of {n})")


def from_dlpack(ext_tensor: Any, *, device=None, copy=None):
    """A tensor sharing the memory of `ext_tensor` (any object with __dlpack__, or a DLPack
    capsule); copy=True copies, copy=False refuses to (a read-only source raises BufferError).
    device= puts it there: a copy when that is not where the memory is, unless copy=False."""
    if not hasattr(ext_tensor, "__dlpack__"):
        if device is not None or copy is not None:
            raise AssertionError("device and copy kwargs not supported when ext_tensor is already "
                                 "a DLPack capsule.")
        dev_type, dev_id = _C._dlpack_capsule_device(ext_tensor)
        if dev_type == _KDL_CUDA:
            _check_cuda_device(dev_id)
        return _C._from_dlpack_capsule(ext_tensor, None)
    ext_device = ext_tensor.__dlpack_device__()
    dev_type, dev_id = int(ext_device[0]), int(ext_device[1])
    kwargs: dict[str, Any] = {"max_version": (1, 0)}
    target = None
    if device is not None:
        target = _dl_device(device)
        if target == (dev_type, dev_id):
            kwargs["dl_device"] = target
        elif copy is False:
            raise ValueError(f"cannot move DLPack tensor from device {ext_device} to {target} "
                             "without copying. Set copy=None or copy=True.")
    moves = target is not None and "dl_device" not in kwargs
    if copy is not None and not moves:  # a move copies anyway: no need for a producer's copy
        kwargs["copy"] = copy
    if dev_type == _KDL_CUDA:
        _check_cuda_device(dev_id)
        # the producer makes our current stream wait for its work (1: the legacy default)
        s = _cuda().current_stream(dev_id).cuda_stream
        kwargs["stream"] = 1 if s == 0 else s
    # Older producers know fewer keywords: retry without the newest ones, as PyTorch does.
    capsule = None
    producer_copied = True
    for drop in ((), ("max_version",), ("copy",), ("dl_device",)):
        for k in drop:
            kwargs.pop(k, None)
        if "copy" not in kwargs:
            producer_copied = copy is None or moves
        try:
            capsule = ext_tensor.__dlpack__(**kwargs)
            break
        except TypeError:
            if drop == ("dl_device",):
                raise
    # A producer that copied already needs no second copy here.
    local_copy = None if producer_copied and copy else copy
    if dev_type == _KDL_CUDA:
        # A copy (asked for, or of a read-only capsule) is made here: dropping the shared tensor
        # runs the producer's deleter, after which its allocator may hand the memory out again
        # on its own stream, so our copy must have finished by then.
        t, copy_needed = _C._from_dlpack_capsule(capsule, local_copy, True)
        if copy_needed:
            shared, t = t, t.clone()
            _cuda().current_stream(dev_id).synchronize()
            del shared
    else:
        t = _C._from_dlpack_capsule(capsule, local_copy)
    if moves:
        from ._device import device as _device

        t = t.to(_device("cpu") if target[0] == _KDL_CPU else _device("cuda", target[1]))
    return t
