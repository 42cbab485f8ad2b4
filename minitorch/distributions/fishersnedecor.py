"""FisherSnedecor(df1, df2), as torch.distributions.FisherSnedecor: the F distribution, the ratio
(X1 / df1) / (X2 / df2) of independent chi-squared draws, each drawn as Gamma(df / 2, df / 2)."""
from __future__ import annotations

from numbers import Number

import minitorch

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        scalar = isinstance(df1, Number) and isinstance(df2, Number)
        super().__init__(minitorch.Size() if scalar else self.df1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(FisherSnedecor, batch_shape, _instance, ("df1", "df2"))
        new._gamma1 = self._gamma1.expand(new.batch_shape)
        new._gamma2 = self._gamma2.expand(new.batch_shape)
        return new

    # Where a moment is undefined the parameter itself is replaced by NaN before the formula, so
    # the value and the gradients there are NaN (as PyTorch's).

    @property
    def mean(self):
        # df2 / (df2 - 2), undefined for df2 <= 2
        df2 = minitorch.where(self.df2 > 2, self.df2, float("nan"))
        return df2 / (df2 - 2)

    @property
    def mode(self):
        # (df1 - 2) / df1 * df2 / (df2 + 2), undefined for df1 <= 2 (there the value alone is
        # replaced, so the gradients are 0)
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return minitorch.where(self.df1 > 2, mode, float("nan"))

    @property
    def variance(self):
        # undefined for df2 <= 4
        df1 = self.df1
        df2 = minitorch.where(self.df2 > 4, self.df2, float("nan"))
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = minitorch.finfo(self.df1.dtype).tiny
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape).clamp(min=tiny)
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.df1 * 0.5
        b = self.df2 * 0.5
        ratio = self.df1 / self.df2
        log_norm = minitorch.lgamma(a + b) - minitorch.lgamma(a) - minitorch.lgamma(b)
        return log_norm + a * ratio.log() + (a - 1) * value.log() - (a + b) * minitorch.log1p(ratio * value)
