"""ContinuousBernoulli(probs or logits, lims=(0.499, 0.501)), as
torch.distributions.ContinuousBernoulli (Loaiza-Ganem and Cunningham, 2019): the density
C(p) p^x (1 - p)^(1 - x) on [0, 1]. Its normaliser, moments, CDF and inverse CDF have removable
singularities at p = 1/2, so for p inside `lims` they are Taylor expansions around 1/2."""
from __future__ import annotations

import math
from numbers import Number

import minitorch
from minitorch.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .categorical import _check_probs_logits
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        _check_probs_logits(probs, logits)
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
            # probs of exactly 0 or 1 would make the normaliser infinite: checked, then clamped
            if validate_args is not None and not bool(self.arg_constraints["probs"].check(self.probs).all()):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(minitorch.Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance, ("probs", "logits"))
        new._param = new.__dict__.get("probs", new.__dict__.get("logits"))
        new._lims = self._lims
        return new

    def _stable(self):
        """Where probs is far enough from 1/2 for the closed forms."""
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _cut_probs(self):
        """probs where the closed forms hold, lims[0] elsewhere (a harmless stand-in whose
        branch is not taken, so that no NaN reaches the gradient)."""
        return minitorch.where(self._stable(), self.probs, self._lims[0] * minitorch.ones_like(self.probs))

    @staticmethod
    def _log_odds_gap(p):
        """log(1 - p) - log(p)."""
        return minitorch.log1p(-p) - minitorch.log(p)

    def _cont_bern_log_norm(self):
        """log C(p) = log(|2 artanh(1 - 2p)| / |1 - 2p|)."""
        p = self._cut_probs()
        below = minitorch.where(p <= 0.5, p, minitorch.zeros_like(p))
        above = minitorch.where(p >= 0.5, p, minitorch.ones_like(p))
        log_gap = minitorch.where(p <= 0.5, minitorch.log1p(-2.0 * below), minitorch.log(2.0 * above - 1.0))
        closed = minitorch.log(self._log_odds_gap(p).abs()) - log_gap
        d2 = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * d2) * d2
        return minitorch.where(self._stable(), closed, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        closed = p / (2.0 * p - 1.0) + 1.0 / self._log_odds_gap(p)
        d = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * d.pow(2)) * d
        return minitorch.where(self._stable(), closed, taylor)

    @property
    def stddev(self):
        return minitorch.sqrt(self.variance)

    @property
    def variance(self):
        p = self._cut_probs()
        closed = p * (p - 1.0) / (1.0 - 2.0 * p).pow(2) + 1.0 / self._log_odds_gap(p).pow(2)
        d2 = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * d2) * d2
        return minitorch.where(self._stable(), closed, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=minitorch.Size()):
        with minitorch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        u = minitorch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none") + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        closed = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = minitorch.where(self._stable(), closed, value)
        return minitorch.where(value <= 0.0, minitorch.zeros_like(inside),
                               minitorch.where(value >= 1.0, minitorch.ones_like(inside), inside))

    def icdf(self, value):
        p = self._cut_probs()
        closed = (minitorch.log1p(-p + value * (2.0 * p - 1.0)) - minitorch.log1p(-p)) / (
            minitorch.log(p) - minitorch.log1p(-p)
        )
        return minitorch.where(self._stable(), closed, value)

    def entropy(self):
        log_q = minitorch.log1p(-self.probs)
        log_p = minitorch.log(self.probs)
        return self.mean * (log_q - log_p) - self._cont_bern_log_norm() - log_q

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log of (e^x - 1) / x, the normaliser in the natural parameter; a Taylor expansion
        near x = 0 (PyTorch compares x with lims shifted by -1/2 here)."""
        stable = (x <= self._lims[0] - 0.5) | (x >= self._lims[1] - 0.5)
        cut = minitorch.where(stable, x, (self._lims[0] - 0.5) * minitorch.ones_like(x))
        closed = minitorch.log(minitorch.expm1(cut).abs()) - minitorch.log(cut.abs())
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return minitorch.where(stable, closed, taylor)
