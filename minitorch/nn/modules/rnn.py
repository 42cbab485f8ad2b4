"""Recurrent layers: RNN (tanh or relu), LSTM (with proj_size), GRU and their cells, laid out as
torch/nn/modules/rnn.py.

The parameters, their names (weight_ih_l0, weight_hh_l0, bias_ih_l0, bias_hh_l0, weight_hr_l0, the
_reverse suffix of the second direction), shapes, order and initialisation (U(-1/sqrt(hidden),
1/sqrt(hidden)) on every one) are PyTorch's, so a state_dict loads either way. The forward pass is
one op, as PyTorch's _VF.lstm (minitorch.lstm, gru, rnn_tanh, rnn_relu and the cells' ops, written
in C over other ops: csrc/ops/rnn.c): the input-to-hidden products of a whole sequence are one
linear per layer and direction, then one step per time step (linear on the hidden state, sigmoid,
tanh), with PyTorch's gate order: LSTM i, f, g, o; GRU r, z, n with n = tanh(W_in x + b_in + r * (W_hn h +
b_hn)). Dropout (training only) goes between layers, never after the last one.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Optional

import minitorch
from minitorch import Tensor
from minitorch.nn import init
from minitorch.nn.modules.module import Module
from minitorch.nn.parameter import Parameter
from minitorch.nn.utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
# the ops of each mode (csrc/ops/rnn.c), as torch's _VF.lstm ... and _VF.lstm_cell ...
_OPS = {"LSTM": minitorch.lstm, "GRU": minitorch.gru, "RNN_TANH": minitorch.rnn_tanh, "RNN_RELU": minitorch.rnn_relu}
_CELLS = {"LSTM": minitorch.lstm_cell, "GRU": minitorch.gru_cell, "RNN_TANH": minitorch.rnn_tanh_cell,
          "RNN_RELU": minitorch.rnn_relu_cell}


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, the checks and the layer/direction loop."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list = []
        self._all_weights: list = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [("weight_ih_l{}{}", (gate_size, layer_input_size)),
                          ("weight_hh_l{}{}", (gate_size, real_hidden_size))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for fmt, shape in shapes:
                    names.append(fmt.format(layer, suffix))
                    setattr(self, names[-1], Parameter(minitorch.empty(*shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op, as in PyTorch off cuDNN."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def check_input(self, input: Tensor, batch_sizes: Optional[Tensor]) -> None:
        if input.dtype != self._flat_weights[0].dtype:
            w = self._flat_weights[0].dtype
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w}). "
                f"Convert input: input.to({w}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Optional[Tensor]) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        width = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, width)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Optional[Tensor]) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def forward(self, input, hx=None):
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        lstm = self.mode == "LSTM"
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch, is_batched = int(batch_sizes[0]), True
            if hx is not None and sorted_indices is not None:
                hx = tuple(h.index_select(1, sorted_indices) for h in hx) if lstm else \
                    hx.index_select(1, sorted_indices)
        else:
            data, batch_sizes, unsorted_indices = input, None, None
            if data.dim() not in (2, 3):
                tensor = " tensor" if name == "RNN" else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {data.dim()}D{tensor} instead")
            is_batched = data.dim() == 3
            if not is_batched:
                data = data.unsqueeze(0 if self.batch_first else 1)
            max_batch = data.size(0) if self.batch_first else data.size(1)
            if hx is not None:
                want = 3 if is_batched else 2
                kind = "batched 3-D" if is_batched else "unbatched 2-D"
                if lstm and (hx[0].dim() != want or hx[1].dim() != want):
                    raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                if not lstm and hx.dim() != want:
                    raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor")
                if not is_batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
        if hx is None:
            shape = (self.num_layers * num_directions, max_batch)
            h0 = minitorch.zeros(*shape, real_hidden, dtype=data.dtype, device=data.device)
            c0 = minitorch.zeros(*shape, self.hidden_size, dtype=data.dtype, device=data.device) if lstm else None
        else:
            h0, c0 = hx if lstm else (hx, None)
        self.check_input(data, batch_sizes)
        expected = self.get_expected_hidden_size(data, batch_sizes)
        if lstm:
            self.check_hidden_size(h0, expected, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(c0, expected[:2] + (self.hidden_size,), "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(h0, expected)
        op = _OPS[self.mode]
        states = [h0, c0] if lstm else h0
        flags = (self.bias, self.num_layers, self.dropout, self.training, self.bidirectional)
        if packed:
            result = op(data, batch_sizes, states, self._flat_weights, *flags)
        else:
            result = op(data, states, self._flat_weights, *flags, self.batch_first)
        output, h_n, c_n = result if lstm else (*result, None)
        if packed:
            if unsorted_indices is not None:
                h_n = h_n.index_select(1, unsorted_indices)
                c_n = c_n.index_select(1, unsorted_indices) if lstm else None
            output = PackedSequence(output, batch_sizes, input.sorted_indices, unsorted_indices)
        else:
            if not is_batched:
                output = output.squeeze(0 if self.batch_first else 1)
                h_n = h_n.squeeze(1)
                c_n = c_n.squeeze(1) if lstm else None
        return (output, (h_n, c_n)) if lstm else (output, h_n)


class RNN(RNNBase):
    """An Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """A long short-term memory RNN (gates i, f, g, o), with an optional projection (proj_size)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """A gated recurrent unit RNN (gates r, z, n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """What the cells share: weight_ih, weight_hh, bias_ih, bias_hh and their initialisation."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(minitorch.empty(num_chunks * hidden_size, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(minitorch.empty(num_chunks * hidden_size, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(minitorch.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(minitorch.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _cell(self, name: str, mode: str, input: Tensor, hx, n_states: int):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = None if hx is None else (tuple(hx) if n_states == 2 else (hx,))
        if states is not None:
            for idx, value in enumerate(states):
                if value.dim() not in (1, 2):
                    what = f"hx[{idx}]" if n_states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if states is None:
            zeros = minitorch.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            states = (zeros,) * n_states
        elif not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        cell = _CELLS[mode]
        result = cell(input, list(states) if n_states == 2 else states[0], self.weight_ih, self.weight_hh,
                      self.bias_ih, self.bias_hh)
        h, c = result if n_states == 2 else (result, None)
        if not is_batched:
            h, c = h.squeeze(0), (c.squeeze(0) if c is not None else None)
        return (h, c) if n_states == 2 else h


class RNNCell(RNNCellBase):
    """One step of an Elman RNN: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._cell("RNNCell", "RNN_" + self.nonlinearity.upper(), input, hx, 1)


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[tuple] = None) -> tuple:
        return self._cell("LSTMCell", "LSTM", input, hx, 2)


class GRUCell(RNNCellBase):
    """One GRU step: h' = (1 - z) * n + z * h."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        return self._cell("GRUCell", "GRU", input, hx, 1)
