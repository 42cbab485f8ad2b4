"""Normal(loc, scale), as torch.distributions.Normal: rsample is loc + eps * scale, so gradients
flow to both parameters."""
from __future__ import annotations

import math
from numbers import Real

import minitorch

from . import constraints
from .distribution import _LocScale, _alias
from .exp_family import ExponentialFamily
from .utils import _standard_normal

__all__ = ["Normal"]


class Normal(_LocScale, ExponentialFamily):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Normal, batch_shape, _instance, ("loc", "scale"))

    mean = _alias("loc")
    mode = _alias("loc")
    stddev = _alias("scale")

    @property
    def variance(self):
        return self.stddev.pow(2)

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        with minitorch.no_grad():
            return minitorch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + minitorch.erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        return self.loc + self.scale * minitorch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + minitorch.log(self.scale)

    @property
    def _natural_params(self):
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * minitorch.log(-math.pi / y)
