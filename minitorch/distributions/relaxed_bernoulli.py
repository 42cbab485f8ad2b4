"""RelaxedBernoulli(temperature, probs or logits) and LogitRelaxedBernoulli, as PyTorch's: the
binary Concrete distribution (a reparameterisable stand-in for a Bernoulli draw, sharper as the
temperature falls), in logit space and, through a sigmoid, on the unit interval."""
from __future__ import annotations

import math
from numbers import Number

import minitorch

from . import constraints
from .categorical import _check_probs_logits
from .distribution import Distribution, _alias
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _BinaryParams, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _log(value):
    return math.log(value) if isinstance(value, Number) else value.log()


class LogitRelaxedBernoulli(_BinaryParams, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        _check_probs_logits(probs, logits)
        self._set_binary_param(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded_binary(LogitRelaxedBernoulli, batch_shape, _instance)
        new.temperature = self.temperature
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(minitorch.rand(shape, dtype=probs.dtype, device=probs.device))
        # Logistic noise logit(u) plus the logits, over the temperature.
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        gap = logits - value * self.temperature
        return _log(self.temperature) + gap - 2 * gap.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedBernoulli, _instance))

    temperature = _alias("base_dist.temperature")
    logits = _alias("base_dist.logits")
    probs = _alias("base_dist.probs")
