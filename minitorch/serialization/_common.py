"""What both file formats share: opening a path or file object, reading in bounded steps, the
storages that saved tensors view, and putting a loaded storage where map_location says.

Nothing here parses a file: the formats (`_native`, `_torch_format`) do, and every check of what a
file claims lives there.
"""
from __future__ import annotations

import math
import os
import re
import stat
from typing import Any, BinaryIO, Dict, List, Optional, Tuple, Union

PathOrFile = Union[str, os.PathLike, BinaryIO]

# Reads go in steps of at most this, so memory grows with the bytes that arrive, not with what a
# length field claims (file objects allocate the whole size asked for before reading).
CHUNK = 1 << 24
INT64 = 1 << 63


class _open:
    """A path is opened and closed; a file object is used as it is."""

    def __init__(self, f: PathOrFile, mode: str) -> None:
        self.f, self.mode, self.owned = f, mode, isinstance(f, (str, os.PathLike))

    def __enter__(self) -> BinaryIO:
        if not self.owned and not hasattr(self.f, "read" if "r" in self.mode else "write"):
            raise TypeError(f"minitorch.save/load: expected a path or a binary file object, not {type(self.f).__name__}")
        self.file = open(self.f, self.mode) if self.owned else self.f
        return self.file

    def __exit__(self, *exc) -> None:
        if self.owned:
            self.file.close()


class Reader:
    """A stream read in bounded steps: never past its end where that is known (a regular file, a
    seekable stream), and never more than the stream gives where it is not (a pipe, /dev/zero)."""

    def __init__(self, src: BinaryIO) -> None:
        self.src, self.left = src, _bytes_left(src)

    def read_upto(self, n: int) -> bytearray:
        got = bytearray()
        while len(got) < n:
            chunk = self.src.read(min(n - len(got), CHUNK))
            if not chunk:
                break
            got += chunk
        if self.left is not None:
            self.left = max(self.left - len(got), 0)
        return got

    def read(self, n: int, what: str) -> bytearray:
        if self.left is not None and n > self.left:
            raise RuntimeError(f"minitorch.load: the file is truncated ({what} of {n} bytes, {self.left} left)")
        got = self.read_upto(n)
        if len(got) < n:
            raise RuntimeError(f"minitorch.load: the file is truncated ({what} of {n} bytes, {len(got)} left)")
        return got


def _bytes_left(src: BinaryIO) -> Optional[int]:
    """The bytes from src's position to its end, or None where no end is known: a device such as
    /dev/zero seeks (to 0) but never ends, and a pipe does not seek."""
    try:
        if not stat.S_ISREG(os.fstat(src.fileno()).st_mode):
            return None
    except (AttributeError, OSError, ValueError):  # no file descriptor (BytesIO): seek decides
        pass
    try:
        if not src.seekable():
            return None
        here = src.tell()
        end = src.seek(0, os.SEEK_END)
        src.seek(here)
        return max(end - here, 0)
    except (AttributeError, OSError, ValueError):
        return None


def dtype_name(dtype) -> str:
    return repr(dtype).split(".")[-1]


class StorageTable:
    """The storages that the tensors being saved view, each from its first element to the last one
    a saved tensor reaches, as saving finds them. A storage is named by its base address, dtype
    and device: live storages' memory does not overlap, except where two wrap the same memory
    (from_numpy, DLPack), which then are saved as one."""

    def __init__(self) -> None:
        # (base address, dtype, device) -> [index, a tensor reaching the end, elements]
        self.storages: Dict[Tuple[int, str, str], list] = {}

    def add(self, t, dtype: Optional[str] = None) -> int:
        """The index of the storage that t (detached) views; dtype names its elements where t's
        own dtype does not (a quantized tensor's integers: "qint8")."""
        key = (t.data_ptr() - t.storage_offset() * t.element_size(), dtype or dtype_name(t.dtype), str(t.device))
        s = self.storages.setdefault(key, [len(self.storages), t, 0])
        end = t.storage_offset() + sum((n - 1) * st for n, st in zip(t.shape, t.stride())) + 1
        if t.numel() and end > s[2]:
            # Its bytes are read through the tensor that reaches furthest: two storages may wrap
            # one NumPy array's memory, the first seen perhaps a shorter part of it.
            s[1], s[2] = t, end
        return s[0]

    def ids(self) -> List[Tuple[str, str, int]]:
        """(dtype name, device, elements) of each storage, in index order."""
        return [(dtype, device, numel) for (_, dtype, device), (_, _, numel) in self.storages.items()]

    def items(self) -> List[Tuple[str, str, int, Any]]:
        """(dtype name, device, elements, a 1-D CPU tensor over them) of each storage, in index
        order; the tensor starts at the storage's start, so storage offsets stay as they were."""
        return [(dtype, device, numel, t.as_strided([numel], [1], 0).cpu())
                for (_, dtype, device), (_, t, numel) in self.storages.items()]


def check_view(shape: Any, stride: Any, offset: Any, numel: int, bad: str) -> None:
    """That shape, stride and storage offset are lists of ints (or an int) that stay inside a
    storage of numel elements."""
    if not isinstance(shape, (list, tuple)) or len(shape) > 16 or not all(type(s) is int and 0 <= s < INT64 for s in shape):
        raise RuntimeError(f"{bad}: bad shape")
    if math.prod(s for s in shape if s) >= INT64:
        raise RuntimeError(f"{bad}: bad shape (more elements than an int64 counts)")
    if not isinstance(stride, (list, tuple)) or len(stride) != len(shape) or not all(type(s) is int and 0 <= s < INT64 for s in stride):
        raise RuntimeError(f"{bad}: bad stride")
    if type(offset) is not int or not 0 <= offset < INT64:
        raise RuntimeError(f"{bad}: bad storage offset")
    if math.prod(shape) and offset + sum((n - 1) * s for n, s in zip(shape, stride)) >= numel:
        raise RuntimeError(f"{bad}: it reaches past the end of its storage")


_DEVICE = re.compile(r"cpu|cuda:\d{1,4}")


def saved_device(location: Any, bad: str) -> str:
    """Where a storage was saved from, with PyTorch's errors where it cannot go back there."""
    if not isinstance(location, str) or not _DEVICE.fullmatch(location):
        raise RuntimeError(f"{bad}: bad device")
    if location != "cpu":
        from .. import cuda

        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                               "minitorch.cuda.is_available() is False. If you are running on a CPU-only "
                               "machine, please use minitorch.load with map_location=minitorch.device('cpu') "
                               "to map your storages to the CPU.")
        index = int(location.split(":")[1])
        if index >= cuda.device_count():
            raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but "
                               f"minitorch.cuda.device_count() is {cuda.device_count()}. Please use "
                               "minitorch.load with map_location to map your storages to an existing device.")
    return location


def restore_location(storage, location: Any, map_location: Any, bad: str):
    """storage (a 1-D CPU tensor standing for a loaded storage) moved where map_location says, as
    torch.load does: None (where it was saved from), a device or its name, a dict from saved
    locations to devices, or a callable(storage, location) whose None means the saved place."""
    from .._device import device

    if map_location is None:
        return storage.to(saved_device(location, bad))
    if isinstance(map_location, (str, device)):
        return storage.to(map_location)
    if isinstance(map_location, dict):
        target = map_location.get(location, location)
        return storage.to(saved_device(location, bad) if target is location else target)
    if callable(map_location):
        moved = map_location(storage, location)
        if moved is None:
            return storage.to(saved_device(location, bad))
        from .._tensor import Tensor

        if not isinstance(moved, Tensor) or moved.shape != storage.shape or moved.dtype != storage.dtype:
            raise RuntimeError("minitorch.load: map_location must return the storage it was given "
                               "(moved to a device) or None")
        return moved
    check_map_location(map_location)


def check_map_location(map_location: Any) -> None:
    from .._device import device

    if not (map_location is None or isinstance(map_location, (str, device, dict)) or callable(map_location)):
        raise TypeError(f"minitorch.load: map_location must be None, a string, a device, a dict or a "
                        f"callable, not {type(map_location).__name__}")
