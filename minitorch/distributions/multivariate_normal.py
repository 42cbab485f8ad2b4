"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril), as PyTorch's:
everything goes through the lower Cholesky factor L (cov = L L^T)."""
from __future__ import annotations

import math

import minitorch

from . import constraints
from .distribution import Distribution, _alias
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    return minitorch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^-1 x for batches of L (..., n, n) and x (..., n) that broadcast."""
    n = bx.shape[-1]
    shape = minitorch.broadcast_shapes(bL.shape[:-2], bx.shape[:-1])
    sol = minitorch.linalg.solve_triangular(bL.expand(shape + (n, n)), bx.expand(shape + (n,)).unsqueeze(-1), upper=False)
    return sol.squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    Lf = minitorch.linalg.cholesky(minitorch.flip(P, (-2, -1)))
    L_inv = minitorch.transpose(minitorch.flip(Lf, (-2, -1)), -2, -1)
    Id = minitorch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return minitorch.linalg.solve_triangular(L_inv, Id, upper=False)


def _scale_tril_of(covariance_matrix, precision_matrix, scale_tril):
    """The lower Cholesky factor of the covariance, from whichever of the three was given."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return minitorch.linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


class _CholeskyParametrised:
    """The scale_tril, covariance_matrix and precision_matrix of a distribution given by the
    lower Cholesky factor L of a covariance (`_unbroadcasted_scale_tril`), each computed on first
    use and expanded to the class's `_matrix_shape()`."""

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return minitorch.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        Id = minitorch.eye(L.shape[-1], dtype=L.dtype, device=L.device)
        L_inv = minitorch.linalg.solve_triangular(L, Id, upper=False)
        return minitorch.matmul(L_inv.mT, L_inv).expand(self._matrix_shape())


class MultivariateNormal(_CholeskyParametrised, Distribution):
    arg_constraints = {
        "loc": constraints.real_vector,
        "covariance_matrix": constraints.positive_definite,
        "precision_matrix": constraints.positive_definite,
        "scale_tril": constraints.lower_cholesky,
    }
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        matrices = (("scale_tril matrix", scale_tril), ("covariance_matrix", covariance_matrix),
                    ("precision_matrix", precision_matrix))
        for name, m in matrices:
            if m is not None:
                if m.dim() < 2:
                    raise ValueError(f"{name} must be at least two-dimensional, with optional leading batch dimensions")
                batch_shape = minitorch.broadcast_shapes(m.shape[:-2], loc.shape[:-1])
                setattr(self, name.split()[0], m.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(covariance_matrix, precision_matrix, scale_tril)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(MultivariateNormal, batch_shape, _instance, event_shape=self.event_shape)
        loc_shape = new.batch_shape + self.event_shape
        cov_shape = loc_shape + self.event_shape
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(cov_shape))
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    mean = _alias("loc")
    mode = _alias("loc")

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=minitorch.Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def entropy(self):
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return H if len(self._batch_shape) == 0 else H.expand(self._batch_shape)
