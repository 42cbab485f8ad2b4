"""Wishart(df, covariance_matrix | precision_matrix | scale_tril), as torch.distributions.Wishart:
the distribution of sums of df outer products of N(0, Sigma) vectors (real df > p - 1 allowed).
Everything goes through Sigma's lower Cholesky factor L; draws are Bartlett's decomposition
L A (L A)^T with A lower triangular, sqrt(Chi2(df - i)) on its diagonal and standard normals
below it."""
from __future__ import annotations

import math
import warnings
from numbers import Number

import minitorch

from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _CholeskyParametrised, _scale_tril_of

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p: int):
    """The multivariate digamma function, sum over i < p of digamma(x - i / 2) (the derivative of
    mvlgamma(x, p)); defined for x > (p - 1) / 2."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = minitorch.arange(p, dtype=x.dtype, device=x.device) / 2
    return minitorch.digamma(x.unsqueeze(-1) - halves).sum(-1)


class Wishart(_CholeskyParametrised, ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {
            "covariance_matrix": constraints.positive_definite,
            "precision_matrix": constraints.positive_definite,
            "scale_tril": constraints.lower_cholesky,
            "df": constraints.greater_than(self.event_shape[-1] - 1),
        }

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        given = [(n, m) for n, m in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                     ("scale_tril", scale_tril)) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        name, param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = minitorch.Size(param.shape[:-2])
            self.df = minitorch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = minitorch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = minitorch.Size(param.shape[-2:])
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if bool(self.df.lt(p).any()):
            warnings.warn(
                "Low df values detected. Singular samples are highly likely to occur for ndim - 1 < df < ndim.",
                stacklevel=2,
            )
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(covariance_matrix, precision_matrix, scale_tril)
        self._bartlett_chi2 = self._diagonal_chi2()

    def _diagonal_chi2(self):
        """Chi2(df - i) for the diagonal entries i = 0..p-1 of Bartlett's factor."""
        L = self._unbroadcasted_scale_tril
        steps = minitorch.arange(self._event_shape[-1], dtype=L.dtype, device=L.device)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(self._batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(Wishart, batch_shape, _instance, event_shape=self.event_shape)
        matrix_shape = new.batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(matrix_shape)
        new.df = self.df.expand(new.batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(matrix_shape))
        new._bartlett_chi2 = new._diagonal_chi2()
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    def _df_as_matrix(self):
        return self.df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_as_matrix() * self.covariance_matrix

    @property
    def mode(self):
        # (df - p - 1) Sigma, undefined (NaN) where df <= p + 1
        factor = self.df - self._event_shape[-1] - 1
        factor = minitorch.where(factor > 0, factor, float("nan"))
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        # Var(X_ij) = df (Sigma_ij^2 + Sigma_ii Sigma_jj)
        V = self.covariance_matrix
        d = V.diagonal(dim1=-2, dim2=-1)
        return self._df_as_matrix() * (V.pow(2) + d.unsqueeze(-1) * d.unsqueeze(-2))

    def _bartlett(self, sample_shape):
        sample_shape = minitorch.Size(sample_shape)
        p = self._event_shape[-1]
        root_chi2 = self._bartlett_chi2.rsample(sample_shape).sqrt()
        root_chi2 = root_chi2.clamp(min=minitorch.finfo(root_chi2.dtype).eps)
        A = minitorch.diag_embed(root_chi2)
        rows, cols = minitorch.tril_indices(p, p, offset=-1, device=root_chi2.device)
        A[..., rows, cols] = minitorch.randn(sample_shape + self._batch_shape + (p * (p - 1) // 2,),
                                             dtype=root_chi2.dtype, device=root_chi2.device)
        LA = minitorch.matmul(self._unbroadcasted_scale_tril, A)
        return minitorch.matmul(LA, LA.mT)

    def rsample(self, sample_shape=minitorch.Size(), max_try_correction=None):
        """Bartlett draws, corrected as PyTorch 2.13's rsample corrects them, so that after the
        same seed the draws and the generator's state are PyTorch's: its flag of the draws to
        draw again is support.check (True for a positive definite draw; the batch dims
        reduced), so a draw that came out fine is drawn again, with the warning "Singular sample
        detected.", until a redraw's check comes out False (a singular redraw), at most
        max_try_correction (10) times."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = minitorch.Size(sample_shape)
        batch_dims = [-(d + 1) for d in range(len(self._batch_shape))]
        sample = self._bartlett(sample_shape)
        again = self.support.check(sample)
        if self._batch_shape:
            again = again.amax(batch_dims)
        if bool(again.any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redraw = self._bartlett(again[again].shape)
                # a copy of the mask: the index_put node keeps its mask, which the line below
                # changes in place (PyTorch's turns a bool mask into fresh positions first)
                sample[again.clone()] = redraw
                redraw_singular = ~self.support.check(redraw)
                if self._batch_shape:
                    redraw_singular = redraw_singular.amax(batch_dims)
                again[again.clone()] = redraw_singular
                if not bool(again.any()):
                    break
        return sample

    def _half_log_det_sigma(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        shape = minitorch.broadcast_shapes(value.shape[:-2], L.shape[:-2])
        trace = minitorch.cholesky_solve(value.expand(shape + (p, p)), L.expand(shape + (p, p)))
        trace = trace.diagonal(dim1=-2, dim2=-1).sum(-1)
        return (
            -nu * (p * _LOG_2 / 2 + self._half_log_det_sigma())
            - minitorch.mvlgamma(nu / 2, p=p)
            + (nu - p - 1) / 2 * minitorch.linalg.slogdet(value).logabsdet
            - trace / 2
        )

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return (
            (p + 1) * (p * _LOG_2 / 2 + self._half_log_det_sigma())
            + minitorch.mvlgamma(nu / 2, p=p)
            - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p)
            + nu * p / 2
        )

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        shifted = y + (p + 1) / 2
        return shifted * (p * _LOG_2 - minitorch.linalg.slogdet(-2 * x).logabsdet) + minitorch.mvlgamma(shifted, p=p)
