"""The bytes TensorBoard reads, written without protobuf or tensorboard installed.

Protocol-buffer wire format, by hand: a message is the concatenation of its fields, each a key
(field number << 3 | wire type) and a value, in field-number order (the order protobuf's own
serializer uses, so our bytes equal its bytes). Proto3 leaves out a plain field that holds its
default (0, 0.0, "", b""); a field inside a `oneof` and a sub-message are written whenever set.
Each builder below names the .proto message it writes and the numbers of the fields it uses.

TFRecord framing of an event file: for each serialized Event, the little-endian uint64 length,
the masked CRC32C of those 8 bytes (uint32), the data, the masked CRC32C of the data (uint32).
This module only encodes; it never reads.
"""
from __future__ import annotations

import struct
from typing import Iterable, Optional, Sequence

# wire types
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

# tensorboard.DataType (types.proto)
DT_FLOAT, DT_DOUBLE, DT_STRING = 1, 2, 7


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # a negative int64 travels as its 64-bit two's complement (10 bytes)
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(field: int, wire: int) -> bytes:
    return _varint(field << 3 | wire)


def f_int(field: int, n: int, keep: bool = False) -> bytes:
    """An int32/int64/uint32/enum/bool field; left out when 0 unless keep (a oneof member)."""
    return _key(field, _VARINT) + _varint(int(n)) if (n or keep) else b""


def f_double(field: int, x: float, keep: bool = False) -> bytes:
    return _key(field, _I64) + struct.pack("<d", x) if (x != 0.0 or keep) else b""


def f_float(field: int, x: float, keep: bool = False) -> bytes:
    return _key(field, _I32) + struct.pack("<f", x) if (x != 0.0 or keep) else b""


def f_bytes(field: int, data, keep: bool = False) -> bytes:
    """A string (encoded as UTF-8), bytes or sub-message field; "" is left out unless keep."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _key(field, _LEN) + _varint(len(data)) + data if (data or keep) else b""


def f_message(field: int, payload: Optional[bytes]) -> bytes:
    """A sub-message: written when set (payload is not None), even if all its fields are default."""
    return b"" if payload is None else f_bytes(field, payload, keep=True)


def f_packed(field: int, values: Sequence[float], fmt: str) -> bytes:
    """A packed repeated double ("d") or float ("f") field; nothing when empty."""
    return f_bytes(field, struct.pack(f"<{len(values)}{fmt}", *values)) if len(values) else b""


def f_repeated(field: int, items: Iterable[bytes]) -> bytes:
    return b"".join(f_message(field, item) for item in items)


# ---- messages ------------------------------------------------------------------------------

def event(wall_time: float, step: int = 0, *, file_version: Optional[str] = None, graph_def: Optional[bytes] = None,
          summary: Optional[bytes] = None, session_log_start: bool = False, writer: Optional[str] = None) -> bytes:
    """tensorboard.Event: wall_time 1, step 2, oneof {file_version 3, graph_def 4, summary 5,
    session_log 7}, source_metadata 10 (SourceMetadata: writer 1)."""
    out = f_double(1, wall_time) + f_int(2, step)
    if file_version is not None:
        out += f_bytes(3, file_version, keep=True)
    if graph_def is not None:
        out += f_bytes(4, graph_def, keep=True)
    out += f_message(5, summary)
    if session_log_start:
        out += f_message(7, f_int(1, 1))  # SessionLog.status = START (1)
    if writer is not None:
        out += f_message(10, f_bytes(1, writer))
    return out


def summary_value(tag: str, *, simple_value: Optional[float] = None, image: Optional[bytes] = None,
                  histo: Optional[bytes] = None, audio: Optional[bytes] = None, tensor: Optional[bytes] = None,
                  metadata: Optional[bytes] = None) -> bytes:
    """tensorboard.Summary wrapping one Summary.Value: tag 1, oneof {simple_value 2, image 4,
    histo 5, audio 6, tensor 8}, metadata 9. The Summary's `value` is field 1 (repeated: the
    concatenation of several of these is one Summary of several values)."""
    out = f_bytes(1, tag)
    if simple_value is not None:
        out += f_float(2, simple_value, keep=True)
    out += (f_message(4, image) + f_message(5, histo) + f_message(6, audio) + f_message(8, tensor)
            + f_message(9, metadata))
    return f_message(1, out)


def audio_proto(sample_rate: float, num_channels: int, length_frames: int, encoded: bytes,
                content_type: str) -> bytes:
    """Summary.Audio: sample_rate 1, num_channels 2, length_frames 3, encoded_audio_string 4,
    content_type 5."""
    return (f_float(1, sample_rate) + f_int(2, num_channels) + f_int(3, length_frames) + f_bytes(4, encoded)
            + f_bytes(5, content_type))


def f_packed_ints(field: int, values: Sequence[int]) -> bytes:
    """A packed repeated int32/int64 field; nothing when empty."""
    return f_bytes(field, b"".join(_varint(int(v)) for v in values)) if len(values) else b""


def mesh_plugin_data(name: str, content_type: int, components: int, shape: Sequence[int], json_config: str) -> bytes:
    """tensorboard's MeshPluginData: version 1 (0), name 2, content_type 3, json_config 5,
    shape 6 (packed), components 7."""
    return (f_bytes(2, name) + f_int(3, content_type) + f_bytes(5, json_config) + f_packed_ints(6, shape)
            + f_int(7, components))


def plugin_metadata(plugin_name: str, content: bytes = b"") -> bytes:
    """SummaryMetadata with plugin_data 1 (PluginData: plugin_name 1, content 2)."""
    return f_message(1, f_bytes(1, plugin_name) + f_bytes(2, content))


def tensor_proto(dtype: int, shape: Sequence[int] = (), *, float_val: Sequence[float] = (),
                 double_val: Sequence[float] = (), string_val: Sequence[bytes] = ()) -> bytes:
    """TensorProto: dtype 1, tensor_shape 2 (TensorShapeProto: dim 2, each Dim: size 1),
    float_val 5 (packed), double_val 6 (packed), string_val 8."""
    shape_msg = f_repeated(2, (f_int(1, n) for n in shape)) if shape else None
    return (f_int(1, dtype) + f_message(2, shape_msg) + f_packed(5, float_val, "f")
            + f_packed(6, double_val, "d") + f_repeated(8, string_val))


def histogram_proto(vmin: float, vmax: float, num: float, total: float, sum_squares: float,
                    bucket_limit: Sequence[float], bucket: Sequence[float]) -> bytes:
    """HistogramProto: min 1, max 2, num 3, sum 4, sum_squares 5, bucket_limit 6, bucket 7."""
    return (f_double(1, vmin) + f_double(2, vmax) + f_double(3, num) + f_double(4, total)
            + f_double(5, sum_squares) + f_packed(6, bucket_limit, "d") + f_packed(7, bucket, "d"))


def image_proto(height: int, width: int, colorspace: int, png: bytes) -> bytes:
    """Summary.Image: height 1, width 2, colorspace 3, encoded_image_string 4."""
    return f_int(1, height) + f_int(2, width) + f_int(3, colorspace) + f_bytes(4, png)


# ---- TFRecord framing ----------------------------------------------------------------------

def _crc32c_table() -> list:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # Castagnoli's polynomial, reflected
        table.append(c)
    return table


_CRC_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    table = _CRC_TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    """TFRecord's mask: rotate right by 15 bits and add a constant, so that a CRC stored inside
    the data it covers does not make a weak checksum."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data: bytes) -> bytes:
    header = struct.pack("<Q", len(data))
    return (header + struct.pack("<I", masked_crc32c(header)) + data
            + struct.pack("<I", masked_crc32c(data)))
