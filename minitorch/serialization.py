"""minitorch.save / minitorch.load: tensors and containers of them, with no pickle.

File format (version 1), little-endian:

    offset  size  what
    0       8     magic b"MTORCH\\x00\\x01"
    8       8     n, the byte length of the header (uint64)
    16      4     CRC-32 of the header (uint32)
    20      n     the header: UTF-8 JSON {"format": 1, "object": TREE, "tensors": [ENTRY, ...],
                  "data_crc32": CRC-32 of the data}
    20+n    ...   the data: every tensor's bytes, contiguous, row-major, at ENTRY["offset"]

The header is padded with spaces so that the data starts at a multiple of 64 bytes, and each
tensor's offset is a multiple of 64 (zero bytes between): every tensor is aligned in the file.

TREE is JSON where a tensor is {"tensor": i} (an index into "tensors"), and containers are
tagged so that they come back as they went: {"dict": [[key, TREE], ...]}, {"odict": ...}
(OrderedDict), {"list": [...]}, {"tuple": [...]}; numbers, strings, booleans and None are
themselves (dict keys may be str, int, float, bool or None). ENTRY is {"dtype": "float32",
"shape": [2, 3], "offset": bytes into the data, "requires_grad": false, "parameter": false,
"device": "cuda:0"} ("device" absent: the CPU). A tensor loads on the device it was saved from, as
in PyTorch, unless map_location says where.

Loading parses JSON and copies bytes: it runs no code from the file. Anything malformed,
truncated, out of bounds or failing a checksum raises RuntimeError naming what is wrong. Views are saved as their
own values (storage sharing between saved tensors is not kept).
"""
from __future__ import annotations

import json
import os
import re
import struct
import zlib
from collections import OrderedDict
from typing import Any, BinaryIO, Union

import numpy as np

from . import _C

MAGIC = b"MTORCH\x00\x01"
FORMAT = 1
_DTYPES = {"float32": _C.float32, "float64": _C.float64, "int64": _C.int64, "int32": _C.int32, "bool": _C.bool}
# The most a header may claim; larger is taken for corruption, not read into memory.
_MAX_HEADER = 1 << 30
_ALIGN = 64

PathOrFile = Union[str, os.PathLike, BinaryIO]


def _dtype_name(dtype) -> str:
    return repr(dtype).split(".")[-1]


def save(obj: Any, f: PathOrFile) -> None:
    """Writes obj (a tensor, or nested dict/OrderedDict/list/tuple of tensors and plain values)."""
    from ._tensor import Tensor

    entries, blobs, offset = [], [], 0

    def encode(o):
        nonlocal offset
        if isinstance(o, Tensor):
            t = o.detach().cpu().contiguous()
            data = memoryview(t).tobytes()
            entries.append({"dtype": _dtype_name(t.dtype), "shape": list(t.shape), "offset": offset,
                            "requires_grad": bool(o.requires_grad),
                            "parameter": type(o).__name__ == "Parameter", "device": str(o.device)})
            pad = -len(data) % _ALIGN
            blobs.append(data + bytes(pad))
            offset += len(data) + pad
            return {"tensor": len(entries) - 1}
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
    data_crc = 0
    for b in blobs:
        data_crc = zlib.crc32(b, data_crc)
    header = json.dumps({"format": FORMAT, "object": tree, "tensors": entries, "data_crc32": data_crc}).encode()
    header += b" " * (-(20 + len(header)) % _ALIGN)
    with _open(f, "wb") as out:
        out.write(MAGIC)
        out.write(struct.pack("<QI", len(header), zlib.crc32(header)))
        out.write(header)
        for b in blobs:
            out.write(b)


def load(f: PathOrFile, map_location: Any = None, weights_only: bool = True) -> Any:
    """Reads what save wrote, each tensor on the device it was saved from unless map_location
    (e.g. "cpu") puts every tensor there. Only data is ever
    loaded, so weights_only is accepted for PyTorch compatibility and changes nothing."""
    with _open(f, "rb") as src:
        raw = src.read()
    try:
        return _parse(raw, map_location)
    except RecursionError:
        raise RuntimeError("minitorch.load: corrupt header: nested too deeply") from None


def _parse(raw: bytes, map_location: Any) -> Any:
    if len(raw) < 20 or raw[:8] != MAGIC:
        what = ""
        if raw[:4] == b"PK\x03\x04" or raw[:1] == b"\x80":
            # PyTorch's zip or a pickle: unpickling runs code the file names, so it is never tried.
            what = "; PyTorch's zip and pickle files are not read, as unpickling could run code"
        raise RuntimeError(f"minitorch.load: not a minitorch file (bad magic number){what}")
    n, header_crc = struct.unpack("<QI", raw[8:20])
    if n > _MAX_HEADER or 20 + n > len(raw):
        raise RuntimeError(f"minitorch.load: the file is truncated (header of {n} bytes, file of {len(raw)})")
    if zlib.crc32(raw[20 : 20 + n]) != header_crc:
        raise RuntimeError("minitorch.load: corrupt header (checksum mismatch)")
    try:
        header = json.loads(raw[20 : 20 + n].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RuntimeError(f"minitorch.load: corrupt header: {e}") from None
    if not isinstance(header, dict) or type(header.get("format")) is not int or header["format"] != FORMAT:
        raise RuntimeError("minitorch.load: unsupported or corrupt header (format)")
    data = memoryview(raw)[20 + n :]
    if zlib.crc32(data) != header.get("data_crc32"):
        raise RuntimeError("minitorch.load: corrupt or truncated data (checksum mismatch)")
    entries = header.get("tensors")
    if not isinstance(entries, list):
        raise RuntimeError("minitorch.load: corrupt header: 'tensors' is not a list")
    tensors = [_read_tensor(e, data, i, map_location) for i, e in enumerate(entries)]
    return _decode(header.get("object"), tensors)


_DEVICE = re.compile(r"cpu|cuda:\d{1,4}")


def _saved_device(e: dict, bad: str) -> str:
    """Where the tensor was saved from, with PyTorch's errors where it cannot go back there."""
    device = e.get("device", "cpu")
    if not isinstance(device, str) or not _DEVICE.fullmatch(device):
        raise RuntimeError(f"{bad}: bad device")
    if device != "cpu":
        from . import cuda

        if not cuda.is_available():
            raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                               "minitorch.cuda.is_available() is False. If you are running on a CPU-only "
                               "machine, please use minitorch.load with map_location=minitorch.device('cpu') "
                               "to map your storages to the CPU.")
        index = int(device.split(":")[1])
        if index >= cuda.device_count():
            raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but "
                               f"minitorch.cuda.device_count() is {cuda.device_count()}. Please use "
                               "minitorch.load with map_location to map your storages to an existing device.")
    return device


def _read_tensor(e: Any, data: memoryview, i: int, map_location: Any):
    from .nn.parameter import Parameter

    bad = f"minitorch.load: corrupt entry for tensor {i}"
    if not isinstance(e, dict) or not isinstance(e.get("dtype"), str) or e["dtype"] not in _DTYPES:
        raise RuntimeError(f"{bad}: unknown dtype")
    device = map_location if map_location is not None else _saved_device(e, bad)
    shape, offset = e.get("shape"), e.get("offset")
    if not isinstance(shape, list) or not all(type(s) is int and 0 <= s < 2**63 for s in shape) or len(shape) > 16:
        raise RuntimeError(f"{bad}: bad shape")
    if int(np.prod([s for s in shape if s], dtype=object)) >= 2**63:
        raise RuntimeError(f"{bad}: bad shape (more elements than an int64 counts)")
    if type(offset) is not int or offset < 0:
        raise RuntimeError(f"{bad}: bad offset")
    dtype = np.dtype(e["dtype"])
    nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if offset + nbytes > len(data):
        raise RuntimeError(f"{bad}: its {nbytes} bytes at {offset} lie past the end of the file (truncated?)")
    if nbytes == 0:  # NumPy cannot shape an empty array (0, 2**62); the tensor needs no bytes
        t = _C.zeros(shape, dtype=_DTYPES[e["dtype"]])
    else:
        array = np.frombuffer(data[offset : offset + nbytes], dtype=dtype).reshape(shape)
        t = _C.tensor(array)  # a copy: the tensor owns its memory, not the file's buffer
    t = t.to(device)
    if e.get("requires_grad", e.get("parameter")) and not t.dtype.is_floating_point:
        raise RuntimeError(f"{bad}: requires_grad on a tensor of dtype {e['dtype']} "
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
