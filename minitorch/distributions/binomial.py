"""Binomial(total_count=1, probs or logits), as torch.distributions.Binomial: the count of
successes in total_count independent trials; draws are minitorch.binomial's."""
from __future__ import annotations

import minitorch

from . import constraints
from .categorical import _check_probs_logits
from .distribution import Distribution
from .utils import _BinaryParams

__all__ = ["Binomial"]


def _positive_part(x):
    """max(x, 0) whose gradient at 0 is 1/2 (the mean of the two sides), as PyTorch's."""
    return 0.5 * (x + x.abs())


class Binomial(_BinaryParams, Distribution):
    arg_constraints = {
        "total_count": constraints.nonnegative_integer,
        "probs": constraints.unit_interval,
        "logits": constraints.real,
    }
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        _check_probs_logits(probs, logits)
        (self.total_count,) = self._set_binary_param(probs, logits, total_count)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded_binary(Binomial, batch_shape, _instance, ("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        with minitorch.no_grad():
            return minitorch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_binom = minitorch.lgamma(n + 1) - minitorch.lgamma(value + 1) - minitorch.lgamma(n - value + 1)
        # n * log(1 + e^logits), kept finite for large |logits|
        log_norm = n * _positive_part(self.logits) + n * minitorch.log1p(minitorch.exp(-self.logits.abs()))
        return log_binom + value * self.logits - log_norm

    def _homogeneous_count(self, what: str) -> int:
        count = int(self.total_count.max())
        if not bool((self.total_count == count).all()):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_pmf = self.log_prob(self.enumerate_support(False))
        return -(minitorch.exp(log_pmf) * log_pmf).sum(0)

    def enumerate_support(self, expand: bool = True):
        count = self._homogeneous_count("enumerate_support")
        values = minitorch.arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
