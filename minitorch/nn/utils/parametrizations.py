"""nn.utils.parametrizations, as PyTorch's: weight_norm (originals original0 = g, original1 = v)
and spectral_norm (buffers _u, _v; 15 power iterations at registration, one per training
forward) as parametrizations. `orthogonal` needs matrix_exp or householder_product, which
minitorch does not have yet."""
from __future__ import annotations

from typing import Optional

import minitorch
import minitorch.nn.functional as F
from minitorch.nn.modules.module import Module

from . import parametrize
from .spectral_norm import _reshape_weight_to_matrix
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    def __init__(self, dim: Optional[int] = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """module.<name> = g * v / ||v||, with g and v the parametrization's original0 and original1."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = _reshape_weight_to_matrix(weight, self.dim)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)

    def _power_method(self, weight_mat, n_power_iterations: int) -> None:
        with minitorch.no_grad():
            for _ in range(n_power_iterations):
                # in place, as PyTorch's out=: the buffers carry the iteration across calls
                self._u.copy_(F.normalize(minitorch.mv(weight_mat, self._v), dim=0, eps=self.eps))
                self._v.copy_(F.normalize(minitorch.mv(weight_mat.t(), self._u), dim=0, eps=self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = _reshape_weight_to_matrix(weight, self.dim)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        sigma = minitorch.dot(self._u.clone(), minitorch.mv(weight_mat, self._v.clone()))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: Optional[int] = None) -> Module:
    """module.<name> divided by its spectral norm (power iteration on the parametrization's buffers)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, minitorch.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations,
                                                                      0 if dim is None else dim, eps))
    return module
