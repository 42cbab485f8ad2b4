"""The flat weight list of PyTorch's recurrent ops (torch.lstm, gru, rnn_tanh, rnn_relu), as
NumPy arrays, shared by the tests with PyTorch and without it (so this module imports no torch)."""

GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def params_of(rand, op, inp, hidden, layers, dirs, bias, proj):
    """PyTorch's flat layout: per layer and direction w_ih, w_hh, [b_ih, b_hh], [w_hr], drawn
    with rand(*shape) (the calling test's generator)."""
    out, width, g = [], proj or hidden, GATES[op]
    for layer in range(layers):
        for _ in range(dirs):
            f = inp if layer == 0 else width * dirs
            out += [rand(g * hidden, f) * 0.5, rand(g * hidden, width) * 0.5]
            out += [rand(g * hidden), rand(g * hidden)] if bias else []
            out += [rand(proj, hidden) * 0.5] if proj else []
    return out
