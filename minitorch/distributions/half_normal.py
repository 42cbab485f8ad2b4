"""HalfNormal(scale), as torch.distributions.HalfNormal: |X| for X ~ Normal(0, scale). The
folding (density doubled on x >= 0, cdf 2 F - 1, entropy less log 2) is shared with HalfCauchy."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import _alias
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class _FoldedAtZero(TransformedDistribution):
    """|X| for X symmetric about 0 with a `scale` parameter."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, base_distribution, validate_args=None):
        super().__init__(base_distribution, AbsTransform(), validate_args=validate_args)

    scale = _alias("base_dist.scale")

    @property
    def mode(self):
        return minitorch.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        doubled = self.base_dist.log_prob(value) + math.log(2)
        return minitorch.where(value >= 0, doubled, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_FoldedAtZero):
    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(HalfNormal, _instance))

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
