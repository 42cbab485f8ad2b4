"""StudentT(df, loc=0, scale=1), as torch.distributions.StudentT: reparameterised draws are
loc + scale * Z / sqrt(V / df) with Z standard normal and V ~ Chi2(df)."""
from __future__ import annotations

import math
from numbers import Number

import minitorch

from . import constraints
from .distribution import Distribution, _alias
from .gamma import Chi2
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        scalar = all(isinstance(v, Number) for v in (df, loc, scale))
        super().__init__(minitorch.Size() if scalar else self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(new.batch_shape)
        return new

    mode = _alias("loc")

    @property
    def mean(self):
        # undefined (NaN) for df <= 1
        return minitorch.where(self.df > 1, self.loc, float("nan"))

    @property
    def variance(self):
        # scale^2 df / (df - 2) for df > 2, infinite for 1 < df <= 2, undefined for df <= 1
        finite = self.scale.pow(2) * self.df / (self.df - 2)
        heavy = minitorch.where(self.df > 1, float("inf"), float("nan")).to(finite.dtype)
        return minitorch.where(self.df > 2, finite, heavy)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        z = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        v = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * z * minitorch.rsqrt(v / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        half_df = 0.5 * self.df
        log_norm = (
            self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
            + minitorch.lgamma(half_df) - minitorch.lgamma(half_df + 0.5)
        )
        return -(half_df + 0.5) * minitorch.log1p(y.pow(2) / self.df) - log_norm

    def entropy(self):
        half_df = 0.5 * self.df
        log_beta = minitorch.lgamma(half_df) + math.lgamma(0.5) - minitorch.lgamma(half_df + 0.5)
        return (
            self.scale.log()
            + (half_df + 0.5) * (minitorch.digamma(half_df + 0.5) - minitorch.digamma(half_df))
            + 0.5 * self.df.log()
            + log_beta
        )
