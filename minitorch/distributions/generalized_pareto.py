"""GeneralizedPareto(loc, scale, concentration), as torch.distributions.GeneralizedPareto: the
peaks-over-threshold law with survival (1 + c z)^(-1/c), z = (x - loc) / scale (exp(-z) at
c = 0), on [loc, inf) for c >= 0 and [loc, loc - scale / c] for c < 0. Draws invert the cdf."""
from __future__ import annotations

import math
from numbers import Number

import minitorch

from . import constraints
from .distribution import Distribution, _alias
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive, "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(minitorch.Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance, ("loc", "scale", "concentration"))

    def _split_concentration(self):
        """(c is 0, c with its zeros replaced by 1): the c = 0 limits are computed apart, and
        the other branch must not divide by zero where it is not used."""
        c = self.concentration
        at_zero = minitorch.isclose(c, minitorch.zeros_like(c))
        return at_zero, minitorch.where(at_zero, minitorch.ones_like(c), c)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(minitorch.rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._split_concentration()
        power = 1 / c + 1
        # (1 + 1/c) log(1 + c z); 0 where the power is 0 (c = -1, a uniform density).
        tail = minitorch.where(power == 0, power, power * minitorch.log1p(c * z))
        return -self.scale.log() - minitorch.where(at_zero, z, tail)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        at_zero, c = self._split_concentration()
        return minitorch.where(at_zero, -z, -minitorch.log1p(c * z) / c)

    def log_cdf(self, value):
        return minitorch.log1p(-minitorch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return minitorch.exp(self.log_cdf(value))

    def icdf(self, value):
        at_zero, c = self._split_concentration()
        log_survival = minitorch.log1p(-value)
        general = self.loc + self.scale / c * minitorch.expm1(-c * log_survival)
        return minitorch.where(at_zero, self.loc - self.scale * log_survival, general)

    @property
    def mean(self):
        c = self.concentration
        finite = c < 1
        c = minitorch.where(finite, c, 0.5)
        return minitorch.where(finite, self.loc + self.scale / (1 - c), math.nan)

    @property
    def variance(self):
        c = self.concentration
        finite = c < 0.5
        c = minitorch.where(finite, c, 0.25)
        return minitorch.where(finite, self.scale.pow(2) / ((1 - c).pow(2) * (1 - 2 * c)), math.nan)

    def entropy(self):
        return minitorch.broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    mode = _alias("loc")

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = minitorch.where(self.concentration < 0, self.loc - self.scale / self.concentration, math.inf)
        return constraints.interval(self.loc, upper)
