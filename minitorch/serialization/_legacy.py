"""PyTorch's legacy format (torch.save(..., _use_new_zipfile_serialization=False)), written and read.

The file is pickles one after another, then the storages' bytes:

    pickle  0x1950a86a20f9469cfc6c       the magic number
    pickle  1001                         the protocol version
    pickle  {"protocol_version": 1001, "little_endian": True, "type_sizes": {...}}
    pickle  the object; a storage is the persistent id
            ('storage', torch.FloatStorage, key, location, numel, None)
    pickle  [key, ...]                   the storages in the order their bytes follow
    then, for each key: numel as an int64, then the storage's bytes

Every pickle is read with the same rules as the zip format's (`_unpickler`), and each is first
walked to its end so that it is unpickled from its own bounded bytes. A storage is allocated when
the object's pickle names it, before its bytes come, so the sum of the storages' sizes is checked
against the bytes left in the file first.
"""
from __future__ import annotations

import os
import pickle
import pickletools
import struct
import sys
from typing import Any, BinaryIO

import numpy as np

from .. import from_numpy
from ._common import restore_location
from ._torch_format import _TorchPickler, ascii_str, host_array, storage_bytes
from ._unpickler import LoadedStorage, StorageType, unpickle

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
_SYS_INFO = {"protocol_version": PROTOCOL_VERSION, "little_endian": sys.byteorder == "little",
             "type_sizes": {"short": 2, "int": 4, "long": 4}}


class LegacyPickler(_TorchPickler):
    def persistent_id(self, obj: Any) -> Any:
        pid = super().persistent_id(obj)
        return None if pid is None else pid + (None,)


def write(f: BinaryIO, pkl: bytes, storages: list, pickle_protocol: int = 2) -> None:
    """The legacy file, from what _torch_format.pickled gave with _LegacyPickler, into f."""
    for value in (MAGIC_NUMBER, PROTOCOL_VERSION, _SYS_INFO):
        pickle.dump(value, f, protocol=pickle_protocol)
    f.write(pkl)
    pickle.dump([str(i) for i in range(len(storages))], f, protocol=pickle_protocol)
    for _, _, numel, t in storages:
        f.write(struct.pack("=q", numel))
        f.write(storage_bytes(t))


class _Bounded:
    """src for pickletools.genops, whose reads of a length the file states are cut at the file's
    end (a file object allocates the whole length asked for before it reads)."""

    def __init__(self, src: BinaryIO, end: int) -> None:
        self.src, self.end = src, end
        self.tell, self.readline = src.tell, src.readline

    def read(self, n: int) -> bytes:
        return self.src.read(max(min(n, self.end - self.src.tell()), 0))


def _next_pickle(src: BinaryIO, end: int) -> bytes:
    """The bytes of the pickle that starts at src's position, src left after it."""
    start = src.tell()
    try:
        for _ in pickletools.genops(_Bounded(src, end)):
            pass
    except Exception as e:  # ValueError, struct.error, ...: a malformed or truncated pickle
        raise RuntimeError(f"minitorch.load: corrupt legacy checkpoint: {e}") from None
    stop = src.tell()
    src.seek(start)
    return src.read(stop - start)


def _no_storage(pid: Any) -> Any:
    raise RuntimeError("minitorch.load: corrupt legacy checkpoint: a storage in its header")


def load(src: BinaryIO, map_location: Any, weights_only: bool, encoding: str = "utf-8") -> Any:
    """The object in the legacy checkpoint src (an open, seekable binary file at its first byte)."""
    here = src.tell()
    end = src.seek(0, os.SEEK_END)
    src.seek(here)

    def next_object(persistent_load: Any = _no_storage) -> Any:
        return unpickle(_next_pickle(src, end), persistent_load, weights_only, encoding)

    if next_object() != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    version = next_object()
    if version != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {version!r:.100}")
    sys_info = next_object()
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    storages: dict = {}
    hosts: dict = {}  # key -> (the NumPy array its bytes go to, the CPU tensor over it)
    budget = [end - src.tell()]  # the bytes left for the storages

    def persistent_load(pid: Any) -> LoadedStorage:
        if type(pid) is not tuple or len(pid) != 6 or ascii_str(pid[0]) != "storage":
            raise RuntimeError("minitorch.load: corrupt legacy checkpoint: a persistent id that is not a storage's")
        _, stype, key, location, numel, view = pid
        key, location = ascii_str(key), ascii_str(location)
        if not isinstance(stype, StorageType) or not isinstance(key, str) or type(numel) is not int or numel < 0:
            raise RuntimeError("minitorch.load: corrupt legacy checkpoint: a bad storage id")
        if view is not None:
            raise RuntimeError("minitorch.load: the file holds storage views (PyTorch before 1.0), which minitorch does not read")
        if key in storages:
            if storages[key].stype.dtype_name != stype.dtype_name:
                raise RuntimeError(f"minitorch.load: storage {key} is viewed as two dtypes, which minitorch cannot do")
            return storages[key]
        budget[0] -= numel * stype.itemsize
        if budget[0] < 0:
            raise RuntimeError(f"minitorch.load: corrupt legacy checkpoint: storage {key} claims more bytes than the file holds")
        # Its bytes come after this pickle: the views made now are of memory filled then.
        host = np.zeros(numel, np.dtype(stype.dtype_name))
        hosts[key] = host, from_numpy(host)
        storages[key] = LoadedStorage(restore_location(hosts[key][1], location, map_location,
                                                       f"minitorch.load: storage {key}"), stype)
        return storages[key]

    result = next_object(persistent_load)
    keys = next_object()
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys) or sorted(keys) != sorted(storages):
        raise RuntimeError("minitorch.load: corrupt legacy checkpoint: the list of storages does not match the object")
    for key in keys:
        s = storages[key]
        head = src.read(8)
        if len(head) != 8 or struct.unpack("<q" if little else ">q", head)[0] != s.tensor.numel():
            raise RuntimeError(f"minitorch.load: corrupt legacy checkpoint: storage {key} has the wrong size")
        raw = src.read(s.tensor.numel() * s.stype.itemsize)
        if len(raw) != s.tensor.numel() * s.stype.itemsize:
            raise RuntimeError(f"minitorch.load: the file is truncated (in storage {key})")
        host, cpu = hosts[key]
        host[:] = host_array(raw, s.stype, little)
        if s.tensor.data_ptr() != cpu.data_ptr():  # map_location moved it: the bytes follow
            s.tensor.copy_(cpu)
    return result
