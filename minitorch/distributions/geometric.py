"""Geometric(probs or logits), as torch.distributions.Geometric: the number of failures before
the first success of independent Bernoulli(probs) trials, support {0, 1, 2, ...}."""
from __future__ import annotations

import minitorch
from minitorch.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .categorical import _check_probs_logits
from .distribution import Distribution
from .utils import _BinaryParams, broadcast_all

__all__ = ["Geometric"]


class Geometric(_BinaryParams, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        _check_probs_logits(probs, logits)
        self._set_binary_param(probs, logits)
        super().__init__(self._param.size(), validate_args=validate_args)
        if self._validate_args and probs is not None and not bool((self.probs > 0).all()):
            # unit_interval lets 0 through; a geometric needs a positive success probability
            value = self.probs
            raise ValueError(
                f"Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"of distribution {self!r} to be positive but found invalid values:\n{value[~(value > 0)]}"
            )

    def expand(self, batch_shape, _instance=None):
        return self._expanded_binary(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return minitorch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

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
