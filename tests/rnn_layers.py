"""The recurrent modules against PyTorch's in float64, shared by the layer ops' tests
(tests/nn/test_lstm_layer.py, test_gru_rnn_layer.py): the same module in both libraries, run on
one input padded or packed, and every result and gradient compared."""
import numpy as np
import pytest

import minitorch as mt
from minitorch.nn.utils import rnn as rnn_utils

torch = pytest.importorskip("torch")
TOL = dict(rtol=1e-10, atol=1e-10)


def pair(name, *args, **kwargs):
    """torch.nn.<name> in float64 and ours with its weights."""
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    ours = getattr(mt.nn, name)(*args, **kwargs).double()
    ours.load_state_dict({k: mt.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def run(lib, module, x, states, lengths, batch_first):
    """module's results on x (padded, or packed to lengths) and states, and the leaves."""
    xs = [lib.tensor(a, requires_grad=True) for a in [x, *states]]
    inp = xs[0]
    utils = torch.nn.utils.rnn if lib is torch else rnn_utils
    if lengths is not None:
        inp = utils.pack_padded_sequence(inp, lengths, batch_first=batch_first, enforce_sorted=False)
    hx = None if not states else tuple(xs[1:]) if len(states) == 2 else xs[1]
    out, h = module(inp, hx)
    if lengths is not None:
        out = utils.pad_packed_sequence(out, batch_first=batch_first)[0]
    return [out, *(h if isinstance(h, tuple) else [h])], xs


def compare(rand, name, kwargs, T, B, lengths=None, with_states=True):
    """name(4, 5, **kwargs) on a (T, B, 4) input drawn with rand (batch_first: (B, T, 4)) and
    drawn states: the results and, of a weighted sum of them, the gradients of the input, the
    states and every parameter, as PyTorch's to TOL."""
    theirs, ours = pair(name, 4, 5, **kwargs)
    batch_first = kwargs.get("batch_first", False)
    x = rand(B, T, 4) if batch_first else rand(T, B, 4)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    states = [rand(layers, B, kwargs.get("proj_size", 0) or 5)]
    states = ([*states, rand(layers, B, 5)] if name == "LSTM" else states) if with_states else []
    (t_res, t_xs), (m_res, m_xs) = (run(lib, mod, x, states, lengths, batch_first)
                                    for lib, mod in ((torch, theirs), (mt, ours)))
    t_loss, m_loss = 0, 0
    for a, b in zip(t_res, m_res):
        assert tuple(b.shape) == tuple(a.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), **TOL)
        w = rand(*a.shape)
        t_loss = t_loss + (a * torch.tensor(w)).sum()
        m_loss = m_loss + (b * mt.tensor(w)).sum()
    t_loss.backward()
    m_loss.backward()
    for a, b in zip(t_xs, m_xs):
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **TOL)
    t_params, m_params = dict(theirs.named_parameters()), dict(ours.named_parameters())
    assert list(t_params) == list(m_params)
    for k in t_params:
        np.testing.assert_allclose(m_params[k].grad.numpy(), t_params[k].grad.numpy(), **TOL)


def node_names(t):
    """The names of the nodes of t's graph, each node once."""
    names, seen, todo = [], {}, [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node  # kept, so that no id is a freed node's reused
        names.append(node.name())
        todo += [next_fn for next_fn, _ in node.next_functions]
    return names


def compare_double_backward(theirs, ours, x, loss, lengths):
    """The gradients of loss(lib, out, h) (h the module's last states) for the input x (padded,
    or packed to lengths) and every parameter, taken with create_graph, and the gradients of their
    squares' sum, as PyTorch's."""
    results = []
    for lib, module, utils in ((torch, theirs, torch.nn.utils.rnn), (mt, ours, rnn_utils)):
        xt = lib.tensor(x, requires_grad=True)
        inp = xt if lengths is None else utils.pack_padded_sequence(xt, lengths, enforce_sorted=False)
        out, h = module(inp)
        out = out if lengths is None else utils.pad_packed_sequence(out)[0]
        params = [xt, *module.parameters()]
        grads = lib.autograd.grad(loss(lib, out, h), params, create_graph=True)
        sum((g * g).sum() for g in grads).backward()
        results.append([g.detach().numpy() for g in grads] + [p.grad.numpy() for p in params])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
