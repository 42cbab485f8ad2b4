"""QuantStub and DeQuantStub, as torch.ao.quantization.stubs: where a model's float input becomes
quantized and its quantized output float again; before convert they pass values through."""
from __future__ import annotations

from typing import Any, Optional

from minitorch import nn

__all__ = ["QuantStub", "DeQuantStub", "QuantWrapper"]


class _Stub(nn.Module):
    """Passes its input through; carries a qconfig when given one."""

    def __init__(self, qconfig: Optional[Any] = None) -> None:
        super().__init__()
        if qconfig:
            self.qconfig = qconfig

    def forward(self, x: Any) -> Any:
        return x


class QuantStub(_Stub):
    """Marks the start of the quantized part: an observer is attached by prepare, and convert
    replaces it by nn.quantized.Quantize with the parameters observed."""


class DeQuantStub(_Stub):
    """Marks the end of the quantized part: convert replaces it by nn.quantized.DeQuantize."""


class QuantWrapper(nn.Module):
    """module between a QuantStub and a DeQuantStub, its qconfig theirs."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        qconfig = getattr(module, "qconfig", None)
        self.add_module("quant", QuantStub(qconfig))
        self.add_module("dequant", DeQuantStub(qconfig))
        self.add_module("module", module)
        self.train(module.training)

    def forward(self, X: Any) -> Any:
        return self.dequant(self.module(self.quant(X)))
