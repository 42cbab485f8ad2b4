"""minitorch.ao.nn.qat (also minitorch.nn.qat): modules for quantization-aware training, whose
weights pass through a FakeQuantize in the forward."""
from __future__ import annotations

from typing import Any, Optional

from minitorch import nn
from minitorch.nn import functional as F

__all__ = ["Linear"]


class Linear(nn.Linear):
    """A Linear whose weight is fake-quantized (qconfig.weight()) at each forward; prepare_qat
    puts it in place of nn.Linear, convert turns it into a quantized Linear."""

    _FLOAT_MODULE = nn.Linear

    def __init__(self, in_features: int, out_features: int, bias: bool = True, qconfig: Optional[Any] = None,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__(in_features, out_features, bias, device=device, dtype=dtype)
        if not qconfig:
            raise AssertionError("qconfig must be provided for QAT module")
        self.qconfig = qconfig
        self.weight_fake_quant = qconfig.weight()

    def forward(self, input: Any) -> Any:
        return F.linear(input, self.weight_fake_quant(self.weight), self.bias)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Linear":
        if type(mod) is not cls._FLOAT_MODULE:
            raise AssertionError(f" qat.{cls.__name__}.from_float only works for {cls._FLOAT_MODULE.__name__}")
        if not hasattr(mod, "qconfig"):
            raise AssertionError("Input float module must have qconfig defined")
        if not mod.qconfig:
            raise AssertionError("Input float module must have a valid qconfig")
        qat = cls(mod.in_features, mod.out_features, bias=mod.bias is not None, qconfig=mod.qconfig)
        qat.weight = mod.weight
        qat.bias = mod.bias
        return qat

    def to_float(self) -> nn.Linear:
        linear = nn.Linear(self.in_features, self.out_features, self.bias is not None)
        linear.weight = nn.Parameter(self.weight.detach())
        if self.bias is not None:
            linear.bias = nn.Parameter(self.bias.detach())
        linear.train(self.training)
        return linear
