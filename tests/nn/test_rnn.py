"""The recurrent layers (RNN, LSTM, GRU and their cells) and nn.utils.rnn against PyTorch, with
weights copied through state_dict: outputs, final states, the gradients of the input, the initial
states and every parameter; batch_first, bidirectional, several layers, proj_size, unbatched input,
packed sequences, dropout between layers; parameter names, shapes, initialisation, reprs and the
errors of bad sizes. One configuration of each also runs on the (emulated) CUDA device."""
import math
import warnings

import numpy as np
import pytest

import minitorch as mt
from minitorch import nn
from minitorch.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch")
# PyTorch's own notice that its LSTM with proj_size runs without oneDNN
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
RNG = np.random.default_rng(20)
TOL = dict(rtol=1e-4, atol=1e-5)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def pair(name, *args, device="cpu", **kwargs):
    """(PyTorch's module, minitorch's) with PyTorch's weights loaded into minitorch's."""
    theirs = getattr(torch.nn, name)(*args, **kwargs)
    ours = getattr(nn, name)(*args, **kwargs)
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours.to(device)


def leaves(arrays, device="cpu"):
    """Each NumPy array as a leaf requiring grad in both libraries."""
    t = [torch.tensor(a, requires_grad=True) for a in arrays]
    m = [mt.tensor(a, requires_grad=True, device=device) for a in arrays]
    return t, m


def flatten(result):
    """The tensors of (output, h_n) or (output, (h_n, c_n)) or a cell's h / (h, c), in order."""
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in flatten(r)]
    return [result]


def close(ours, theirs):
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), **TOL)


def compare(theirs, ours, x, states=(), pack=None, device="cpu"):
    """Runs both modules on x (and the initial states), compares every result, then the gradients
    of a weighted sum of the results with respect to x, the states and every parameter."""
    (tx, *ts), (mx, *ms) = leaves([x, *states], device)
    t_in, m_in = tx, mx
    if pack is not None:  # lengths; sorted ones are packed with enforce_sorted=True
        ordered = list(pack) == sorted(pack, reverse=True)
        t_in = torch.nn.utils.rnn.pack_padded_sequence(tx, pack, batch_first=theirs.batch_first,
                                                       enforce_sorted=ordered)
        m_in = rnn_utils.pack_padded_sequence(mx, pack, batch_first=ours.batch_first, enforce_sorted=ordered)
    t_h = None if not ts else (tuple(ts) if len(ts) == 2 else ts[0])
    m_h = None if not ms else (tuple(ms) if len(ms) == 2 else ms[0])
    t_out, m_out = theirs(t_in, t_h), ours(m_in, m_h)
    if pack is not None:
        t_out = (torch.nn.utils.rnn.pad_packed_sequence(t_out[0], theirs.batch_first)[0], t_out[1])
        m_out = (rnn_utils.pad_packed_sequence(m_out[0], ours.batch_first)[0], m_out[1])
    t_flat, m_flat = flatten(t_out), flatten(m_out)
    assert len(t_flat) == len(m_flat)
    t_loss, m_loss = 0, 0
    for a, b in zip(t_flat, m_flat):
        assert tuple(b.shape) == tuple(a.shape)
        close(b, a)
        w = rand(*a.shape)
        t_loss = t_loss + (a * torch.tensor(w)).sum()
        m_loss = m_loss + (b * mt.tensor(w, device=device)).sum()
    t_loss.backward()
    m_loss.backward()
    for a, b in zip([tx, *ts], [mx, *ms]):
        close(b.grad, a.grad)
    t_params, m_params = dict(theirs.named_parameters()), dict(ours.named_parameters())
    assert list(t_params) == list(m_params)
    for k in t_params:
        close(m_params[k].grad, t_params[k].grad)


def states_for(name, layers, batch, hidden, proj=0, batched=True):
    lead = (layers, batch) if batched else (layers,)
    h = rand(*lead, proj or hidden)
    return (h, rand(*lead, hidden)) if name == "LSTM" else (h,)


CONFIGS = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bidirectional": True, "batch_first": True, "bias": False}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"batch_first": True, "bias": False, "num_layers": 3}),
    ("LSTM", {"proj_size": 3, "num_layers": 2, "bidirectional": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {"bias": False}),
]


@pytest.mark.parametrize("with_states", [False, True])
@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_matches_pytorch(name, kwargs, with_states):
    theirs, ours = pair(name, 4, 5, **kwargs)
    T, B = 6, 3
    x = rand(B, T, 4) if kwargs.get("batch_first") else rand(T, B, 4)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    states = states_for(name, layers, B, 5, kwargs.get("proj_size", 0)) if with_states else ()
    compare(theirs, ours, x, states)


@pytest.mark.parametrize("name,kwargs", [CONFIGS[4], CONFIGS[8]])
def test_long_sequences_match_pytorch(name, kwargs):
    """More steps than minitorch's dimension limit (a language model's 35-token window), padded
    and packed."""
    theirs, ours = pair(name, 4, 5, **kwargs)
    T = 40
    x = rand(3, T, 4) if kwargs.get("batch_first") else rand(T, 3, 4)
    compare(theirs, ours, x)
    compare(theirs, ours, x, pack=[T, 37, 20])


def test_split_into_more_pieces_than_the_dimension_limit():
    x = rand(40, 2)
    sizes = [1] * 30 + [3, 0, 7]
    for a, b in zip(torch.tensor(x).split(sizes), mt.tensor(x).split(sizes)):
        np.testing.assert_array_equal(b.numpy(), a.numpy())
    for bad in ([1] * 30 + [3, 0, 6], [1] * 30 + [-1, 11]):
        with pytest.raises(RuntimeError) as want:
            torch.tensor(x).split(bad)
        with pytest.raises(RuntimeError) as got:
            mt.tensor(x).split(bad)
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("name,kwargs", [CONFIGS[1], CONFIGS[4], CONFIGS[6], CONFIGS[8]])
def test_unbatched_input(name, kwargs):
    theirs, ours = pair(name, 4, 5, **kwargs)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    compare(theirs, ours, rand(7, 4))
    compare(theirs, ours, rand(7, 4), states_for(name, layers, 0, 5, kwargs.get("proj_size", 0), batched=False))


@pytest.mark.parametrize("name,kwargs", [CONFIGS[1], CONFIGS[4], CONFIGS[6], CONFIGS[8], ("RNN", {})])
def test_packed_sequence_matches_pytorch(name, kwargs):
    theirs, ours = pair(name, 4, 5, **kwargs)
    x = rand(3, 6, 4) if kwargs.get("batch_first") else rand(6, 3, 4)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    compare(theirs, ours, x, pack=[4, 6, 2])
    compare(theirs, ours, x, states_for(name, layers, 3, 5, kwargs.get("proj_size", 0)), pack=[4, 6, 2])
    compare(theirs, ours, x, states_for(name, layers, 3, 5, kwargs.get("proj_size", 0)), pack=[6, 3, 3])


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU"])
def test_dropout_between_layers(name):
    theirs, ours = pair(name, 4, 5, num_layers=2, dropout=0.5)
    # eval: no dropout, as PyTorch
    theirs.eval(), ours.eval()
    compare(theirs, ours, rand(5, 2, 4))
    # p=1 in training zeroes what the second layer reads, in both libraries
    theirs, ours = pair(name, 4, 5, num_layers=2, dropout=1.0)
    compare(theirs, ours, rand(5, 2, 4))
    # p=0.5: masks differ from call to call in training, not in eval
    ours.dropout = 0.5
    x = mt.tensor(rand(5, 2, 4))
    runs = [ours(x)[0].detach().numpy() for _ in range(2)]
    assert not np.array_equal(*runs)
    ours.eval()
    assert np.array_equal(ours(x)[0].detach().numpy(), ours(x)[0].detach().numpy())


@pytest.mark.parametrize("name,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu", "bias": False}),
                                         ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {})])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_pytorch(name, kwargs, batched):
    theirs, ours = pair(name, 4, 5, **kwargs)
    lead = (3,) if batched else ()
    x = rand(*lead, 4)
    compare(theirs, ours, x)
    states = (rand(*lead, 5), rand(*lead, 5)) if name == "LSTMCell" else (rand(*lead, 5),)
    compare(theirs, ours, x, states)


ALL = [("RNN", (4, 5), {"nonlinearity": "relu", "num_layers": 2, "bidirectional": True}),
       ("LSTM", (4, 5), {"num_layers": 2, "proj_size": 2, "bias": False, "batch_first": True}),
       ("LSTM", (4, 5), {"dropout": 0.25, "num_layers": 2, "bidirectional": True}),
       ("GRU", (4, 5), {"bidirectional": True}),
       ("RNNCell", (4, 5), {"nonlinearity": "relu", "bias": False}),
       ("LSTMCell", (4, 5), {}), ("GRUCell", (4, 5), {"bias": False})]


@pytest.mark.parametrize("name,args,kwargs", ALL)
def test_names_shapes_repr_and_state_dict_both_ways(name, args, kwargs):
    theirs, ours = getattr(torch.nn, name)(*args, **kwargs), getattr(nn, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    t_sd, m_sd = theirs.state_dict(), ours.state_dict()
    assert list(m_sd) == list(t_sd)
    for k in t_sd:
        assert tuple(m_sd[k].shape) == tuple(t_sd[k].shape)
    # minitorch's state_dict loads into PyTorch's module, and the two then agree
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in m_sd.items()})
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), m_sd[k].numpy())
    for attr in ("input_size", "hidden_size", "bias", "num_layers", "batch_first", "dropout", "bidirectional",
                 "proj_size", "nonlinearity", "mode"):
        if hasattr(theirs, attr):
            assert getattr(ours, attr) == getattr(theirs, attr), attr


@pytest.mark.parametrize("name,args,kwargs", ALL)
def test_init_is_uniform_in_one_over_sqrt_hidden(name, args, kwargs):
    mt.manual_seed(0)
    module = getattr(nn, name)(*args, **kwargs)
    bound = 1 / math.sqrt(args[1])
    values = np.concatenate([p.detach().numpy().ravel() for p in module.parameters()])
    assert np.abs(values).max() <= bound and values.std() > bound / 3
    before = [p.detach().numpy().copy() for p in module.parameters()]
    module.reset_parameters()
    after = [p.detach().numpy() for p in module.parameters()]
    assert all(not np.array_equal(a, b) for a, b in zip(before, after))


def test_defaults_and_all_weights():
    ours, theirs = nn.LSTM(2, 3, 2, bidirectional=True), torch.nn.LSTM(2, 3, 2, bidirectional=True)
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert nn.RNN(2, 3).nonlinearity == "tanh" and nn.RNN(2, 3, 1, "relu").mode == "RNN_RELU"
    assert nn.RNNCell(2, 3).nonlinearity == "tanh"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.GRU(2, 3, dropout=0.5)
    assert "non-zero dropout expects num_layers greater than 1" in str(caught[0].message)


def raises_alike(make):
    """make(lib) raises the same exception class and message for both libraries."""
    with pytest.raises(Exception) as theirs:
        make(torch)
    with pytest.raises(type(theirs.value)) as ours:
        make(mt)
    assert str(ours.value) == str(theirs.value)


BAD_CONSTRUCTORS = [
    lambda lib: lib.nn.RNN(2, 3, dropout=1.5),
    lambda lib: lib.nn.LSTM(2, 3, dropout=True),
    lambda lib: lib.nn.GRU(2, 0),
    lambda lib: lib.nn.GRU(0, 3),
    lambda lib: lib.nn.LSTM(2, 3.0),
    lambda lib: lib.nn.LSTM(2, 3, 0),
    lambda lib: lib.nn.LSTM(2, 3, bias=1),
    lambda lib: lib.nn.LSTM(2, 3, batch_first=None),
    lambda lib: lib.nn.LSTM(2, 3, proj_size=3),
    lambda lib: lib.nn.LSTM(2, 3, proj_size=-1),
    lambda lib: lib.nn.RNN(2, 3, proj_size=1),
    lambda lib: lib.nn.GRU(2, 3, proj_size=1),
    lambda lib: lib.nn.RNN(2, 3, nonlinearity="sigmoid"),
]


@pytest.mark.parametrize("make", BAD_CONSTRUCTORS)
def test_constructor_errors_match_pytorch(make):
    raises_alike(make)


def _call(name, x_shape, h_shapes=None, **kwargs):
    def make(lib):
        lib.manual_seed(0)
        module = getattr(lib.nn, name)(4, 5, **kwargs)
        hx = None
        if h_shapes is not None:
            hs = [lib.zeros(*s) for s in h_shapes]
            hx = tuple(hs) if name.startswith("LSTM") else hs[0]
        return module(lib.zeros(*x_shape), hx)
    return make


BAD_CALLS = [
    _call("RNN", (2, 3, 4, 1)), _call("LSTM", (4,)), _call("GRU", (2, 3, 4, 1)),
    _call("RNN", (6, 3, 2)), _call("GRU", (6, 3, 2), batch_first=True),
    _call("RNN", (6, 3, 4), [(1, 2, 5)]), _call("GRU", (6, 3, 4), [(2, 3, 5)]),
    _call("RNN", (6, 3, 4), [(1, 3, 4)], bidirectional=True),
    _call("LSTM", (6, 3, 4), [(1, 3, 5), (1, 3, 4)]), _call("LSTM", (6, 3, 4), [(1, 3, 4), (1, 3, 5)]),
    _call("LSTM", (6, 3, 4), [(1, 3, 2), (1, 3, 5)], proj_size=3),
    _call("RNN", (6, 3, 4), [(3, 5)]), _call("RNN", (6, 4), [(1, 1, 5)]),
    _call("LSTM", (6, 3, 4), [(3, 5), (1, 3, 5)]), _call("LSTM", (6, 4), [(1, 5), (1, 1, 5)]),
    _call("RNNCell", (3, 4, 1)), _call("RNNCell", (3, 4), [(1, 3, 5)]), _call("GRUCell", (3, 2)),
    _call("GRUCell", (3, 4), [(2, 5)]), _call("RNNCell", (3, 4), [(3, 4)]),
    _call("LSTMCell", (3, 4), [(3, 5), (1, 3, 5)]), _call("LSTMCell", (3, 4), [(3, 5), (3, 2)]),
    _call("LSTMCell", (4, 3, 4)),
]


@pytest.mark.parametrize("make", BAD_CALLS)
def test_forward_errors_match_pytorch(make):
    raises_alike(make)


# --- nn.utils.rnn ---------------------------------------------------------------------------


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_pytorch(batch_first, padding_side):
    arrays = [rand(3, 2), rand(5, 2), rand(1, 2)]
    ts, ms = leaves(arrays)
    a = torch.nn.utils.rnn.pad_sequence(ts, batch_first, -1.5, padding_side)
    b = rnn_utils.pad_sequence(ms, batch_first, -1.5, padding_side)
    close(b, a)
    w = rand(*a.shape)
    (a * torch.tensor(w)).sum().backward()
    (b * mt.tensor(w)).sum().backward()
    for x, y in zip(ts, ms):
        close(y.grad, x.grad)
    close(rnn_utils.pad_sequence(mt.tensor(arrays[0])), torch.nn.utils.rnn.pad_sequence(torch.tensor(arrays[0])))
    ones = [rand(2), rand(4)]  # sequences without trailing dimensions
    close(nn.utils.rnn.pad_sequence([mt.tensor(a) for a in ones], batch_first),
          torch.nn.utils.rnn.pad_sequence([torch.tensor(a) for a in ones], batch_first))


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.utils.rnn.pad_sequence([lib.ones(2)], padding_side="middle"),
    lambda lib: lib.nn.utils.rnn.pad_sequence([]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2), [1, 3]),
    lambda lib: lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2), [3, 0]),
    lambda lib: lib.nn.utils.rnn.pad_packed_sequence(
        lib.nn.utils.rnn.pack_padded_sequence(lib.ones(3, 2), [3, 1]), total_length=2),
])
def test_utils_errors_match_pytorch(make):
    raises_alike(make)


@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [5, 3, 3, 1]), (False, [2, 5, 1, 3])])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_pad_packed_match_pytorch(enforce_sorted, lengths, batch_first):
    x = rand(4, 5, 3) if batch_first else rand(5, 4, 3)
    tu, mu = torch.nn.utils.rnn, rnn_utils
    (tx,), (mx,) = leaves([x])
    tp = tu.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    mp = mu.pack_padded_sequence(mx, mt.tensor(lengths), batch_first, enforce_sorted)
    assert isinstance(mp, mu.PackedSequence) and isinstance(mp, tuple)
    close(mp.data, tp.data)
    assert mp.batch_sizes.tolist() == tp.batch_sizes.tolist() and mp.batch_sizes.dtype == mt.int64
    for a, b in ((tp.sorted_indices, mp.sorted_indices), (tp.unsorted_indices, mp.unsorted_indices)):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    ta, tl = tu.pad_packed_sequence(tp, batch_first, 7.0, total_length=6)
    ma, ml = mu.pad_packed_sequence(mp, batch_first, 7.0, total_length=6)
    close(ma, ta)
    assert ml.tolist() == tl.tolist()
    w = rand(*ta.shape)
    (ta * torch.tensor(w)).sum().backward()
    (ma * mt.tensor(w)).sum().backward()
    close(mx.grad, tx.grad)
    seqs = [rand(n, 2) for n in lengths]
    tq = tu.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted)
    mq = mu.pack_sequence([mt.tensor(s) for s in seqs], enforce_sorted)
    close(mq.data, tq.data)
    for a, b in zip(tu.unpack_sequence(tq), mu.unpack_sequence(mq)):
        close(b, a)


# --- the emulated CUDA device ---------------------------------------------------------------

needs_cuda = pytest.mark.skipif(not mt.cuda.is_available(), reason="CUDA is not available")


@needs_cuda
@pytest.mark.parametrize("name,kwargs", [("RNN", {"num_layers": 2}), ("LSTM", {"bidirectional": True}),
                                         ("GRU", {"batch_first": True}), ("LSTM", {"proj_size": 2})])
def test_modules_on_cuda(name, kwargs):
    theirs, ours = pair(name, 4, 5, device="cuda", **kwargs)
    assert all(p.device.type == "cuda" for p in ours.parameters())
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    x_shape = (3, 5, 4) if kwargs.get("batch_first") else (5, 3, 4)
    compare(theirs, ours, rand(*x_shape), states_for(name, layers, 3, 5, kwargs.get("proj_size", 0)), device="cuda")
    compare(theirs, ours, rand(*x_shape), device="cuda")


@needs_cuda
@pytest.mark.parametrize("name", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_on_cuda(name):
    theirs, ours = pair(name, 4, 5, device="cuda")
    compare(theirs, ours, rand(3, 4), device="cuda")


@needs_cuda
def test_packed_lstm_on_cuda():
    theirs, ours = pair("LSTM", 4, 5, device="cuda", bidirectional=True)
    compare(theirs, ours, rand(5, 3, 4), pack=[2, 5, 4], device="cuda")
