"""InverseGamma(concentration, rate), as torch.distributions.InverseGamma: 1 / X for
X ~ Gamma(concentration, rate)."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import _alias
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        minus_one = -base.rate.new_ones(())
        super().__init__(base, PowerTransform(minus_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(InverseGamma, _instance))

    concentration = _alias("base_dist.concentration")
    rate = _alias("base_dist.rate")

    @property
    def mean(self):
        a = self.concentration
        return minitorch.where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        return minitorch.where(a > 2, self.rate.square() / ((a - 1).square() * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
