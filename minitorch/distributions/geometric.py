"""Geometric(probs or logits), as torch.distributions.Geometric: the number of failures before
the first success of independent Bernoulli(probs) trials, support {0, 1, 2, ...}."""
from __future__ import annotations

from numbers import Number

import minitorch
from minitorch.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .categorical import _check_probs_logits
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Geometric"]


class Geometric(Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _check_probs_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        batch_shape = minitorch.Size() if isinstance(given, Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            # unit_interval lets 0 through; a geometric needs a positive success probability
            value = self.probs
            raise ValueError(
                f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"of distribution {self!r} to be positive but found invalid values:\n{value[~(value > 0)]}"
            )

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Geometric, batch_shape, _instance, ("probs", "logits"))

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return minitorch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = minitorch.finfo(self.probs.dtype).tiny
        with minitorch.no_grad():
            u = minitorch.rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / minitorch.log1p(-self.probs)).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # certain success: value 0 has probability 1 (0 * log(0) read as 0)
        failure = minitorch.where((probs == 1) & (value == 0), 0.0, probs)
        return value * minitorch.log1p(-failure) + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none") / self.probs
