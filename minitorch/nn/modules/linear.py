"""Linear (y = x @ W.T + b) and Identity.

Linear holds weight (out_features, in_features) and bias (out_features,) and starts them as
PyTorch does: kaiming_uniform_(a=sqrt(5)) on the weight, which is U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
and the same bound for the bias. The product itself is one call, F.linear.
"""
from __future__ import annotations

import math
from typing import Any

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn.modules.module import Module
from minitorch.nn.parameter import Parameter

__all__ = ["Identity", "Linear", "Bilinear"]  # and NonDynamicallyQuantizableLinear, as torch


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


class Bilinear(Module):
    """y = x1^T A x2 + b per output feature: x1 (*, in1_features), x2 (*, in2_features) -> y
    (*, out_features), weight (out_features, in1_features, in2_features) and bias from
    U(-1/sqrt(in1_features), 1/sqrt(in1_features)), as PyTorch starts them."""

    in1_features: int
    in2_features: int
    out_features: int
    weight: Parameter

    def __init__(
        self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
        device: Any = None, dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(
            minitorch.empty((out_features, in1_features, in2_features), device=device, dtype=dtype)
        )
        b = Parameter(minitorch.empty(out_features, device=device, dtype=dtype)) if bias else None
        self.register_parameter("bias", b)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.in1_features <= 0:
            raise ValueError(f"in1_features must be > 0, but got (in1_features={self.in1_features})")
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )
