"""Quantized activations (torch.ao.nn.quantized.ReLU6): the integers clamped, the input's scale
and zero point kept."""
from __future__ import annotations

from typing import Any

from minitorch import nn
from minitorch._qtensor import _relu6

__all__ = ["ReLU6"]


class ReLU6(nn.ReLU):
    """ReLU6 of a quantized tensor."""

    def forward(self, input: Any) -> Any:
        return _relu6(input, self.inplace)

    def _get_name(self) -> str:
        return "QuantizedReLU6"

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "ReLU6":
        return ReLU6(mod.inplace)
