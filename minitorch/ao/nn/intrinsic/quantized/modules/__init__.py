"""The quantized fused modules (torch.ao.nn.intrinsic.quantized): a quantized layer whose output
stage clamps from the output zero point up (its ReLU), convert's twin of a float fused module."""
from __future__ import annotations

from minitorch.ao.nn import quantized as nnq

from ...modules.fused import ConvReLU2d as _FloatConvReLU2d
from ...modules.fused import LinearReLU as _FloatLinearReLU

__all__ = ["BNReLU2d", "ConvReLU2d", "LinearReLU"]


class ConvReLU2d(nnq.Conv2d):
    """relu(conv2d(x)) of a quantized x, in one output stage."""

    _FLOAT_MODULE = _FloatConvReLU2d
    _relu = True

    def _get_name(self) -> str:
        return "QuantizedConvReLU2d"


class LinearReLU(nnq.Linear):
    """relu(linear(x)) of a quantized x, in one output stage."""

    _FLOAT_MODULE = (_FloatLinearReLU,)
    _relu = True

    def _get_name(self) -> str:
        return "QuantizedLinearReLU"


class BNReLU2d(nnq.BatchNorm2d):
    """relu(batch_norm(x)) of a quantized x, in one output stage."""

    _relu = True

    def _get_name(self) -> str:
        return "QuantizedBNReLU2d"
