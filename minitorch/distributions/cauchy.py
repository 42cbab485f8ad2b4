"""Cauchy(loc, scale), as torch.distributions.Cauchy: the heavy-tailed density
1 / (pi scale (1 + ((x - loc) / scale)^2)), with no mean or variance (NaN and inf here, as PyTorch)."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import _LocScale, Distribution, _alias

__all__ = ["Cauchy"]


class Cauchy(_LocScale, Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Cauchy, batch_shape, _instance, ("loc", "scale"))

    def _filled(self, number):
        return minitorch.full(self._extended_shape(), number, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mean(self):
        return self._filled(math.nan)

    mode = _alias("loc")

    @property
    def variance(self):
        return self._filled(math.inf)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        unit = minitorch.empty(shape, dtype=self.loc.dtype, device=self.loc.device).cauchy_()
        return self.loc + unit * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - z.pow(2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return minitorch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return minitorch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
