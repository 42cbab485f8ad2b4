"""The recurrent layers and cells in float16 and bfloat16 on the CPU against PyTorch's CPU, which
takes them (`nn.LSTM(...).half()`): the results' dtypes, the outputs and final states, and the
gradients of the input, the initial states and every parameter, padded and packed.

Both libraries store the small dtype and compute each op in float32, rounding its result once, but
not through the same ops (PyTorch's LSTM steps on the CPU are its own; ours the fused cell of
csrc/ops/rnn_cell.c inside the _lstm_layer op), so the roundings differ: the values are compared
to a few units in the last place of the dtype, relative to the largest magnitude of each result
(float16: 8 x 2^-10, bfloat16: 6 x 2^-7). No relu RNN: where a pre-activation rounds
to either side of 0 the two libraries' gradients rightly part (seen in bfloat16)."""
import numpy as np
import pytest

import minitorch as mt
from minitorch.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
RNG = np.random.default_rng(2020)
# a few units in the last place, relative to the largest magnitude of the result compared
ULPS = {"float16": 8 * 2.0**-10, "bfloat16": 6 * 2.0**-7}


def close(ours, theirs, dtype):
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == dtype
    a = ours.detach().float().numpy()
    b = theirs.detach().float().numpy()
    assert a.shape == b.shape
    scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=0, atol=ULPS[dtype] * scale)


def pair(name, dtype, *args, **kwargs):
    torch.manual_seed(20)
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(mt.nn, name)(*args, **kwargs)
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs.to(getattr(torch, dtype)), ours.to(getattr(mt, dtype))


def flatten(result):
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in flatten(r)]
    return [result]


def run(lib, module, dtype, arrays, lengths, enforce_sorted):
    """module on the first array (packed to lengths when given) and the states: the results
    (packed output padded again), the leaves, and a weighted sum of the results in float32."""
    leaves = [lib.tensor(a).to(getattr(lib, dtype)).requires_grad_() for a in arrays]
    inp, states = leaves[0], leaves[1:]
    utils = torch.nn.utils.rnn if lib is torch else rnn_utils
    batch_first = getattr(module, "batch_first", False)
    if lengths is not None:
        inp = utils.pack_padded_sequence(inp, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    hx = None if not states else (tuple(states) if len(states) == 2 else states[0])
    out = module(inp, hx)
    if lengths is not None:
        out = (utils.pad_packed_sequence(out[0], batch_first=batch_first)[0], out[1])
    results = flatten(out)
    loss = 0
    for k, r in enumerate(results):
        w = np.random.default_rng(k).standard_normal(tuple(r.shape)).astype(np.float32)
        loss = loss + (r.float() * lib.tensor(w)).sum()
    loss.backward()
    return results, leaves


def compare(name, dtype, kwargs, x_shape, state_shapes=(), lengths=None, enforce_sorted=True):
    theirs, ours = pair(name, dtype, 4, 5, **kwargs)
    arrays = [RNG.standard_normal(s).astype(np.float32) * 0.5 for s in (x_shape, *state_shapes)]
    (t_res, t_leaves), (m_res, m_leaves) = (run(lib, mod, dtype, arrays, lengths, enforce_sorted)
                                            for lib, mod in ((torch, theirs), (mt, ours)))
    assert len(t_res) == len(m_res)
    for a, b in zip(t_res, m_res):
        close(b, a, dtype)
    for a, b in zip(t_leaves, m_leaves):
        close(b.grad, a.grad, dtype)
    t_params, m_params = dict(theirs.named_parameters()), dict(ours.named_parameters())
    assert list(t_params) == list(m_params)
    for k in t_params:
        close(m_params[k].grad, t_params[k].grad, dtype)


def states(name, layers, batch, hidden=5, proj=0):
    return [(layers, batch, proj or hidden), (layers, batch, hidden)] if name == "LSTM" else [(layers, batch, hidden)]


MODULES = [
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "batch_first": True}),
    ("GRU", {"num_layers": 2}),
    ("GRU", {"bidirectional": True, "batch_first": True}),
    ("RNN", {"num_layers": 2}),
    ("RNN", {"bias": False}),
]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,kwargs", MODULES)
def test_modules_match_pytorch(name, kwargs, dtype):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    x_shape = (3, 6, 4) if kwargs.get("batch_first") else (6, 3, 4)
    compare(name, dtype, kwargs, x_shape)
    compare(name, dtype, kwargs, x_shape, states(name, layers, 3, proj=kwargs.get("proj_size", 0)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name,kwargs", [MODULES[1], MODULES[2], MODULES[4], MODULES[5]])
def test_packed_sequences_match_pytorch(name, kwargs, dtype):
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    x_shape = (4, 6, 4) if kwargs.get("batch_first") else (6, 4, 4)
    h = states(name, layers, 4, proj=kwargs.get("proj_size", 0))
    compare(name, dtype, kwargs, x_shape, h, lengths=[6, 4, 4, 1])
    compare(name, dtype, kwargs, x_shape, h, lengths=[2, 6, 1, 5], enforce_sorted=False)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_pytorch(name, dtype):
    compare(name, dtype, {}, (3, 4))
    compare(name, dtype, {}, (3, 4), [(3, 5), (3, 5)] if name == "LSTMCell" else [(3, 5)])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_layer_and_fused_cell_ops_keep_the_dtype(dtype):
    """The ops under nn.LSTM, nn.GRU and nn.RNN take the small dtype as given and give it back."""
    T, B, H = 3, 2, 4
    dt = getattr(mt, dtype)
    xw, h0, c0, w_hh = (mt.randn(*s).to(dt) for s in ((T * B, 4 * H), (B, H), (B, H), (4 * H, H)))
    for r in mt._C._lstm_layer(xw, h0, c0, w_hh, None, False):
        assert r.dtype == dt
    for r in mt._C._thnn_fused_lstm_cell(xw[:B], xw[B:2 * B], c0):
        assert r.dtype == dt
    for r in mt._C._gru_layer(xw[:, :3 * H], h0, w_hh[:3 * H], w_hh[:3 * H, 0], True):
        assert r.dtype == dt
    for relu in (False, True):
        assert mt._C._rnn_layer(xw[:, :H], h0, w_hh[:H], relu).dtype == dt


def test_input_and_weights_of_other_dtypes_raise_as_pytorch():
    for lib in (torch, mt):
        lib.manual_seed(0)
    msgs = []
    for lib in (torch, mt):
        lstm = lib.nn.LSTM(4, 5).half()
        with pytest.raises(ValueError) as e:
            lstm(lib.zeros(3, 2, 4))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1].replace("minitorch", "torch")


@pytest.mark.parametrize("name,dtype,state_dtype", [
    ("LSTM", "float16", "float32"), ("RNN", "bfloat16", "float32"), ("GRU", "float32", "float64"),
    ("LSTMCell", "float32", "float64"), ("RNNCell", "float16", "float32")
])
def test_states_of_another_dtype_raise_as_pytorch(name, dtype, state_dtype):
    """A state of another dtype than the weights: PyTorch's CPU message from its product with
    W_hh (a linear: 'mat1 and mat2 must have the same dtype')."""
    cell = name.endswith("Cell")
    msgs = []
    for lib in (torch, mt):
        module = getattr(lib.nn, name)(4, 5).to(getattr(lib, dtype))
        x = lib.zeros(*((2, 4) if cell else (3, 2, 4)), dtype=getattr(lib, dtype))
        h = lib.zeros(*((2, 5) if cell else (1, 2, 5)), dtype=getattr(lib, state_dtype))
        with pytest.raises(RuntimeError) as e:
            module(x, (h, h) if name.startswith("LSTM") else h)
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]
