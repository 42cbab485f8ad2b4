"""VonMises(loc, concentration), as torch.distributions.VonMises: the circular distribution with
density exp(k cos(x - loc)) / (2 pi I0(k)) on [-pi, pi). Draws are Best and Fisher's (1979)
rejection sampler (a wrapped Cauchy envelope), run in float64 and returned in the parameters'
dtype."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import Distribution, _alias
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _log_bessel_i0(k):
    """log I0(k) for k >= 0, from the exponentially scaled Bessel function (no overflow)."""
    return minitorch.log(minitorch.special.i0e(k)) + k


def _best_fisher(loc, concentration, r, out):
    """Fills `out` (a float64 tensor of the draws' shape) with draws from VonMises(0, k) by Best
    and Fisher's rejection, then shifts them by loc and wraps them into [-pi, pi)."""
    done = minitorch.zeros(out.shape, dtype=minitorch.bool, device=out.device)
    while not bool(done.all()):
        u1, u2, u3 = minitorch.rand((3,) + tuple(out.shape), dtype=out.dtype, device=out.device).unbind(0)
        z = minitorch.cos(math.pi * u1)
        f = (1 + r * z) / (r + z)
        c = concentration * (r - f)
        accepted = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        # every accepted proposal is a draw, so a later one may replace an earlier (as PyTorch's)
        out = minitorch.where(accepted, (u3 - 0.5).sign() * f.acos(), out)
        done = done | accepted
    return (out + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(VonMises, batch_shape, _instance, ("loc", "concentration"))

    mean = _alias("loc")
    mode = _alias("loc")

    @lazy_property
    def variance(self):
        # the circular variance 1 - I1(k) / I0(k)
        k = self.concentration
        return 1 - minitorch.special.i1e(k) / minitorch.special.i0e(k)

    @lazy_property
    def _proposal_r(self):
        """Best and Fisher's r = (1 + rho^2) / (2 rho), rho = (tau - sqrt(2 tau)) / (2 k),
        tau = 1 + sqrt(1 + 4 k^2); 1/k + k (its expansion at 0) for k below 1e-5."""
        k = self.concentration
        tau = 1 + (1 + 4 * k.pow(2)).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * k)
        r = (1 + rho.pow(2)) / (2 * rho)
        return minitorch.where(k < 1e-5, 1 / k + k, r)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (
            self.concentration * minitorch.cos(value - self.loc)
            - math.log(2 * math.pi)
            - _log_bessel_i0(self.concentration)
        )

    def sample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        with minitorch.no_grad():
            out = minitorch.zeros(shape, dtype=minitorch.float64, device=self.loc.device)
            draws = _best_fisher(
                self.loc.double(), self.concentration.double(), self._proposal_r.double(), out
            )
            return draws.to(self.loc.dtype)
