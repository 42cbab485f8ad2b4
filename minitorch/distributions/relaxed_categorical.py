"""RelaxedOneHotCategorical(temperature, probs or logits) and ExpRelaxedCategorical, as
PyTorch's: the Concrete (Gumbel-softmax) distribution, a reparameterisable stand-in for a
one-hot categorical draw, in log space and, through exp, on the simplex."""
from __future__ import annotations

import math
from numbers import Number

import minitorch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution, _alias
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # the logs of points of the simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ExpRelaxedCategorical, batch_shape, _instance, event_shape=self.event_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return new

    def _new(self, *args, **kwargs):
        return self._categorical._param.new(*args, **kwargs)

    param_shape = _alias("_categorical.param_shape")
    logits = _alias("_categorical.logits")
    probs = _alias("_categorical.probs")

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(minitorch.rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbel = -((-(u.log())).log())
        scores = (self.logits + gumbel) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        t = self.temperature
        if isinstance(t, Number):
            log_scale = math.lgamma(k) + (k - 1) * math.log(t)
        else:
            log_scale = minitorch.full_like(t, float(k)).lgamma() + (k - 1) * t.log()
        score = logits - value * t
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
        return super().expand(batch_shape, _instance=new)

    temperature = _alias("base_dist.temperature")
    logits = _alias("base_dist.logits")
    probs = _alias("base_dist.probs")
