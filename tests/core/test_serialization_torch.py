"""minitorch.save and torch.load, torch.save and minitorch.load: the same checkpoints both ways.

Each interop test writes with one library and reads with the other (torch.load with its default,
weights_only=True), then compares with what the writing library had: values, dtypes, shapes,
strides, storage sharing, Parameters. The hostile files at the end need no PyTorch.
"""
import collections
import io
import os
import pickle
import warnings
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import minitorch
from minitorch.serialization import _torch_format

MARKER = "/tmp/minitorch_serialization_pwned"


def torch_or_skip():
    return pytest.importorskip("torch")


def through(obj, save, load, **load_kwargs):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **load_kwargs)


def as_numpy(t):
    return np.asarray(t.detach().cpu().numpy() if hasattr(t, "numpy") else t)


def assert_same_tensor(a, b):
    """a (one library's tensor) and b (the other's) hold the same values, dtype, shape and layout."""
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(b.shape) and tuple(a.stride()) == tuple(b.stride())
    assert a.storage_offset() == b.storage_offset() and a.requires_grad == b.requires_grad
    assert type(a).__name__ == type(b).__name__
    np.testing.assert_array_equal(values_of(a), values_of(b))


def values_of(t):
    """A tensor's values in NumPy; bfloat16 (which NumPy lacks) through float32, exactly."""
    return (t.detach().float() if str(t.dtype).endswith("bfloat16") else t.detach()).numpy()


def assert_same(a, b):
    """Nested containers, compared through: tensors as above, the rest with ==."""
    if hasattr(a, "stride"):
        assert_same_tensor(a, b)
    elif isinstance(a, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in a:
            assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        assert type(a) is type(b) and a == b


def build(lib, name):
    nn = lib.nn
    lib.manual_seed(0)
    if name == "linear":
        return nn.Linear(4, 3), lib.randn(2, 4)
    if name == "conv2d":
        return nn.Conv2d(3, 4, 3, padding=1), lib.randn(2, 3, 5, 5)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                          nn.Linear(4 * 5 * 5, 3))
    return model, lib.randn(2, 3, 5, 5)


def train_step(lib, model, x, opt_name):
    opt = (lib.optim.Adam(model.parameters(), lr=0.01) if opt_name == "adam"
           else lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    model(x).square().sum().backward()
    opt.step()
    return opt


@pytest.mark.parametrize("direction", ["minitorch_to_torch", "torch_to_minitorch"])
@pytest.mark.parametrize("name", ["linear", "conv2d", "small_cnn"])
def test_a_state_dict_loads_into_the_other_librarys_model(name, direction):
    torch = torch_or_skip()
    src, dst = (minitorch, torch) if direction == "minitorch_to_torch" else (torch, minitorch)
    src_model, _ = build(src, name)
    with src.no_grad():
        for p in src_model.parameters():
            p.add_(0.5)  # not the values the other library's seed gives
    sd = through(src_model.state_dict(), src.save, dst.load)
    assert_same(src_model.state_dict(), sd)
    dst_model, x = build(dst, name)
    dst_model.load_state_dict(sd)
    mt_model, t_model = (src_model, dst_model) if src is minitorch else (dst_model, src_model)
    mt_model.eval(), t_model.eval()
    x = np.asarray(x.numpy())
    with torch.no_grad():
        want = t_model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(mt_model(minitorch.tensor(x)).detach().numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opt_name", ["sgd", "adam"])
def test_optimizer_state_dicts_go_both_ways(opt_name):
    torch = torch_or_skip()
    mt_model, x = build(minitorch, "linear")
    mt_opt = train_step(minitorch, mt_model, x, opt_name)
    got = through(mt_opt.state_dict(), minitorch.save, torch.load)
    assert_same(mt_opt.state_dict(), got)
    t_model, _ = build(torch, "linear")
    t_opt = train_step(torch, t_model, torch.from_numpy(x.numpy()), opt_name)
    t_opt.load_state_dict(got)  # PyTorch accepts minitorch's optimizer state
    back = through(t_opt.state_dict(), torch.save, minitorch.load)
    assert_same(t_opt.state_dict(), back)
    mt_opt.load_state_dict(back)
    assert_same(mt_opt.state_dict(), back)


CONFIG = {"lr": 1e-3, "name": "run-7", "layers": [64, 32], "betas": (0.9, 0.999), "none": None,
          "flags": {"amp": False, "deep": [{"a": 1}, (2, "b")]}, "big": 2**70, "neg": -7,
          "inf": float("inf"), "bytes": b"\x00\xff", "set": {1, 2}, "complex": 1 + 2j,
          3: "int key", (1, 2): "tuple key", "od": OrderedDict([("z", 1), ("a", 2)])}


def checkpoint(lib):
    model, x = build(lib, "small_cnn")
    opt = train_step(lib, model, x, "adam")
    return {"epoch": 3, "model": model.state_dict(), "optimizer": opt.state_dict(), "config": CONFIG,
            "losses": [0.5, 0.25], "best": lib.tensor(0.125)}


def test_a_checkpoint_as_users_write_it_goes_both_ways():
    torch = torch_or_skip()
    mt = checkpoint(minitorch)
    assert_same(mt, through(mt, minitorch.save, torch.load))
    tc = checkpoint(torch)
    assert_same(tc, through(tc, torch.save, minitorch.load))
    assert_same(mt, through(mt, minitorch.save, minitorch.load))


def test_devices_sizes_and_dtypes_as_values_both_ways():
    torch = torch_or_skip()
    for src, dst in ((minitorch, torch), (torch, minitorch)):
        obj = {"device": src.device("cpu"), "cuda": src.device("cuda", 1), "shape": src.Size([2, 3]),
               "dtypes": [src.float32, src.float64, src.int32, src.int64, src.bool]}
        got = through(obj, src.save, dst.load)
        assert isinstance(got["device"], dst.device) and str(got["device"]) == "cpu" and str(got["cuda"]) == "cuda:1"
        assert isinstance(got["shape"], dst.Size) and got["shape"] == (2, 3)
        assert got["dtypes"] == [dst.float32, dst.float64, dst.int32, dst.int64, dst.bool]


def test_a_tensor_with_attributes_keeps_them_but_cannot_replace_methods():
    torch = torch_or_skip()
    for src, dst in ((torch, minitorch), (minitorch, torch), (minitorch, minitorch)):
        t = src.ones(2)
        t.tag = "kept"
        p = src.nn.Parameter(src.zeros(1))
        p.note = 3
        got = through({"t": t, "p": p}, src.save, dst.load)
        assert got["t"].tag == "kept" and got["t"].tolist() == [1.0, 1.0] and type(got["t"]) is dst.Tensor
        assert isinstance(got["p"], dst.nn.Parameter) and got["p"].note == 3 and got["p"].requires_grad
    t = torch.ones(2)
    t.tolist = "replaced"
    with pytest.raises(RuntimeError, match="a tensor's state sets 'tolist'"):
        through(t, torch.save, minitorch.load)


NUMPY = {"acc": np.float64(0.5), "step": np.int64(7), "flag": np.bool_(True), "f32": np.float32(1.5)}


def numpy_globals():
    return [np.dtype, type(np.dtype("float64")), type(np.dtype("int64")), type(np.dtype("bool")),
            type(np.dtype("float32")), np.float64(0).__reduce__()[0]]


def test_numpy_scalars_load_as_pytorch_allows():
    # PyTorch's weights_only refuses NumPy scalars unless allowed: minitorch does the same, and
    # both load them with weights_only=False or with the globals marked safe
    torch = torch_or_skip()
    for save, load in ((minitorch.save, torch.load), (torch.save, minitorch.load), (minitorch.save, minitorch.load)):
        with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*multiarray.scalar"):
            through(NUMPY, save, load)
        assert_same(NUMPY, through(NUMPY, save, load, weights_only=False))
        safe = minitorch.serialization.safe_globals if load is minitorch.load else torch.serialization.safe_globals
        with safe(numpy_globals()):
            assert_same(NUMPY, through(NUMPY, save, load))
    assert minitorch.serialization.get_safe_globals() == []


def test_views_and_shared_storages_stay_shared_both_ways():
    torch = torch_or_skip()

    def case(lib, save, load, out):
        base = lib.arange(24.0).reshape(4, 6)
        weight = lib.nn.Parameter(lib.ones(2, 3))
        obj = {"base": base, "view": base.t()[1:, ::2], "row": base[2], "again": base, "tail": base[3, 1:4],
               "w": weight, "w_t": weight.t(), "w_again": weight}
        got = through(obj, save, load)
        assert got["again"] is got["base"] and got["w_again"] is got["w"]
        geometry = {k: (tuple(v.shape), tuple(v.stride()), v.storage_offset()) for k, v in got.items()}
        item = got["base"].element_size()
        assert {v.data_ptr() - v.storage_offset() * item for k, v in got.items() if k != "w" and k[0] != "w"} \
            == {got["base"].data_ptr()}
        with out.no_grad():
            got["base"][2, 1] = -1.0
            got["w"][0, 2] = 5.0
        return geometry, {k: v.tolist() for k, v in got.items()}

    want = case(torch, torch.save, torch.load, torch)
    assert case(minitorch, minitorch.save, torch.load, torch) == want
    assert case(torch, torch.save, minitorch.load, minitorch) == want


DTYPES = ["float32", "float64", "int32", "int64", "bool", "float16", "bfloat16", "int8", "int16", "uint8"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_both_ways(dtype):
    torch = torch_or_skip()
    values = [[0, 1, 0], [1, 1, 0]] if dtype == "bool" else [[1, -2, 3], [4, 5, -6]]
    if dtype == "uint8":
        values = [[1, 2, 3], [250, 5, 6]]
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    samples = {"t": t, "nc": t.t(), "scalar": t[1, 2], "empty": t[:0]}
    if not isinstance(getattr(minitorch, dtype, None), minitorch.dtype):
        with pytest.raises(RuntimeError, match=f"holds a storage of dtype {dtype}, which minitorch does not have"):
            through(samples, torch.save, minitorch.load)
        return
    got = through(samples, torch.save, minitorch.load)
    assert_same(samples, got)
    assert_same(got, through(got, minitorch.save, torch.load))


def test_parameters_and_requires_grad_both_ways():
    torch = torch_or_skip()
    for lib, save, load in ((minitorch, minitorch.save, torch.load), (torch, torch.save, minitorch.load)):
        obj = {"p": lib.nn.Parameter(lib.ones(2)), "frozen": lib.nn.Parameter(lib.zeros(3), requires_grad=False),
               "leaf": lib.ones(2, requires_grad=True), "plain": lib.ones(2)}
        got = through(obj, save, load)
        assert_same(obj, got)


def test_the_legacy_format_both_ways():
    torch = torch_or_skip()
    mt = checkpoint(minitorch)
    assert_same(mt, through(mt, lambda o, f: minitorch.save(o, f, _use_new_zipfile_serialization=False), torch.load))
    tc = checkpoint(torch)
    assert_same(tc, through(tc, lambda o, f: torch.save(o, f, _use_new_zipfile_serialization=False), minitorch.load))


@pytest.mark.parametrize("zip64", [False, True])
def test_files_on_disk_and_alignment(tmp_path, monkeypatch, zip64):
    torch = torch_or_skip()
    if zip64:  # records past this size take zip64's extra field, which the alignment counts
        monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 1000)
    path = tmp_path / "model.pt"
    model, _ = build(minitorch, "small_cnn")
    minitorch.save(model.state_dict(), path)
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():  # each record's data starts at a multiple of 64, as torch.save's
            name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
            assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0, info.filename
        assert {"archive/data.pkl", "archive/version", "archive/byteorder", "archive/.data/serialization_id"} \
            <= set(z.namelist())
    assert_same(model.state_dict(), torch.load(path, mmap=True))
    assert_same(model.state_dict(), minitorch.load(str(path), mmap=True))


class WriteOnly:
    """An output that cannot seek or tell (a pipe, a socket): zipfile streams records to it."""

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, b) -> int:
        self.data += b
        return len(b)

    def flush(self) -> None:
        pass


def test_save_to_a_stream_that_cannot_seek():
    out = WriteOnly()
    model, _ = build(minitorch, "linear")
    minitorch.save(model.state_dict(), out)
    assert_same(model.state_dict(), minitorch.load(io.BytesIO(bytes(out.data))))
    try:
        import torch
    except ImportError:
        return
    assert_same(model.state_dict(), torch.load(io.BytesIO(bytes(out.data))))


def saved_on(device: str) -> bytes:
    """A checkpoint as saved from device: minitorch's, its location tag rewritten (a BINUNICODE
    string of the pickle, whose opcodes hold no absolute offsets)."""
    buf = io.BytesIO()
    minitorch.save({"t": minitorch.arange(3.0)}, buf)
    raw = buf.getvalue()
    pkl = zipfile.ZipFile(io.BytesIO(raw)).read("archive/data.pkl")
    old, new = b"X\x03\x00\x00\x00cpu", b"X" + struct.pack("<I", len(device)) + device.encode()
    assert pkl.count(old) == 1
    return zip_checkpoint(pkl.replace(old, new), {"data/0": zipfile.ZipFile(io.BytesIO(raw)).read("archive/data/0")})


def test_map_location_as_torch_load_takes_it():
    cuda = saved_on("cuda:0")

    def load(raw, **kw):
        return minitorch.load(io.BytesIO(raw), **kw)["t"]

    if not minitorch.cuda.is_available():
        with pytest.raises(RuntimeError, match=r"deserialize object on a CUDA device but minitorch.cuda.is_available\(\) is False"):
            load(cuda)
    seen = []
    for ml in ("cpu", minitorch.device("cpu"), {"cuda:0": "cpu"}, {"cuda:0": minitorch.device("cpu")},
               lambda storage, loc: seen.append(loc) or storage):
        t = load(cuda, map_location=ml)
        assert t.device.type == "cpu" and t.tolist() == [0.0, 1.0, 2.0]
    assert seen == ["cuda:0"]
    assert load(saved_on("cpu"), map_location=lambda s, loc: None).device.type == "cpu"
    with pytest.raises(RuntimeError, match="storage 0: bad device"):
        load(saved_on("mps"))
    with pytest.raises(TypeError, match="map_location"):
        load(saved_on("cpu"), map_location=3)
    with pytest.raises(KeyError, match="the user's own"):  # map_location's errors pass as they are
        load(saved_on("cpu"), map_location=lambda s, loc: {}["the user's own"])


def test_weights_only_false_unpickles_anything_silently():
    obj = {"range": range(3), "frozen": frozenset({1}), "t": minitorch.ones(2)}
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL range was not an allowed global"):
        through(obj, minitorch.save, minitorch.load)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch.load says nothing when told weights_only=False
        got = through(obj, minitorch.save, minitorch.load, weights_only=False)
        # a pickle_module means weights_only=False, as in torch.load
        assert through(obj, minitorch.save, minitorch.load, pickle_module=pickle)["range"] == range(3)
    assert got["range"] == range(3) and got["frozen"] == frozenset({1}) and got["t"].tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        through(obj, minitorch.save, minitorch.load, pickle_module=pickle, weights_only=True)
    with pytest.warns(UserWarning, match="pickle_load_args only works if `weights_only=False`"):
        through({"t": minitorch.ones(1)}, minitorch.save, minitorch.load, encoding="latin1")
    with pytest.raises(TypeError, match="unexpected pickle arguments"):
        through({}, minitorch.save, minitorch.load, weights_only=False, fix_imports=False)


def test_add_safe_globals_as_torch_serialization():
    obj = {"r": range(2)}
    assert minitorch.serialization.get_safe_globals() == []
    with minitorch.serialization.safe_globals([range]):
        assert through(obj, minitorch.save, minitorch.load) == obj
        assert minitorch.serialization.get_safe_globals() == [range]
    with pytest.raises(pickle.UnpicklingError):
        through(obj, minitorch.save, minitorch.load)
    minitorch.serialization.add_safe_globals([(range, "builtins.range")])
    try:
        assert through(obj, minitorch.save, minitorch.load) == obj
    finally:
        minitorch.serialization.clear_safe_globals()
    with pytest.raises(ValueError, match="Expected tuple of length 2"):
        minitorch.serialization.add_safe_globals([(range,)])


def test_get_unsafe_globals_in_checkpoint_as_torch_serialization():
    obj = {"r": range(2), "n": NUMPY, "model": build(minitorch, "small_cnn")[0].state_dict(), "b": b"x", "s": {1}}
    buf = io.BytesIO()
    minitorch.save(obj, buf)
    want = sorted(["numpy.dtype", np.float64(0).__reduce__()[0].__module__ + ".scalar", "builtins.range"])
    buf.seek(0)
    assert minitorch.serialization.get_unsafe_globals_in_checkpoint(buf) == want
    with minitorch.serialization.safe_globals([range]):
        buf.seek(0)
        assert minitorch.serialization.get_unsafe_globals_in_checkpoint(buf) == want[1:]
    try:
        import torch
    except ImportError:
        return
    buf.seek(0)
    assert sorted(torch.serialization.get_unsafe_globals_in_checkpoint(buf)) == want
    with pytest.raises(ValueError, match="Expected input to be a checkpoint returned by torch.save"):
        minitorch.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(b"\x80\x02N."))


# ---- hostile files: nothing runs, nothing large is allocated, every one raises ----

def zip_checkpoint(pkl: bytes, records: dict = None, compression=zipfile.ZIP_STORED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        z.writestr("archive/data.pkl", pkl)
        for name, data in (records or {}).items():
            z.writestr(f"archive/{name}", data)
        z.writestr("archive/version", "3\n")
    return buf.getvalue()


def call(module: str, name: str, args: bytes = b")") -> bytes:
    """A protocol 2 pickle of module.name(*args): GLOBAL, the argument tuple, REDUCE."""
    return b"\x80\x02c" + module.encode() + b"\n" + name.encode() + b"\n" + args + b"R."


def tensor_of(pid: bytes, size: bytes = b"K\x02\x85", stride: bytes = b"K\x01\x85") -> bytes:
    """_rebuild_tensor_v2 over the persistent id pid (a pickled tuple), offset 0."""
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(" + pid + b"QK\x00" + size + stride
            + b"\x89ccollections\nOrderedDict\n)RtR.")


FLOAT_PID = b"(X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu"


def pid(numel: int) -> bytes:
    return FLOAT_PID + b"\x8a\x08" + struct.pack("<q", numel) + b"t"


class Boom:
    def __reduce__(self):
        return (os.system, (f"touch {MARKER}",))


REFUSED = {
    "os_system": (call("posix", "system", b"(X\x04\x00\x00\x00truet"), "GLOBAL posix.system was not"),
    "eval": (call("__builtin__", "eval", b"(X\x01\x00\x00\x001t"), "GLOBAL eval was not"),
    "getattr": (call("builtins", "getattr", b")"), "GLOBAL getattr was not"),
    "subprocess": (call("subprocess", "Popen", b")"), "GLOBAL subprocess.Popen was not"),
    "sys_modules": (call("sys", "exit", b")"), "whose module sys is blocked"),
    "torch_load": (call("torch", "load", b")"), "GLOBAL torch.load was not"),
    "reduce_in_checkpoint": (pickle.dumps({"w": [1.0], "x": Boom()}, protocol=2), "GLOBAL posix.system was not"),
}


@pytest.mark.parametrize("name", REFUSED)
def test_disallowed_globals_are_refused_as_torch_refuses_them(name):
    pkl, match = REFUSED[name]
    if os.path.exists(MARKER):
        os.remove(MARKER)
    for raw in (zip_checkpoint(pkl), pkl):
        with pytest.raises(pickle.UnpicklingError, match=match):
            minitorch.load(io.BytesIO(raw))
    try:
        import torch
    except ImportError:
        return
    with pytest.raises(pickle.UnpicklingError):
        torch.load(io.BytesIO(zip_checkpoint(pkl)))
    assert not os.path.exists(MARKER)


BUILDS = {  # BUILD sets attributes of the object under it: of a class, for every later user
    "on_a_class": b"\x80\x02ccollections\nCounter\nN}X\x0b\x00\x00\x00most_commonK\x01s\x86b.",
    "on_a_function": b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n}X\x01\x00\x00\x00xK\x01sb.",
    "on_a_storage": FLOAT_PID + b"K\x02tQN}X\x06\x00\x00\x00tensorK\x01s\x86b.",
    "on_a_tensor": tensor_of(pid(2))[:-1] + b"}X\x03\x00\x00\x00tagK\x01sb.",
}


@pytest.mark.parametrize("name", BUILDS)
def test_build_is_refused_but_on_instances_of_allowed_classes(name):
    most_common = collections.Counter.most_common
    with pytest.raises(pickle.UnpicklingError, match="Can only build OrderedDict, Counter or types allowlisted"):
        minitorch.load(io.BytesIO(zip_checkpoint(BUILDS[name], {"data/0": bytes(8)})))
    assert collections.Counter.most_common is most_common
    odict = b"\x80\x02ccollections\nOrderedDict\n)R}X\x09\x00\x00\x00_metadataK\x01sb."
    assert minitorch.load(io.BytesIO(zip_checkpoint(odict)))._metadata == 1  # a state_dict's, as PyTorch's


BROKEN = {
    "bytearray_bomb": (call("__builtin__", "bytearray", b"(\x8a\x06\x00\x00\x00\x00\x00\x01t"), "_codecs.encode of"),
    "tensor_constructor": (call("torch", "Tensor", b"(\x8a\x06\x00\x00\x00\x00\x00\x01t"), "corrupt pickle"),
    "binbytes8_past_end": (b"\x80\x04\x8e" + struct.pack("<Q", 2**40) + b"xx.", "corrupt pickle"),
    "binunicode_past_end": (b"\x80\x02X" + struct.pack("<I", 2**31) + b"xx.", "corrupt pickle"),
    "no_stop": (b"\x80\x02K\x01", "corrupt pickle"),
    "storage_numel_huge": (tensor_of(pid(2**50)), "claims"),
    "storage_missing": (tensor_of(pid(2)), "no record archive/data/0"),
    "size_past_storage": (tensor_of(pid(2), size=b"K\x03\x85"), "reaches past the end of its storage"),
    "negative_stride": (tensor_of(pid(2), stride=b"J\xff\xff\xff\xff\x85"), "bad stride"),
    "storage_is_an_int": (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(K\x00K\x00K\x02\x85K\x01\x85\x89}tR.",
                          "a tensor's storage is a int"),
    "not_a_storage_pid": (b"\x80\x02X\x01\x00\x00\x00xQ.", "not a storage's"),
    "quantized_no_args": (call("torch._utils", "_rebuild_qtensor"), "corrupt pickle"),
    "quantized_bad_params": (call("torch._utils", "_rebuild_qtensor", b"(K\x00K\x00)))\x89}t"),
                             "a tensor's storage is a int"),
    "grad_on_ints": (tensor_of(FLOAT_PID.replace(b"Float", b"Long") + b"K\x02t").replace(b"\x89c", b"\x88c"),
                     "only floating point tensors can require gradients"),
}


@pytest.mark.parametrize("name", BROKEN)
def test_malformed_pickles_raise_runtime_error(name):
    pkl, match = BROKEN[name]
    records = {} if name == "storage_missing" else {"data/0": bytes(16 if name == "grad_on_ints" else 8)}
    with pytest.raises(RuntimeError, match=match):
        minitorch.load(io.BytesIO(zip_checkpoint(pkl, records)))


def test_a_storage_record_of_the_wrong_size_or_compressed_is_refused():
    good = zip_checkpoint(tensor_of(pid(2)), {"data/0": bytes(8)})
    assert minitorch.load(io.BytesIO(good)).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="holds 12 bytes, not 2 elements"):
        minitorch.load(io.BytesIO(zip_checkpoint(tensor_of(pid(2)), {"data/0": bytes(12)})))
    with pytest.raises(RuntimeError, match="is compressed"):
        minitorch.load(io.BytesIO(zip_checkpoint(tensor_of(pid(2)), {"data/0": bytes(8)}, zipfile.ZIP_DEFLATED)))


def test_records_that_overlap_in_the_file_cost_their_bytes_once():
    # a zip bomb: two central directory entries over one record's bytes; each storage read counts
    # against the file's size, so the second read is refused rather than allocated again
    raw = bytearray(zip_checkpoint(tensor_of(pid(1 << 16)), {"data/0": bytes(1 << 18)}))
    archive = _torch_format._Archive(io.BytesIO(bytes(raw)), len(raw))
    archive.read("data/0")
    with pytest.raises(RuntimeError, match="more than the file holds"):
        archive.read("data/0")


def test_a_torchscript_archive_is_named():
    with pytest.raises(RuntimeError, match="TorchScript"):
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("m/constants.pkl", b"")
            z.writestr("m/version", b"3\n")
        minitorch.load(io.BytesIO(buf.getvalue()))


def test_a_dtype_saved_twice():
    # the second occurrence of a dtype refers to the pickle's memo (it once failed an assertion)
    buf = io.BytesIO()
    minitorch.save({"a": minitorch.float32, "b": minitorch.float32, "c": [minitorch.int64, minitorch.int64]}, buf)
    buf.seek(0)
    assert minitorch.load(buf) == {"a": minitorch.float32, "b": minitorch.float32,
                                   "c": [minitorch.int64, minitorch.int64]}
    torch = pytest.importorskip("torch")
    buf.seek(0)
    assert torch.load(buf) == {"a": torch.float32, "b": torch.float32, "c": [torch.int64, torch.int64]}
