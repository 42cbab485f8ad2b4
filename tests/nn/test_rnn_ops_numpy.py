"""The recurrent ops (csrc/ops/rnn.c) without PyTorch: an LSTM and a GRU against NumPy's
formulas step by step (padded and packed, both directions), dropout between layers, and bad calls
raising instead of crashing (the sanitizer build runs these)."""
import numpy as np
import pytest

import minitorch as mt
from rnn_weights import params_of

RNG = np.random.default_rng(21)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def sigmoid(x):
    return 1 / (1 + np.exp(-x.astype(np.float64)))


def np_step(op, x, h, c, w_ih, w_hh, b_ih, b_hh):
    xw, hw = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    if op == "lstm":
        i, f, g, o = np.split(xw + hw, 4, axis=1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        return sigmoid(o) * np.tanh(c), c
    r = sigmoid(xw[:, :h.shape[1]] + hw[:, :h.shape[1]])
    z = sigmoid(xw[:, h.shape[1]:2 * h.shape[1]] + hw[:, h.shape[1]:2 * h.shape[1]])
    n = np.tanh(xw[:, 2 * h.shape[1]:] + r * hw[:, 2 * h.shape[1]:])
    return n + z * (h - n), None


@pytest.mark.parametrize("op", ["lstm", "gru"])
@pytest.mark.parametrize("reverse", [False, True])
def test_one_layer_matches_numpy(op, reverse):
    T, B, F, H = 4, 3, 2, 3
    x, w = rand(T, B, F), params_of(rand, op, F, H, 1, 1, True, 0)
    h0, c0 = rand(1, B, H), rand(1, B, H)
    states = [mt.tensor(h0), mt.tensor(c0)] if op == "lstm" else mt.tensor(h0)
    params = [mt.tensor(p) for p in w]
    if reverse:  # a 2-direction call: the second direction runs from the last step back
        params = params + params
        states = [mt.tensor(np.concatenate([s, s])) for s in (h0, c0)] if op == "lstm" else \
            mt.tensor(np.concatenate([h0, h0]))
    out = getattr(mt, op)(mt.tensor(x), states, params, True, 1, 0.0, False, reverse, False)
    h, c, want = h0[0], c0[0], [None] * T
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        h, c = np_step(op, x[t], h, c, *w)
        want[t] = h
    got = out[0].numpy()[:, :, H:] if reverse else out[0].numpy()
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1].numpy()[-1], h, rtol=1e-5, atol=1e-6)


def test_packed_lstm_matches_numpy():
    F, H, lengths = 2, 3, [3, 2, 1]
    seqs = [rand(n, F) for n in lengths]
    w = params_of(rand, "lstm", F, H, 1, 1, True, 0)
    data = np.concatenate([np.stack([s[t] for s in seqs if len(s) > t]) for t in range(3)])
    zeros = mt.zeros(1, 3, H)
    out, h_n, c_n = mt.lstm(mt.tensor(data), mt.tensor([3, 2, 1]), [zeros, zeros], [mt.tensor(p) for p in w],
                            True, 1, 0.0, False, False)
    rows = []
    for k, s in enumerate(seqs):
        h, c = np.zeros((1, H), np.float32), np.zeros((1, H), np.float32)
        for t in range(len(s)):
            h, c = np_step("lstm", s[t:t + 1], h, c, *w)
            rows.append((t, k, h[0]))
        np.testing.assert_allclose(h_n.numpy()[0, k], h[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c_n.numpy()[0, k], c[0], rtol=1e-5, atol=1e-6)
    want = np.stack([h for _, _, h in sorted(rows, key=lambda r: (r[0], r[1]))])
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)


def test_dropout_between_layers_only_in_training():
    x, params = mt.tensor(rand(4, 2, 3)), [mt.tensor(p) for p in params_of(rand, "gru", 3, 3, 2, 1, True, 0)]
    h = mt.zeros(2, 2, 3)
    a = mt.gru(x, h, params, True, 2, 0.5, False, False, False)
    b = mt.gru(x, h, params, True, 2, 0.0, True, False, False)
    np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
    mt.manual_seed(0)
    c = mt.gru(x, h, params, True, 2, 1.0, True, False, False)
    # everything the second layer sees is dropped: its output is its biases' recurrence alone
    np.testing.assert_allclose(c[0].numpy(), mt.gru(mt.zeros(4, 2, 3), h[1:], params[4:], True, 1, 0.0,
                                                       True, False, False)[0].numpy(), rtol=1e-6)


def test_bad_calls_raise_and_do_not_crash():
    x, params = mt.tensor(rand(4, 2, 3)), [mt.tensor(p) for p in params_of(rand, "rnn_tanh", 3, 3, 1, 1, True, 0)]
    h = mt.zeros(1, 2, 3)
    bad = [
        lambda: mt.rnn_tanh(x, h, params, True, 2, 0.0, False, False, False),   # too few params
        lambda: mt.rnn_tanh(x, h, params, True, 0, 0.0, False, False, False),
        lambda: mt.rnn_tanh(x[0], h, params, True, 1, 0.0, False, False, False),  # 2-D input
        lambda: mt.rnn_tanh(x, h[0], params, True, 1, 0.0, False, False, False),  # 2-D state
        lambda: mt.rnn_tanh(x, h, [p[0] for p in params[:2]] + params[2:], True, 1, 0.0, False, False, False),
        lambda: mt.rnn_tanh(x[:0], h, params, True, 1, 0.0, False, False, False),  # no steps
        lambda: mt.rnn_tanh(x.view(8, 3), mt.tensor([5, 3]), h, params, True, 1, 0.0, False, False),
        lambda: mt.rnn_tanh(x.view(8, 3), mt.tensor([3, 5]), h, params, True, 1, 0.0, False, False),
        lambda: mt.rnn_tanh(x.view(8, 3), mt.tensor([4.0, 4.0]), h, params, True, 1, 0.0, False, False),
        lambda: mt.rnn_tanh_cell(x[0], h, *params),
    ]
    for call in bad:
        with pytest.raises(RuntimeError):
            call()


def test_each_overload_is_its_op():
    """minitorch.lstm (gru, rnn_tanh, rnn_relu) with batch_sizes second is _C's <op>_data, else
    _C's <op>; the cells are their ops."""
    F, H = 2, 3
    data, sizes = mt.tensor(rand(6, F)), mt.tensor([3, 2, 1])
    x = mt.tensor(rand(2, 3, F))
    h = mt.tensor(rand(1, 3, H))
    w = {op: [mt.tensor(p) for p in params_of(rand, op, F, H, 1, 1, True, 0)] for op in ("lstm", "gru", "rnn_tanh",
                                                                                  "rnn_relu")}
    pairs = [
        (mt.lstm(data, sizes, [h, h], w["lstm"], True, 1, 0.0, False, False),
         mt._C.lstm_data(data, sizes, [h, h], w["lstm"], True, 1, 0.0, False, False)),
        (mt.lstm(x, [h, h], w["lstm"], True, 1, 0.0, False, False, False),
         mt._C.lstm(x, [h, h], w["lstm"], True, 1, 0.0, False, False, False)),
        (mt.gru(data, sizes, h, w["gru"], True, 1, 0.0, False, False),
         mt._C.gru_data(data, sizes, h, w["gru"], True, 1, 0.0, False, False)),
        (mt.rnn_tanh(data, sizes, h, w["rnn_tanh"], True, 1, 0.0, False, False),
         mt._C.rnn_tanh_data(data, sizes, h, w["rnn_tanh"], True, 1, 0.0, False, False)),
        (mt.rnn_relu(data, sizes, h, w["rnn_relu"], True, 1, 0.0, False, False),
         mt._C.rnn_relu_data(data, sizes, h, w["rnn_relu"], True, 1, 0.0, False, False)),
        (mt.rnn_relu(x, h, w["rnn_relu"], True, 1, 0.0, False, False, False),
         mt._C.rnn_relu(x, h, w["rnn_relu"], True, 1, 0.0, False, False, False)),
    ]
    for got, want in pairs:
        assert len(got) == len(want)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(pairs[0][0][0].shape) == (6, H) and tuple(pairs[1][0][0].shape) == (2, 3, H)
    x2, h2 = mt.tensor(rand(3, F)), mt.tensor(rand(3, H))
    hy, cy = mt.lstm_cell(x2, [h2, h2], *w["lstm"])
    want_h, want_c = np_step("lstm", x2.numpy(), h2.numpy(), h2.numpy(), *[p.numpy() for p in w["lstm"]])
    np.testing.assert_allclose(hy.numpy(), want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(cy.numpy(), want_c, rtol=1e-5, atol=1e-6)
    w_ih, w_hh, b_ih, b_hh = [p.numpy() for p in w["rnn_relu"]]
    np.testing.assert_allclose(mt.rnn_relu_cell(x2, h2, *w["rnn_relu"]).numpy(),
                               np.maximum(x2.numpy() @ w_ih.T + b_ih + h2.numpy() @ w_hh.T + b_hh, 0),
                               rtol=1e-5, atol=1e-6)
