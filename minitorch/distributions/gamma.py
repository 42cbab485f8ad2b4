"""Gamma(concentration, rate), Chi2(df) and Beta(concentration1, concentration0), as PyTorch's:
densities, entropies, moments and reparameterised draws. Gamma draws are the _standard_gamma op
(Marsaglia and Tsang's rejection on PyTorch's stream, csrc/cpu/gamma.c), whose gradient is
_standard_gamma_grad; Beta draws are a Dirichlet's first component, as PyTorch's."""
from __future__ import annotations

from numbers import Number

import minitorch

from . import constraints
from .exp_family import ExponentialFamily
from .dirichlet import Dirichlet
from .utils import broadcast_all

__all__ = ["Beta", "Chi2", "Gamma"]


class Gamma(ExponentialFamily):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(minitorch.Size() if scalar else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        value = minitorch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=minitorch.finfo(value.dtype).tiny)  # not recorded by autograd
        return value

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def log_prob(self, value):
        value = minitorch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (
            minitorch.xlogy(self.concentration, self.rate)
            + minitorch.xlogy(self.concentration - 1, value)
            - self.rate * value
            - minitorch.lgamma(self.concentration)
        )

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return minitorch.special.gammainc(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - minitorch.log(self.rate) + minitorch.lgamma(c) + (1.0 - c) * minitorch.digamma(c)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return minitorch.special.gammainc(self.concentration, self.rate * value)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return minitorch.lgamma(x + 1) + (x + 1) * minitorch.log(-y.reciprocal())


class Beta(ExponentialFamily):
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if isinstance(concentration1, Number) and isinstance(concentration0, Number):
            c = minitorch.tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            c = minitorch.stack([concentration1, concentration0], -1)
        if validate_args is not False and (validate_args or self._validate_args):
            Dirichlet(c, validate_args=True)  # PyTorch's Beta is a Dirichlet: its check and message
        self._concentration = c
        super().__init__(c.shape[:-1], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Beta, batch_shape, _instance)
        new._concentration = self._concentration.expand(new.batch_shape + (2,))
        return new

    def rsample(self, sample_shape=()):
        return Dirichlet(self._concentration, validate_args=False).rsample(sample_shape).select(-1, 0)

    @property
    def concentration1(self):
        return self._concentration[..., 0]

    @property
    def concentration0(self):
        return self._concentration[..., 1]

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return (self.concentration1 - 1) / (self.concentration1 + self.concentration0 - 2)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # Dirichlet's density of (value, 1 - value), as PyTorch computes it.
        x = minitorch.stack([value, 1.0 - value], -1)
        c = self._concentration
        return minitorch.xlogy(c - 1.0, x).sum(-1) + minitorch.lgamma(c.sum(-1)) - minitorch.lgamma(c).sum(-1)

    def entropy(self):
        c = self._concentration
        a0 = c.sum(-1)
        return (
            minitorch.lgamma(c).sum(-1)
            - minitorch.lgamma(a0)
            - (2 - a0) * minitorch.digamma(a0)
            - ((c - 1.0) * minitorch.digamma(c)).sum(-1)
        )

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return minitorch.lgamma(x) + minitorch.lgamma(y) - minitorch.lgamma(x + y)


class Chi2(Gamma):
    """Chi2(df): Gamma(df / 2, 1 / 2)."""

    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        if isinstance(df, Number):
            df = minitorch.tensor(float(df))
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2
