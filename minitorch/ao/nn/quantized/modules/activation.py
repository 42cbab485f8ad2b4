"""Quantized activations (torch.ao.nn.quantized): ReLU6 clamps the integers and keeps the input's
scale and zero point; Hardswish, LeakyReLU and ELU compute on the real values and quantize the
result with the scale and zero point their observer chose."""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import nn
from minitorch._qtensor import _relu6, quantize_per_tensor
from minitorch.nn import functional as F

__all__ = ["ELU", "Hardswish", "LeakyReLU", "ReLU6"]


class ReLU6(nn.ReLU):
    """ReLU6 of a quantized tensor."""

    def forward(self, input: Any) -> Any:
        return _relu6(input, self.inplace)

    def _get_name(self) -> str:
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "ReLU6":
        return ReLU6(mod.inplace)


def _requantized(fn: Any, input: Any, scale: Any, zero_point: Any) -> Any:
    """fn of input's real values, quantized with the module's output scale and zero point (within
    one step of PyTorch's quantized kernels, which compute in float too)."""
    return quantize_per_tensor(fn(input.dequantize()), float(scale), int(zero_point), input.dtype)


class Hardswish(nn.Hardswish):
    """Hardswish of a quantized tensor, the result quantized with scale and zero_point."""

    def __init__(self, scale: float, zero_point: int, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        self.register_buffer("scale", minitorch.tensor(scale))
        self.register_buffer("zero_point", minitorch.tensor(zero_point))

    def forward(self, input: Any) -> Any:
        return _requantized(F.hardswish, input, self.scale, self.zero_point)

    def _get_name(self) -> str:
        return "QuantizedHardswish"

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "Hardswish":
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Hardswish(float(scale), int(zero_point))


class LeakyReLU(nn.LeakyReLU):
    """LeakyReLU of a quantized tensor, the result quantized with scale and zero_point."""

    def __init__(self, scale: float, zero_point: int, negative_slope: float = 1e-2, inplace: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(negative_slope, inplace)
        self.register_buffer("scale", minitorch.tensor(scale))
        self.register_buffer("zero_point", minitorch.tensor(zero_point))

    def forward(self, input: Any) -> Any:
        return _requantized(lambda x: F.leaky_relu(x, self.negative_slope), input, self.scale, self.zero_point)

    def _get_name(self) -> str:
        return "QuantizedLeakyReLU"

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "LeakyReLU":
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return cls(float(scale), int(zero_point), mod.negative_slope, mod.inplace)


class ELU(nn.ELU):
    """ELU of a quantized tensor, the result quantized with scale and zero_point."""

    def __init__(self, scale: float, zero_point: int, alpha: float = 1.0) -> None:
        super().__init__(alpha)
        self.scale, self.zero_point = scale, zero_point

    def forward(self, input: Any) -> Any:
        return _requantized(lambda x: F.elu(x, self.alpha), input, self.scale, self.zero_point)

    def _get_name(self) -> str:
        return "QuantizedELU"

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "ELU":
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return ELU(float(scale), int(zero_point), mod.alpha)
