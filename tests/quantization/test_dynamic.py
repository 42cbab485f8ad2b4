"""Dynamic quantization (quantize_dynamic, nn.quantized.dynamic) against PyTorch: the same weights
quantized to the same integers, the dynamic Linear's output bit for bit (fbgemm's activation
quantization, integer product and fused rescale), the recurrent layers within a float32 rounding
of the gates, printing, state_dict keys, sizes on disk, loading both ways, errors, the engine."""
from __future__ import annotations

import io

import numpy as np
import pytest

import minitorch
from helpers import as_numpy

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions",
                                        "ignore:.*TypedStorage is deprecated",
                                        "ignore:torch.ao.quantization is deprecated:DeprecationWarning")


def _pair(kind: str, *args, **kwargs):
    """(torch's, minitorch's) float module of kind, minitorch's with torch's weights, each wrapped
    in a Sequential (quantize_dynamic never replaces the model itself)."""
    t = torch.nn.Sequential(getattr(torch.nn, kind)(*args, **kwargs))
    m = minitorch.nn.Sequential(getattr(minitorch.nn, kind)(*args, **kwargs))
    m.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, m


def _quantized_pair(kind: str, *args, dtype: str = "qint8", **kwargs):
    t, m = _pair(kind, *args, **kwargs)
    tq = torch.ao.quantization.quantize_dynamic(t, {getattr(torch.nn, kind)}, dtype=getattr(torch, dtype))
    mq = minitorch.ao.quantization.quantize_dynamic(m, {getattr(minitorch.nn, kind)},
                                                    dtype=getattr(minitorch, dtype))
    return tq, mq


def _flat(out) -> list:
    return [z for o in out for z in _flat(o)] if isinstance(out, tuple) else [out]


def _compare(got, want, atol: float) -> None:
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape) and g.dtype == minitorch.float32
        np.testing.assert_allclose(as_numpy(g), w.detach().numpy(), rtol=0, atol=atol)


@pytest.mark.parametrize("shape,in_f,out_f,bias", [
    ((5, 16), 16, 8, True), ((2, 3, 16), 16, 8, True), ((4, 33), 33, 7, False),
    ((1, 1), 1, 1, True), ((64, 40), 40, 70, True), ((3, 1100), 1100, 5, True),  # K > 1032: the float64 product
])
def test_dynamic_linear_bit_for_bit(shape, in_f, out_f, bias):
    rng = np.random.default_rng(in_f * out_f)
    for _ in range(4):
        tq, mq = _quantized_pair("Linear", in_f, out_f, bias=bias)
        np.testing.assert_array_equal(as_numpy(mq[0].weight().int_repr()), tq[0].weight().int_repr().numpy())
        assert mq[0].weight().q_scale() == tq[0].weight().q_scale()
        for x in (rng.normal(0, rng.uniform(0.01, 5), shape), rng.uniform(0, 3, shape), -rng.uniform(0, 3, shape),
                  np.zeros(shape)):
            x = x.astype(np.float32)
            _compare(mq[0](minitorch.tensor(x)), tq[0](torch.tensor(x)), atol=0)


def test_dynamic_linear_non_contiguous_and_empty_input():
    tq, mq = _quantized_pair("Linear", 6, 4)
    x = np.random.default_rng(0).normal(size=(6, 5)).astype(np.float32)
    _compare(mq[0](minitorch.tensor(x).t()), tq[0](torch.tensor(x).t()), atol=0)
    _compare(mq[0](minitorch.zeros(0, 6)), tq[0](torch.zeros(0, 6)), atol=0)


def test_dynamic_linear_float16():
    rng = np.random.default_rng(1)
    tq, mq = _quantized_pair("Linear", 16, 8, dtype="float16")
    x = rng.normal(size=(5, 16)).astype(np.float32)
    _compare(mq[0](minitorch.tensor(x)), tq[0](torch.tensor(x)), atol=1e-6)
    np.testing.assert_array_equal(as_numpy(mq[0].weight()), tq[0].weight().numpy())


@pytest.mark.parametrize("kind,args,kwargs,shape", [
    ("LSTM", (6, 5), {}, (7, 3, 6)),
    ("LSTM", (6, 5, 2), {"bidirectional": True}, (4, 3, 6)),
    ("LSTM", (6, 5), {"batch_first": True}, (3, 4, 6)),
    ("GRU", (6, 5, 2), {}, (7, 3, 6)),
    ("GRU", (6, 5), {"bidirectional": True, "batch_first": True}, (2, 5, 6)),
    ("LSTMCell", (6, 5), {}, (3, 6)),
    ("GRUCell", (6, 5), {}, (3, 6)),
    ("RNNCell", (6, 5), {}, (3, 6)),
    ("RNNCell", (6, 5), {"nonlinearity": "relu"}, (2, 6)),
])
@pytest.mark.parametrize("dtype", ["qint8", "float16"])
def test_dynamic_recurrent_layers(kind, args, kwargs, shape, dtype):
    # The integer products are exact; the gates (sigmoid, tanh) differ from PyTorch's vectorized
    # ones by an ulp now and then, which may move a later activation's rounding by one quantum.
    rng = np.random.default_rng(2)
    tq, mq = _quantized_pair(kind, *args, dtype=dtype, **kwargs)
    x = rng.normal(size=shape).astype(np.float32)
    _compare(mq[0](minitorch.tensor(x)), tq[0](torch.tensor(x)), atol=1e-5)


@pytest.mark.parametrize("kind,shape", [("Linear", (6,)), ("LSTM", (4, 6)), ("GRU", (2, 3, 5)), ("LSTMCell", (6,)),
                                        ("GRUCell", (2, 5)), ("Linear", (3, 5))])
def test_bad_inputs_raise_as_torch(kind, shape):
    # PyTorch's dynamic quantized modules take batched input only
    tq, mq = _quantized_pair(kind, 6, 4)
    x = np.zeros(shape, np.float32)
    with pytest.raises(Exception) as want:
        tq[0](torch.tensor(x))
    with pytest.raises(want.type) as got:
        mq[0](minitorch.tensor(x))
    if want.type is RuntimeError and "must" in str(want.value):
        assert str(got.value) == str(want.value)


def test_lstm_with_given_state():
    rng = np.random.default_rng(3)
    tq, mq = _quantized_pair("LSTM", 4, 3, 2)
    x, h, c = (rng.normal(size=s).astype(np.float32) for s in ((5, 2, 4), (2, 2, 3), (2, 2, 3)))
    got = mq[0](minitorch.tensor(x), (minitorch.tensor(h), minitorch.tensor(c)))
    want = tq[0](torch.tensor(x), (torch.tensor(h), torch.tensor(c)))
    _compare(got, want, atol=1e-5)
    with pytest.raises(RuntimeError, match="Expected hidden"):
        mq[0](minitorch.tensor(x), (minitorch.zeros(1, 2, 3), minitorch.zeros(1, 2, 3)))


def _norm(text: str) -> str:
    return text.replace("minitorch.", "torch.")


def test_repr_and_state_dict_keys_as_torch():
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Linear(4, 3), nn.LSTM(3, 5, 2), nn.GRU(3, 4, batch_first=True),
                             nn.LSTMCell(3, 4), nn.ReLU())

    tq = torch.ao.quantization.quantize_dynamic(build(torch), dtype=torch.qint8)
    mq = minitorch.ao.quantization.quantize_dynamic(build(minitorch), dtype=minitorch.qint8)
    assert _norm(repr(mq)) == repr(tq)
    assert list(mq.state_dict()) == list(tq.state_dict())
    t16 = torch.ao.quantization.quantize_dynamic(build(torch), {torch.nn.Linear, torch.nn.LSTM},
                                                 dtype=torch.float16)
    m16 = minitorch.ao.quantization.quantize_dynamic(build(minitorch), {minitorch.nn.Linear, minitorch.nn.LSTM},
                                                     dtype=minitorch.float16)
    assert _norm(repr(m16)) == repr(t16)
    assert mq[0].bias() is not None and mq[0].weight().dtype is minitorch.qint8


def _size(lib, model) -> int:
    buf = io.BytesIO()
    lib.save(model.state_dict(), buf)
    return len(buf.getvalue())


def test_quantized_model_is_smaller_on_disk_as_in_torch():
    def build(lib):
        return lib.nn.Sequential(lib.nn.Embedding(50, 32), lib.nn.LSTM(32, 64, 2), lib.nn.Linear(64, 50))

    sizes = {}
    for lib in (torch, minitorch):
        model = build(lib)
        q = lib.ao.quantization.quantize_dynamic(model, {lib.nn.LSTM, lib.nn.Linear}, dtype=lib.qint8)
        sizes[lib.__name__] = (_size(lib, model), _size(lib, q))
    (t_float, t_q), (m_float, m_q) = sizes["torch"], sizes["minitorch"]
    assert m_q < m_float / 2.5 and t_q < t_float / 2.5
    assert abs(m_q / m_float - t_q / t_float) < 0.02


def test_state_dict_loads_both_ways():
    rng = np.random.default_rng(4)
    tq, mq = _quantized_pair("LSTM", 4, 3)
    tq2, mq2 = _quantized_pair("LSTM", 4, 3)  # other random weights
    buf = io.BytesIO()
    minitorch.save(mq.state_dict(), buf)
    buf.seek(0)
    tq2.load_state_dict(torch.load(buf, weights_only=False))
    x = rng.normal(size=(5, 2, 4)).astype(np.float32)
    _compare(mq[0](minitorch.tensor(x)), tq2[0](torch.tensor(x)), atol=1e-5)
    buf = io.BytesIO()
    torch.save(tq.state_dict(), buf)
    buf.seek(0)
    mq2.load_state_dict(minitorch.load(buf, weights_only=False))
    _compare(mq2[0](minitorch.tensor(x)), tq[0](torch.tensor(x)), atol=1e-5)
    lin_t, lin_m = _quantized_pair("Linear", 4, 3)
    buf = io.BytesIO()
    torch.save(lin_t.state_dict(), buf)
    buf.seek(0)
    _, lin_m2 = _quantized_pair("Linear", 4, 3)
    lin_m2.load_state_dict(minitorch.load(buf))  # a quantized Linear's state loads weights_only
    _compare(lin_m2[0](minitorch.tensor(x[0])), lin_t[0](torch.tensor(x[0])), atol=0)


# ---- quantize_dynamic's options ----

class _Net:
    @staticmethod
    def build(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1, self.fc2, self.rnn = lib.nn.Linear(4, 4), lib.nn.Linear(4, 2), lib.nn.GRU(4, 4)

            def forward(self, x):
                return self.fc2(self.fc1(x))

        return Net()


def test_qconfig_spec_forms_and_inplace():
    qd = minitorch.ao.quantization
    nnqd = minitorch.nn.quantized.dynamic
    model = _Net.build(minitorch)
    q = qd.quantize_dynamic(model, {"fc1"})
    assert type(q.fc1) is nnqd.Linear and type(q.fc2) is minitorch.nn.Linear and type(q.rnn) is minitorch.nn.GRU
    assert type(model.fc1) is minitorch.nn.Linear  # not inplace: the model is unchanged
    q = qd.quantize_dynamic(model, {minitorch.nn.Linear: qd.default_dynamic_qconfig, "fc2": None})
    assert type(q.fc1) is nnqd.Linear and type(q.fc2) is minitorch.nn.Linear
    q = qd.quantize_dynamic(model)
    assert type(q.rnn) is nnqd.GRU and not hasattr(q.fc1, "qconfig") and not hasattr(q, "qconfig")
    same = qd.quantize_dynamic(model, {minitorch.nn.Linear}, inplace=True)
    assert same is model and type(model.fc1) is nnqd.Linear and not model.training
    custom = qd.quantize_dynamic(_Net.build(minitorch), {minitorch.nn.Linear},
                                 mapping={minitorch.nn.Linear: nnqd.Linear})
    assert type(custom.fc2) is nnqd.Linear and type(custom.rnn) is minitorch.nn.GRU
    assert minitorch.quantization.quantize_dynamic is qd.quantize_dynamic
    assert minitorch.nn.quantized.dynamic.LSTM is minitorch.ao.nn.quantized.dynamic.LSTM


def test_quantize_dynamic_errors_as_torch():
    for lib, msg in ((torch, "Unknown dtype"), (minitorch, "Unknown dtype")):
        with pytest.raises(RuntimeError, match=msg):
            lib.ao.quantization.quantize_dynamic(_Net.build(lib), {lib.nn.Linear}, dtype=lib.int8)
        with pytest.raises(ValueError, match="Don't know how to quantize with default settings"):
            lib.ao.quantization.quantize_dynamic(_Net.build(lib), dtype=lib.int8)
        with pytest.raises(AssertionError, match="Input float module must have qconfig defined"):
            lib.nn.quantized.dynamic.Linear.from_float(lib.nn.Linear(2, 2))
        with pytest.raises(AssertionError, match="only works for one of"):
            lib.nn.quantized.dynamic.Linear.from_float(lib.nn.Conv1d(2, 2, 1))
        with pytest.raises(ValueError, match="QConfig received observer instance"):
            lib.ao.quantization.QConfig(activation=lib.ao.quantization.MinMaxObserver(),
                                        weight=lib.ao.quantization.default_weight_observer)


def test_quantize_dynamic_warns_deprecated_as_torch():
    for lib in (minitorch, torch):
        with pytest.warns(DeprecationWarning, match="^torch.ao.quantization is deprecated and will be removed"):
            lib.ao.quantization.quantize_dynamic(_Net.build(lib))


def test_quantized_engine():
    qb = minitorch.backends.quantized
    assert qb.engine == torch.backends.quantized.engine == "x86"
    assert set(qb.supported_engines) <= set(torch.backends.quantized.supported_engines)
    qb.engine = "fbgemm"
    assert qb.engine == "fbgemm"
    qb.engine = "x86"
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match="foo is not a valid value for quantized engine"):
            lib.backends.quantized.engine = "foo"
        with pytest.raises(RuntimeError, match="Assignment not supported"):
            lib.backends.quantized.supported_engines = []


# ---- observers ----

@pytest.mark.parametrize("make", [
    lambda q: q.MinMaxObserver(),
    lambda q: q.MinMaxObserver(dtype=q.torch_qint8, qscheme=q.torch_sym),
    lambda q: q.MinMaxObserver(quant_min=0, quant_max=127),
    lambda q: q.default_weight_observer(),
    lambda q: q.PerChannelMinMaxObserver(),
    lambda q: q.PerChannelMinMaxObserver(ch_axis=1, dtype=q.torch_qint8, qscheme=q.torch_pc_sym),
    lambda q: q.MovingAverageMinMaxObserver(),
])
def test_observers_as_torch(make):
    rng = np.random.default_rng(5)
    xs = [rng.normal(0, 2, (3, 4)).astype(np.float32) + s for s in (0.0, 3.0, -1.0)]
    results = []
    for lib in (minitorch, torch):
        q = lib.ao.quantization
        q.torch_qint8, q.torch_sym, q.torch_pc_sym = lib.qint8, lib.per_tensor_symmetric, lib.per_channel_symmetric
        obs = make(q)
        for x in xs:
            obs(lib.tensor(x))
        results.append(obs.calculate_qparams())
    (ms, mz), (ts, tz) = results
    np.testing.assert_array_equal(as_numpy(ms), ts.numpy())
    np.testing.assert_array_equal(as_numpy(mz), tz.numpy())
    assert str(mz.dtype).split(".")[-1] == str(tz.dtype).split(".")[-1]
