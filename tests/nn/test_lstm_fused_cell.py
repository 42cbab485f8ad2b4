"""The fused LSTM cell (_thnn_fused_lstm_cell and _thnn_fused_lstm_cell_backward_impl, the op
nn.LSTMCell records and the LSTM layer op's steps run): values against NumPy in float64 and against PyTorch's cell written in
its ops (PyTorch has no CPU kernel of its own for it), gradients by finite differences and against
PyTorch's autograd, the backward op with absent gradients, a double backward, non-contiguous
inputs, NaN and inf, an empty batch, every device, and bad calls."""
import numpy as np
import pytest

import minitorch
from helpers import check, check_grad, to_layout

RNG = np.random.default_rng(21)
B, H = 3, 5


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_cell(ig, hg, cx, *biases):
    """hy, cy and the workspace (activated gates) in NumPy."""
    gates = ig + hg + sum(biases)
    i, f, g, o = np.split(gates, 4, axis=1)
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    cy = f * cx + i * g
    return o * np.tanh(cy), cy, np.concatenate([i, f, g, o], axis=1)


def cell(lib, ig, hg, cx, *biases):
    """The fused op in minitorch, PyTorch's cell in ops for torch."""
    if lib is minitorch:
        return minitorch._C._thnn_fused_lstm_cell(ig, hg, cx, *biases)
    i, f, g, o = (ig + hg + sum(biases)).chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, lib.cat([i, f, g, o], 1)


def inputs(nbias=2, b=B, dtype=np.float32):
    return [rand(b, 4 * H, dtype=dtype), rand(b, 4 * H, dtype=dtype), rand(b, H, dtype=dtype)] + \
        [rand(4 * H, dtype=dtype) for _ in range(nbias)]


@pytest.mark.parametrize("k", [0, 1, 2])
@pytest.mark.parametrize("nbias", [0, 1, 2])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_forward_matches_numpy_and_torch(k, nbias, layout, device):
    check(lambda lib, *t: cell(lib, *t)[k], lambda *a: np_cell(*a)[k], inputs(nbias), layout=layout,
          device=device, atol=1e-6)


def test_float64_nan_inf_and_an_empty_batch(device):
    arrays = inputs(2, dtype=np.float64)
    arrays[0][0, :3] = [np.nan, np.inf, -np.inf]
    arrays[2][1, 0] = np.inf
    for k in range(3):
        check(lambda lib, *t: cell(lib, *t)[k], lambda *a: np_cell(*a)[k], arrays, device=device,
              atol=1e-12, dtype=minitorch.float64)
        check(lambda lib, *t: cell(lib, *t)[k], lambda *a: np_cell(*a)[k], inputs(2, b=0),
              device=device)


@pytest.mark.parametrize("k", [0, 1])
@pytest.mark.parametrize("nbias", [0, 2])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_gradients(k, nbias, layout):
    """Every input's gradient from hy and from cy: finite differences in float64 (the backward
    op's CPU kernel) and PyTorch's autograd of its cell."""
    check_grad(lambda lib, *t: cell(lib, *t)[k], inputs(nbias, dtype=np.float64), layout=layout,
               atol=1e-6, rtol=1e-5)


def np_cell_backward(gh, gc, cx, cy, ws):
    i, f, g, o = np.split(ws, 4, axis=1)
    t = np.tanh(cy)
    gcy = gc + gh * o * (1 - t * t)
    dg = np.concatenate([gcy * g * i * (1 - i), gcy * cx * f * (1 - f), gcy * i * (1 - g * g),
                         gh * t * o * (1 - o)], axis=1)
    return dg, gcy * f, dg.sum(0)


@pytest.mark.parametrize("absent", [None, "grad_hy", "grad_cy"])
def test_backward_op_with_absent_gradients(absent, device):
    gh, gc, cx, cy = rand(B, H), rand(B, H), rand(B, H), rand(B, H)
    ws = sigmoid(rand(B, 4 * H))
    want = np_cell_backward(np.zeros_like(gh) if absent == "grad_hy" else gh,
                            np.zeros_like(gc) if absent == "grad_cy" else gc, cx, cy, ws)
    args = [None if absent == name else to_layout(a, "contiguous", device)
            for name, a in (("grad_hy", gh), ("grad_cy", gc))]
    args += [to_layout(a, "transposed", device) for a in (cx, cy, ws)]
    for has_bias in (True, False):
        got = minitorch._C._thnn_fused_lstm_cell_backward_impl(*args, has_bias)
        for k in range(2 + has_bias):
            assert got[k].device.type == device
            np.testing.assert_allclose(got[k].cpu().numpy(), want[k], atol=1e-5, rtol=1e-5)
        assert has_bias or got[2] is None


def test_double_backward_matches_torch():
    """A gradient taken with create_graph goes through the cell's math in ops; its own
    gradients equal PyTorch's."""
    torch = pytest.importorskip("torch")
    arrays = inputs(2, dtype=np.float64)
    weights = [rand(B, H, dtype=np.float64) for _ in range(2)]
    results = []
    for lib in (minitorch, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        hy, cy, _ = cell(lib, *xs)
        loss = (hy * lib.tensor(weights[0])).sum() + (cy * lib.tensor(weights[1])).sum()
        grads = lib.autograd.grad(loss, xs, create_graph=True)
        sum((g * g).sum() for g in grads).backward()
        results.append([g.detach().numpy() for g in grads] + [x.grad.numpy() for x in xs])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, atol=1e-10, rtol=1e-8)


def test_lstm_cell_records_one_node_a_step():
    """nn.LSTMCell run step by step records one fused cell node a step (nn.LSTM's layers, padded
    or packed, run as one layer op: test_lstm_layer.py)."""
    cell = minitorch.nn.LSTMCell(4, H)
    out = c = minitorch.zeros(2, H)
    for x in minitorch.randn(6, 2, 4):
        out, c = cell(x, (out, c))
    # seen keeps the nodes themselves: a node's Python object may be made anew on each visit,
    # so an id alone could be a freed object's, reused by another node's
    names, seen, todo = [], {}, [out.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        names.append(node.name())
        todo += [next_fn for next_fn, _ in node.next_functions]
    assert names.count("ThnnFusedLstmCellBackward0") == 6
    assert "SigmoidBackward0" not in names


@pytest.mark.parametrize("bad,match", [
    ((rand(B, 4 * H), rand(B, 4 * H + 4), rand(B, H)), "hidden_gates"),
    ((rand(B, 4 * H + 1), rand(B, 4 * H + 1), rand(B, H)), "4 \\* hidden_size"),
    ((rand(B, 4 * H), rand(B, 4 * H), rand(B, H + 1)), "cx"),
    ((rand(B, 4 * H), rand(B, 4 * H), rand(B, H), rand(4 * H + 1)), "input_bias"),
    ((rand(B, 4 * H), rand(B, 4 * H).astype(np.float64), rand(B, H)), "hidden_gates"),
    ((rand(B, 4 * H).astype(np.int64), rand(B, 4 * H).astype(np.int64), rand(B, H)), "float"),
])
def test_bad_calls_raise(bad, match, device):
    args = [to_layout(a, "contiguous", device) for a in bad]
    with pytest.raises(RuntimeError, match=match):
        minitorch._C._thnn_fused_lstm_cell(*args)
    with pytest.raises(RuntimeError, match="workspace"):
        minitorch._C._thnn_fused_lstm_cell_backward_impl(None, None, args[2], args[2], args[2], False)
