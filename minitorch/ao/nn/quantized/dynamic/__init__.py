"""minitorch.ao.nn.quantized.dynamic (also minitorch.nn.quantized.dynamic): modules with quantized
weights whose activations are quantized on the fly: Linear, LSTM, GRU and the cells."""
from .modules import GRU, LSTM, GRUCell, Linear, LSTMCell, RNNCell  # noqa: F401

__all__ = ["Linear", "LSTM", "GRU", "LSTMCell", "RNNCell", "GRUCell"]
