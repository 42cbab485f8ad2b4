"""MixtureSameFamily(mixture_distribution, component_distribution), as PyTorch's: a Categorical
over the rightmost batch dimension of a component distribution picks which component each draw
comes from; densities are the logsumexp of the components' weighted densities."""
from __future__ import annotations

import minitorch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of torch.distributions.Distribution")
        mix_batch = minitorch.Size(mixture_distribution.batch_shape)
        comp_batch = minitorch.Size(component_distribution.batch_shape[:-1])
        for a, b in zip(reversed(mix_batch), reversed(comp_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(
                    f"`mixture_distribution.batch_shape` ({mix_batch}) is not compatible with "
                    f"`component_distribution.batch_shape`({comp_batch})"
                )
        k_mix = mixture_distribution.logits.shape[-1]
        k_comp = component_distribution.batch_shape[-1]
        if k_mix != k_comp:
            raise ValueError(
                f"`mixture_distribution component` ({k_mix}) does not equal "
                f"`component_distribution.batch_shape[-1]` ({k_comp})"
            )
        self._num_component = k_mix
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(comp_batch, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(MixtureSameFamily, batch_shape, _instance, event_shape=self.event_shape)
        new._component_distribution = self._component_distribution.expand(new.batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(new.batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return new

    @constraints.dependent_property
    def support(self):
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    def _component_dim(self):
        """The dimension of the components in a component distribution's tensors."""
        return -1 - self._event_ndims

    def _as_component_input(self, x):
        """x with a dimension of size 1 where the components are, so it broadcasts against all."""
        return x.unsqueeze(self._component_dim())

    def _weights_like_components(self, probs):
        """The mixture's (batch..., K) weights reshaped to broadcast against the components'
        (batch..., K, event...) tensors."""
        mix_ndims = len(self._mixture_distribution.batch_shape)
        pad = 0 if mix_ndims == 1 else len(self.batch_shape) - mix_ndims
        shape = probs.shape
        return probs.reshape(shape[:-1] + (1,) * pad + shape[-1:] + (1,) * self._event_ndims)

    @property
    def mean(self):
        weights = self._weights_like_components(self._mixture_distribution.probs)
        return (weights * self._component_distribution.mean).sum(self._component_dim())

    @property
    def variance(self):
        # the law of total variance: E[Var(X | k)] + Var(E[X | k])
        weights = self._weights_like_components(self._mixture_distribution.probs)
        dim = self._component_dim()
        within = (weights * self._component_distribution.variance).sum(dim)
        spread = self._component_distribution.mean - self._as_component_input(self.mean)
        between = (weights * spread.pow(2)).sum(dim)
        return within + between

    def cdf(self, x):
        component_cdf = self._component_distribution.cdf(self._as_component_input(x))
        return (component_cdf * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        component_log_prob = self._component_distribution.log_prob(self._as_component_input(x))
        log_weights = minitorch.log_softmax(self._mixture_distribution.logits, dim=-1)
        return minitorch.logsumexp(component_log_prob + log_weights, dim=-1)

    def sample(self, sample_shape=minitorch.Size()):
        with minitorch.no_grad():
            sample_shape = minitorch.Size(sample_shape)
            picked_dim = len(sample_shape) + len(self.batch_shape)
            picks = self._mixture_distribution.sample(sample_shape)
            candidates = self._component_distribution.sample(sample_shape)
            # picks: sample + batch; candidates: sample + batch + (K,) + event
            index = picks.reshape(picks.shape + (1,) * (self._event_ndims + 1))
            index = index.expand(picks.shape + (1,) + self.event_shape)
            return candidates.gather(picked_dim, index).squeeze(picked_dim)

    def __repr__(self):
        return f"MixtureSameFamily(\n  {self._mixture_distribution},\n  {self._component_distribution})"
