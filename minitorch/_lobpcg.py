"""torch.lobpcg: a few extreme eigenpairs of a symmetric (generalized) eigenproblem A x = E B x by
the locally optimal block preconditioned conjugate gradient method (Knyazev), in PyTorch's
"ortho" form (Duersch et al. 2018): each step B-orthonormalizes the basis [X, W, P] (the
iterate, the preconditioned residual, the previous search direction) by SVQB with dropping of
dependent columns, and takes from it the Rayleigh-Ritz pairs. Stops when the first k pairs meet
PyTorch's backward-stable test ||R_i|| < tol ||X_i|| (||A|| + |E_i| ||B||), with its norms and
default tolerances, or after niter steps. method "basic" is accepted and runs the same steps.

A composite of minitorch's ops (matmul, linalg.eigh, cholesky); batches run one matrix at a time.
When A requires grad the pairs are differentiable, as PyTorch's (for simple eigenvalues): the
eigenvalues by their Rayleigh quotients (Hellmann-Feynman), the eigenvectors by
dx_i = -(A - E_i)^+ dA x_i, the pseudo-inverse applied by solving with A - E_i + x_i x_i^T.
"""
from __future__ import annotations

import math
from typing import Optional

from .autograd.function import Function

__all__ = ["lobpcg"]


def _mt():
    import minitorch

    return minitorch


def _svqb(U, B, tol: float, drop: bool):
    """U with B-orthonormal columns (U^T B U = I): the Gram matrix's eigenvectors scaled by
    1/sqrt(eigenvalue); with drop, the columns whose eigenvalue is below tol * the largest go"""
    mt = _mt()
    BU = U if B is None else B @ U
    G = U.mT @ BU
    d = G.diagonal().clamp(min=1e-300).rsqrt()
    G = d.unsqueeze(1) * G * d.unsqueeze(0)
    w, V = mt.linalg.eigh(G)
    if drop:
        keep = w > tol * w.abs().max()
        w, V = w[keep], V[:, keep]
    else:
        w = w.clamp(min=tol * float(w.abs().max()))
    return (U * d.unsqueeze(0)) @ (V * w.rsqrt().unsqueeze(0))


def _ortho_against(U, X, B, tol: float, rounds: int):
    """U's columns made B-orthogonal to X (B-orthonormal) and to each other, dependent ones
    dropped; repeated while the projection changes U by more than tol"""
    BX = X if B is None else B @ X
    for _ in range(rounds):
        U = U - X @ (BX.mT @ U)
        if U.shape[-1] == 0:
            return U
        U = _svqb(U, B, tol, drop=True)
        if U.shape[-1] == 0 or float((BX.mT @ U).abs().max()) < tol:
            break
    return U


class _Worker:
    """One matrix's iteration; the tracker sees it (E, X, R, ivars, fvars, as PyTorch's worker)."""

    def __init__(self, A, B, X, iK, k: int, niter: int, tol: float, largest: bool, tracker) -> None:
        mt = _mt()
        self.A, self.B, self.iK, self.k, self.largest, self.tracker = A, B, iK, k, largest, tracker
        self.fvars = {"tol": tol}
        self.ivars = {"istep": 0, "converged_count": 0, "niter": niter}
        x_norm = float(mt.linalg.norm(X))
        self.fvars["A_norm"] = float(mt.linalg.norm(A @ X)) / x_norm
        self.fvars["B_norm"] = float(mt.linalg.norm(X if B is None else B @ X)) / x_norm
        self.n = X.shape[-1]
        self.X = _svqb(X, B, tol, drop=False)
        self.P = None
        self._rayleigh_ritz(self.X)

    def _rayleigh_ritz(self, S) -> None:
        """the n extreme Ritz pairs of the B-orthonormal basis S; P the part of the new X outside
        the old one's span"""
        mt = _mt()
        w, C = mt.linalg.eigh(S.mT @ (self.A @ S))
        order = w.argsort(descending=self.largest)[: self.n]
        self.E, C = w[order], C[:, order]
        n_old = self.X.shape[-1]
        if S.shape[-1] > n_old and self.ivars["istep"] > 0:
            self.P = S[:, n_old:] @ C[n_old:]
        self.X = S @ C
        BX = self.X if self.B is None else self.B @ self.X
        self.R = self.A @ self.X - BX * self.E.unsqueeze(0)

    def converged(self) -> int:
        mt = _mt()
        f = self.fvars
        rerr = mt.linalg.vector_norm(self.R, dim=0) / (
            mt.linalg.vector_norm(self.X, dim=0) * (f["A_norm"] + self.E.abs() * f["B_norm"]))
        count = 0
        for ok in (rerr < f["tol"]).tolist():
            if not ok:
                break
            count += 1
        self.ivars["converged_count"] = count
        self.rerr = rerr
        return count

    def run(self) -> None:
        mt = _mt()
        tol = self.fvars["tol"]
        while True:
            if self.tracker is not None:
                self.tracker(self)
            if self.converged() >= self.k:
                return
            if self.ivars["niter"] >= 0 and self.ivars["istep"] >= self.ivars["niter"]:
                return
            W = self.R if self.iK is None else self.iK @ self.R
            U = W if self.P is None else mt.cat([W, self.P], dim=1)
            U = _ortho_against(U, self.X, self.B, tol, 3)
            self.ivars["istep"] += 1
            if U.shape[-1] == 0:  # the residual lies in span(X): nothing left to improve
                return
            self._rayleigh_ritz(mt.cat([self.X, U], dim=1))


def _pairs(A, B, X, iK, k, niter, tol, largest, tracker):
    worker = _Worker(A, B, X, iK, k, niter, tol, largest, tracker)
    worker.run()
    return worker.E[:k], worker.X[:, :k]


class _LOBPCGGrad(Function):
    """the pairs of a symmetric A, differentiable in A (simple eigenvalues, B = None)"""

    @staticmethod
    def forward(ctx, A, X, iK, k, niter, tol, largest, tracker):
        E, V = _pairs(A, None, X, iK, k, niter, tol, largest, tracker)
        ctx.save_for_backward(A, E, V)
        return E, V

    @staticmethod
    def backward(ctx, gE, gV):
        mt = _mt()
        A, E, V = ctx.saved_tensors
        gA = mt.zeros_like(A)
        if gE is not None:
            gA = gA + (V * gE.unsqueeze(0)) @ V.mT
        if gV is not None:
            eye = mt.eye(A.shape[-1], dtype=A.dtype, device=A.device)
            for i in range(V.shape[-1]):
                x = V[:, i:i + 1]
                r = gV[:, i:i + 1] - x @ (x.mT @ gV[:, i:i + 1])
                w = mt.linalg.solve(A - E[i] * eye + x @ x.mT, r)
                gA = gA - w @ x.mT
        return (gA + gA.mT) / 2, None, None, None, None, None, None, None


def lobpcg(A, k: Optional[int] = None, B=None, X=None, n: Optional[int] = None, iK=None,
           niter: Optional[int] = None, tol: Optional[float] = None, largest: Optional[bool] = None,
           method: Optional[str] = None, tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """(E, X): the k largest (largest=False: smallest) eigenvalues of the symmetric A (of the pencil
    (A, B) with B positive definite) and their B-orthonormal eigenvectors, (*, k) and (*, m, k),
    from n >= k starting vectors (X, or random ones); iK preconditions the residuals."""
    mt = _mt()
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = A.dtype if A.is_floating_point() else mt.get_default_dtype()
    if tol is None:
        tol = {mt.float32: 1.2e-07, mt.float64: 2.23e-16}[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x "
                         f"the number of requested eigenpairs (={n})")
    if method not in (None, "ortho", "basic"):
        raise ValueError(f"LOBPCG method must be 'basic' or 'ortho', got {method!r}")
    if ortho_fparams:
        tol = ortho_fparams.get("tol", tol)
    niter = 1000 if niter is None else niter
    largest = True if largest is None else largest
    if A.dim() > 2:
        batch = A.shape[:-2]
        count = math.prod(batch)
        As = A.reshape((count, m, m))
        Bs = None if B is None else B.reshape((count, m, m))
        Xs = None if X is None else X.reshape((count,) + tuple(X.shape[-2:]))
        out = [lobpcg(As[i], k, None if Bs is None else Bs[i], None if Xs is None else Xs[i], n, iK, niter, tol,
                      largest, method, tracker) for i in range(count)]
        return (mt.stack([e for e, _ in out]).reshape(tuple(batch) + (k,)),
                mt.stack([v for _, v in out]).reshape(tuple(batch) + (m, k)))
    X = mt.randn((m, n), dtype=dtype, device=A.device) if X is None else X
    if tuple(X.shape) != (m, n):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    if (A.requires_grad or (B is not None and B.requires_grad)) and mt.is_grad_enabled():
        if B is not None:
            raise NotImplementedError("lobpcg: gradients with a B matrix are not supported in minitorch")
        return _LOBPCGGrad.apply((A + A.mT) / 2, X.detach(), iK, k, niter, tol, largest, tracker)
    with mt.no_grad():
        return _pairs(A.detach(), None if B is None else B.detach(), X.detach(), iK, k, niter, tol, largest, tracker)
