"""The LSTM layer op (_C._lstm_layer, PyTorch's mkldnn_rnn_layer): nn.LSTM runs each layer and
direction whose steps all have the whole batch as one op that autograd records as one
MkldnnRnnLayerBackward0 node. Its outputs and the gradients of the input, h0, c0 and every
parameter against PyTorch in float64 to 1e-10 (long sequences, batch_first both ways, proj_size,
bidirectional, 2 layers, packed sequences of one length and of several, whose batch shrinks from
step to step: the op's batch_sizes), a gradient taken with create_graph and differentiated again,
the graph it records, and its errors."""
import numpy as np
import pytest

import minitorch as mt
import rnn_layers
from minitorch.nn.utils import rnn as rnn_utils
from rnn_layers import TOL, node_names

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
RNG = np.random.default_rng(21)


def rand(*shape):
    return RNG.standard_normal(shape)


def pair(*args, **kwargs):
    return rnn_layers.pair("LSTM", *args, **kwargs)


def compare(kwargs, T=40, B=3, lengths=None, with_states=True):
    rnn_layers.compare(rand, "LSTM", kwargs, T, B, lengths, with_states)


CASES = [
    {},
    {"batch_first": True},
    {"num_layers": 2},
    {"bidirectional": True, "batch_first": True},
    {"proj_size": 3},
    {"proj_size": 3, "num_layers": 2, "bidirectional": True, "batch_first": True},
    {"num_layers": 2, "bidirectional": True, "bias": False},
]


@pytest.mark.parametrize("with_states", [True, False])
@pytest.mark.parametrize("kwargs", CASES)
def test_long_sequences_match_pytorch_in_float64(kwargs, with_states):
    compare(kwargs, with_states=with_states)


@pytest.mark.parametrize("lengths", [[7, 7, 7], [7, 5, 2], [3, 7, 1, 7, 2], [1, 1, 7]])
@pytest.mark.parametrize("kwargs", CASES)
def test_packed_sequences_match_pytorch_in_float64(kwargs, lengths):
    """Packed sequences of one length or several (the batch shrinking step by step) through the
    layer op, with and without initial states."""
    compare(kwargs, T=7, B=len(lengths), lengths=lengths)
    compare(kwargs, T=7, B=len(lengths), lengths=lengths, with_states=False)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_matches_pytorch_in_float64(enforce_sorted):
    """pack_sequence of sequences sorted or not, through 2 bidirectional layers with projection."""
    theirs, ours = pair(4, 5, num_layers=2, bidirectional=True, proj_size=2)
    seqs = [rand(n, 4) for n in ((6, 4, 4, 1) if enforce_sorted else (2, 6, 1, 5))]
    grads = []
    for lib, module, utils in ((torch, theirs, torch.nn.utils.rnn), (mt, ours, rnn_utils)):
        xs = [lib.tensor(a, requires_grad=True) for a in seqs]
        out, (h_n, c_n) = module(utils.pack_sequence(xs, enforce_sorted=enforce_sorted))
        padded, lengths = utils.pad_packed_sequence(out, batch_first=True)
        loss = (padded * padded).sum() + (h_n * 0.5).sum() + c_n.sum()
        loss.backward()
        grads.append([padded.detach().numpy(), h_n.detach().numpy(), c_n.detach().numpy()]
                     + [x.grad.numpy() for x in xs] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, **TOL)


def test_one_step_and_one_row():
    compare({"bidirectional": True, "proj_size": 2}, T=1, B=1)


def test_only_the_last_cell_state_takes_a_gradient():
    """A loss of c_n alone: the outputs' gradient is absent and taken as zeros."""
    theirs, ours = pair(4, 5, num_layers=2, proj_size=2)
    x = rand(6, 2, 4)
    grads = []
    for lib, module in ((torch, theirs), (mt, ours)):
        xt = lib.tensor(x, requires_grad=True)
        _, (_, c_n) = module(xt)
        c_n.sum().backward()
        grads.append([xt.grad.numpy()] + [p.grad.numpy() for p in module.parameters()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, **TOL)


@pytest.mark.parametrize("lengths", [None, [5, 2, 4]])
def test_double_backward_matches_pytorch(lengths):
    """A gradient taken with create_graph records (the gates recomputed through ops) and its
    own gradients equal PyTorch's (float64, where PyTorch takes no oneDNN path either), padded
    or packed (the batch shrinking from step to step)."""
    theirs, ours = pair(3, 4, proj_size=2, bidirectional=True)
    x, w = rand(5, 3, 3), rand(5, 3, 4)

    def loss(lib, out, h):
        return (out * lib.tensor(w)).sum() + (h[1] * h[1]).sum() + (h[0] * h[0].sum()).sum()

    rnn_layers.compare_double_backward(theirs, ours, x, loss, lengths)


@pytest.mark.parametrize("lengths", [None, [6, 6], [6, 3], [2, 6]])
def test_records_one_node_a_layer_and_direction(lengths):
    """Padded, or packed of one length or several: one node a layer and direction."""
    lstm = mt.nn.LSTM(4, 5, num_layers=2, bidirectional=True)
    x = mt.randn(6, 2, 4)
    if lengths is not None:
        x = rnn_utils.pack_padded_sequence(x, lengths, enforce_sorted=False)
    out, (h_n, _) = lstm(x)
    for names in (node_names(out if lengths is None else out.data), node_names(h_n)):
        assert names.count("MkldnnRnnLayerBackward0") == 4
        assert "ThnnFusedLstmCellBackward0" not in names and "MmBackward0" not in names


def test_layer_op_direct_and_reverse():
    """_C._lstm_layer by itself: rows in time order, reverse running from the last step."""
    T, B, H = 4, 2, 3
    xw, h0, c0, w_hh = (mt.tensor(rand(*s)) for s in ((T * B, 4 * H), (B, H), (B, H), (4 * H, H)))
    for reverse in (False, True):
        out, cs, ws = mt._C._lstm_layer(xw, h0, c0, w_hh, None, reverse)
        assert out.shape == (T * B, H) and cs.shape == (T * B, H) and ws.shape == (T * B, 4 * H)
        h, c = h0, c0
        for t in (reversed(range(T)) if reverse else range(T)):
            hy, cy, _ = mt._C._thnn_fused_lstm_cell(xw[t * B:(t + 1) * B], h @ w_hh.t(), c)
            np.testing.assert_allclose(out[t * B:(t + 1) * B].numpy(), hy.numpy(), **TOL)
            np.testing.assert_allclose(cs[t * B:(t + 1) * B].numpy(), cy.numpy(), **TOL)
            h, c = hy, cy


def test_layer_op_with_batch_sizes_steps_a_shrinking_batch():
    """_C._lstm_layer with batch_sizes: step t has the first batch_sizes[t] rows; forward, a
    step's state is the first rows of the step before's; in reverse, the step after's and then
    h0's rows beyond it."""
    H, bs = 3, [4, 3, 3, 1]
    N, B = sum(bs), bs[0]
    off = np.cumsum([0] + bs[:-1])
    xw, h0, c0, w_hh = (mt.tensor(rand(*s)) for s in ((N, 4 * H), (B, H), (B, H), (4 * H, H)))
    for reverse in (False, True):
        out, cs, ws = mt._C._lstm_layer(xw, h0, c0, w_hh, None, reverse, mt.tensor(bs))
        assert out.shape == (N, H) and cs.shape == (N, H) and ws.shape == (N, 4 * H)
        h, c = h0, c0
        for t in (reversed(range(len(bs))) if reverse else range(len(bs))):
            n = bs[t]
            h = mt.cat([h, h0[h.shape[0]:n]]) if h.shape[0] < n else h[:n]
            c = mt.cat([c, c0[c.shape[0]:n]]) if c.shape[0] < n else c[:n]
            hy, cy, _ = mt._C._thnn_fused_lstm_cell(xw[off[t]:off[t] + n], h @ w_hh.t(), c)
            np.testing.assert_allclose(out[off[t]:off[t] + n].numpy(), hy.numpy(), **TOL)
            np.testing.assert_allclose(cs[off[t]:off[t] + n].numpy(), cy.numpy(), **TOL)
            h, c = hy, cy


@pytest.mark.parametrize("batch_sizes", [
    [3, 3],      # sums to 6, not the 8 rows
    [2, 3, 3],   # grows
    [3, 3, 0, 2],  # an empty step
    [2, 2, 2, 2],  # does not start at c0's 3 rows
    [],          # no step
])
def test_layer_op_batch_sizes_errors(batch_sizes):
    args = [mt.zeros(*s) for s in ((8, 12), (3, 3), (3, 3), (12, 3))]
    with pytest.raises(RuntimeError, match="_lstm_layer"):
        mt._C._lstm_layer(*args, None, False, mt.tensor(batch_sizes, dtype=mt.int64))
    with pytest.raises(RuntimeError, match="_lstm_layer: batch_sizes should be a 1-D CPU int64"):
        mt._C._lstm_layer(*args, None, False, mt.tensor([3, 3, 2], dtype=mt.int32))


@pytest.mark.parametrize("shapes", [
    ((9, 12), (2, 3), (2, 3), (12, 3)),   # 9 rows: no whole number of steps of 2
    ((8, 10), (2, 3), (2, 3), (12, 3)),   # 10 columns, not 4 * 3
    ((8, 12), (2, 4), (2, 3), (12, 3)),   # h0 of 4 columns
    ((8, 12), (2, 3), (2, 3), (12, 4)),   # w_hh of 4 columns
    ((8, 12), (2, 3), (3,), (12, 3)),     # 1-D c0
    ((0, 12), (0, 3), (0, 3), (12, 3)),   # no rows
])
def test_layer_op_errors(shapes):
    args = [mt.zeros(*s) for s in shapes]
    with pytest.raises(RuntimeError, match="_lstm_layer"):
        mt._C._lstm_layer(*args)
