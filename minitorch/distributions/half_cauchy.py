"""HalfCauchy(scale), as torch.distributions.HalfCauchy: |X| for X ~ Cauchy(0, scale); its
mean is infinite."""
from __future__ import annotations

import math

import minitorch

from .cauchy import Cauchy
from .half_normal import _FoldedAtZero

__all__ = ["HalfCauchy"]


class HalfCauchy(_FoldedAtZero):
    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfCauchy, _instance))

    @property
    def mean(self):
        return minitorch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        value = minitorch.as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        return super().log_prob(value)
