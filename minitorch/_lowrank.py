"""svd_lowrank and pca_lowrank: randomized low-rank SVD (Halko, Martinsson and Tropp, "Finding
structure with randomness", 2009), as torch.svd_lowrank and torch.pca_lowrank.

A Gaussian test matrix R (n x q, drawn with randn from the default generator, so a seeded run
repeats, and repeats PyTorch's draw) sketches A's range as Q = orth(A R); niter subspace
iterations (Q = orth(A orth(A^H Q))) sharpen it where the singular values decay slowly. Then the
small q x n matrix B = Q^H A has an exact SVD B = U' S V^H, and A ~ (Q U') S V^H. A wide A is
handled through A^H so that the sketch is of the smaller side. M (broadcast to A) is subtracted
implicitly: every product with A becomes one with (A - M), which lets pca_lowrank centre a sparse
matrix without densifying it. A may be a sparse COO matrix (products through sparse.mm).
"""
from __future__ import annotations

from typing import Optional, Tuple

import minitorch

__all__ = ["svd_lowrank", "pca_lowrank"]


def _is_sparse(a) -> bool:
    return isinstance(a, minitorch.sparse.SparseTensor)


def _mm(a, b):
    """a @ b where a may be sparse."""
    return minitorch.sparse.mm(a, b) if _is_sparse(a) else minitorch.matmul(a, b)


def _adjoint(a):
    return a.t() if _is_sparse(a) else a.mH


def _float_dtype(a):
    return a.dtype if a.dtype.is_floating_point or a.dtype.is_complex else minitorch.get_default_dtype()


def _range_basis(a, q: int, niter: int, m):
    """An orthonormal basis (columns) of about the range of (a - m) of q vectors."""

    def times(x):  # (a - m) @ x
        y = _mm(a, x)
        return y if m is None else y - minitorch.matmul(m, x)

    def adjoint_times(x):  # (a - m)^H @ x
        y = _mm(_adjoint(a), x)
        return y if m is None else y - minitorch.matmul(m.mH, x)

    r = minitorch.randn(a.shape[-1], q, dtype=_float_dtype(a), device=a.device)
    basis = minitorch.linalg.qr(times(r)).Q
    for _ in range(niter):
        basis = minitorch.linalg.qr(adjoint_times(basis)).Q
        basis = minitorch.linalg.qr(times(basis)).Q
    return basis


def _svd_lowrank(a, q: Optional[int], niter: Optional[int], m):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    rows, cols = a.shape[-2:]
    if m is not None:
        m = m.broadcast_to(a.shape)
    wide = rows < cols
    if wide:
        a = _adjoint(a)
        m = None if m is None else m.mH
    basis = _range_basis(a, q, niter, m)
    small = _mm(_adjoint(a), basis).mH  # Q^H a, computed as (a^H Q)^H so a sparse a stays left
    if m is not None:
        small = small - minitorch.matmul(basis.mH, m)
    u, s, vh = minitorch.linalg.svd(small, full_matrices=False)
    u, v = minitorch.matmul(basis, u), vh.mH
    return (v, s, u) if wide else (u, s, v)


def svd_lowrank(A, q: Optional[int] = 6, niter: Optional[int] = 2, M=None) -> Tuple:
    """(U, S, V) with A ~ U diag(S) V^H for a matrix (or batch) of rank about q or less: U is
    m x q, S has q values, V is n x q. Randomized: seed the generator for repeatable results."""
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q: Optional[int] = None, center: bool = True, niter: int = 2) -> Tuple:
    """Principal components of the m samples (rows) of A, n features each, as svd_lowrank of
    the centred A: V's columns are the principal directions, S**2 / (m - 1) the variances along
    them, A @ V[:, :k] the projection on the first k. q defaults to min(6, m, n)."""
    rows, cols = A.shape[-2:]
    if q is None:
        q = min(6, rows, cols)
    elif not 0 <= q <= min(rows, cols):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(rows, cols)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if _is_sparse(A):
        if A.ndim != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        column_means = minitorch.sparse.sum(A, dim=(-2,))
        column_means = (column_means.to_dense() if _is_sparse(column_means) else column_means) / rows
        return _svd_lowrank(A, q, niter, column_means.to(_float_dtype(A)).unsqueeze(0))
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter, None)
