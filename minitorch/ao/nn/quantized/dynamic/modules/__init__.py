"""The dynamic quantized modules."""
from .linear import Linear  # noqa: F401
from .rnn import GRU, LSTM, GRUCell, LSTMCell, RNNCell  # noqa: F401

__all__ = ["Linear", "LSTM", "GRU", "LSTMCell", "RNNCell", "GRUCell"]
