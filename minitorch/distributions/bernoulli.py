"""Bernoulli(probs or logits), as torch.distributions.Bernoulli."""
from __future__ import annotations

from numbers import Number

import minitorch
from minitorch.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .categorical import _check_probs_logits
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Bernoulli"]


def _set_binary_param(dist, probs, logits):
    """Stores the one of probs and logits given (a number becomes a 0-d tensor) as the
    distribution's parameter and _param; returns the batch shape (() for a number)."""
    _check_probs_logits(probs, logits)
    name, given = ("probs", probs) if probs is not None else ("logits", logits)
    (dist._param,) = broadcast_all(given)
    setattr(dist, name, dist._param)
    return minitorch.Size() if isinstance(given, Number) else dist._param.size()


class Bernoulli(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        super().__init__(_set_binary_param(self, probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Bernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        return new

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        with minitorch.no_grad():
            return minitorch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        values = minitorch.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
