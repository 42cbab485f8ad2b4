"""Gumbel(loc, scale), as torch.distributions.Gumbel: loc - scale * log(-log U) for U uniform
on (tiny, 1 - eps), written as four transforms of that uniform (so cdf/icdf come from
TransformedDistribution); the density is computed directly."""
from __future__ import annotations

import math
from numbers import Number

import minitorch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


def _gumbel_transforms(loc, scale):
    """u -> -log(u) -> log(-log(u)) -> loc - scale log(-log(u)), through exp's inverse twice."""
    log = ExpTransform().inv
    return [log, AffineTransform(loc=0, scale=-minitorch.ones_like(scale)), log, AffineTransform(loc=loc, scale=-scale)]


class Gumbel(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = minitorch.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            low = minitorch.full_like(self.loc, info.tiny)
            base = Uniform(low, minitorch.full_like(self.loc, 1 - info.eps), validate_args=validate_args)
        super().__init__(base, _gumbel_transforms(self.loc, self.scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (self.loc - value) / self.scale
        return (z - z.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
