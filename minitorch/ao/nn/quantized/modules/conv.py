"""The statically quantized Conv2d (torch.ao.nn.quantized.Conv2d): quint8 input per tensor, qint8
weight per tensor or per output channel, float bias, quint8 output with the scale and zero point
its observer chose. The integer sums run as our float64 conv2d on the integers less their zero
points (exact); the output stage is fbgemm's (utils._requantize). Zero padding pads with the
input's zero point, real 0, as PyTorch's does."""
from __future__ import annotations

from typing import Any, Optional

import minitorch
from minitorch import nn
from minitorch._qtensor import _empty_affine_quantized, qint8
from minitorch.nn import functional as F
from minitorch.nn.modules.utils import _pair

from .utils import _input_integers, _quantize_weight, _requantize, _weight_integers, _WithOutputQParams

__all__ = ["Conv2d"]


class Conv2d(_WithOutputQParams):
    """A quantized 2-D convolution; input (N, C, H, W), weight (O, C / groups, kH, kW)."""

    _FLOAT_MODULE = nn.Conv2d
    _relu = False  # a fused ConvReLU2d clamps its output from the zero point up

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode != "zeros":
            raise ValueError(f"Only 'zeros' padding_mode is supported by minitorch's quantized Conv2d, got "
                             f"'{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride = _pair(kernel_size), _pair(stride)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.dilation, self.transposed, self.output_padding = _pair(dilation), False, _pair(0)
        self.padding_mode = padding_mode
        qweight = _empty_affine_quantized([out_channels, in_channels // groups, *self.kernel_size], scale=1.0,
                                          zero_point=0, dtype=qint8)
        self.set_weight_bias(qweight, minitorch.zeros(out_channels) if bias else None)
        self.scale, self.zero_point = 1.0, 0

    def _get_name(self) -> str:
        return "QuantizedConv2d"

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}, "
             f"scale={self.scale}, zero_point={self.zero_point}")
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias() is None:
            s += ", bias=False"
        return s

    def set_weight_bias(self, w: Any, b: Optional[Any]) -> None:
        self._weight, self._bias = w, None if b is None else b.detach()  # a plain tensor, no Parameter
        self._w_int, self._w_scale = _weight_integers(w)

    def _weight_bias(self) -> tuple:
        return self._weight, self._bias

    def weight(self) -> Any:
        return self._weight

    def bias(self) -> Any:
        return self._bias

    def forward(self, input: Any) -> Any:
        if input.dim() != 4:
            raise ValueError("Input shape must be `(N, C, H, W)`!")
        acc = F.conv2d(_input_integers(input, "quantized::conv2d"), self._w_int, None, self.stride, self.padding,
                       self.dilation, self.groups)  # (N, O, H', W'): exact integers
        return _requantize(acc, input.q_scale(), self._w_scale, self._bias, self.scale, self.zero_point, self._relu,
                           1)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        destination[prefix + "weight"], destination[prefix + "bias"] = self._weight_bias()
        super()._save_to_state_dict(destination, prefix, keep_vars)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        self.set_weight_bias(state_dict.pop(prefix + "weight"), state_dict.pop(prefix + "bias"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Conv2d":
        """The quantized twin of an observed float Conv2d (or fused ConvReLU2d), or of a QAT one:
        the weight quantized by its observer (qconfig.weight()'s, or the QAT module's
        weight_fake_quant after the batch norm is folded in), the output parameters from its
        output observer."""
        from minitorch.ao.nn.intrinsic import ConvReLU2d
        from minitorch.ao.nn.intrinsic.qat import ConvBn2d
        from minitorch.nn.utils.fusion import fuse_conv_bn_weights

        if hasattr(mod, "weight_fake_quant"):
            if isinstance(mod, ConvBn2d):
                bn = mod.bn
                mod.weight, mod.bias = fuse_conv_bn_weights(mod.weight, mod.bias, bn.running_mean, bn.running_var,
                                                            bn.eps, bn.weight, bn.bias)
            if not hasattr(mod, "activation_post_process"):
                raise AssertionError("Input QAT module must have observer attached")
            post, observer = mod.activation_post_process, mod.weight_fake_quant
        else:
            if type(mod) is not cls._FLOAT_MODULE:
                raise AssertionError(f" nnq.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__} "
                                     f"but got:{type(mod)}")
            if not hasattr(mod, "qconfig"):
                raise AssertionError("Input float module must have qconfig defined.")
            post = mod.activation_post_process
            if type(mod) is ConvReLU2d:
                mod = mod[0]
            observer = mod.qconfig.weight()
        observer(mod.weight)
        if observer.dtype is not qint8:
            raise AssertionError("Weight observer must have a dtype of qint8")
        qconv = cls(mod.in_channels, mod.out_channels, mod.kernel_size, mod.stride, mod.padding, mod.dilation,
                    mod.groups, mod.bias is not None, mod.padding_mode)
        qconv.set_weight_bias(_quantize_weight(mod.weight.float(), observer), mod.bias)
        scale, zero_point = post.calculate_qparams()
        qconv.scale, qconv.zero_point = float(scale), int(zero_point)
        return qconv
