"""minitorch.linalg: torch.linalg's functions.

Each is an op of the op table (csrc/dispatch/ops.def, the linalg_* rows): LAPACK kernels from
the OpenBLAS the build links (csrc/cpu/linalg.c, CPU only: a CUDA tensor gets PyTorch's
NotImplementedError from the dispatcher) and composites over them. Python only picks between
the overloads PyTorch has for an `ord` given as a number or a string, and supplies matrix_norm's
default dims.
"""
from __future__ import annotations

from . import _C

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cross", "det", "eigh", "eigvalsh", "inv", "inv_ex", "lstsq",
           "matrix_exp", "matrix_norm", "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve", "solve_triangular", "svd",
           "svdvals", "vector_norm"]

#: Raised when a matrix cannot be factored or inverted (singular, not positive-definite, no
#: convergence): a RuntimeError, as torch.linalg.LinAlgError.
LinAlgError = _C._LinAlgError

inv = _C.linalg_inv
inv_ex = _C.linalg_inv_ex
det = _C.linalg_det
slogdet = _C.linalg_slogdet
solve = _C.linalg_solve
solve_triangular = _C.linalg_solve_triangular
cholesky = _C.linalg_cholesky
cholesky_ex = _C.linalg_cholesky_ex
qr = _C.linalg_qr
svd = _C.linalg_svd
svdvals = _C.linalg_svdvals
eigh = _C.linalg_eigh
eigvalsh = _C.linalg_eigvalsh
pinv = _C.linalg_pinv
matrix_rank = _C.linalg_matrix_rank
lstsq = _C.linalg_lstsq
vector_norm = _C.linalg_vector_norm
matrix_exp = _C.linalg_matrix_exp


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The ord-norm of the matrices of A over dim: 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2."""
    if isinstance(ord, str):
        return _C.linalg_matrix_norm_str(A, ord, dim, keepdim, dtype=dtype)
    return _C.linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector norm or, with ord given over two dims (or of a 2-D A), a matrix norm."""
    if isinstance(ord, str):
        return _C.linalg_norm_str(A, ord, dim, keepdim, dtype=dtype)
    return _C.linalg_norm(A, ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim: int = -1, out=None):
    """The cross product of the 3-vectors of input and other along dim (their other dims
    broadcast)."""
    result = _C.linalg_cross(input, other, dim=dim)
    if out is not None:
        return out.copy_(result)
    return result
