"""torch.lstm, torch.gru, torch.rnn_tanh and torch.rnn_relu: PyTorch picks the overload from the
second argument, a Tensor of batch_sizes for a packed sequence's data (lstm.data), else the
state (lstm.input). Each is then one op of _C (lstm or lstm_data, ...: csrc/ops/rnn.c)."""
from __future__ import annotations

from . import _C


def _pick(name: str):
    padded, packed = getattr(_C, name), getattr(_C, name + "_data")

    # the data overload's hx: lstm's (a list) follows batch_sizes, the others' (a Tensor) too
    at = 1 if name == "lstm" else 2

    def op(*args, **kwargs):
        if "batch_sizes" in kwargs or (len(args) > at and isinstance(args[at], _C.TensorBase)):
            return packed(*args, **kwargs)
        return padded(*args, **kwargs)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"{name}(input, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first) "
                  f"or {name}(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional)")
    return op


lstm = _pick("lstm")
gru = _pick("gru")
rnn_tanh = _pick("rnn_tanh")
rnn_relu = _pick("rnn_relu")
