"""minitorch.ao.nn.qat (also minitorch.nn.qat): modules for quantization-aware training, whose
weights pass through a FakeQuantize in the forward."""
from __future__ import annotations

from typing import Any, Optional

from minitorch import nn
from minitorch.nn import functional as F

__all__ = ["Conv2d", "Linear"]


def _fake_quant_weight(mod: nn.Module, qconfig: Any) -> None:
    """Gives the QAT module mod its qconfig and its weight's FakeQuantize."""
    if not qconfig:
        raise AssertionError("qconfig must be provided for QAT module")
    mod.qconfig = qconfig
    mod.weight_fake_quant = qconfig.weight()


def _float_layer(mod: Any, cls: type) -> Any:
    """The float layer of mod (mod itself, or its first module when fused) once mod is checked
    to be cls's float module with a qconfig."""
    from ..intrinsic.modules.fused import _FusedModule  # the intrinsic package imports this one

    if type(mod) is not cls._FLOAT_MODULE:
        raise AssertionError(f" qat.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__}")
    if not hasattr(mod, "qconfig"):
        raise AssertionError("Input float module must have qconfig defined")
    if not mod.qconfig:
        raise AssertionError("Input float module must have a valid qconfig")
    return mod[0] if isinstance(mod, _FusedModule) else mod


def _from_float(cls: type, mod: Any, args_of: Any) -> Any:
    """The cls module of the float mod: cls(*args_of(its layer), qconfig=mod.qconfig) sharing the
    layer's weight and bias."""
    layer = _float_layer(mod, cls)
    qat = cls(*args_of(layer), qconfig=mod.qconfig)
    qat.weight, qat.bias = layer.weight, layer.bias
    return qat


class Linear(nn.Linear):
    """A Linear whose weight is fake-quantized (qconfig.weight()) at each forward; prepare_qat
    puts it in place of nn.Linear, convert turns it into a quantized Linear."""

    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features: int, out_features: int, bias: bool = True, qconfig: Optional[Any] = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        _fake_quant_weight(self, qconfig)

    def forward(self, input: Any) -> Any:
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Linear":
        return _from_float(cls, mod, lambda linear: (linear.in_features, linear.out_features, linear.bias is not None))

    def to_float(self) -> nn.Linear:
        linear = nn.Linear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = nn.Parameter(self.bias.detach())
        linear.train(self.training)
        return linear


def _conv_args(conv: Any) -> tuple:
    """A Conv2d's constructor arguments, in order."""
    return (conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, conv.dilation,
            conv.groups, conv.bias is not None, conv.padding_mode)


class Conv2d(nn.Conv2d):
    """A Conv2d whose weight is fake-quantized (qconfig.weight()) at each forward; prepare_qat
    puts it in place of nn.Conv2d, convert turns it into a quantized Conv2d."""

    _FLOAT_MODULE = nn.Conv2d

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 qconfig: Optional[Any] = None, device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias, padding_mode,
                         device=device, dtype=dtype)
        _fake_quant_weight(self, qconfig)

    def forward(self, input: Any) -> Any:
        return self._conv_forward(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Conv2d":
        return _from_float(cls, mod, _conv_args)
