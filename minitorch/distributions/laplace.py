"""Laplace(loc, scale), as torch.distributions.Laplace: density exp(-|x - loc| / scale) / (2 scale),
reparameterised draws by inverting the CDF at a uniform in (-1, 1)."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import _LocScale, Distribution, _alias

__all__ = ["Laplace"]


class Laplace(_LocScale, Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Laplace, batch_shape, _instance, ("loc", "scale"))

    mean = _alias("loc")
    mode = _alias("loc")

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        lowest = minitorch.finfo(self.loc.dtype).eps - 1  # keeps log1p(-|u|) finite
        u = minitorch.empty(shape, dtype=self.loc.dtype, device=self.loc.device).uniform_(lowest, 1)
        return self.loc - self.scale * u.sign() * minitorch.log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -minitorch.log(2 * self.scale) - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * minitorch.expm1(-z.abs() / self.scale)

    def icdf(self, value):
        centred = value - 0.5
        return self.loc - self.scale * centred.sign() * minitorch.log1p(-2 * centred.abs())

    def entropy(self):
        return 1 + minitorch.log(2 * self.scale)
