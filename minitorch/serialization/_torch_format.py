"""PyTorch's checkpoint format, written and read: the zip archive of torch.save.

    archive/data.pkl                 the object, pickled (protocol 2); a tensor is a call of
                                     torch._utils._rebuild_tensor_v2 on a persistent id
                                     ('storage', torch.FloatStorage, key, location, numel)
    archive/.format_version          b"1"
    archive/.storage_alignment       b"64": every record's data starts at a multiple of 64 bytes
    archive/byteorder                b"little" (or b"big"): the byte order of the storages
    archive/data/<key>               the bytes of storage <key>, numel elements
    archive/version                  b"3\\n"
    archive/.data/serialization_id   an identifier of this save

Records are stored, not compressed. PyTorch's reader takes the archive's name from its first
record, so "archive" may be any name. Writing needs no torch: the pickler writes PyTorch's globals
by name. Reading checks the archive with the zipfile module, reads each record once, never
more bytes than the file holds in all, and unpickles with `_unpickler`'s allow-list.
"""
from __future__ import annotations

import io
import os
import pickle
import struct
import sys
import uuid
import zipfile
from collections import OrderedDict
from typing import Any, BinaryIO, Optional, Tuple

import numpy as np

from ._common import StorageTable, restore_location
from ._unpickler import Q_STORAGE_NAMES, STORAGE_NAMES, LoadedStorage, StorageType, unpickle

_ALIGN = 64
_FB_PADDING = 0x4246  # the extra field ("FB") with which PyTorch's writer aligns record data


class _Global:
    """A global of PyTorch's (torch._utils._rebuild_tensor_v2, torch.FloatStorage, torch.float32),
    written into the pickle by its name: minitorch never imports torch."""

    _made: dict = {}

    def __new__(cls, module: str, name: str) -> "_Global":
        # One object per name, so that the pickle's memo writes each name once, as torch.save does.
        if (module, name) not in cls._made:
            g = cls._made[(module, name)] = super().__new__(cls)
            g.module, g.name = module, name
        return cls._made[(module, name)]

    def __call__(self, *args: Any) -> Any:  # pickle's save_reduce wants a callable
        raise TypeError(f"{self.module}.{self.name} is written into a pickle, not called")


def _write_global(pickler: pickle._Pickler, g: _Global) -> None:
    pickler.write(pickle.GLOBAL + f"{g.module}\n{g.name}\n".encode())
    pickler.memoize(g)


def _write_dtype(pickler: pickle._Pickler, dtype: Any) -> None:
    # through save: a dtype saved twice (two quantized layers' dtype entries) refers to the memo
    pickler.save(_Global("torch", str(dtype).split(".")[-1]))


class _StorageRef:
    """A storage as the pickle names it: persistent_id writes its id."""

    def __init__(self, index: int) -> None:
        self.index = index


class _TorchPickler(pickle._Pickler):
    """Pickles as torch.save does: a tensor as _rebuild_tensor_v2 over a persistent storage id, a
    Parameter as _rebuild_parameter, dtypes, devices and sizes as PyTorch's, the rest as pickle does.
    Python's pickler (not the C one) is used: only it lets a global be written by name."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file: BinaryIO, protocol: int, storages: StorageTable, ids: Optional[list] = None) -> None:
        super().__init__(file, protocol)
        self.storages, self.refs, self.ids = storages, {}, ids
        from .. import Size, Tensor, device, dtype
        from ..nn.parameter import Parameter

        self.Size, self.Tensor, self.device, self.Parameter = Size, Tensor, device, Parameter
        self.dispatch = dict(self.dispatch)
        self.dispatch[dtype] = _write_dtype
        from .._qtensor import QTensor, QuantizedDtype, qscheme

        self.QTensor = QTensor
        self.dispatch[QuantizedDtype] = _write_dtype
        self.dispatch[qscheme] = _write_dtype
        _add_packed_writers(self.dispatch)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, self.QTensor):
            return self._qtensor(obj)
        if isinstance(obj, self.Tensor) and getattr(type(obj), "_saved_by_reduce", False):
            return obj.__reduce_ex__(self.proto)  # a subclass that says how (DTensor: its local tensor)
        if isinstance(obj, self.Tensor):
            state = dict(getattr(obj, "__dict__", {}))  # attributes a user set, saved as PyTorch saves them
            if isinstance(obj, self.Parameter):
                if state:
                    return (_Global("torch._utils", "_rebuild_parameter_with_state"),
                            (obj.detach(), obj.requires_grad, OrderedDict(), state))
                return _Global("torch._utils", "_rebuild_parameter"), (obj.detach(), obj.requires_grad, OrderedDict())
            t = obj.detach()
            index = self.storages.add(t)
            ref = self.refs.setdefault(index, _StorageRef(index))
            args = (ref, t.storage_offset(), tuple(t.shape), tuple(t.stride()), obj.requires_grad, OrderedDict())
            if state:
                return (_Global("torch._tensor", "_rebuild_from_type_v2"),
                        (_Global("torch._utils", "_rebuild_tensor_v2"), _Global("torch", "Tensor"), args, state))
            return _Global("torch._utils", "_rebuild_tensor_v2"), args
        if isinstance(obj, self.device):
            return _Global("torch", "device"), (obj.type,) if obj.index is None else (obj.type, obj.index)
        if isinstance(obj, self.Size):
            return _Global("torch", "Size"), (tuple(obj),)
        return NotImplemented

    def _qtensor(self, q: Any) -> Any:
        """A quantized tensor as torch.save writes it: _rebuild_qtensor over a QInt8Storage (or
        QUInt8Storage, QInt32Storage) of its integers, with its quantizer's parameters."""
        ir = q._ir
        index = self.storages.add(ir, q.dtype.name)
        ref = self.refs.setdefault(index, _StorageRef(index))
        scheme = _Global("torch", q.qscheme().name)
        if q._axis is None:
            params = (scheme, q.q_scale(), q.q_zero_point())
        else:
            params = (scheme, q._scales, q._zero_points, q._axis)
        args = (ref, ir.storage_offset(), tuple(ir.shape), tuple(ir.stride()), params, False, OrderedDict())
        return _Global("torch._utils", "_rebuild_qtensor"), args

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not _StorageRef:
            return None
        dtype, device, numel = self.ids[obj.index] if self.ids else ("float32", "cpu", 0)
        name = STORAGE_NAMES.get(dtype) or Q_STORAGE_NAMES[dtype]
        return ("storage", _Global("torch", name), str(obj.index), device, numel)


_TorchPickler.dispatch[_Global] = _write_global


def _write_script_object(pickler: pickle._Pickler, state: Any, obj: Any) -> None:
    """obj as PyTorch pickles its TorchScript classes (packed quantized weights): a
    torch.ScriptObject made empty (NEWOBJ) and given (state, class name) by BUILD."""
    pickler.save(_Global("torch", "ScriptObject"))
    pickler.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
    pickler.memoize(obj)
    pickler.save(state)
    pickler.write(pickle.BUILD)


def _add_packed_writers(dispatch: dict) -> None:
    from ..ao.nn.quantized._packed import LinearPacked
    from ..ao.nn.quantized.dynamic.modules.rnn import CellParams

    dispatch[LinearPacked] = lambda p, obj: _write_script_object(
        p, (obj.unpack(), "__torch__.torch.classes.quantized.LinearPackedParamsBase"), obj)
    dispatch[CellParams] = lambda p, obj: _write_script_object(
        p, (obj.__getstate__(), "__torch__.torch.classes.rnn.CellParamsBase"), obj)


class _Sink:
    def write(self, b: bytes) -> int:
        return len(b)


def pickled(obj: Any, protocol: int, pickler: type = _TorchPickler) -> Tuple[bytes, list]:
    """obj's pickle, and the storages its tensors view (StorageTable.items()), as torch.save makes them."""
    storages = StorageTable()
    # A first pass finds every storage and how far the saved tensors reach into it, which its
    # persistent id states; the second writes the pickle.
    pickler(_Sink(), protocol, storages).dump(obj)
    pkl = io.BytesIO()
    pickler(pkl, protocol, storages, storages.ids()).dump(obj)
    return pkl.getvalue(), storages.items()


def write(f: BinaryIO, pkl: bytes, storages: list, byteorder_record: bool = True) -> None:
    """The zip archive of torch.save, from what pickled gave, into the open binary file f."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        _write_record(z, "archive/data.pkl", pkl)
        _write_record(z, "archive/.format_version", b"1")
        _write_record(z, "archive/.storage_alignment", str(_ALIGN).encode())
        if byteorder_record:
            _write_record(z, "archive/byteorder", sys.byteorder.encode())
        for i, (_, _, _, t) in enumerate(storages):
            _write_record(z, f"archive/data/{i}", storage_bytes(t))
        _write_record(z, "archive/version", b"3\n")
        _write_record(z, "archive/.data/serialization_id", str(uuid.uuid4().int).zfill(40).encode())


def _write_record(z: zipfile.ZipFile, name: str, data: Any) -> None:
    """A stored record whose data starts at a multiple of _ALIGN bytes, padded as PyTorch pads."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    zip64 = len(data) >= zipfile.ZIP64_LIMIT * 0.9
    header = 30 + len(name.encode()) + 4 + (20 if zip64 else 0)  # the local header, our extra field's head
    pad = -(z.fp.tell() + header) % _ALIGN
    info.extra = struct.pack("<HH", _FB_PADDING, pad) + b"Z" * pad
    with z.open(info, "w", force_zip64=zip64) as out:
        out.write(data)


def _bad(what: str) -> RuntimeError:
    return RuntimeError(f"minitorch.load: corrupt checkpoint: {what}")


class _Archive:
    """The records of a zip checkpoint, each read at most once, all together no more bytes than
    the file holds: records that overlap in the file (a zip bomb) cannot multiply them."""

    def __init__(self, src: BinaryIO, size: int) -> None:
        try:
            self.zip = zipfile.ZipFile(src)
            names = self.zip.namelist()
        except Exception as e:  # BadZipFile, EOFError, struct.error, ...: all mean a malformed zip
            raise _bad(f"not a readable zip archive ({type(e).__name__}: {e})") from None
        if not names or "/" not in names[0]:
            raise _bad("the zip archive holds no records under a folder")
        self.prefix, self.names, self.left = names[0].split("/")[0] + "/", set(names), size

    def has(self, name: str) -> bool:
        return self.prefix + name in self.names

    def read(self, name: str, limit: Optional[int] = None) -> bytes:
        full = self.prefix + name
        try:
            info = self.zip.getinfo(full)
        except KeyError:
            raise _bad(f"the archive has no record {full}") from None
        if info.compress_type != zipfile.ZIP_STORED or info.compress_size != info.file_size:
            raise _bad(f"record {full} is compressed (torch.save stores its records)")
        if info.file_size > self.left or (limit is not None and info.file_size > limit):
            raise _bad(f"record {full} claims {info.file_size} bytes, more than the file holds")
        self.left -= info.file_size
        try:
            with self.zip.open(info) as r:
                data = r.read()
        except Exception as e:  # a bad local header, a CRC mismatch, a truncated file
            raise _bad(f"record {full}: {type(e).__name__}: {e}") from None
        if len(data) != info.file_size:
            raise _bad(f"record {full} is truncated")
        return data


def open_archive(src: BinaryIO) -> _Archive:
    """The zip checkpoint src (an open, seekable binary file at its first byte), which holds data.pkl."""
    try:
        here = src.tell()
        size = src.seek(0, os.SEEK_END) - here
        src.seek(here)
    except (AttributeError, OSError, ValueError):
        raise RuntimeError("minitorch.load: a zip checkpoint must be read from a seekable file") from None
    archive = _Archive(src, size)
    if not archive.has("data.pkl"):
        if archive.has("constants.pkl") or archive.has("code/"):
            raise RuntimeError("minitorch.load: this is a TorchScript archive (torch.jit.save), which minitorch cannot load")
        raise _bad("no data.pkl record (not written by torch.save)")
    return archive


def is_torchscript(src: BinaryIO) -> bool:
    """Whether the zip archive src (left at the position it was) holds a constants.pkl record,
    as torch.jit.save's do (PyTorch's _is_torchscript_zip)."""
    here = src.tell()
    try:
        names = zipfile.ZipFile(src).namelist()
    except Exception:  # not a readable zip: load says why
        return False
    finally:
        src.seek(here)
    return any(n.count("/") == 1 and n.endswith("/constants.pkl") for n in names)


def load(src: BinaryIO, map_location: Any, weights_only: bool, encoding: str = "utf-8", record: str = "data.pkl",
         folder: str = "data") -> Any:
    """The object in the zip checkpoint src (an open, seekable binary file at its first byte):
    record's pickle, its storages in folder/ (a TorchScript archive's constants.pkl: constants/)."""
    archive = open_archive(src)
    byteorder = archive.read("byteorder", limit=16).decode("ascii", "replace") if archive.has("byteorder") else "little"
    if byteorder not in ("little", "big"):
        raise _bad(f"unknown byte order {byteorder!r}")
    loaded: dict = {}

    def persistent_load(pid: Any) -> LoadedStorage:
        if type(pid) is not tuple or len(pid) != 5 or ascii_str(pid[0]) != "storage":
            raise _bad("a persistent id that is not a storage's")
        _, stype, key, location, numel = pid
        key, location = ascii_str(key), ascii_str(location)
        if not isinstance(stype, StorageType) or not isinstance(key, str) or type(numel) is not int or numel < 0:
            raise _bad("a bad storage id")
        if key in loaded:
            if loaded[key].stype.dtype_name != stype.dtype_name:
                raise RuntimeError(f"minitorch.load: storage {key} is viewed as both {loaded[key].stype} and "
                                   f"{stype}; minitorch cannot view one storage as two dtypes")
            return loaded[key]
        if numel * stype.itemsize > archive.left:
            raise _bad(f"storage {key} claims {numel} elements, more than the file holds")
        raw = archive.read(f"{folder}/{key}")
        if len(raw) != numel * stype.itemsize:
            raise _bad(f"storage {key} holds {len(raw)} bytes, not {numel} elements of {stype.dtype_name}")
        loaded[key] = LoadedStorage(_storage_tensor(raw, stype, byteorder, location, map_location, key), stype)
        return loaded[key]

    return unpickle(archive.read(record), persistent_load, weights_only, encoding)


def _storage_tensor(raw: bytes, stype: StorageType, byteorder: str, location: Any, map_location: Any, key: str):
    """A storage's bytes as a 1-D tensor of its dtype, on the device map_location says."""
    storage = host_tensor(raw, stype, byteorder == "little")
    if not location or not isinstance(location, str):
        raise _bad(f"storage {key} has no location")
    return restore_location(storage, location, map_location, f"minitorch.load: storage {key}")


def storage_bytes(t) -> memoryview:
    """A storage tensor's bytes; bfloat16, which no buffer format names, as the int16 words."""
    from .. import bfloat16, int16

    return memoryview(t.view(int16) if t.dtype == bfloat16 else t).cast("B")


def host_array(raw: bytes, stype: StorageType, little: bool) -> np.ndarray:
    """A storage's bytes as a 1-D array of its dtype in this machine's byte order: a copy."""
    if stype.dtype_name == "bool":
        return np.frombuffer(raw, np.uint8) != 0  # kernels are given 0 or 1, whatever the byte
    name = "int16" if stype.dtype_name == "bfloat16" else stype.dtype_name  # its words; see host_tensor
    array = np.frombuffer(raw, np.dtype(name).newbyteorder("<" if little else ">"))
    return array.astype(array.dtype.newbyteorder("="), copy=True)


def host_tensor(raw: bytes, stype: StorageType, little: bool):
    """A storage's bytes as a 1-D CPU tensor, over a copy that it alone holds (wrapped as it is:
    _C.tensor(array) copies element by element, far slower)."""
    from .. import bfloat16, from_numpy

    t = from_numpy(host_array(raw, stype, little))
    return t.view(bfloat16) if stype.dtype_name == "bfloat16" else t


def ascii_str(v: Any) -> Any:
    """A persistent id's string, which Python 2's torch.save wrote as bytes."""
    return v.decode("ascii", "replace") if isinstance(v, bytes) else v
