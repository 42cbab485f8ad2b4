"""Quantized tensors (minitorch.quantize_per_tensor and kin) against NumPy and PyTorch: the
integers bit for bit (fbgemm's rounding, ties to even, clamping, NaN), the quantizer's
parameters, dequantize, printing, errors, the ops that run and those that raise, saving."""
from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, check

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions")

QDTYPES = ["qint8", "quint8", "qint32"]
RANGES = {"qint8": (-128, 127), "quint8": (0, 255), "qint32": (-(2 ** 31), 2 ** 31 - 1)}


def _ties(rng: np.random.Generator, scale: float, n: int) -> np.ndarray:
    """Values at and next to the rounding ties k * scale / 2, where a different order of
    operations would round the other way, plus a few far outside the 8-bit range."""
    k = rng.integers(-600, 600, n)
    x = (k * np.float32(scale) / 2).astype(np.float32)
    x[::3] = np.nextafter(x[::3], np.float32(np.inf))
    x[1::7] *= 50
    return x


def _both(fn, *arrays):
    return fn(minitorch, *[minitorch.tensor(a) for a in arrays]), fn(torch, *[torch.tensor(a) for a in arrays])


def _same_qtensor(got, want) -> None:
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert str(got.qscheme()).split(".")[-1] == str(want.qscheme()).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(as_numpy(got.int_repr()), want.int_repr().numpy())
    if "per_channel" in str(want.qscheme()):
        np.testing.assert_array_equal(as_numpy(got.q_per_channel_scales()), want.q_per_channel_scales().numpy())
        np.testing.assert_array_equal(as_numpy(got.q_per_channel_zero_points()),
                                      want.q_per_channel_zero_points().numpy())
        assert got.q_per_channel_axis() == want.q_per_channel_axis()
    else:
        assert got.q_scale() == want.q_scale() and got.q_zero_point() == want.q_zero_point()
    np.testing.assert_array_equal(as_numpy(got.dequantize()), want.dequantize().numpy())


# ---- dtypes and schemes ----

@pytest.mark.parametrize("name", QDTYPES)
def test_quantized_dtype_objects(name):
    d = getattr(minitorch, name)
    assert repr(d) == f"minitorch.{name}" and str(d) == repr(d)
    assert d == getattr(minitorch, name) and hash(d) == hash(getattr(minitorch, name))
    assert d != minitorch.int8 and d != minitorch.float32 and len({d, minitorch.qint8, minitorch.quint8}) >= 2
    assert pickle.loads(pickle.dumps(d)) is d and copy.deepcopy(d) is d
    td = getattr(torch, name)
    assert d.itemsize == td.itemsize
    assert d.is_floating_point is td.is_floating_point and d.is_complex is td.is_complex
    with pytest.raises(RuntimeError, match="isSignedType not supported for quantized types"):
        d.is_signed
    with pytest.raises(RuntimeError):
        td.is_signed


def test_qschemes():
    for name in ("per_tensor_affine", "per_channel_affine", "per_tensor_symmetric", "per_channel_symmetric",
                 "per_channel_affine_float_qparams"):
        s = getattr(minitorch, name)
        assert repr(s) == f"minitorch.{name}" and repr(getattr(torch, name)) == f"torch.{name}"
        assert isinstance(s, minitorch.qscheme) and pickle.loads(pickle.dumps(s)) is s
    assert minitorch.per_tensor_affine != minitorch.per_channel_affine


# ---- quantize_per_tensor: the integers ----

@pytest.mark.parametrize("name", QDTYPES)
def test_quantize_per_tensor_matches_torch_bit_for_bit(name):
    rng = np.random.default_rng(0)
    lo, hi = RANGES[name]
    for _ in range(40):
        scale = float(rng.uniform(1e-3, 1.0))
        zp = int(rng.integers(max(lo, -1000), min(hi, 1000) + 1))
        x = _ties(rng, scale, 257)
        got, want = _both(lambda lib, t: lib.quantize_per_tensor(t, scale, zp, getattr(lib, name)), x)
        _same_qtensor(got, want)


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_quantize_per_tensor_against_numpy(layout):
    # The float64 reference rounds x / scale + zero_point half to even; float32 arithmetic may
    # land a tie on the other side, so the integers agree within one, the values within a step.
    rng = np.random.default_rng(1)
    x = rng.normal(0, 3, (6, 5)).astype(np.float32)
    scale, zp = 0.037, 11

    def ref(a):
        return np.clip(np.rint(a / scale) + zp, 0, 255)

    check(lambda m, t: m.quantize_per_tensor(t, scale, zp, m.quint8).int_repr().double(), ref, [x],
          layout=layout, atol=1.0, rtol=0)
    check(lambda m, t: m.quantize_per_tensor(t, scale, zp, m.quint8).dequantize(),
          lambda a: (ref(a) - zp) * scale, [x], layout=layout, atol=scale * 1.01, rtol=0)


def test_quantize_nan_inf_and_empty():
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 0.0, -0.0, 2.5] * 3, np.float32)
    for name in ("qint8", "quint8"):
        got, want = _both(lambda lib, t: lib.quantize_per_tensor(t, 0.5, 3, getattr(lib, name)), x)
        _same_qtensor(got, want)
    got, want = _both(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 0, lib.qint8), np.zeros((0, 3), np.float32))
    _same_qtensor(got, want)
    assert repr(got).replace("minitorch.", "torch.") == repr(want)


def test_quantize_per_tensor_of_a_list_and_of_tensor_parameters():
    x = [np.linspace(-1, 1, 7, dtype=np.float32), np.linspace(0, 3, 5, dtype=np.float32)]
    got = minitorch.quantize_per_tensor([minitorch.tensor(a) for a in x], minitorch.tensor([0.1, 0.2]),
                                        minitorch.tensor([1, 2]), minitorch.quint8)
    want = torch.quantize_per_tensor([torch.tensor(a) for a in x], torch.tensor([0.1, 0.2]), torch.tensor([1, 2]),
                                     torch.quint8)
    assert len(got) == 2
    for g, w in zip(got, want):
        _same_qtensor(g, w)


@pytest.mark.parametrize("name", ["qint8", "quint8"])
@pytest.mark.parametrize("reduce_range", [False, True])
def test_quantize_per_tensor_dynamic(name, reduce_range):
    rng = np.random.default_rng(2)
    for shift in (0.0, 5.0, -5.0, 1e-6):
        x = (rng.normal(0, rng.uniform(1e-5, 4), (4, 9)) + shift).astype(np.float32)
        got, want = _both(lambda lib, t: lib.quantize_per_tensor_dynamic(t, getattr(lib, name), reduce_range), x)
        _same_qtensor(got, want)
    got, want = _both(lambda lib, t: lib.quantize_per_tensor_dynamic(t, lib.quint8, reduce_range),
                      np.zeros(5, np.float32))
    _same_qtensor(got, want)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_quantize_per_channel(axis):
    rng = np.random.default_rng(3)
    x = rng.normal(0, 2, (3, 4, 5)).astype(np.float32)
    n = x.shape[axis]
    scales = rng.uniform(0.01, 0.3, n)
    zps = rng.integers(-20, 20, n)
    for name in ("qint8", "quint8"):
        z = np.abs(zps) if name == "quint8" else zps
        got = minitorch.quantize_per_channel(minitorch.tensor(x), minitorch.tensor(scales), minitorch.tensor(z),
                                             axis, getattr(minitorch, name))
        want = torch.quantize_per_channel(torch.tensor(x), torch.tensor(scales), torch.tensor(z), axis,
                                          getattr(torch, name))
        _same_qtensor(got, want)
        with pytest.raises(RuntimeError, match="Expected quantizer->qscheme"):
            got.q_scale()


def test_dequantize_matches_torch():
    rng = np.random.default_rng(4)
    for _ in range(20):
        ir = rng.integers(-128, 128, 50).astype(np.int8)
        scale, zp = float(rng.uniform(1e-3, 2)), int(rng.integers(-100, 100))
        got = minitorch._make_per_tensor_quantized_tensor(minitorch.tensor(ir), scale, zp)
        want = torch._make_per_tensor_quantized_tensor(torch.tensor(ir), scale, zp)
        _same_qtensor(got, want)
    assert minitorch.dequantize(minitorch.ones(2)).dtype == minitorch.float32
    assert [t.dtype for t in minitorch.dequantize([got, got])] == [minitorch.float32] * 2


# ---- printing ----

def _norm(text: str) -> str:
    return " ".join(text.replace("minitorch.", "torch.").split())


def test_repr_as_torch():
    x = np.array([[-1.5, 0.25, 3.0], [2.5, 0.5, -0.5]], np.float32)
    got, want = _both(lambda lib, t: lib.quantize_per_tensor(t, 0.5, 3, lib.quint8), x)
    assert repr(got) == repr(want).replace("torch.", "minitorch.")
    got, want = _both(lambda lib, t: lib.quantize_per_channel(t, lib.tensor([0.1, 0.2]), lib.tensor([0, 1]), 0,
                                                              lib.qint8), x)
    assert _norm(repr(got)) == _norm(repr(want))
    got, want = _both(lambda lib, t: lib.quantize_per_tensor_dynamic(t, lib.quint8, False), x)
    assert _norm(repr(got)) == _norm(repr(want)) and _norm(str(got)) == _norm(str(want))


# ---- errors ----

def _raise_alike(fn, *arrays) -> None:
    errors = []
    for lib in (minitorch, torch):
        try:
            fn(lib, *[lib.tensor(a) for a in arrays])
        except Exception as e:  # noqa: BLE001 - the class and words are compared
            errors.append(e)
        else:
            raise AssertionError(f"{lib.__name__} did not raise")
    mine, theirs = errors
    assert type(mine) is type(theirs), f"{mine!r} vs {theirs!r}"
    assert str(mine).split(". ")[0] == str(theirs).split(". ")[0].replace("torch.", "minitorch."), \
        f"{mine} != {theirs}"


X = np.array([1.0, 2.0], np.float32)


@pytest.mark.parametrize("fn", [
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, 0, lib.float32),
    lambda lib, t: lib.quantize_per_tensor(t.long(), 0.1, 0, lib.qint8),
    lambda lib, t: lib.quantize_per_tensor(t.double(), 0.1, 0, lib.qint8),
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, 300, lib.qint8),
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, -1, lib.quint8),
    lambda lib, t: lib.quantize_per_channel(t, lib.tensor([0.1]), lib.tensor([0]), 0, lib.qint8),
    lambda lib, t: lib.quantize_per_channel(t, lib.tensor([0.1, 0.2]), lib.tensor([0, 0]), 1, lib.qint8),
    lambda lib, t: lib.quantize_per_tensor_dynamic(t, lib.qint32, False),
    lambda lib, t: lib.quantize_per_tensor(t, 0.1, 0, lib.qint8).requires_grad_(),
], ids=["float-dtype", "long-input", "double-input", "zp-high", "zp-low", "scales-len", "axis", "dynamic-qint32",
        "requires-grad"])
def test_errors_as_torch(fn):
    _raise_alike(fn, X)


@pytest.mark.parametrize("fn", [
    lambda lib, q: q + q, lambda lib, q: lib.add(q, q), lambda lib, q: q.sum(), lambda lib, q: lib.exp(q),
    lambda lib, q: q @ q.t(), lambda lib, q: -q, lambda lib, q: q.abs(), lambda lib, q: q * q,
    lambda lib, q: q - q, lambda lib, q: q.cumsum(0), lambda lib, q: lib.matmul(q, q.t()),
], ids=["add", "torch.add", "sum", "exp", "matmul", "neg", "abs", "mul", "sub", "cumsum", "torch.matmul"])
def test_unsupported_ops_raise_not_implemented(fn):
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    for lib in (minitorch, torch):
        q = lib.quantize_per_tensor(lib.tensor(x), 0.1, 2, lib.quint8)
        with pytest.raises(NotImplementedError, match=r"^Could not run 'aten::\w+\.\w+' with arguments from the "
                                                      r"'QuantizedCPU' backend"):
            fn(lib, q)


# ---- what runs on a quantized tensor ----

@pytest.mark.parametrize("fn", [
    lambda lib, q: q.view(4, 3), lambda lib, q: q.reshape(-1), lambda lib, q: q.transpose(0, 1),
    lambda lib, q: q[1], lambda lib, q: q[:, 1:3], lambda lib, q: q.permute(1, 0), lambda lib, q: q.flatten(),
    lambda lib, q: lib.relu(q), lambda lib, q: lib.nn.functional.relu(q), lambda lib, q: q.clone(),
    lambda lib, q: q.contiguous(), lambda lib, q: q.detach(), lambda lib, q: q.unsqueeze(0),
    lambda lib, q: lib.cat([q, q], 1), lambda lib, q: q.relu(),
], ids=["view", "reshape", "transpose", "index", "slice", "permute", "flatten", "relu", "F.relu", "clone",
        "contiguous", "detach", "unsqueeze", "cat", "relu-method"])
def test_supported_ops_as_torch(fn):
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 7
    got, want = _both(lambda lib, t: fn(lib, lib.quantize_per_tensor(t, 0.1, 2, lib.qint8)), x)
    _same_qtensor(got, want)


def test_attributes_and_comparisons_as_torch():
    x = (np.arange(6, dtype=np.float32).reshape(2, 3) - 2) / 3
    q, tq = _both(lambda lib, t: lib.quantize_per_tensor(t, 0.05, 1, lib.quint8), x)
    assert q.is_quantized and tq.is_quantized and not minitorch.ones(1).is_quantized
    assert isinstance(q, minitorch.Tensor) and isinstance(tq, torch.Tensor)
    assert q.stride() == tq.stride() and q.t().stride() == tq.t().stride() and q.t().q_scale() == 0.05
    _same_qtensor(q.T, tq.T)
    _same_qtensor(q.mT, tq.mT)
    assert q.data_ptr() == q._ir.data_ptr() and q.t().data_ptr() == q.data_ptr()
    assert q.shape == tuple(tq.shape) and q.size(1) == tq.size(1) and q.dim() == tq.dim()
    assert q.numel() == tq.numel() and q.element_size() == tq.element_size() and len(q) == len(tq)
    assert q.is_floating_point() is tq.is_floating_point() is False
    assert str(q.device) == "cpu" and not q.requires_grad
    np.testing.assert_array_equal(as_numpy(q == q), (tq == tq).numpy())
    assert minitorch.equal(q, q.clone()) and torch.equal(tq, tq.clone())
    other = minitorch.quantize_per_tensor(minitorch.tensor(x), 0.05, 2, minitorch.quint8)
    assert not minitorch.equal(q, other)
    assert q.int_repr().dtype == minitorch.uint8 and q.int_repr().data_ptr() != q.int_repr().data_ptr()
    assert [t.q_scale() for t in q] == [0.05, 0.05]
    deep = copy.deepcopy(q)
    _same_qtensor(deep, tq)
    _same_qtensor(pickle.loads(pickle.dumps(q)), tq)


# ---- saving ----

@pytest.mark.parametrize("zip_format", [True, False])
@pytest.mark.parametrize("per_channel", [False, True])
def test_save_load_both_ways(per_channel, zip_format):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 4)).astype(np.float32)

    def make(lib):
        t = lib.tensor(x)
        if per_channel:
            return lib.quantize_per_channel(t, lib.tensor([0.1, 0.02, 0.3]), lib.tensor([0, 3, -2]), 0, lib.qint8)
        return lib.quantize_per_tensor(t, 0.03, 5, lib.qint8)

    q, tq = make(minitorch), make(torch)
    buf = io.BytesIO()
    minitorch.save({"q": q, "dtype": minitorch.qint8}, buf, _use_new_zipfile_serialization=zip_format)
    buf.seek(0)
    back = torch.load(buf)  # PyTorch reads minitorch's file, weights_only
    assert back["dtype"] is torch.qint8
    assert torch.equal(back["q"], tq)
    buf = io.BytesIO()
    torch.save({"q": tq}, buf, _use_new_zipfile_serialization=zip_format)
    buf.seek(0)
    mine = minitorch.load(buf)["q"]
    _same_qtensor(mine, tq)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.zeros(3, dtype=lib.qint8), lambda lib: lib.ones(2, dtype=lib.quint8),
    lambda lib: lib.tensor([1.0]).to(dtype=lib.qint8), lambda lib: lib.randn(2).to(lib.float32).to(dtype=lib.qint32),
], ids=["zeros", "ones", "to", "to-qint32"])
def test_quantized_dtype_in_factories_and_casts_raises_as_torch(fn):
    classes = []
    for lib in (minitorch, torch):
        with pytest.raises((RuntimeError, NotImplementedError)) as e:
            fn(lib)
        classes.append(e.type)
    assert classes[0] is classes[1]


def test_corrupt_quantized_checkpoint_is_refused():
    q = minitorch.quantize_per_tensor(minitorch.tensor([1.0, 2.0]), 0.1, 0, minitorch.qint8)
    buf = io.BytesIO()
    minitorch.save(q, buf)
    raw = buf.getvalue().replace(b"per_tensor_affine", b"per_tensor_affinX")
    with pytest.raises(Exception):
        minitorch.load(io.BytesIO(raw))
    buf.seek(0)
    _same_qtensor(minitorch.load(buf), torch.quantize_per_tensor(torch.tensor([1.0, 2.0]), 0.1, 0, torch.qint8))


@pytest.mark.parametrize("fn", [
    lambda lib, q: q.item(), lambda lib, q: float(q), lambda lib, q: bool(q), lambda lib, q: q.numpy(),
    lambda lib, q: q.tolist(), lambda lib, q: q.float(), lambda lib, q: q.double(), lambda lib, q: q.mean(),
    lambda lib, q: lib.mean(q),
], ids=["item", "float", "bool", "numpy", "tolist", "float()", "double()", "mean", "torch.mean"])
def test_values_and_casts_as_torch(fn):
    results = []
    for lib in (minitorch, torch):
        q = lib.quantize_per_tensor(lib.tensor([1.37]), 0.25, 3, lib.qint8)
        try:
            results.append(fn(lib, q))
        except Exception as e:  # noqa: BLE001 - the class and words are compared
            results.append(e)
    got, want = results
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want)
    elif isinstance(want, torch.Tensor):
        _same_qtensor(got, want)
    else:
        assert got == want and type(got) is type(want)


def test_quantized_mean_along_a_dim():
    x = np.linspace(-2, 3, 12, dtype=np.float32).reshape(3, 4)
    got, want = _both(lambda lib, t: lib.quantize_per_tensor(t, 0.1, 5, lib.quint8).mean(1, keepdim=True), x)
    _same_qtensor(got, want)
