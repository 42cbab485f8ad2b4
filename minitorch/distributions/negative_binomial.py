"""NegativeBinomial(total_count, probs or logits), as torch.distributions.NegativeBinomial: the
number of successes (probability probs each) before total_count failures; draws are Poisson
draws at Gamma(total_count, exp(-logits)) rates."""
from __future__ import annotations

import minitorch
from minitorch.nn.functional import logsigmoid

from . import constraints
from .categorical import _check_probs_logits
from .distribution import Distribution
from .gamma import Gamma
from .utils import _BinaryParams, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_BinaryParams, Distribution):
    arg_constraints = {
        "total_count": constraints.greater_than_eq(0),
        "probs": constraints.half_open_interval(0.0, 1.0),
        "logits": constraints.real,
    }
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        _check_probs_logits(probs, logits)
        (self.total_count,) = self._set_binary_param(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded_binary(NegativeBinomial, batch_shape, _instance, ("total_count",))

    @property
    def mean(self):
        return self.total_count * minitorch.exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / minitorch.sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=minitorch.exp(-self.logits), validate_args=False)

    def sample(self, sample_shape=minitorch.Size()):
        with minitorch.no_grad():
            return minitorch.poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalised = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        # log of Gamma(n + k) / (k! Gamma(n)), 0 when n + k = 0 (the certain value 0 of n = 0)
        log_coefficient = minitorch.lgamma(n + value) - minitorch.lgamma(1.0 + value) - minitorch.lgamma(n)
        log_coefficient = minitorch.where(n + value == 0, 0.0, log_coefficient)
        return log_unnormalised + log_coefficient
