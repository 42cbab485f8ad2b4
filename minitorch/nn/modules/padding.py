"""Padding layers, as torch/nn/modules/padding.py: each holds its padding (one int for every
side, or a tuple, last dim first) and calls F.pad with its mode."""
from __future__ import annotations

from typing import Sequence

from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn.modules.module import Module
from minitorch.nn.modules.utils import _ntuple

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]


class _PadNd(Module):
    """padding for the last _dims dims, F.pad in _mode."""

    __constants__ = ["padding"]
    padding: Sequence[int]
    _mode = ""
    _dims = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(2 * self._dims)(padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    _dims = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    _dims = 3


class _CircularPadNd(_PadNd):
    """PyTorch checks the input's dims here, before F.pad."""

    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    _dims = 1


class CircularPad2d(_CircularPadNd):
    _dims = 2


class CircularPad3d(_CircularPadNd):
    _dims = 3


class _ConstantPadNd(_PadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    _dims = 3


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"
