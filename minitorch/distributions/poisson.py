"""Poisson(rate), as torch.distributions.Poisson: an exponential family in log(rate); draws are
minitorch.poisson's."""
from __future__ import annotations

from numbers import Number

import minitorch

from . import constraints
from .distribution import _alias
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = minitorch.Size() if isinstance(rate, Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Poisson, batch_shape, _instance, ("rate",))

    mean = _alias("rate")
    variance = _alias("rate")

    @property
    def mode(self):
        return self.rate.floor()

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        with minitorch.no_grad():
            return minitorch.poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return minitorch.xlogy(value, rate) - rate - minitorch.lgamma(value + 1)

    @property
    def _natural_params(self):
        return (minitorch.log(self.rate),)

    def _log_normalizer(self, x):
        return minitorch.exp(x)
