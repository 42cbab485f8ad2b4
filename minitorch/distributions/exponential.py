"""Exponential(rate), as torch.distributions.Exponential: density rate * exp(-rate * x) on
x >= 0; draws are exponential_ variates over the rate, so gradients reach the rate."""
from __future__ import annotations

from numbers import Number

import minitorch

from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = minitorch.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Exponential, batch_shape, _instance, ("rate",))

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return minitorch.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        unit = minitorch.empty(shape, dtype=self.rate.dtype, device=self.rate.device).exponential_()
        return unit / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -minitorch.expm1(-self.rate * value)

    def icdf(self, value):
        return -minitorch.log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()

    # The exponential-family form: natural parameter -rate, log normaliser -log(-eta).
    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -minitorch.log(-x)
