"""nn.functional: the stateless functions that the layers in nn.modules call.

Each function is one call into `_C`, where the dispatcher decomposes it (`linear -> addmm`,
`relu -> clamp_min`); nothing here touches tensor values.
"""
from __future__ import annotations

from typing import Optional

from minitorch import _C, Tensor

__all__ = ["linear", "relu", "gelu", "silu", "tanh", "sigmoid"]


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """y = input @ weight.T + bias; input (*, in_features), weight (out_features, in_features)."""
    return _C.linear(input, weight, bias)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise; with inplace=True, written into input and input returned."""
    if inplace:
        return _C.relu_(input)
    return _C.relu(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: the exact erf form, or with approximate='tanh'
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))."""
    return _C.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    if inplace:
        return input.copy_(_C.silu(input))
    return _C.silu(input)


def tanh(input: Tensor) -> Tensor:
    return _C.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return _C.sigmoid(input)
