"""Multinomial(total_count=1, probs or logits), as torch.distributions.Multinomial: the counts of
each category in total_count draws from a Categorical."""
from __future__ import annotations

import minitorch

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution, _alias
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    total_count: int

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Multinomial, batch_shape, _instance, event_shape=self.event_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(new.batch_shape)
        new._binomial = self._binomial.expand(new.batch_shape + self.event_shape)
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    _param = _alias("_categorical._param")
    probs = _alias("_categorical.probs")
    logits = _alias("_categorical.logits")
    param_shape = _alias("_categorical.param_shape")

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=minitorch.Size()):
        sample_shape = minitorch.Size(sample_shape)
        # one category per draw, the draws first: (total_count,) + sample_shape + batch_shape
        draws = self._categorical.sample(minitorch.Size((self.total_count,)) + sample_shape)
        draws = draws.permute(tuple(range(1, draws.dim())) + (0,))
        counts = minitorch.zeros(self._extended_shape(sample_shape), dtype=self.probs.dtype, device=self.probs.device)
        return counts.scatter_add_(-1, draws, minitorch.ones_like(draws, dtype=counts.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_coefficient = minitorch.lgamma(value.sum(-1) + 1) - minitorch.lgamma(value + 1).sum(-1)
        # a category of probability 0 drawn 0 times contributes 0, not 0 * -inf
        logits = minitorch.where((value == 0) & (logits == float("-inf")), 0.0, logits)
        return log_coefficient + (logits * value).sum(-1)

    def entropy(self):
        n = minitorch.tensor(self.total_count, dtype=self.probs.dtype, device=self.probs.device)
        first = n * self._categorical.entropy() - minitorch.lgamma(n + 1)
        counts = self._binomial.enumerate_support(expand=False)[1:]
        count_probs = minitorch.exp(self._binomial.log_prob(counts))
        second = (count_probs * minitorch.lgamma(counts + 1)).sum((0, -1))
        return first + second
