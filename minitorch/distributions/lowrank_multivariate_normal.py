"""LowRankMultivariateNormal(loc, cov_factor, cov_diag), as PyTorch's: the covariance is
W W^T + diag(D) with W (n x m) of low rank m; densities and entropies go through the m x m
capacitance matrix I + W^T D^-1 W (the Woodbury identity and the matrix determinant lemma), so
nothing n x n is factorised."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import Distribution, _alias
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _scaled_factor_t(W, D):
    """W^T D^-1, batched: (..., m, n)."""
    return W.mT / D.unsqueeze(-2)


def _batch_capacitance_tril(W, D):
    """The lower Cholesky factor of I + W^T D^-1 W."""
    m = W.size(-1)
    K = minitorch.matmul(_scaled_factor_t(W, D), W)
    return minitorch.linalg.cholesky(K + minitorch.eye(m, dtype=W.dtype, device=W.device))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """log det(W W^T + D) = log det(capacitance) + log det(D) (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + D.log().sum(-1)


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |C^-1 W^T D^-1 x|^2 (Woodbury), C the capacitance's
    Cholesky factor."""
    projected = _batch_mv(_scaled_factor_t(W, D), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, projected)


class LowRankMultivariateNormal(Distribution):
    arg_constraints = {
        "loc": constraints.real_vector,
        "cov_factor": constraints.independent(constraints.real, 2),
        "cov_diag": constraints.independent(constraints.positive, 1),
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = minitorch.Size(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape {event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            batch_shape = minitorch.broadcast_shapes(loc.shape[:-1], cov_factor.shape[:-2], cov_diag.shape[:-1])
        except RuntimeError as e:
            raise ValueError(
                f"Incompatible batch shapes: loc {loc.shape}, cov_factor {cov_factor.shape}, cov_diag {cov_diag.shape}"
            ) from e
        self.loc = loc.expand(batch_shape + event_shape)
        self.cov_factor = cov_factor.expand(batch_shape + cov_factor.shape[-2:])
        self.cov_diag = cov_diag.expand(batch_shape + event_shape)
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(LowRankMultivariateNormal, batch_shape, _instance, event_shape=self.event_shape)
        loc_shape = new.batch_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + self.cov_factor.shape[-1:])
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        return new

    mean = _alias("loc")
    mode = _alias("loc")

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W.pow(2).sum(-1) + D).expand(self._batch_shape + self._event_shape)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^-1/2: factor the bracket, which is
        # well conditioned, then scale its rows
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        n = self._event_shape[0]
        root_d = D.sqrt().unsqueeze(-1)
        scaled = W / root_d
        inner = minitorch.matmul(scaled, scaled.mT) + minitorch.eye(n, dtype=W.dtype, device=W.device)
        return (root_d * minitorch.linalg.cholesky(inner)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (minitorch.matmul(W, W.mT) + minitorch.diag_embed(D)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W (I + W^T D^-1 W)^-1 W^T D^-1
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        scaled_t = _scaled_factor_t(W, D)
        cap = self._capacitance_tril
        shape = minitorch.broadcast_shapes(cap.shape[:-2], scaled_t.shape[:-2])
        A = minitorch.linalg.solve_triangular(
            cap.expand(shape + cap.shape[-2:]), scaled_t.expand(shape + scaled_t.shape[-2:]), upper=False
        )
        return (minitorch.diag_embed(D.reciprocal()) - minitorch.matmul(A.mT, A)).expand(self._matrix_shape())

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        W = self._unbroadcasted_cov_factor
        eps_w = _standard_normal(shape[:-1] + W.shape[-1:], dtype=self.loc.dtype, device=self.loc.device)
        eps_d = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(W, eps_w) + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                     self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                       value - self.loc, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + M)

    def entropy(self):
        H = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
