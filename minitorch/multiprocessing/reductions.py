"""Tensors in shared memory, and how they cross to another process (PyTorch's
torch.multiprocessing.reductions, with its "file_descriptor" strategy).

Tensor.share_memory_() moves a CPU tensor's values into an anonymous memory file (memfd) and
swaps the tensor's data for a view of that mapping, so the tensor (a Parameter too) keeps its
identity. Pickling such a tensor for another process (multiprocessing's ForkingPickler: a spawned
or forked Process's arguments, a Queue) sends a duplicate of the file's descriptor, not the
values; the receiver maps the same file, so both processes read and write the same memory (the
Hogwild pattern: workers step one model's shared parameters). A tensor that is not shared pickles
as before (a copy of its values). The mapping lives as long as any tensor viewing it.
"""
from __future__ import annotations

import mmap
import os
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

import minitorch

# data_ptr of each shared mapping's first byte -> (descriptor, bytes): how to send it again
_shared: dict = {}


def _region(t: minitorch.Tensor):
    """(descriptor, mapping bytes, byte offset of t's first element) where t views a shared
    mapping, else None."""
    base = t.data_ptr() - t.storage_offset() * t.element_size()
    for start, (fd, nbytes) in _shared.items():
        if start <= base < start + nbytes:
            return fd, nbytes, t.data_ptr() - start
    return None


def _map_fd(fd: int, nbytes: int) -> mmap.mmap:
    return mmap.mmap(fd, max(nbytes, 1))


def share_memory_(self: minitorch.Tensor) -> minitorch.Tensor:
    """Moves the tensor's values to shared memory (a no-op for a shared or CUDA tensor)."""
    if self.device.type != "cpu" or _region(self) is not None:
        return self
    values = self.detach().contiguous().numpy()
    fd = os.memfd_create("minitorch_shared", 0)
    os.ftruncate(fd, max(values.nbytes, 1))
    buf = _map_fd(fd, values.nbytes)
    array = np.ndarray(values.shape, values.dtype, buffer=buf)
    array[...] = values
    shared = minitorch.from_numpy(array)
    if shared.numel():
        _shared[shared.data_ptr()] = (fd, values.nbytes)
    else:
        os.close(fd)
    with minitorch.no_grad():
        self.data = shared
    return self


def is_shared(self: minitorch.Tensor) -> bool:
    """Whether the tensor's values live in shared memory (CUDA tensors count, as in PyTorch)."""
    return self.device.type == "cuda" or (self.numel() > 0 and _region(self) is not None)


def rebuild_shared(fd_handle, nbytes: int, offset: int, shape: tuple, strides: tuple, dtype: str,
                   requires_grad: bool) -> minitorch.Tensor:
    """The tensor another process shared: a view of the same memory file, no copy."""
    fd = fd_handle.detach() if hasattr(fd_handle, "detach") else fd_handle
    buf = _map_fd(fd, nbytes)
    array = np.ndarray(shape, dtype, buffer=buf, offset=offset, strides=strides)
    t = minitorch.from_numpy(array)
    if t.numel():
        _shared.setdefault(t.data_ptr() - offset, (fd, nbytes))
    return t.requires_grad_() if requires_grad else t


def reduce_tensor(t: minitorch.Tensor):
    """A shared CPU tensor pickles as its memory file's descriptor; any other as its values."""
    region = _region(t) if t.device.type == "cpu" and t.numel() else None
    if region is None:
        return t.__reduce_ex__(4)
    fd, nbytes, offset = region
    size = t.element_size()
    strides = tuple(s * size for s in t.stride())
    dtype = t.detach().numpy().dtype.str
    return rebuild_shared, (DupFd(fd), nbytes, offset, tuple(t.shape), strides, dtype, t.requires_grad)


def init_reductions() -> None:
    """Registers the tensor reducer on multiprocessing's ForkingPickler (as importing
    torch.multiprocessing does)."""
    ForkingPickler.register(minitorch.Tensor, reduce_tensor)
