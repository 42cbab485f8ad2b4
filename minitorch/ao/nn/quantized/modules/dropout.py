"""The quantized Dropout (torch.ao.nn.quantized.Dropout): a converted model runs in inference, so
it passes its quantized input through."""
from __future__ import annotations

from typing import Any

from minitorch import nn

__all__ = ["Dropout"]


class Dropout(nn.Dropout):
    """Dropout of a quantized tensor in eval mode: the input itself."""

    def forward(self, input: Any) -> Any:
        return input

    def _get_name(self) -> str:
        return "QuantizedDropout"

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Dropout":
        return cls(mod.p, mod.inplace)
