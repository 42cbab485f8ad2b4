"""minitorch.linalg: torch.linalg's functions.

Each is an op of the op table (csrc/dispatch/ops.def, the linalg_* rows): LAPACK kernels from
the OpenBLAS the build links (csrc/cpu/linalg.c, CPU only: a CUDA tensor gets PyTorch's
NotImplementedError from the dispatcher) and composites over them. Python only picks between
the overloads PyTorch has for an `ord` given as a number or a string, and supplies matrix_norm's
default dims. The functions below cross() arrange calls of those ops as PyTorch's
torch/linalg composites do (multi_dot's product order, tensorinv's reshapes). The LU family
(lu_factor_ex's getrf, lu_unpack, lu_solve's getrs) is partial pivoting only, as PyTorch's CPU.
ldl_factor(_ex) and ldl_solve are LAPACK's sytrf/sytrs (csrc/cpu/linalg_ldl.c), real matrices
only (hermitian changes nothing for them). householder_product (and Tensor.orgqr/ormqr) applies
the k reflectors one after another with tensor ops, so autograd differentiates it; eig and
eigvals (complex results) are not here yet.
"""
from __future__ import annotations

import math

from . import _C
from ._checks import _tensors, _to_out

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv",
           "inv_ex", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm",
           "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
           "tensorsolve", "vander", "vecdot", "vector_norm", "householder_product", "ldl_factor", "ldl_factor_ex",
           "ldl_solve"]

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
lu_factor = _C.linalg_lu_factor
lu_factor_ex = _C.linalg_lu_factor_ex
lu = _C.linalg_lu
lu_solve = _C.linalg_lu_solve
qr = _C.linalg_qr
svd = _C.linalg_svd
svdvals = _C.linalg_svdvals
ldl_factor = _C.linalg_ldl_factor
ldl_factor_ex = _C.linalg_ldl_factor_ex
ldl_solve = _C.linalg_ldl_solve
eigh = _C.linalg_eigh
eigvalsh = _C.linalg_eigvalsh
eig = _C.linalg_eig
eigvals = _C.linalg_eigvals
pinv = _C.linalg_pinv
matrix_rank = _C.linalg_matrix_rank
lstsq = _C.linalg_lstsq
vector_norm = _C.linalg_vector_norm
matrix_exp = _C.linalg_matrix_exp
matrix_power = _C.matrix_power
matmul = _C.matmul


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """The ord-norm of the matrices of A over dim: 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2."""
    if isinstance(ord, str):
        return _C.linalg_matrix_norm_str(A, ord, dim, keepdim, dtype=dtype, out=out)
    return _C.linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype, out=out)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """A vector norm or, with ord given over two dims (or of a 2-D A), a matrix norm."""
    if isinstance(ord, str):
        return _C.linalg_norm_str(A, ord, dim, keepdim, dtype=dtype, out=out)
    return _C.linalg_norm(A, ord, dim, keepdim, dtype=dtype, out=out)


def cross(input, other, *, dim: int = -1, out=None):
    """The cross product of the 3-vectors of input and other along dim (their other dims
    broadcast)."""
    return _C.linalg_cross(input, other, dim=dim, out=out)


def diagonal(A, *, offset: int = 0, dim1: int = -2, dim2: int = -1):
    """A view of the diagonals of the matrices of A (torch.diagonal with the last two dims)."""
    return _C.diagonal(A, offset, dim1, dim2)


def vecdot(x, y, *, dim: int = -1, out=None):
    """The dot products of the vectors of x and y along dim (their other dims broadcast)."""
    _tensors("linalg_vecdot", x=x, y=y)
    for t in (x, y):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got {_name(t.dtype)}")
    result = _C.sum(_C.mul(x, y), dim)
    return _to_out(result, out)


def _name(dt) -> str:
    return {"float32": "Float", "float64": "Double", "int64": "Long", "int32": "Int", "bool": "Bool"}.get(
        str(dt).split(".")[-1], str(dt))


def vander(x, *, N=None):
    """The Vandermonde matrix of x: columns x ** 0, x ** 1, ..., x ** (N - 1) (N = x.shape[-1])."""
    _tensors("linalg_vander", x=x)
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n < 2:
        raise RuntimeError("N must be greater than 1.")
    if x.dim() < 1:
        raise RuntimeError("x must have at least one dimension")
    powers = _C.arange(n, device=x.device)
    return _C.pow(x.unsqueeze(-1), powers).to(_C.promote_types(x.dtype, _C.int64))


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first and last may be vectors), in the order of
    fewest multiplications (the classic dynamic programme, as PyTorch's)."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.dim()}D")
    if last.dim() not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.dim()}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    mats = list(tensors)
    if first.dim() == 1:
        mats[0] = first.unsqueeze(0)
    if last.dim() == 1:
        mats[-1] = last.unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(mats[i].shape)} and "
                               f"{list(mats[i + 1].shape)} cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return _C.mm(product(i, k), product(k + 1, j))

    result = product(0, n - 1)
    if first.dim() == 1 and last.dim() == 1:
        result = result.reshape(())
    elif first.dim() == 1:
        result = result.squeeze(0)
    elif last.dim() == 1:
        result = result.squeeze(-1)
    return _to_out(result, out)


def solve_ex(A, B, *, left: bool = True, check_errors: bool = False, out=None):
    """(solve(A, B), info): info is 0 for each system solved (a singular one raises)."""
    result = solve(A, B, left=left)
    info = _C.zeros(A.shape[:-2], dtype=_C.int32, device=A.device)
    return _SolveEx(result, info)


def cond(A, p=None, *, out=None):
    """The condition number of the matrices of A in the p-norm: the ratio of the largest to the
    smallest singular value for p None, 2 or -2, else norm(A, p) * norm(inv(A), p)."""
    if p is None or p in (2, -2):
        s = svdvals(A)
        top, bottom = s[..., 0], s[..., -1]
        result = bottom / top if p == -2 else top / bottom
    else:
        result = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return _to_out(result, out)


def tensorinv(A, ind: int = 2, *, out=None):
    """The inverse of A for tensordot over ind dims: reshaped to a square matrix, inverted, and
    reshaped to A.shape[ind:] + A.shape[:ind]."""
    _tensors("linalg_tensorinv", A=A)
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    n, m = math.prod(rows), math.prod(cols)
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == prod(self.shape[:ind]), "
                           f"but got {m} != {n}")
    result = inv(A.reshape(n, m)).reshape(cols + rows)
    return _to_out(result, out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) == B."""
    _tensors("linalg_tensorsolve", A=A, B=B)
    if dims is not None:
        order = [d % A.dim() for d in dims]
        A = A.permute([d for d in range(A.dim()) if d not in order] + order)
    rest = tuple(A.shape[B.dim():])
    n, m = B.numel(), math.prod(rest)
    if n != m:
        raise RuntimeError("Expected self to satisfy the requirement prod(result_shape) == prod(other.shape), "
                           f"but got {m} != {n}")
    result = solve(A.reshape(n, m), B.reshape(n)).reshape(rest)
    return _to_out(result, out)


class _SolveEx(tuple):
    """solve_ex's (result, info), a named tuple as PyTorch's torch.return_types."""

    def __new__(cls, result, info):
        return super().__new__(cls, (result, info))

    result = property(lambda self: self[0])
    info = property(lambda self: self[1])


def _reflector_checks(api: str, input, tau) -> None:
    """PyTorch's checks of householder_product's and ormqr's input (*, m, n) and tau (*, k)."""
    _tensors(api.split(".")[-1], input=input, tau=tau)
    if input.dim() < 2:
        raise RuntimeError(f"{api}: input must have at least 2 dimensions.")
    if tau.dim() != input.dim() - 1:
        raise RuntimeError(f"{api}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
                           f"{tau.dim()} and input.ndim is equal to {input.dim()}")
    if tuple(tau.shape[:-1]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{api}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got "
                           f"{list(tau.shape[:-1])}")


def _reflect(V, tau, C, reverse: bool):
    """H_1 H_2 ... H_k C (reverse: H_k ... H_1 C) for H_i = I - tau_i v_i v_i^T, v_i the columns of
    V (*, m, k); one update of C per reflector, C - tau_i v_i (v_i^T C)."""
    k = V.shape[-1]
    order = range(k) if reverse else range(k - 1, -1, -1)
    for i in order:
        v = V[..., :, i:i + 1]
        C = C - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (v.transpose(-2, -1) @ C)
    return C


def _reflectors(input, k: int):
    """The reflectors' vectors of geqrf's result: its first k columns below the diagonal, with
    the implied 1 on it and zeros above."""
    m = input.shape[-2]
    eye = _C.eye(m, k, dtype=input.dtype, device=input.device)
    return input[..., :, :k].tril(-1) + eye


def _lapack_dtype(kernel: str, t) -> None:
    from .nn.functional import _floats_only

    _floats_only(kernel, t)
    if t.dtype in (_C.float16, _C.bfloat16):
        from ._shape import _SCALAR_NAMES

        raise NotImplementedError(f'"{kernel}" not implemented for \'{_SCALAR_NAMES[str(t.dtype)]}\'')


def householder_product(A, tau, *, out=None):
    """The first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^T, for A (*, m, n) holding the
    v_i below its diagonal (geqrf's result: householder_product(*geqrf(A)) is qr(A)'s Q), k =
    tau.shape[-1] <= n <= m."""
    api = "torch.linalg.householder_product"
    _reflector_checks(api, A, tau)
    m, n, k = A.shape[-2], A.shape[-1], tau.shape[-1]
    if m < n:
        raise RuntimeError(f"{api}: input.shape[-2] must be greater than or equal to input.shape[-1]")
    if n < k:
        raise RuntimeError(f"{api}: input.shape[-1] must be greater than or equal to tau.shape[-1]")
    if A.dtype != tau.dtype:
        raise RuntimeError(f"{api}: tau dtype {_name(tau.dtype)} does not match input dtype {_name(A.dtype)}")
    _lapack_dtype("orgqr_cpu", A)
    start = _C.eye(m, n, dtype=A.dtype, device=A.device).expand(tuple(A.shape))
    if k == 0:
        # no reflectors: the identity's columns, still a result of A and tau for autograd (as
        # PyTorch's, it requires grad when they do; the empty sums add an exact 0)
        start = start + (A[..., :0, :0].sum() + tau[..., :0].sum())
    result = _reflect(_reflectors(A, k), tau, start, reverse=False)
    return _to_out(result, out)


def _ormqr(input, tau, other, left: bool = True, transpose: bool = False):
    """Q @ other, Q^T @ other (transpose), other @ Q or other @ Q^T (not left), for Q = H_1 ... H_k
    the m x m orthogonal matrix of geqrf's reflectors in input (*, m, n) and tau (*, k)."""
    api = "torch.ormqr"
    _reflector_checks(api, input, tau)
    if other.dim() < 2:
        raise RuntimeError(f"{api}: other must have at least 2 dimensions.")
    if other.dim() != input.dim():
        raise RuntimeError(f"{api}: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {other.dim()} and input.ndim is equal to {input.dim()}")
    if tuple(other.shape[:-2]) != tuple(input.shape[:-2]):
        raise RuntimeError(f"{api}: Expected batch dimensions of other to be equal to input.shape[:-2], but got "
                           f"{list(other.shape[:-2])}")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"{api}: {which} must be equal to input.shape[-2]")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        which = "other.shape[-2]" if left else "other.shape[-1]"
        raise RuntimeError(f"{api}: tau.shape[-1] must be equal to min({which}, input.shape[-1])")
    for name, t in (("tau", tau), ("other", other)):
        if t.dtype != input.dtype:
            raise RuntimeError(f"{api}: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{_name(input.dtype)} and {name} has dtype {_name(t.dtype)}")
    _lapack_dtype("ormqr_cpu", input)
    V = _reflectors(input, tau.shape[-1])
    if left:  # Q C = H_1 ... H_k C; Q^T C = H_k ... H_1 C
        return _reflect(V, tau, other, reverse=transpose)
    # C Q = (Q^T C^T)^T, C Q^T = (Q C^T)^T
    return _reflect(V, tau, other.transpose(-2, -1), reverse=not transpose).transpose(-2, -1)
