"""minitorch's own file format: tensors and containers of them, with no pickle. minitorch.save
wrote it before it wrote PyTorch's zip format (`_torch_format`); minitorch.load still reads it,
telling the two apart by their first bytes.

File format (version 2), little-endian:

    offset  size  what
    0       8     magic b"MTORCH\\x00\\x01"
    8       8     n, the byte length of the header (uint64)
    16      4     CRC-32 of the header (uint32)
    20      n     the header: UTF-8 JSON {"format": 2, "object": TREE, "storages": [STORAGE, ...],
                  "tensors": [ENTRY, ...], "data_crc32": CRC-32 of the data}
    20+n    ...   the data: each storage's bytes at STORAGE["offset"], then zero bytes up to a
                  multiple of 64, where the file ends

The header is padded with spaces so that the data starts at a multiple of 64 bytes, and each
storage's offset is a multiple of 64: every storage is aligned in the file.

STORAGE is {"dtype": "float32", "numel": elements, "offset": bytes into the data, "device":
"cuda:0"} ("device" absent: the CPU): the memory that saved tensors view, from its first element
to the last one a saved tensor reaches. ENTRY is {"storage": index into "storages",
"storage_offset": elements, "shape": [2, 3], "stride": [3, 1], "requires_grad": false,
"parameter": false}. Tensors that share memory (a view and its base, tied weights) come back as
views of one storage, and the same tensor object saved twice comes back as one object, as with
torch.save. A tensor loads on the device it was saved from, as in PyTorch, unless map_location
says where.

TREE is JSON where a tensor is {"tensor": i} (an index into "tensors"), and containers are
tagged so that they come back as they went: {"dict": [[key, TREE], ...]}, {"odict": ...}
(OrderedDict), {"list": [...]}, {"tuple": [...]}; numbers, strings, booleans and None are
themselves (dict keys may be str, int, float, bool or None).

Version 1 (still read) had no "storages": each ENTRY held a "dtype", an "offset" in bytes into
the data and a "device", and the tensor was the contiguous bytes there. Overlapping entries are
read as views of one storage, so no entry is copied twice.

Loading parses JSON and copies bytes: it runs no code from the file. It checks the magic and the
header's length before reading on, never reads more than the file holds or the header describes,
and allocates no more than that: storages may not overlap, tensors are views. Anything malformed,
truncated, out of bounds or failing a checksum raises RuntimeError naming what is wrong.
"""
from __future__ import annotations

import json
import math
import struct
import zlib
from collections import OrderedDict
from typing import Any, List, Tuple

import numpy as np

from .. import _C, from_numpy
from ._common import INT64 as _INT64, PathOrFile, Reader, StorageTable, _open, check_view, restore_location

MAGIC = b"MTORCH\x00\x01"
FORMAT = 2
_DTYPES = {"float32": _C.float32, "float64": _C.float64, "int64": _C.int64, "int32": _C.int32, "bool": _C.bool}
_PREAMBLE = 20  # magic, header length, header CRC
# The most a header may claim; larger is taken for corruption, not read into memory.
_MAX_HEADER = 1 << 30
_ALIGN = 64


def save(obj: Any, f: PathOrFile) -> None:
    """Writes obj (a tensor, or nested dict/OrderedDict/list/tuple of tensors and plain values) in
    minitorch's own format, which minitorch.save wrote before it wrote PyTorch's."""
    from .._tensor import Tensor

    entries: List[dict] = []
    memo: dict = {}  # id(tensor) -> its entry: the same object saved twice loads as one
    storages = StorageTable()

    def encode_tensor(o) -> int:
        if id(o) in memo:
            return memo[id(o)]
        t = o.detach()
        entries.append({"storage": storages.add(t), "storage_offset": t.storage_offset(), "shape": list(t.shape),
                        "stride": list(t.stride()), "requires_grad": bool(o.requires_grad),
                        "parameter": type(o).__name__ == "Parameter"})
        memo[id(o)] = len(entries) - 1
        return memo[id(o)]

    def encode(o):
        if isinstance(o, Tensor):
            return {"tensor": encode_tensor(o)}
        if o is None or isinstance(o, (bool, int, float, str)):
            if isinstance(o, float) and not np.isfinite(o):
                return {"float": repr(o)}
            return o
        if isinstance(o, (dict, OrderedDict)):
            for k in o:
                if not (k is None or isinstance(k, (bool, int, float, str))):
                    raise TypeError(f"minitorch.save: dict keys must be str, int, float, bool or None, not {type(k).__name__}")
            tag = "odict" if isinstance(o, OrderedDict) else "dict"
            return {tag: [[k, encode(v)] for k, v in o.items()]}
        if isinstance(o, (list, tuple)):
            return {"list" if isinstance(o, list) else "tuple": [encode(v) for v in o]}
        raise TypeError(f"minitorch.save cannot store an object of type {type(o).__name__} "
                        "(tensors, dicts, lists, tuples, numbers, strings and None only)")

    tree = encode(obj)
    meta, blobs, offset, data_crc = [], [], 0, 0
    for dtype, device, numel, t in storages.items():
        data = memoryview(t).tobytes()
        meta.append({"dtype": dtype, "numel": numel, "offset": offset, "device": device})
        blobs.append(data + bytes(-len(data) % _ALIGN))
        offset += len(blobs[-1])
        data_crc = zlib.crc32(blobs[-1], data_crc)
    header = json.dumps({"format": FORMAT, "object": tree, "storages": meta, "tensors": entries,
                         "data_crc32": data_crc}).encode()
    header += b" " * (-(_PREAMBLE + len(header)) % _ALIGN)
    with _open(f, "wb") as out:
        out.write(MAGIC)
        out.write(struct.pack("<QI", len(header), zlib.crc32(header)))
        out.write(header)
        for b in blobs:
            out.write(b)


def load(r: Reader, head: bytes, map_location: Any) -> Any:
    """What save wrote, read from r after its first bytes, head (which begin with MAGIC)."""
    try:
        return _load(r, head, map_location)
    except RecursionError:
        raise RuntimeError("minitorch.load: corrupt header: nested too deeply") from None


def _load(r: Reader, head: bytes, map_location: Any) -> Any:
    head = bytes(head) + r.read_upto(_PREAMBLE - len(head))
    if len(head) < _PREAMBLE:
        raise RuntimeError("minitorch.load: the file is truncated (in the preamble)")
    n, header_crc = struct.unpack("<QI", head[8:])
    if r.left is not None and n > r.left:
        raise RuntimeError(f"minitorch.load: the file is truncated (header of {n} bytes, {r.left} left)")
    if n > _MAX_HEADER:
        raise RuntimeError(f"minitorch.load: corrupt header (claims {n} bytes)")
    raw = r.read(n, "header")
    if zlib.crc32(raw) != header_crc:
        raise RuntimeError("minitorch.load: corrupt header (checksum mismatch)")
    try:
        header = json.loads(raw.decode("utf-8"))
    except ValueError as e:  # also bad UTF-8, and integers past Python's 4300-digit limit
        raise RuntimeError(f"minitorch.load: corrupt header: {e}") from None
    if not isinstance(header, dict) or type(header.get("format")) is not int or header["format"] not in (1, 2):
        raise RuntimeError("minitorch.load: unsupported or corrupt header (format)")
    entries = header.get("tensors")
    if not isinstance(entries, list):
        raise RuntimeError("minitorch.load: corrupt header: 'tensors' is not a list")
    if header["format"] == 1:
        storages, entries = _storages_of_v1(entries)
    else:
        storages = header.get("storages")
        if not isinstance(storages, list):
            raise RuntimeError("minitorch.load: corrupt header: 'storages' is not a list")
    bases = _read_storages(r, [_check_storage(s, i) for i, s in enumerate(storages)], header.get("data_crc32"))
    bases = [restore_location(b, s.get("device", "cpu"), map_location, f"minitorch.load: corrupt storage {i}")
             for i, (b, s) in enumerate(zip(bases, storages))]
    tensors = [_view(e, bases, i) for i, e in enumerate(entries)]
    return _decode(header.get("object"), tensors)


def _check_storage(s: Any, i: int) -> Tuple[np.dtype, int, int]:
    """(dtype, numel, offset in the data) of a storage entry."""
    bad = f"minitorch.load: corrupt storage {i}"
    if not isinstance(s, dict) or not isinstance(s.get("dtype"), str) or s["dtype"] not in _DTYPES:
        raise RuntimeError(f"{bad}: unknown dtype")
    numel, offset = s.get("numel"), s.get("offset")
    if type(numel) is not int or not 0 <= numel < _INT64:
        raise RuntimeError(f"{bad}: bad numel")
    if type(offset) is not int or not 0 <= offset < _INT64:
        raise RuntimeError(f"{bad}: bad offset")
    return np.dtype(s["dtype"]), numel, offset


def _read_storages(r: Reader, storages: List[Tuple[np.dtype, int, int]], data_crc: Any) -> list:
    """Each storage as a 1-D CPU tensor, read in file order. Storages may not overlap, so the
    memory allocated is at most the data's length, which is checked against the file first."""
    order = sorted((i for i, (dt, numel, _) in enumerate(storages) if numel), key=lambda i: storages[i][2])
    end = 0
    for i in order:
        dt, numel, offset = storages[i]
        if offset < end:
            raise RuntimeError(f"minitorch.load: corrupt storage {i}: it overlaps another one")
        end = offset + numel * dt.itemsize
    end += -end % _ALIGN
    if r.left is not None and end > r.left:
        raise RuntimeError(f"minitorch.load: the file is truncated (data of {end} bytes, {r.left} left)")
    bases = [_C.zeros([0], dtype=_DTYPES[dt.name]) for dt, _, _ in storages]
    crc = pos = 0
    for i in order:
        dt, numel, offset = storages[i]
        crc = zlib.crc32(r.read(offset - pos, "data"), crc)
        raw = r.read(numel * dt.itemsize, "data")
        crc = zlib.crc32(raw, crc)
        # Bools are stored as bytes; any nonzero byte is True, and kernels are given 0 or 1.
        # A copy, wrapped as it is: the tensor holds its memory alone, not the read buffer.
        bases[i] = from_numpy(np.frombuffer(raw, np.uint8) != 0 if dt == np.bool_ else np.frombuffer(raw, dt).copy())
        pos = offset + len(raw)
    crc = zlib.crc32(r.read(end - pos, "data"), crc)
    if crc != data_crc:
        raise RuntimeError("minitorch.load: corrupt or truncated data (checksum mismatch)")
    if r.read_upto(1):
        raise RuntimeError("minitorch.load: corrupt file (bytes after the end of the data)")
    return bases


def _storages_of_v1(entries: list) -> Tuple[list, list]:
    """Format 1's entries (contiguous bytes at an offset each) as format 2's storages and views.
    Entries whose bytes overlap view one storage: a file that points many entries at one block
    (which save never wrote) costs that block once, not once per entry."""
    blocks = []  # (offset, end, dtype, device, entry index) of each entry's bytes
    for i, e in enumerate(entries):
        bad = f"minitorch.load: corrupt entry for tensor {i}"
        if not isinstance(e, dict) or not isinstance(e.get("dtype"), str) or e["dtype"] not in _DTYPES:
            raise RuntimeError(f"{bad}: unknown dtype")
        shape, offset = _check_shape(e.get("shape"), bad), e.get("offset")
        if type(offset) is not int or not 0 <= offset < _INT64:
            raise RuntimeError(f"{bad}: bad offset")
        blocks.append((offset, offset + math.prod(shape) * np.dtype(e["dtype"]).itemsize, e["dtype"],
                       e.get("device", "cpu"), i))
    storages, views = [], [dict() for _ in entries]
    current, end = -1, 0  # the storage that the last non-empty block went to, and its end
    for offset, stop, dtype, device, i in sorted(blocks, key=lambda b: b[:2]):
        if offset == stop or current < 0 or offset >= end:  # empty, or past the current storage
            storages.append({"dtype": dtype, "numel": 0, "offset": offset, "device": device})
            if offset < stop:
                current, end = len(storages) - 1, stop
        k = current if offset < stop else len(storages) - 1
        s, itemsize = storages[k], np.dtype(dtype).itemsize
        if (dtype, device) != (s["dtype"], s["device"]) or (offset - s["offset"]) % itemsize:
            raise RuntimeError(f"minitorch.load: corrupt entry for tensor {i}: its bytes overlap "
                               "another tensor's of another dtype, device or alignment")
        end = max(end, stop) if offset < stop else end
        s["numel"] = max(s["numel"], (stop - s["offset"]) // itemsize)
        shape = entries[i]["shape"]
        stride = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
        views[i] = dict(entries[i], storage=k, storage_offset=(offset - s["offset"]) // itemsize, stride=stride)
    return storages, views


def _check_shape(shape: Any, bad: str) -> list:
    check_view(shape, [0] * len(shape) if isinstance(shape, list) else None, 0, 1, bad)
    return shape


def _view(e: Any, bases: list, i: int):
    """Entry i: a tensor viewing its storage's tensor in bases, with its geometry."""
    from ..nn.parameter import Parameter

    bad = f"minitorch.load: corrupt entry for tensor {i}"
    if not isinstance(e, dict) or type(e.get("storage")) is not int or not 0 <= e["storage"] < len(bases):
        raise RuntimeError(f"{bad}: bad storage")
    shape, stride, offset, base = e.get("shape"), e.get("stride"), e.get("storage_offset"), bases[e["storage"]]
    check_view(shape, stride, offset, base.numel(), bad)
    t = base.as_strided(shape, stride, offset)
    if e.get("requires_grad", e.get("parameter")) and not t.dtype.is_floating_point:
        raise RuntimeError(f"{bad}: requires_grad on a tensor of dtype {str(t.dtype).split('.')[-1]} "
                           "(only floating point tensors can require gradients)")
    if e.get("parameter"):
        return Parameter(t, requires_grad=bool(e.get("requires_grad", True)))
    if e.get("requires_grad"):
        t.requires_grad_(True)
    return t


def _decode(node: Any, tensors: list) -> Any:
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, dict) and len(node) == 1:
        (tag, value), = node.items()
        if tag == "tensor" and type(value) is int and 0 <= value < len(tensors):
            return tensors[value]
        if tag == "float" and value in ("nan", "inf", "-inf"):
            return float(value)
        if tag in ("list", "tuple") and isinstance(value, list):
            items = [_decode(v, tensors) for v in value]
            return items if tag == "list" else tuple(items)
        if tag in ("dict", "odict") and isinstance(value, list):
            out = OrderedDict() if tag == "odict" else {}
            for pair in value:
                if not (isinstance(pair, list) and len(pair) == 2) or isinstance(pair[0], (list, dict)):
                    raise RuntimeError("minitorch.load: corrupt header: bad dict item")
                out[pair[0]] = _decode(pair[1], tensors)
            return out
    raise RuntimeError(f"minitorch.load: corrupt header: unknown node {str(node)[:60]!r}")
