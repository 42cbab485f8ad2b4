"""Kumaraswamy(concentration1, concentration0), as torch.distributions.Kumaraswamy: density
a b x^(a-1) (1 - x^a)^(b-1) on (0, 1), drawn as (1 - U^(1/b))^(1/a) for U uniform."""
from __future__ import annotations

import minitorch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _raw_moment(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    shifted = 1 + n / a
    return b * minitorch.exp(minitorch.lgamma(shifted) + minitorch.lgamma(b) - minitorch.lgamma(shifted + b))


class Kumaraswamy(TransformedDistribution):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        b = self.concentration0
        base = Uniform(minitorch.full_like(b, 0), minitorch.full_like(b, 1), validate_args=validate_args)
        chain = [
            PowerTransform(exponent=b.reciprocal()),
            AffineTransform(loc=1.0, scale=-1.0),
            PowerTransform(exponent=self.concentration1.reciprocal()),
        ]
        super().__init__(base, chain, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _raw_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        # ((a - 1) / (a b - 1))^(1/a), in logs; undefined (NaN) when either is below 1. (PyTorch
        # 2.13's expression, 1/b log(1 - b) - log(1 - a b), is NaN for every b > 1: not copied.)
        log_mode = ((a - 1).log() - (a * b - 1).log()) / a
        log_mode = minitorch.where((b < 1) | (a < 1), float("nan"), log_mode)
        return log_mode.exp()

    @property
    def variance(self):
        return _raw_moment(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic = minitorch.digamma(b + 1) + euler_constant  # H_b
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - minitorch.log(a) - minitorch.log(b)
