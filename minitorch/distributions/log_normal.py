"""LogNormal(loc, scale), as torch.distributions.LogNormal: exp(X) for X ~ Normal(loc, scale)."""
from __future__ import annotations

from . import constraints
from .distribution import _alias
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogNormal, _instance))

    loc = _alias("base_dist.loc")
    scale = _alias("base_dist.scale")

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        var = self.scale.pow(2)
        return var.expm1() * (2 * self.loc + var).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
