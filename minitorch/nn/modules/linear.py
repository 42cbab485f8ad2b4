"""Linear (y = x @ W.T + b) and Identity.

Linear holds weight (out_features, in_features) and bias (out_features,) and starts them as
PyTorch does: kaiming_uniform_(a=sqrt(5)) on the weight, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
and the same bound for the bias. The product itself is one call, F.linear.
"""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn.modules.module import Module
from minitorch.nn.parameter import Parameter

__all__ = ["Identity", "Linear"]  # and NonDynamicallyQuantizableLinear, as torch


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Linear(Module):
    """y = x @ weight.T + bias; x (*, in_features) -> y (*, out_features)."""

    in_features: int
    out_features: int
    weight: Parameter

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(minitorch.empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(minitorch.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init._reset_weight_and_bias(self.weight, self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's out_proj: a Linear (PyTorch's subclass only steers its quantization)."""
