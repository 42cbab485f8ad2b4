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
    """x * Phi(x), Phi the standard normal CDF (the exact, erf form)."""
    if approximate != "none":
        raise NotImplementedError(f"gelu(approximate={approximate!r}): only the exact form exists yet")
    return _C.gelu(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    if inplace:
        return input.copy_(_C.silu(input))
    return _C.silu(input)


def tanh(input: Tensor) -> Tensor:
    return _C.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return _C.sigmoid(input)
