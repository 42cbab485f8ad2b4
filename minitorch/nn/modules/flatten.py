"""Flatten and Unflatten: reshapes as layers (torch/nn/modules/flatten.py)."""
from __future__ import annotations

from typing import Sequence

from minitorch.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one: (N, C, H, W) -> (N, C*H*W) by default."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Splits dim into unflattened_size: Unflatten(1, (2, 5)) maps (N, 10) to (N, 2, 5)."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (tuple, list)) or not all(isinstance(s, int) for s in unflattened_size):
            raise TypeError("unflattened_size must be tuple of ints, but found type " + type(unflattened_size).__name__)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        shape = list(input.shape)
        d = self.dim + len(shape) if self.dim < 0 else self.dim
        return input.view(shape[:d] + list(self.unflattened_size) + shape[d + 1 :])

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
