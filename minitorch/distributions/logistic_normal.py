"""LogisticNormal(loc, scale), as torch.distributions.LogisticNormal: a point of the K-simplex
from K - 1 independent normals through StickBreakingTransform."""
from __future__ import annotations

from . import constraints
from .distribution import _alias
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])  # the stick needs one dim to break
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogisticNormal, _instance))

    # base_dist is Independent(Normal, 1).
    loc = _alias("base_dist.base_dist.loc")
    scale = _alias("base_dist.base_dist.scale")
