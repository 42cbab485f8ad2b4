"""einops's layers as minitorch.nn.Modules: Rearrange, Reduce and EinMix, whose patterns and
checks come from einops's mixins and whose work runs through minitorch's einops backend. Served as
einops.layers.minitorch, and as einops.layers.torch where PyTorch is not installed (see __init__.py).
"""
from __future__ import annotations

from typing import Dict, Optional

from einops.layers import RearrangeMixin, ReduceMixin
from einops.layers._einmix import _EinmixMixin

import minitorch
from minitorch import nn

__all__ = ["EinMix", "Rearrange", "Reduce"]


class Rearrange(RearrangeMixin, nn.Module):
    def forward(self, input):
        return self._apply_recipe(input)


class Reduce(ReduceMixin, nn.Module):
    def forward(self, input):
        return self._apply_recipe(input)


def _uniform_parameter(shape, bound: float) -> nn.Parameter:
    return nn.Parameter(minitorch.zeros(shape).uniform_(-bound, bound))


class EinMix(_EinmixMixin, nn.Module):
    def _create_parameters(self, weight_shape, weight_bound, bias_shape, bias_bound):
        self.weight = _uniform_parameter(weight_shape, weight_bound)
        self.bias = None if bias_shape is None else _uniform_parameter(bias_shape, bias_bound)

    def _create_rearrange_layers(self, pre_reshape_pattern: Optional[str], pre_reshape_lengths: Optional[Dict],
                                 post_reshape_pattern: Optional[str], post_reshape_lengths: Optional[Dict]):
        self.pre_rearrange = None
        if pre_reshape_pattern is not None:
            self.pre_rearrange = Rearrange(pre_reshape_pattern, **(pre_reshape_lengths or {}))
        self.post_rearrange = None
        if post_reshape_pattern is not None:
            self.post_rearrange = Rearrange(post_reshape_pattern, **(post_reshape_lengths or {}))

    def forward(self, input):
        if self.pre_rearrange is not None:
            input = self.pre_rearrange(input)
        result = minitorch.einsum(self.einsum_pattern, input, self.weight)
        if self.bias is not None:
            result = result + self.bias
        if self.post_rearrange is not None:
            result = self.post_rearrange(result)
        return result
