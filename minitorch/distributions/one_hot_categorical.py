"""OneHotCategorical and OneHotCategoricalStraightThrough, as PyTorch's: a Categorical whose
samples are one-hot vectors."""
from __future__ import annotations

import minitorch
from minitorch.nn.functional import one_hot

from . import constraints
from .categorical import Categorical
from .distribution import Distribution, _alias

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(OneHotCategorical, batch_shape, _instance, event_shape=self.event_shape)
        new._categorical = self._categorical.expand(new.batch_shape)
        return new

    _param = _alias("_categorical._param")
    probs = _alias("_categorical.probs")
    logits = _alias("_categorical.logits")
    mean = _alias("_categorical.probs")

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    param_shape = _alias("_categorical.param_shape")

    def sample(self, sample_shape=minitorch.Size()):
        sample_shape = minitorch.Size(sample_shape)
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        n = self.event_shape[0]
        values = minitorch.eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + self.batch_shape + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """rsample is a one-hot sample whose gradient is that of the probabilities (straight through)."""

    has_rsample = True

    def rsample(self, sample_shape=minitorch.Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())
