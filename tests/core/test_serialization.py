"""minitorch.save / minitorch.load: round trips, and files that are truncated, corrupted or
malicious raise RuntimeError (UnpicklingError for a refused global) without running anything.
The tests of minitorch's own format write it with `_native.save`; minitorch.save writes PyTorch's
(tests/core/test_serialization_torch.py)."""
import io
import os
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

import minitorch
from minitorch import nn
from minitorch.serialization import _native


def roundtrip(obj, lib=minitorch, save=None):
    buf = io.BytesIO()
    (save or lib.save)(obj, buf)
    buf.seek(0)
    return lib.load(buf)


WRITERS = {"torch_zip": minitorch.save, "native": _native.save,
           "torch_legacy": lambda obj, f: minitorch.save(obj, f, _use_new_zipfile_serialization=False)}


def same(a, b):
    assert type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.int64, minitorch.int32,
                                   minitorch.bool])
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 4), (2, 3, 4)])
@pytest.mark.parametrize("writer", WRITERS)
def test_tensor_roundtrip(dtype, shape, writer):
    t = (minitorch.rand(*shape) * 10).to(dtype) if shape else minitorch.tensor(7).to(dtype)
    same(roundtrip(t, save=WRITERS[writer]), t)


@pytest.mark.parametrize("writer", WRITERS)
def test_views_keep_their_geometry_and_storage_as_in_pytorch(writer):
    # was: each tensor saved as its own contiguous copy, so a write through the loaded base did
    # not show in the loaded views, and one object saved twice came back as two
    torch = pytest.importorskip("torch")

    def case(lib):
        base = lib.arange(24.0).reshape(4, 6)
        got = roundtrip({"base": base, "view": base.t()[1:, ::2], "again": base, "row": base[2],
                         "wide": base[0].expand(3, 6), "alone": base[3, 1:4]}, lib,
                        WRITERS[writer] if lib is minitorch else None)
        geometry = {k: (tuple(v.shape), tuple(v.stride()), v.storage_offset()) for k, v in got.items()}
        got["base"][2, 1] = -1.0
        got["base"][0, 5] = -2.0
        return geometry, got["again"] is got["base"], {k: v.tolist() for k, v in got.items()}

    assert case(minitorch) == case(torch)
    alone = roundtrip(minitorch.arange(24.0)[5:8], save=WRITERS[writer])  # alone, a slice keeps its storage offset
    assert (alone.storage_offset(), alone.stride(), alone.tolist()) == (5, (1,), [5.0, 6.0, 7.0])


@pytest.mark.parametrize("writer", WRITERS)
def test_tied_weights_stay_tied_as_in_pytorch(writer):
    torch = pytest.importorskip("torch")

    def case(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.Linear(3, 3))
        model[1].weight = model[0].weight
        save = WRITERS[writer] if lib is minitorch else None
        sd = roundtrip(model.state_dict(), lib, save)
        params = roundtrip({"a": model[0].weight, "b": model[1].weight, "t": model[0].weight.t()}, lib, save)
        with lib.no_grad():
            sd["0.weight"][0, 0] = 5.0
            params["a"][1, 2] = 7.0
        return (sd["1.weight"][0, 0].item(), params["b"] is params["a"], type(params["a"]).__name__,
                params["a"].requires_grad, params["t"][2, 1].item(), params["t"].requires_grad)

    assert case(minitorch) == case(torch)


@pytest.mark.parametrize("writer", WRITERS)
def test_tensors_over_one_arrays_memory(writer):
    # two storages wrap one array's memory, the first saved a shorter part of it: its bytes are
    # read through the tensor that reaches furthest, not past the end of the shorter storage
    arr = np.arange(6.0, dtype=np.float32)
    got = roundtrip([minitorch.from_numpy(arr[:2]), minitorch.from_numpy(arr), minitorch.from_numpy(arr[3:])],
                    save=WRITERS[writer])
    assert [t.tolist() for t in got] == [[0.0, 1.0], list(arr), [3.0, 4.0, 5.0]]


def test_a_format_1_file_still_loads():
    # written by minitorch.save before storages were shared (format 1)
    got = minitorch.load(os.path.join(os.path.dirname(__file__), "data", "format1.mt"))
    assert got["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and got["w"].stride() == (3, 1)
    assert got["b"].tolist() == [True, False] and got["e"].shape == (0, 3) and got["n"] == [1, None, "s"]
    assert isinstance(got["p"], nn.Parameter) and got["p"].tolist() == [[1.5, -2.0]] and got["p"].requires_grad
    assert got["i"].dtype == minitorch.int32 and got["i"].tolist() == [7, 8]


@pytest.mark.parametrize("writer", WRITERS)
def test_containers_and_plain_values_keep_their_types(writer):
    obj = {"a": [1, 2.5, None, True, "s"], "b": (minitorch.ones(2), {"c": minitorch.zeros(1)}),
           3: float("inf"), "od": OrderedDict([("x", 1), ("y", 2)])}
    got = roundtrip(obj, save=WRITERS[writer])
    assert got["a"] == [1, 2.5, None, True, "s"] and got[3] == float("inf")
    assert isinstance(got["b"], tuple) and got["b"][0].tolist() == [1.0, 1.0]
    assert type(got["od"]) is OrderedDict and list(got["od"].items()) == [("x", 1), ("y", 2)]


def test_state_dict_and_parameters(tmp_path):
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    path = tmp_path / "model.mt"
    minitorch.save(model.state_dict(), path)
    other = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    other.load_state_dict(minitorch.load(path))
    x = minitorch.randn(3, 4)
    assert model(x).tolist() == other(x).tolist()
    p = roundtrip([model[0].weight])[0]
    assert isinstance(p, nn.Parameter) and p.requires_grad
    minitorch.save(model.state_dict(), str(path))
    assert list(minitorch.load(str(path), map_location="cpu")) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_unsupported_objects_raise(tmp_path):
    with pytest.raises(TypeError):
        _native.save({"f": lambda: 0}, io.BytesIO())
    with pytest.raises(TypeError):
        _native.save({(1, 2): 0}, io.BytesIO())
    path = tmp_path / "kept.pt"
    minitorch.save({"w": minitorch.ones(2)}, path)
    for legacy in (False, True):
        with pytest.raises(pickle.PicklingError):  # as torch.save
            minitorch.save({"f": lambda: 0}, path, _use_new_zipfile_serialization=not legacy)
    assert minitorch.load(path)["w"].tolist() == [1.0, 1.0]  # pickled before the file was opened
    assert roundtrip({(1, 2): 0}) == {(1, 2): 0}  # pickle stores any key, as torch.save does


def saved_bytes():
    buf = io.BytesIO()
    _native.save({"w": minitorch.arange(6.0).reshape(2, 3), "n": 5}, buf)
    return buf.getvalue()


def load_bytes(raw):
    return minitorch.load(io.BytesIO(raw))


@pytest.mark.parametrize("cut", range(0, 400, 7))
def test_truncated_files_raise(cut):
    raw = saved_bytes()
    if cut >= len(raw):
        pytest.skip("past the end")
    with pytest.raises(RuntimeError):
        load_bytes(raw[:cut])


def test_every_corrupted_byte_is_detected():
    raw = saved_bytes()
    for i in range(len(raw)):
        bad = bytearray(raw)
        bad[i] ^= 0x5A
        with pytest.raises(RuntimeError):
            load_bytes(bytes(bad))


class Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/minitorch_pwned",))


def test_a_pickle_is_not_executed(tmp_path):
    marker = "/tmp/minitorch_pwned"
    if os.path.exists(marker):
        os.remove(marker)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL posix.system"):
        load_bytes(pickle.dumps(Boom(), protocol=2))
    assert not os.path.exists(marker)


def forged(header: bytes, data: bytes = b"") -> bytes:
    import zlib

    return b"MTORCH\x00\x01" + struct.pack("<QI", len(header), zlib.crc32(header)) + header + data


@pytest.mark.parametrize("header", [
    b'{"format": 1, "object": {"tensor": 0}, "tensors": [{"dtype": "float32", "shape": [1000000000000], "offset": 0}], "data_crc32": 0}',
    b'{"format": 1, "object": {"tensor": 5}, "tensors": [], "data_crc32": 0}',
    b'{"format": 1, "object": {"eval": "__import__(\'os\')"}, "tensors": [], "data_crc32": 0}',
    b'{"format": 1, "object": null, "tensors": [{"dtype": "object", "shape": [1], "offset": 0}], "data_crc32": 0}',
    b'{"format": 1, "object": null, "tensors": [{"dtype": "float32", "shape": [-1], "offset": 0}], "data_crc32": 0}',
    b'{"format": 2, "object": null, "tensors": [], "data_crc32": 0}',
    b'{"format": 1, "object": ' + b'{"list": [' * 5000 + b']}' * 5000 + b', "tensors": [], "data_crc32": 0}',
    b"[1, 2, 3]",
    b"\xff\xfe not json",
], ids=["huge_shape", "bad_index", "unknown_node", "bad_dtype", "negative_shape", "future_format",
        "deep_nesting", "not_an_object", "not_utf8"])
def test_forged_headers_raise(header):
    with pytest.raises(RuntimeError):
        load_bytes(forged(header))


def test_tensors_go_back_to_their_device():
    """A tensor saved from a CUDA device loads there, as in PyTorch; where CUDA is not available
    (or the device is not there) that raises PyTorch's error, and map_location puts it elsewhere."""
    import json
    import zlib

    data = np.arange(2, dtype=np.float32).tobytes() + bytes(56)

    def saved_on(device):
        entry = {"dtype": "float32", "shape": [2], "offset": 0, "device": device}
        return forged(json.dumps({"format": 1, "object": {"tensor": 0}, "tensors": [entry],
                                  "data_crc32": zlib.crc32(data)}).encode(), data)
    assert load_bytes(saved_on("cpu")).tolist() == [0.0, 1.0]
    for bad in ("gpu", "cuda:x", 3, "cuda:0; import os"):
        with pytest.raises(RuntimeError, match="bad device"):
            load_bytes(saved_on(bad))
    if not minitorch.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"deserialize object on a CUDA device but minitorch.cuda.is_available\(\) is False"):
            load_bytes(saved_on("cuda:0"))
    else:
        with pytest.raises(RuntimeError, match="deserialize object on CUDA device 99 but"):
            load_bytes(saved_on("cuda:99"))
    t = minitorch.load(io.BytesIO(saved_on("cuda:0")), map_location="cpu")
    assert t.device.type == "cpu" and t.tolist() == [0.0, 1.0]


def test_huge_header_length_is_not_read():
    with pytest.raises(RuntimeError, match="truncated"):
        load_bytes(b"MTORCH\x00\x01" + struct.pack("<QI", 2**62, 0))
