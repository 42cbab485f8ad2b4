"""nn.quantized.dynamic.LSTM, GRU and the cells: recurrent layers whose weights are stored as qint8
(or float16) and whose matrix products are dynamic quantized linears (_packed.linear_dynamic).

As PyTorch's quantized_lstm / quantized_gru on the CPU: for each layer and direction the input
projection of the whole sequence is one dynamic linear (its activation scale comes from the
whole layer input), then each time step adds the hidden projection (another dynamic linear of
h) and applies the gates in float32. The layers' weights live in `_all_weight_values`, a
ModuleList of PackedParameter, whose state_dict entries (`_all_weight_values.<k>.param`) hold
the packed cell parameters, as PyTorch's do.
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Optional

import minitorch
from minitorch import nn
from minitorch._qtensor import qint8

from ..._packed import LinearPacked, linear_dynamic
from ...modules.utils import _quantize_weight, _RecordsVersion


class CellParams:
    """One layer-direction's packed weights and float biases (PyTorch's CellParamsBase): the
    input-to-hidden and hidden-to-hidden linears, each with its bias packed in, and reduce_range."""

    def __init__(self, packed_ih: LinearPacked, packed_hh: LinearPacked, reduce_range: bool = True) -> None:
        self.packed_ih, self.packed_hh, self.reduce_range = packed_ih, packed_hh, reduce_range

    def linear_ih(self, x: Any) -> Any:
        return linear_dynamic(x, self.packed_ih, self.reduce_range)

    def linear_hh(self, h: Any) -> Any:
        return linear_dynamic(h, self.packed_hh, self.reduce_range)

    def __getstate__(self) -> tuple:
        """PyTorch's serialized form: (kind, biases, [], [reduce_range], packed params)."""
        if self.packed_ih.dtype is qint8:
            return ("quantized_dynamic", [self.packed_ih.bias, self.packed_hh.bias], [], [int(self.reduce_range)],
                    [self.packed_ih, self.packed_hh])
        return "quantized_fp16", [], [], [], [self.packed_ih, self.packed_hh]

    def __setstate__(self, state: tuple) -> None:
        self.packed_ih, self.packed_hh = state[4]
        self.reduce_range = bool(state[3][0]) if state[3] else False

    def __repr__(self) -> str:
        return "CellParams()"


def pack_weight_bias(qweight: Any, bias: Optional[Any], dtype: Any) -> LinearPacked:
    return LinearPacked(qweight, bias, dtype)


class PackedParameter(nn.Module):
    """Holds one CellParams; saved as `<prefix>param`."""

    def __init__(self, param: Any) -> None:
        super().__init__()
        self.param = param

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "param"] = self.param

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        self.param = state_dict.pop(prefix + "param")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


def _weight_observer_method(mod: Any) -> tuple:
    """The weight observer factory of a float module being converted (its qconfig's, else the
    default dynamic one) and the dtype it quantizes to (qint8 or float16)."""
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    if mod.qconfig is not None and mod.qconfig.weight is not None:
        method = mod.qconfig.weight
    else:
        from minitorch.ao.quantization.qconfig import default_dynamic_qconfig

        method = default_dynamic_qconfig.weight
    dtype = method().dtype
    if dtype is not qint8 and dtype is not minitorch.float16:
        raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
    return method, dtype


def _packed(weight: Any, bias: Any, dtype: Any, observer_method: Any) -> LinearPacked:
    """weight quantized by a fresh observer (qint8) or kept as float (float16), packed with bias."""
    if dtype is qint8:
        observer = observer_method()
        observer(weight)
        return LinearPacked(_quantize_weight(weight.float(), observer), bias, dtype)
    return LinearPacked(weight.float(), bias, dtype)


def _random_cell(gate_size: int, input_size: int, hidden_size: int, dtype: Any, reduce_range: bool) -> CellParams:
    """Placeholder weights of a freshly built module, as PyTorch's constructor makes (randn, scale 0.1)."""
    packs = []
    for k in (input_size, hidden_size):
        w, b = minitorch.randn(gate_size, k), minitorch.randn(gate_size)
        if dtype is qint8:
            w = minitorch.quantize_per_tensor(w, 0.1, 0, qint8)
        packs.append(LinearPacked(w, b, dtype))
    return CellParams(packs[0], packs[1], reduce_range)


class RNNBase(_RecordsVersion):
    """The dynamic quantized LSTM's and GRU's shared parts: sizes, flags and the packed layers."""

    _FLOAT_MODULE = nn.RNNBase
    _version = 2

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 dtype: Any = qint8) -> None:
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.dtype, self.version, self.training = bidirectional, dtype, 2, False
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        gates = {"LSTM": 4, "GRU": 3}.get(mode)
        if gates is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        directions = 2 if bidirectional else 1
        cells = []
        for layer in range(num_layers):
            for _ in range(directions):
                size = input_size if layer == 0 else hidden_size * directions
                cells.append(PackedParameter(_random_cell(gates * hidden_size, size, hidden_size, dtype, True)))
        self._all_weight_values = nn.ModuleList(cells)

    def _get_name(self) -> str:
        return "DynamicQuantized" + (type(self).__name__ if type(self) in (LSTM, GRU) else "RNN")

    proj_size = 0  # for the float RNNBase's extra_repr, which prints the same fields
    extra_repr = nn.RNNBase.extra_repr

    def __repr__(self) -> str:
        from ...modules.linear import _hide_packed_params_repr

        return _hide_packed_params_repr(self, (PackedParameter, nn.ModuleList))

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "RNNBase":
        if type(mod) not in {nn.LSTM, nn.GRU}:
            raise AssertionError("nn.quantized.dynamic.RNNBase.from_float only works for nn.LSTM and nn.GRU")
        observer_method, dtype = _weight_observer_method(mod)
        if mod.mode not in ("LSTM", "GRU"):
            raise NotImplementedError("Only LSTM/GRU is supported for QuantizedRNN for now")
        qmod = (LSTM if mod.mode == "LSTM" else GRU)(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias,
                                                     mod.batch_first, mod.dropout, mod.bidirectional, dtype)
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        cells = []
        for layer in range(qmod.num_layers):
            for suffix in ("", "_reverse")[: 2 if mod.bidirectional else 1]:
                ih, hh = (_packed(getattr(mod, f"weight_{k}_l{layer}{suffix}"), getattr(mod, f"bias_{k}_l{layer}{suffix}"),
                                  dtype, observer_method) for k in ("ih", "hh"))
                cells.append(PackedParameter(CellParams(ih, hh, reduce_range=True)))
        qmod._all_weight_values = nn.ModuleList(cells)
        return qmod

    def _weight_bias(self) -> dict:
        out: dict = {"weight": {}, "bias": {}}
        directions = 2 if self.bidirectional else 1
        for k, packed in enumerate(self._all_weight_values):
            layer, direction = divmod(k, directions)
            suffix = "_reverse" if direction == 1 else ""
            for name, lin in (("ih", packed.param.packed_ih), ("hh", packed.param.packed_hh)):
                w, b = lin.unpack()
                out["weight"][f"weight_{name}_l{layer}{suffix}"] = w
                out["bias"][f"bias_{name}_l{layer}{suffix}"] = b
        return out

    def get_weight(self) -> dict:
        return self._weight_bias()["weight"]

    def get_bias(self) -> dict:
        return self._weight_bias()["bias"]

    # ---- the recurrence ----
    def _run(self, input: Any, hx: Any, cell: Any) -> tuple:
        """All layers over input (T, B, I) from states hx (a list per layer-direction): the output
        (T, B, D*H) and the final states."""
        directions = 2 if self.bidirectional else 1
        layer_input, finals = input, []
        for layer in range(self.num_layers):
            outputs = []
            for d in range(directions):
                k = layer * directions + d
                params = self._all_weight_values[k].param
                projected = params.linear_ih(layer_input)  # (T, B, G*H): the whole sequence at once
                steps = range(projected.shape[0] - 1, -1, -1) if d == 1 else range(projected.shape[0])
                state, outs = hx[k], [None] * projected.shape[0]
                for t in steps:
                    state = cell(projected[t], state, params)
                    outs[t] = state[0] if isinstance(state, tuple) else state
                finals.append(state)
                outputs.append(minitorch.stack(outs, 0))
            layer_input = outputs[0] if directions == 1 else minitorch.cat(outputs, 2)
        return layer_input, finals

    def _prepare(self, input: Any, hx: Any, lstm: bool) -> tuple:
        from minitorch.nn.utils.rnn import PackedSequence

        if isinstance(input, PackedSequence):
            raise NotImplementedError("minitorch's dynamic quantized RNNs take padded tensors, not a PackedSequence")
        if input.dim() != 3:  # PyTorch's dynamic quantized RNNs take batched input only
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.batch_first:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")
        if input.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        shape = (self.num_layers * (2 if self.bidirectional else 1), input.shape[1], self.hidden_size)
        if hx is None:
            zeros = minitorch.zeros(shape, dtype=input.dtype)
            hx = (zeros, zeros) if lstm else zeros
        for h in (hx if lstm else (hx,)):
            if tuple(h.shape) != shape:
                which = "hidden[0]" if lstm and h is hx[0] else ("hidden[1]" if lstm else "hidden")
                raise RuntimeError(f"Expected {which} size {shape}, got {tuple(h.shape)}")
        return input, hx

    def forward(self, input: Any, hx: Any = None) -> tuple:
        """(output, (h_n, c_n)) for the LSTM, (output, h_n) for the GRU, as the float modules."""
        lstm = self.mode == "LSTM"
        x, h0 = self._prepare(input, hx, lstm)
        states = list(zip(h0[0].unbind(0), h0[1].unbind(0))) if lstm else list(h0.unbind(0))
        out, finals = self._run(x, states, _lstm_cell if lstm else _gru_cell)
        finals = [minitorch.stack(list(s), 0) for s in zip(*finals)] if lstm else [minitorch.stack(finals, 0)]
        if self.batch_first:
            out = out.transpose(0, 1)
        return (out, tuple(finals)) if lstm else (out, finals[0])


def _lstm_cell(igates: Any, state: tuple, params: CellParams) -> tuple:
    """One LSTM step from the input projection igates (B, 4H): PyTorch's gate order i, f, g, o."""
    h, c = state
    gates = params.linear_hh(h) + igates
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    c = f * c + i * g
    return o * c.tanh(), c


def _gru_cell(igates: Any, h: Any, params: CellParams) -> Any:
    """One GRU step from igates (B, 3H): r, z from both projections, n from the input's plus r * h's."""
    ir, iz, in_ = igates.chunk(3, 1)
    hr, hz, hn = params.linear_hh(h).chunk(3, 1)
    r, z = (hr + ir).sigmoid(), (hz + iz).sigmoid()
    n = (in_ + hn * r).tanh()
    return (h - n) * z + n


class LSTM(RNNBase):
    """A dynamic quantized LSTM (float input, hidden states and output)."""

    _FLOAT_MODULE = nn.LSTM

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """A dynamic quantized GRU (float input, hidden state and output)."""

    _FLOAT_MODULE = nn.GRU

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("GRU", *args, **kwargs)


# ---- cells ----

class RNNCellBase(nn.Module):
    """The dynamic quantized cells' shared parts: two packed linears, each with its bias packed in."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, num_chunks: int = 4,
                 dtype: Any = qint8) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias, self.weight_dtype = input_size, hidden_size, bias, dtype
        if bias:
            self.bias_ih = minitorch.randn(num_chunks * hidden_size)
            self.bias_hh = minitorch.randn(num_chunks * hidden_size)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        cell = _random_cell(num_chunks * hidden_size, input_size, hidden_size, dtype, True)
        cell.packed_ih.bias, cell.packed_hh.bias = self.bias_ih, self.bias_hh
        self._packed_weight_ih, self._packed_weight_hh = cell.packed_ih, cell.packed_hh

    def _get_name(self) -> str:
        return "DynamicQuantized" + (type(self).__name__ if type(self) is not RNNCellBase else "RNNBase")

    extra_repr = nn.RNNCellBase.extra_repr

    def check_forward_input(self, input: Any) -> None:
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)}, expected {self.input_size}")

    def check_forward_hidden(self, input: Any, hx: Any, hidden_label: str = "") -> None:
        if input.size(0) != hx.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{hidden_label} batch size "
                               f"{hx.size(0)}")
        if hx.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{hidden_label} has inconsistent hidden_size: got {hx.size(1)}, expected "
                               f"{self.hidden_size}")

    def _params(self) -> CellParams:
        return CellParams(self._packed_weight_ih, self._packed_weight_hh, reduce_range=True)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "RNNCellBase":
        if type(mod) not in {nn.LSTMCell, nn.GRUCell, nn.RNNCell}:
            raise AssertionError("nn.quantized.dynamic.RNNCellBase.from_float only works for nn.LSTMCell, "
                                 "nn.GRUCell and nn.RNNCell")
        observer_method, dtype = _weight_observer_method(mod)
        if type(mod) is nn.LSTMCell:
            qcell = LSTMCell(mod.input_size, mod.hidden_size, bias=mod.bias, dtype=dtype)
        elif type(mod) is nn.GRUCell:
            qcell = GRUCell(mod.input_size, mod.hidden_size, bias=mod.bias, dtype=dtype)
        else:
            qcell = RNNCell(mod.input_size, mod.hidden_size, bias=mod.bias, nonlinearity=mod.nonlinearity,
                            dtype=dtype)
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        qcell._packed_weight_ih = _packed(mod.weight_ih, mod.bias_ih, dtype, observer_method)
        qcell._packed_weight_hh = _packed(mod.weight_hh, mod.bias_hh, dtype, observer_method)
        return qcell

    def _weight_bias(self) -> dict:
        (w1, b1), (w2, b2) = self._packed_weight_ih.unpack(), self._packed_weight_hh.unpack()
        return {"weight": {"weight_ih": w1, "weight_hh": w2}, "bias": {"bias_ih": b1, "bias_hh": b2}}

    def get_weight(self) -> dict:
        return self._weight_bias()["weight"]

    def get_bias(self) -> dict:
        return self._weight_bias()["bias"]

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "_packed_weight_ih"] = self._packed_weight_ih
        destination[prefix + "_packed_weight_hh"] = self._packed_weight_hh

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        self._packed_weight_ih = state_dict.pop(prefix + "_packed_weight_ih")
        self._packed_weight_hh = state_dict.pop(prefix + "_packed_weight_hh")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def forward(self, input: Any, hx: Any = None) -> Any:
        """The next state from input (B, I) and hx (zeros where None)."""
        lstm = isinstance(self, LSTMCell)
        self.check_forward_input(input)
        if hx is None:
            zeros = minitorch.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros) if lstm else zeros
        for k, h in enumerate(hx if lstm else (hx,)):
            self.check_forward_hidden(input, h, f"[{k}]" if lstm else "")
        return self._step(input, hx, self._params())


class RNNCell(RNNCellBase):
    """A dynamic quantized Elman cell (tanh or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 dtype: Any = qint8) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _step(self, x: Any, h: Any, p: CellParams) -> Any:
        pre = p.linear_hh(h) + p.linear_ih(x)
        if self.nonlinearity == "tanh":
            return pre.tanh()
        if self.nonlinearity == "relu":
            return pre.relu()
        raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")


class LSTMCell(RNNCellBase):
    """A dynamic quantized LSTM cell: (h, c) from input and (h, c)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, num_chunks=4, **kwargs)

    def _step(self, x: Any, hx: tuple, p: CellParams) -> tuple:
        return _lstm_cell(p.linear_ih(x), hx, p)


class GRUCell(RNNCellBase):
    """A dynamic quantized GRU cell."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, dtype: Any = qint8) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def _step(self, x: Any, h: Any, p: CellParams) -> Any:
        return _gru_cell(p.linear_ih(x), h, p)
