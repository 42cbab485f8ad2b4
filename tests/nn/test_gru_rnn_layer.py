"""The GRU and Elman layer ops (_C._gru_layer, _C._rnn_layer): nn.GRU and nn.RNN (tanh and relu)
run each layer and direction whose steps all have rows as one op that autograd records as one
GruLayerBackward0 / RnnLayerBackward0 node. Their outputs and the gradients of the input, h0 and
every parameter against PyTorch in float64 to 1e-10 (long sequences, batch_first both ways,
bidirectional, 2 layers, no bias, dropout between layers, packed sequences of one length and of
several, whose batch shrinks from step to step and, in reverse, grows), a gradient taken with
create_graph and differentiated again, the graph they record, the ops by themselves, and their
errors."""
import numpy as np
import pytest

import minitorch as mt
import rnn_layers
from minitorch.nn.utils import rnn as rnn_utils
from rnn_layers import TOL, node_names, pair

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(2021)
KINDS = [("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"})]


def rand(*shape):
    return RNG.standard_normal(shape)


def compare(name, kwargs, T=30, B=3, lengths=None, with_states=True):
    rnn_layers.compare(rand, name, kwargs, T, B, lengths, with_states)


CASES = [
    {},
    {"batch_first": True},
    {"num_layers": 2},
    {"bidirectional": True, "batch_first": True},
    {"num_layers": 2, "bidirectional": True, "bias": False},
]


@pytest.mark.parametrize("with_states", [True, False])
@pytest.mark.parametrize("kwargs", CASES)
@pytest.mark.parametrize("name,kind", KINDS)
def test_long_sequences_match_pytorch_in_float64(name, kind, kwargs, with_states):
    compare(name, {**kind, **kwargs}, with_states=with_states)


@pytest.mark.parametrize("lengths", [[7, 7, 7], [7, 5, 2], [3, 7, 1, 7, 2], [1, 1, 7]])
@pytest.mark.parametrize("kwargs", CASES)
@pytest.mark.parametrize("name,kind", KINDS)
def test_packed_sequences_match_pytorch_in_float64(name, kind, kwargs, lengths):
    """Packed sequences of one length or several (the batch shrinking step by step, growing in
    reverse) through the layer ops, with and without initial states."""
    compare(name, {**kind, **kwargs}, T=7, B=len(lengths), lengths=lengths)
    compare(name, {**kind, **kwargs}, T=7, B=len(lengths), lengths=lengths, with_states=False)


@pytest.mark.parametrize("name,kind", KINDS)
def test_one_step_and_one_row(name, kind):
    compare(name, {**kind, "bidirectional": True}, T=1, B=1)


@pytest.mark.parametrize("name,kind", KINDS)
def test_dropout_between_layers_matches_pytorch_given_the_mask(name, kind):
    """Dropout between two layers in training: the libraries draw different masks, so ours is
    drawn again from the same seed (F.dropout on ones of layer 0's output rows) and PyTorch runs
    the two layers apart with layer 0's output times that mask. Outputs, h_n and every gradient
    in float64."""
    theirs, ours = pair(name, 4, 5, num_layers=2, dropout=0.5, **kind)
    T, B = 6, 2
    x, w_out, w_h = rand(T, B, 4), rand(T, B, 5), rand(2, B, 5)
    mt.manual_seed(3)
    xm = mt.tensor(x, requires_grad=True)
    out, h_n = ours(xm)
    ((out * mt.tensor(w_out)).sum() + (h_n * mt.tensor(w_h)).sum()).backward()
    mt.manual_seed(3)
    mask = mt.nn.functional.dropout(mt.ones(T * B, 5, dtype=mt.float64), 0.5, True).numpy()
    assert 0 < (mask == 0).sum() < mask.size
    layers = [getattr(torch.nn, name)(4 if k == 0 else 5, 5, **kind).double() for k in range(2)]
    for k, layer in enumerate(layers):
        layer.load_state_dict({n.replace(f"_l{k}", "_l0"): p for n, p in theirs.state_dict().items()
                               if n.endswith(f"_l{k}")})
    xt = torch.tensor(x, requires_grad=True)
    y0, h0 = layers[0](xt)
    y1, h1 = layers[1](y0 * torch.tensor(mask.reshape(T, B, 5)))
    h_t = torch.cat([h0, h1])
    ((y1 * torch.tensor(w_out)).sum() + (h_t * torch.tensor(w_h)).sum()).backward()
    np.testing.assert_allclose(out.detach().numpy(), y1.detach().numpy(), **TOL)
    np.testing.assert_allclose(h_n.detach().numpy(), h_t.detach().numpy(), **TOL)
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), **TOL)
    for n, p in ours.named_parameters():
        k = int(n[-1])
        want = dict(layers[k].named_parameters())[n[:-1] + "0"].grad
        np.testing.assert_allclose(p.grad.numpy(), want.numpy(), **TOL)


@pytest.mark.parametrize("lengths", [None, [5, 2, 4]])
@pytest.mark.parametrize("name,kind", KINDS)
def test_double_backward_matches_pytorch(name, kind, lengths):
    """A gradient taken with create_graph records (GRU's workspace recomputed through ops, tanh's
    and relu's read the outputs) and its own gradients equal PyTorch's, padded or packed."""
    theirs, ours = pair(name, 3, 4, bidirectional=True, **kind)
    x, w = rand(5, 3, 3), rand(5, 3, 8)
    rnn_layers.compare_double_backward(
        theirs, ours, x, lambda lib, out, h_n: (out * lib.tensor(w)).sum() + (h_n * h_n.sum()).sum(), lengths)


@pytest.mark.parametrize("lengths", [None, [6, 6], [6, 3], [2, 6]])
@pytest.mark.parametrize("name,kind,node", [("GRU", {}, "GruLayerBackward0"), ("RNN", {}, "RnnLayerBackward0"),
                                            ("RNN", {"nonlinearity": "relu"}, "RnnLayerBackward0")])
def test_records_one_node_a_layer_and_direction(name, kind, node, lengths):
    """Padded, or packed of one length or several: one node a layer and direction, no step's."""
    rnn = getattr(mt.nn, name)(4, 5, num_layers=2, bidirectional=True, **kind)
    x = mt.randn(6, 2, 4)
    if lengths is not None:
        x = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False)
    out, h_n = rnn(x)
    for names in (node_names(out if lengths is None else out.data), node_names(h_n)):
        assert names.count(node) == 4
        assert names.count("AddmmBackward0") == 4  # the input projections, one a layer and direction
        assert not {"MmBackward0", "TanhBackward0", "SigmoidBackward0", "ReluBackward0", "MulBackward0",
                    "SubBackward0"} & set(names)


def steps_by_hand(kind, xw, h0, w_hh, b_hh, bs, reverse):
    """The layer's steps with the cell ops: out (N, H) in time order."""
    off = np.cumsum([0] + bs[:-1])
    rows, h = [None] * len(bs), h0
    for t in (reversed(range(len(bs))) if reverse else range(len(bs))):
        n = bs[t]
        h = mt.cat([h, h0[h.shape[0]:n]]) if h.shape[0] < n else h[:n]
        x = xw[off[t]:off[t] + n]
        if kind == "gru":
            H = h.shape[1]
            hw = h @ w_hh.t() + (b_hh if b_hh is not None else 0)
            r, z = mt.sigmoid(x[:, :2 * H] + hw[:, :2 * H]).split(H, 1)
            nn_ = mt.tanh(x[:, 2 * H:] + r * hw[:, 2 * H:])
            h = nn_ + z * (h - nn_)
        else:
            pre = x + h @ w_hh.t()
            h = mt.relu(pre) if kind == "relu" else mt.tanh(pre)
        rows[t] = h
    return mt.cat(rows)


@pytest.mark.parametrize("bs", [[2, 2, 2, 2], [4, 3, 3, 1]])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("kind", ["gru", "tanh", "relu"])
def test_layer_ops_by_themselves(kind, reverse, bs):
    """_C._gru_layer and _C._rnn_layer alone, with and without batch_sizes: step t has the first
    batch_sizes[t] rows, its state the first rows of the step before's or, in reverse, the step
    after's and then h0's rows beyond it."""
    H, N, B = 3, sum(bs), bs[0]
    g = 3 if kind == "gru" else 1
    xw, h0, w_hh, b_hh = (mt.tensor(rand(*s)) for s in ((N, g * H), (B, H), (g * H, H), (g * H,)))
    batch_sizes = None if len(set(bs)) == 1 else mt.tensor(bs)
    if kind == "gru":
        out, ws = mt._C._gru_layer(xw, h0, w_hh, b_hh, reverse, batch_sizes)
        assert ws.shape == (N, 4 * H)
    else:
        out = mt._C._rnn_layer(xw, h0, w_hh, kind == "relu", reverse, batch_sizes)
        b_hh = None
    want = steps_by_hand(kind, xw, h0, w_hh, b_hh, bs, reverse)
    assert out.shape == (N, H)
    np.testing.assert_allclose(out.numpy(), want.numpy(), **TOL)


@pytest.mark.parametrize("batch_sizes", [
    [3, 3],      # sums to 6, not the 8 rows
    [2, 3, 3],   # grows
    [3, 3, 0, 2],  # an empty step
    [2, 2, 2, 2],  # does not start at h0's 3 rows
    [],          # no step
])
def test_layer_ops_batch_sizes_errors(batch_sizes):
    bs = mt.tensor(batch_sizes, dtype=mt.int64)
    gru = [mt.zeros(*s) for s in ((8, 9), (3, 3), (9, 3))]
    rnn = [mt.zeros(*s) for s in ((8, 3), (3, 3), (3, 3))]
    with pytest.raises(RuntimeError, match="_gru_layer"):
        mt._C._gru_layer(*gru, None, False, bs)
    with pytest.raises(RuntimeError, match="_rnn_layer"):
        mt._C._rnn_layer(*rnn, False, False, bs)
    with pytest.raises(RuntimeError, match="_rnn_layer: batch_sizes should be a 1-D CPU int64"):
        mt._C._rnn_layer(*rnn, False, False, mt.tensor([3, 3, 2], dtype=mt.int32))


@pytest.mark.parametrize("shapes", [
    ((9, 9), (2, 3), (9, 3), (9,)),    # 9 rows: no whole number of steps of 2
    ((8, 10), (2, 3), (9, 3), (9,)),   # 10 columns, not 3 * 3
    ((8, 9), (2, 4), (9, 3), (9,)),    # h0 of 4 columns
    ((8, 9), (2, 3), (9, 4), (9,)),    # w_hh of 4 columns
    ((8, 9), (2, 3), (9, 3), (8,)),    # b_hh of 8 elements
    ((8, 9), (3,), (9, 3), (9,)),      # 1-D h0
    ((0, 9), (0, 3), (9, 3), (9,)),    # no rows
])
def test_layer_op_errors(shapes):
    args = [mt.zeros(*s) for s in shapes]
    with pytest.raises(RuntimeError, match="_gru_layer"):
        mt._C._gru_layer(*args)
    if shapes[3] == (9,):
        with pytest.raises(RuntimeError, match="_rnn_layer"):
            mt._C._rnn_layer(args[0], args[1], args[2][:, :3] if args[2].ndim == 2 else args[2])
    with pytest.raises(RuntimeError, match="_rnn_layer: expected input_projection of a float"):
        mt._C._rnn_layer(mt.zeros(4, 3, dtype=mt.int64), mt.zeros(2, 3), mt.zeros(3, 3))
