"""nn.utils.parametrizations, as PyTorch's: weight_norm (originals original0 = g, original1 = v)
spectral_norm (buffers _u, _v; 15 power iterations at registration, one per training forward)
and orthogonal (the matrix_exp, cayley and householder maps, with PyTorch's trivialization
buffer `base`) as parametrizations."""
from __future__ import annotations

from enum import Enum, auto
from typing import Optional

import minitorch
import minitorch.nn.functional as F
from minitorch.nn.modules.module import Module

from . import parametrize
from .spectral_norm import _reshape_weight_to_matrix
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


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


def _is_orthogonal(Q, eps=None):
    n, k = Q.size(-2), Q.size(-1)
    Id = minitorch.eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * minitorch.finfo(Q.dtype).eps
    return minitorch.allclose(Q.mT @ Q, Id, atol=eps)


def _make_orthogonal(A):
    """The Q of A = QR (A tall) with diag(R) >= 0: PyTorch's geqrf and householder_product
    followed by the signs of R's diagonal, as linalg.qr (the same LAPACK reflectors)."""
    Q, R = minitorch.linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sign().unsqueeze(-2)


def _householder_product(A, tau):
    """torch.linalg.householder_product: the first k columns of H_1 ... H_k, H_i = I - tau_i v_i
    v_i^T, v_i the i-th column of A below the diagonal with a 1 on it; in ops, so that gradients
    flow to A and tau."""
    n, k = A.size(-2), A.size(-1)
    eye = minitorch.eye(n, dtype=A.dtype, device=A.device)
    V = A.tril(diagonal=-1) + eye[:, :k]
    Q = eye[:, :k].expand(*A.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i, None, None] * v) @ (v.mT @ Q)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map: _OrthMaps, *, use_trivialization=True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = minitorch.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = minitorch.matrix_exp(A)
            else:
                Id = minitorch.eye(n, dtype=A.dtype, device=A.device)
                Q = minitorch.linalg.solve(minitorch.add(Id, A, alpha=-0.5), minitorch.add(Id, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with minitorch.no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            if n < k:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                              "or the Cayley parametrizations when use_trivialization=False.")
                raise NotImplementedError("orthogonal(use_trivialization=False) with the householder map "
                                          "needs torch.geqrf, which minitorch does not have")
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:
                N = minitorch.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
                Q = _make_orthogonal(minitorch.cat([Q, N], dim=-1))
            self.base = Q
            neg_Id = minitorch.zeros_like(Q_init)
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: Optional[str] = None, *,
               use_trivialization: bool = True) -> Module:
    """module.<name> made orthogonal (or a batch of orthogonal matrices): Q = base @ map(X), the
    map "matrix_exp" (square weights' default), "cayley" or "householder" (the default else)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, minitorch.Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
