"""LKJCholesky(dim, concentration=1.0), as torch.distributions.LKJCholesky: the lower Cholesky
factors L of correlation matrices L L^T whose density is proportional to det(L L^T)^(c - 1)
(Lewandowski, Kurowicka and Joe, 2009). Draws are the onion method: row i of L is a uniform
direction in i dimensions scaled by the square root of a Beta draw, the diagonal completing
the row to unit norm."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import Distribution
from .gamma import Beta
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = minitorch.Size((dim, dim))
        # Row i's squared off-diagonal norm is Beta(i / 2, c + (dim - 2 - i) / 2), i = 1..dim-1;
        # row 0 has nothing off the diagonal (its Beta parameters are placeholders, the draw unused).
        c = self.concentration
        offset = minitorch.cat([minitorch.zeros(1, dtype=c.dtype, device=c.device),
                                minitorch.arange(dim - 1, dtype=c.dtype, device=c.device)])
        marginal = c + 0.5 * (dim - 2)
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LKJCholesky, batch_shape, _instance, ("concentration",), event_shape=self.event_shape)
        new.dim = self.dim
        new._beta = self._beta.expand(new.batch_shape + (self.dim,))
        return new

    def sample(self, sample_shape=minitorch.Size()):
        with minitorch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            normal = minitorch.randn(
                self._extended_shape(sample_shape), dtype=y.dtype, device=y.device
            ).tril(-1)
            norms = normal.norm(dim=-1, keepdim=True)
            directions = minitorch.where(norms > 0, normal / norms, minitorch.zeros_like(normal))
            w = y.sqrt() * directions
            tiny = minitorch.finfo(w.dtype).tiny
            diagonal = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + minitorch.diag_embed(diagonal)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # unnormalised: sum over i = 2..dim of (dim - i + 2 (c - 1)) log L_ii
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = minitorch.arange(2, self.dim + 1, dtype=self.concentration.dtype, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalised = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        log_norm = 0.5 * dm1 * math.log(math.pi) + minitorch.mvlgamma(alpha - 0.5, dm1) - dm1 * minitorch.lgamma(alpha)
        return unnormalised - log_norm
