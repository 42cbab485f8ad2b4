"""Tensors leave a worker through shared memory, as PyTorch's batches do: pickling a CPU tensor in
a worker process copies its values once into a new file in /dev/shm and sends only the file's
name; the receiver maps the file, unlinks it at once (the mapping lives on) and wraps the mapping
as a tensor without copying, so a batch's bytes never pass through the pipe. PyTorch stacks the
batch straight into shared memory; our stack has no out=, so the copy happens here instead.

The reducer is registered on multiprocessing's ForkingPickler in workers only (the main process
pickles as before). A file exists from the moment a worker's queue thread pickles a tensor until
the main process unpickles it; DataLoader drains its result queue when it shuts down, so files
of batches never asked for are unlinked too."""
from __future__ import annotations

import itertools
import mmap
import os
from multiprocessing.reduction import ForkingPickler

import numpy as np

import minitorch

SHM_DIR = "/dev/shm"
_names = itertools.count()


def _map(path: str, nbytes: int, create: bool) -> mmap.mmap:
    flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
    fd = os.open(path, flags, 0o600)
    try:
        if create:
            os.ftruncate(fd, nbytes)
        return mmap.mmap(fd, nbytes)
    finally:
        os.close(fd)


def rebuild_shared(name: str, shape: tuple, dtype: str, requires_grad: bool) -> minitorch.Tensor:
    """The tensor a worker put in the shared-memory file `name`, without a copy; unlinks the file."""
    path = os.path.join(SHM_DIR, name)
    try:
        buf = _map(path, int(np.prod(shape)) * np.dtype(dtype).itemsize, create=False)
    finally:
        os.unlink(path)
    t = minitorch.from_numpy(np.ndarray(shape, dtype, buffer=buf))
    return t.requires_grad_() if requires_grad else t


def reduce_tensor(t: minitorch.Tensor):
    """Pickles a CPU tensor as the name of a shared-memory file holding its values."""
    if t.device.type != "cpu" or t.numel() == 0:
        return t.__reduce_ex__(4)
    values = t.detach().numpy()
    name = f"minitorch_{os.getpid()}_{next(_names)}"
    buf = _map(os.path.join(SHM_DIR, name), values.nbytes, create=True)
    np.ndarray(values.shape, values.dtype, buffer=buf)[...] = values
    buf.close()
    return rebuild_shared, (name, values.shape, values.dtype.str, t.requires_grad)


def enable_in_worker() -> None:
    """From now on this process sends tensors through shared memory (where /dev/shm exists)."""
    if os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK):
        ForkingPickler.register(minitorch.Tensor, reduce_tensor)
