"""The fused modules of torch.ao.nn.intrinsic: a Sequential of modules that quantization treats
as one layer (one observer at its output, one quantized module after convert). fuse_modules makes
them; each checks the types of the modules it is given, as PyTorch's do."""
from __future__ import annotations

from typing import Any

from minitorch import nn

__all__ = ["ConvReLU1d", "ConvReLU2d", "ConvReLU3d", "LinearReLU", "ConvBn1d", "ConvBn2d", "ConvBn3d",
           "ConvBnReLU1d", "ConvBnReLU2d", "ConvBnReLU3d", "BNReLU2d", "BNReLU3d", "LinearBn1d"]


class _FusedModule(nn.Sequential):
    """A run of modules quantized as one."""


def _check_types(mods: tuple, types: tuple) -> None:
    if tuple(type(m) for m in mods) != types:
        raise AssertionError("Incorrect types for input modules" + "".join(str(type(m)) for m in mods))


def _fused(name: str, *types: type) -> type:
    """A _FusedModule class taking one module of each of types, in order."""

    def __init__(self: Any, *mods: nn.Module) -> None:
        _check_types(mods, types)
        _FusedModule.__init__(self, *mods)

    doc = f"{' + '.join(t.__name__ for t in types)}, quantized as one module."
    return type(name, (_FusedModule,), {"__init__": __init__, "__doc__": doc, "__module__": __name__})


ConvReLU1d = _fused("ConvReLU1d", nn.Conv1d, nn.ReLU)
ConvReLU2d = _fused("ConvReLU2d", nn.Conv2d, nn.ReLU)
ConvReLU3d = _fused("ConvReLU3d", nn.Conv3d, nn.ReLU)
LinearReLU = _fused("LinearReLU", nn.Linear, nn.ReLU)
ConvBn1d = _fused("ConvBn1d", nn.Conv1d, nn.BatchNorm1d)
ConvBn2d = _fused("ConvBn2d", nn.Conv2d, nn.BatchNorm2d)
ConvBn3d = _fused("ConvBn3d", nn.Conv3d, nn.BatchNorm3d)
ConvBnReLU1d = _fused("ConvBnReLU1d", nn.Conv1d, nn.BatchNorm1d, nn.ReLU)
ConvBnReLU2d = _fused("ConvBnReLU2d", nn.Conv2d, nn.BatchNorm2d, nn.ReLU)
ConvBnReLU3d = _fused("ConvBnReLU3d", nn.Conv3d, nn.BatchNorm3d, nn.ReLU)
BNReLU2d = _fused("BNReLU2d", nn.BatchNorm2d, nn.ReLU)
BNReLU3d = _fused("BNReLU3d", nn.BatchNorm3d, nn.ReLU)
LinearBn1d = _fused("LinearBn1d", nn.Linear, nn.BatchNorm1d)
