"""The recurrent ops themselves (csrc/ops/rnn.c) against PyTorch's: torch.lstm, gru, rnn_tanh,
rnn_relu in both overloads (padded input with batch_first, and a packed sequence's data with
batch_sizes), several layers, both directions, projections (LSTM), no biases, and the cells
lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell: values and the gradients of every input, with
non-contiguous inputs; then the errors of bad calls, on the CPU and the emulated CUDA device."""
import numpy as np
import pytest

import minitorch as mt
from rnn_weights import GATES, params_of

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
RNG = np.random.default_rng(2020)
TOL = dict(rtol=1e-4, atol=1e-5)
DEVICES = ["cpu"] + (["cuda"] if mt.cuda.is_available() else [])


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def leaves(arrays, device):
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [mt.tensor(a, requires_grad=True, device=device) for a in arrays])


def check_all(t_res, m_res, t_leaves, m_leaves):
    t_res, m_res = list(t_res), list(m_res)
    assert len(t_res) == len(m_res)
    t_loss = m_loss = 0
    for a, b in zip(t_res, m_res):
        assert tuple(b.shape) == tuple(a.shape)
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().numpy(), **TOL)
        w = rand(*a.shape)
        t_loss = t_loss + (a * torch.tensor(w)).sum()
        m_loss = m_loss + (b * mt.tensor(w, device=b.device)).sum()
    t_loss.backward()
    m_loss.backward()
    for a, b in zip(t_leaves, m_leaves):
        np.testing.assert_allclose(b.grad.cpu().numpy(), a.grad.numpy(), **TOL)


CASES = [
    ("lstm", dict()), ("lstm", dict(layers=2, dirs=2)), ("lstm", dict(proj=2, layers=2, dirs=2)),
    ("lstm", dict(bias=False, batch_first=True)), ("gru", dict()), ("gru", dict(layers=2, dirs=2, batch_first=True)),
    ("gru", dict(bias=False)), ("rnn_tanh", dict(layers=3)), ("rnn_relu", dict(dirs=2, bias=False)),
]


def run(op, device, layers=1, dirs=1, bias=True, proj=0, batch_first=False, packed=None):
    T, B, F, H = 5, 3, 4, 3
    params = params_of(rand, op, F, H, layers, dirs, bias, proj)
    x = rand(B, T, F) if batch_first and packed is None else rand(T, B, F)
    states = [rand(layers * dirs, B, proj or H)] + ([rand(layers * dirs, B, H)] if op == "lstm" else [])
    t_all, m_all = leaves([x, *states, *params], device)
    ns = 1 + len(states)
    tx, tstates, tp, mx, mstates, mp = t_all[0], t_all[1:ns], t_all[ns:], m_all[0], m_all[1:ns], m_all[ns:]
    hx = (lambda s: list(s)) if op == "lstm" else (lambda s: s[0])
    flags = (bias, layers, 0.0, True, dirs == 2)
    if packed is None:
        # a non-contiguous input: the transpose of a contiguous one, as the ops see a batch_first view
        t_in, m_in = tx.transpose(0, 1).transpose(0, 1), mx.transpose(0, 1).transpose(0, 1)
        t_res = getattr(torch, op)(t_in, hx(tstates), tp, *flags, batch_first)
        m_res = getattr(mt, op)(m_in, hx(mstates), mp, *flags, batch_first)
    else:
        t_pack = torch.nn.utils.rnn.pack_padded_sequence(tx, packed)
        m_data = mt.tensor(t_pack.data.detach().numpy(), requires_grad=True, device=device)
        t_data = t_pack.data.detach().requires_grad_(True)
        tx, mx = t_data, m_data
        t_res = getattr(torch, op)(t_data, t_pack.batch_sizes, hx(tstates), tp, *flags)
        m_res = getattr(mt, op)(m_data, mt.tensor(t_pack.batch_sizes.numpy()), hx(mstates), mp, *flags)
    check_all(t_res, m_res, [tx, *tstates, *tp], [mx, *mstates, *mp])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,kw", CASES)
def test_padded_matches_pytorch(op, kw, device):
    run(op, device, **kw)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op,kw", [c for c in CASES if not c[1].get("batch_first")])
def test_packed_matches_pytorch(op, kw, device):
    run(op, device, packed=[5, 3, 1], **kw)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("bias", [True, False])
def test_cells_match_pytorch(op, bias, device):
    B, F, H, g = 3, 4, 5, GATES[op]
    arrays = [rand(B, F), rand(B, H)] + ([rand(B, H)] if op == "lstm" else [])
    weights = [rand(g * H, F), rand(g * H, H)] + ([rand(g * H), rand(g * H)] if bias else [])
    t_all, m_all = leaves(arrays + weights, device)
    ns = len(arrays)
    tx, th, tw, mx, mh, mw = t_all[0], t_all[1:ns], t_all[ns:], m_all[0], m_all[1:ns], m_all[ns:]
    t_fn, m_fn = getattr(torch, op + "_cell"), getattr(mt, op + "_cell")
    t_hx, m_hx = (th, mh) if op == "lstm" else (th[0], mh[0])
    t_res, m_res = t_fn(tx, t_hx, *tw), m_fn(mx, m_hx, *mw)
    if op != "lstm":
        t_res, m_res = (t_res,), (m_res,)
    check_all(t_res, m_res, [tx, *th, *tw], [mx, *mh, *mw])


@pytest.mark.parametrize("op", list(GATES))
@pytest.mark.parametrize("which", [0, 1])
def test_cells_with_one_bias(op, which):
    """b_ih or b_hh alone (the other None): the steps fold b_hh into the input projection but
    for GRU, so each half must reach the gates alone too."""
    B, F, H, g = 3, 4, 5, GATES[op]
    arrays = [rand(B, F), rand(B, H)] + ([rand(B, H)] if op == "lstm" else []) + [
        rand(g * H, F), rand(g * H, H), rand(g * H)]
    t_all, m_all = leaves(arrays, "cpu")
    ns = len(arrays) - 3
    results = []
    for L, ts in ((torch, t_all), (mt, m_all)):
        x, hx, (w_ih, w_hh, b) = ts[0], ts[1:ns], ts[ns:]
        biases = (b, None) if which == 0 else (None, b)
        fn = getattr(L, op + "_cell")
        res = fn(x, tuple(hx) if op == "lstm" else hx[0], w_ih, w_hh, *biases)
        results.append(res if op == "lstm" else (res,))
    check_all(results[0], results[1], t_all, m_all)


def test_a_long_packed_sequence_with_nan():
    """More steps than the dimension limit, sequences leaving the batch, and a NaN that stays in
    its own sequence's results."""
    T, F, H = 40, 2, 3
    lengths = [40, 33, 33, 7]
    x = rand(T, 4, F)
    x[2, 3, 0] = np.nan
    params = params_of(rand, "lstm", F, H, 1, 2, True, 0)
    tp, mp = leaves(params, "cpu")
    t_pack = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths)
    hx = [np.zeros((2, 4, H), np.float32)] * 2
    t_res = torch.lstm(t_pack.data, t_pack.batch_sizes, [torch.tensor(h) for h in hx], tp, True, 1, 0.0, True, True)
    m_res = mt.lstm(mt.tensor(t_pack.data.numpy()), mt.tensor(t_pack.batch_sizes.numpy()),
                    [mt.tensor(h) for h in hx], mp, True, 1, 0.0, True, True)
    for a, b in zip(t_res, m_res):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-4, atol=1e-5, equal_nan=True)
    assert np.isnan(m_res[0].detach().numpy()).any() and not np.isnan(m_res[1].detach().numpy()[:, :3]).any()


def raises_like(fn_t, fn_m):
    with pytest.raises(Exception) as want:
        fn_t()
    with pytest.raises(type(want.value)) as got:
        fn_m()
    return str(want.value), str(got.value)


def test_errors_match_pytorch():
    x, h = rand(5, 3, 4), rand(1, 3, 3)
    params = params_of(rand, "lstm", 4, 3, 1, 1, True, 0)
    tp, mp = [torch.tensor(p) for p in params], [mt.tensor(p) for p in params]
    want, got = raises_like(lambda: torch.lstm(torch.tensor(x), [torch.tensor(h)], tp, True, 1, 0.0, False, False, False),
                            lambda: mt.lstm(mt.tensor(x), [mt.tensor(h)], mp, True, 1, 0.0, False, False, False))
    assert got == want == "lstm expects two hidden states"
    raises_like(lambda: torch.lstm(torch.tensor(x), [torch.tensor(h)] * 2, tp[:3], True, 1, 0.0, False, False, False),
                lambda: mt.lstm(mt.tensor(x), [mt.tensor(h)] * 2, mp[:3], True, 1, 0.0, False, False, False))
    cell = params_of(rand, "gru", 4, 3, 1, 1, True, 0)
    for bad_x, bad_h in [(rand(3, 5), rand(3, 3)), (rand(3, 4), rand(2, 3)), (rand(3, 4), rand(3, 2))]:
        want, got = raises_like(lambda: torch.gru_cell(torch.tensor(bad_x), torch.tensor(bad_h),
                                                       *[torch.tensor(p) for p in cell]),
                                lambda: mt.gru_cell(mt.tensor(bad_x), mt.tensor(bad_h), *[mt.tensor(p) for p in cell]))
        assert got == want
