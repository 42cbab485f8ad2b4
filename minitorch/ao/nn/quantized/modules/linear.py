"""LinearPackedParams and the quantized Linear's shared parts, as torch.ao.nn.quantized.modules.linear.

The packed weight lives in a LinearPackedParams child, whose state_dict entries are PyTorch's:
`<prefix>_packed_params.dtype` and `<prefix>_packed_params._packed_params`, the (weight, bias)
pair, with the weight as a qint8 quantized tensor (one byte an element: the saved model is about
a quarter of the float one) or, for float16, as float32 values.
"""
from __future__ import annotations

from typing import Any, Optional

import minitorch
from minitorch import nn
from minitorch._qtensor import _empty_affine_quantized, qint8

from .._packed import LinearPacked
from .utils import _WithOutputQParams


class LinearPackedParams(nn.Module):
    """Holds a LinearPacked: the weight and bias as linear_prepack packs them."""

    _version = 3

    def __init__(self, dtype: Any = qint8) -> None:
        super().__init__()
        self.dtype = dtype
        if dtype is qint8:
            wq = _empty_affine_quantized([1, 1], scale=1.0, zero_point=0, dtype=qint8)
        elif dtype is minitorch.float16:
            wq = minitorch.zeros(1, 1)
        else:
            raise RuntimeError(f"Unsupported dtype on dynamic quantized linear: {dtype}")
        self.set_weight_bias(wq, None)

    def set_weight_bias(self, weight: Any, bias: Optional[Any]) -> None:
        if self.dtype is not qint8 and self.dtype is not minitorch.float16:
            raise RuntimeError("Unsupported dtype on dynamic quantized linear!")
        self._packed_params = LinearPacked(weight, bias, self.dtype)

    def _weight_bias(self) -> tuple:
        return self._packed_params.unpack()

    def forward(self, x: Any) -> Any:
        return x

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_params"] = self._weight_bias()

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        version = local_metadata.get("version", None)
        if version is None or version < 2:
            self.dtype = qint8
        else:
            self.dtype = state_dict.pop(prefix + "dtype")
        if version is None or version < 3:
            self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        else:
            weight, bias = state_dict.pop(prefix + "_packed_params")
            self.set_weight_bias(weight, bias)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def __repr__(self) -> str:
        return repr(self._weight_bias())


def _hide_packed_params_repr(self: nn.Module, params: type) -> str:
    """A module's repr without its packed-parameter children (they print as the module's own line)."""
    from minitorch.nn.modules.module import _addindent

    extra = self.extra_repr()
    extra_lines = extra.split("\n") if extra else []
    child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                   for key, module in self._modules.items() if not isinstance(module, params)]
    lines = extra_lines + child_lines
    body = ""
    if lines:
        body = extra_lines[0] if len(extra_lines) == 1 and not child_lines else "\n  " + "\n  ".join(lines) + "\n"
    return self._get_name() + "(" + body + ")"


class Linear(_WithOutputQParams):
    """The quantized Linear's state: in/out features, the packed weight, and the output scale and
    zero point (unused by the dynamic module, saved as PyTorch saves them)."""

    _version = 3
    _FLOAT_MODULE = (nn.Linear, nn.modules.linear.NonDynamicallyQuantizableLinear)

    def __init__(self, in_features: int, out_features: int, bias_: bool = True, dtype: Any = qint8) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        bias = minitorch.zeros(out_features) if bias_ else None
        if dtype is qint8:
            qweight = _empty_affine_quantized([out_features, in_features], scale=1.0, zero_point=0, dtype=qint8)
        elif dtype is minitorch.float16:
            qweight = minitorch.zeros(out_features, in_features)
        else:
            raise RuntimeError("Unsupported dtype specified for quantized Linear!")
        self._packed_params = LinearPackedParams(dtype)
        self._packed_params.set_weight_bias(qweight, bias)
        self.scale = 1.0
        self.zero_point = 0

    def _get_name(self) -> str:
        return "QuantizedLinear"

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, scale={self.scale}, "
                f"zero_point={self.zero_point}, qscheme={self.weight().qscheme()}")

    def __repr__(self) -> str:
        return _hide_packed_params_repr(self, LinearPackedParams)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        version = local_metadata.get("version", None)
        if version is None or version == 1:
            weight = state_dict.pop(prefix + "weight")
            bias = state_dict.pop(prefix + "bias")
            state_dict.update({prefix + "_packed_params.weight": weight, prefix + "_packed_params.bias": bias})
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    def _weight_bias(self) -> tuple:
        return self._packed_params._weight_bias()

    def weight(self) -> Any:
        return self._weight_bias()[0]

    def bias(self) -> Any:
        return self._weight_bias()[1]

    def set_weight_bias(self, w: Any, b: Optional[Any]) -> None:
        self._packed_params.set_weight_bias(w, b)
