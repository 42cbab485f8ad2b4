"""minitorch.ao.nn.intrinsic.qat: the fused modules for quantization-aware training, which
prepare_qat puts in place of the float fused ones. ConvBn2d / ConvBnReLU2d keep the batch norm
apart while training but fake-quantize the weight as it will be folded: with
s = bn.weight / sqrt(running_var + eps), the convolution runs with fake_quant(W * s), its output
is divided by s (and given the bias) and goes through the batch norm (PyTorch's approximate
forward). freeze_bn_stats / update_bn_stats (for model.apply) stop and restart the batch norm's
statistics."""
from __future__ import annotations

import math
from typing import Any, Optional

import minitorch
from minitorch import nn
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn.parameter import Parameter

from ..modules.fused import ConvBn2d as _FloatConvBn2d
from ..modules.fused import ConvBnReLU2d as _FloatConvBnReLU2d
from ..modules.fused import ConvReLU2d as _FloatConvReLU2d
from ..modules.fused import LinearReLU as _FloatLinearReLU
from ..modules.fused import _FusedModule
from ... import qat as nnqat
from ...qat import _conv_args, _fake_quant_weight, _float_layer

__all__ = ["ConvBn2d", "ConvBnReLU2d", "ConvReLU2d", "LinearReLU", "freeze_bn_stats", "update_bn_stats"]


class ConvBn2d(nn.Conv2d, _FusedModule):
    """Conv2d + BatchNorm2d for quantization-aware training (module docstring)."""

    _FLOAT_MODULE = _FloatConvBn2d
    _relu = False

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: Optional[bool] = None, padding_mode: str = "zeros",
                 eps: float = 1e-05, momentum: float = 0.1, freeze_bn: bool = False, qconfig: Any = None) -> None:
        nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, False,
                           padding_mode)
        self.freeze_bn = freeze_bn if self.training else True
        self.bn = nn.BatchNorm2d(out_channels, eps, momentum, True, True)
        _fake_quant_weight(self, qconfig)  # after bn: the children in PyTorch's order
        if bias:
            self.bias = Parameter(minitorch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_bn_parameters()
        if self.training and not freeze_bn:
            self.update_bn_stats()
        else:
            self.freeze_bn_stats()

    def reset_running_stats(self) -> None:
        self.bn.reset_running_stats()

    def reset_bn_parameters(self) -> None:
        self.bn.reset_running_stats()
        init.uniform_(self.bn.weight)
        init.zeros_(self.bn.bias)
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def update_bn_stats(self) -> "ConvBn2d":
        self.freeze_bn = False
        self.bn.training = True
        return self

    def freeze_bn_stats(self) -> "ConvBn2d":
        self.freeze_bn = True
        self.bn.training = False
        return self

    def _forward(self, input: Any) -> Any:
        # weight (O, C, kH, kW) scaled per output channel; conv (N, O, H', W')
        scale_factor = self.bn.weight / minitorch.sqrt(self.bn.running_var + self.bn.eps)
        scaled_weight = self.weight_fake_quant(self.weight * scale_factor.reshape(-1, 1, 1, 1))
        conv = self._conv_forward(input, scaled_weight, minitorch.zeros(self.out_channels, dtype=input.dtype))
        conv_orig = conv / scale_factor.reshape(1, -1, 1, 1)
        if self.bias is not None:
            conv_orig = conv_orig + self.bias.reshape(1, -1, 1, 1)
        return self.bn(conv_orig)

    def forward(self, input: Any) -> Any:
        out = self._forward(input)
        return F.relu(out) if self._relu else out

    def train(self, mode: bool = True) -> "ConvBn2d":
        """Training mode for the convolution; for the batch norm too unless its statistics are frozen."""
        self.training = mode
        if not self.freeze_bn:
            for module in self.children():
                module.train(mode)
        return self

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "ConvBn2d":
        """The QAT module of a float nni.ConvBn2d / ConvBnReLU2d: the same parameters and buffers."""
        qconfig = mod.qconfig if hasattr(mod, "qconfig") else None
        conv, bn = _float_layer(mod, cls), mod[1]
        qat = cls(*_conv_args(conv), bn.eps, bn.momentum, False, qconfig)
        qat.weight, qat.bias = conv.weight, conv.bias
        qat.bn.weight, qat.bn.bias = bn.weight, bn.bias
        qat.bn.running_mean, qat.bn.running_var = bn.running_mean, bn.running_var
        qat.bn.num_batches_tracked = bn.num_batches_tracked
        return qat

    def to_float(self) -> nn.Module:
        """The float Conv2d with the batch norm folded in (and its ReLU)."""
        from minitorch.nn.utils.fusion import fuse_conv_bn_eval

        conv = nn.Conv2d(*_conv_args(self))
        conv.weight = Parameter(self.weight.detach())
        if self.bias is not None:
            conv.bias = Parameter(self.bias.detach())
        conv.eval(), self.bn.eval()
        fused = fuse_conv_bn_eval(conv, self.bn)
        return _FloatConvReLU2d(fused, nn.ReLU()) if self._relu else fused


class ConvBnReLU2d(ConvBn2d):
    """Conv2d + BatchNorm2d + ReLU for quantization-aware training."""

    _FLOAT_MODULE = _FloatConvBnReLU2d
    _relu = True


def _with_relu(name: str, base: type, float_module: type) -> type:
    """The QAT module base (weight fake-quantized) followed by a ReLU, made from float_module."""

    def forward(self: Any, input: Any) -> Any:
        return F.relu(base.forward(self, input))

    return type(name, (base, _FusedModule), {"_FLOAT_MODULE": float_module, "forward": forward, "__module__": __name__,
                                             "__doc__": f"{base.__name__} + ReLU for quantization-aware training."})


ConvReLU2d = _with_relu("ConvReLU2d", nnqat.Conv2d, _FloatConvReLU2d)
LinearReLU = _with_relu("LinearReLU", nnqat.Linear, _FloatLinearReLU)


def freeze_bn_stats(mod: nn.Module) -> None:
    """For model.apply: freezes the batch norm statistics of a QAT ConvBn module."""
    if isinstance(mod, ConvBn2d):
        mod.freeze_bn_stats()


def update_bn_stats(mod: nn.Module) -> None:
    """For model.apply: lets the batch norm of a QAT ConvBn module update its statistics again."""
    if isinstance(mod, ConvBn2d):
        mod.update_bn_stats()
