"""torch.linalg against NumPy and PyTorch: the LAPACK kernels (inv, det, slogdet,
solve, solve_triangular, cholesky, qr, svd, eigh, lstsq), the norms, pinv and matrix_rank, the
legacy torch.* names; batches, non-contiguous inputs, float32 and float64, empty matrices,
gradients (PyTorch's formulas), LinAlgError and PyTorch's messages."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, check, check_grad, same_as_torch, same_error, torch_alike

torch = pytest.importorskip("torch")
L = minitorch.linalg
rng = np.random.default_rng(0)
inf = float("inf")
nan = float("nan")


def well_conditioned(*shape, dtype="float64"):
    """Random square matrices (..., n, n), kept away from singular."""
    a = rng.standard_normal(shape)
    return (a + 2 * shape[-1] ** 0.5 * np.eye(shape[-1])).astype(dtype)


def spd(*shape, dtype="float64"):
    """Symmetric positive-definite matrices (..., n, n)."""
    a = rng.standard_normal(shape)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def both(fn, *arrays, layout="contiguous", atol=1e-5, rtol=1e-4):
    """fn gives the same results in minitorch and PyTorch (helpers.torch_alike)."""
    return torch_alike(fn, *arrays, layout=layout, atol=atol, rtol=rtol)


def close(got, want, atol=1e-6, rtol=1e-5):
    np.testing.assert_allclose(np.asarray(got), want, atol=atol, rtol=rtol)


def same_error(fn, *arrays):
    """fn raises in both: the same class (LinAlgError being a RuntimeError in both) and message."""
    errs = []
    for lib in (minitorch, torch):
        with pytest.raises(Exception) as e:
            fn(lib, *[lib.tensor(a) for a in arrays])
        errs.append(e.value)
    mine, theirs = errs
    assert isinstance(mine, RuntimeError) == isinstance(theirs, RuntimeError)
    assert type(mine).__name__.lstrip("_") == type(theirs).__name__.lstrip("_"), f"{mine!r} vs {theirs!r}"
    assert str(mine) == str(theirs)


# ---- inverse, determinants, solves ----

@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (2, 1, 5, 5), (1, 1), (0, 0), (3, 0, 0)])
def test_inv_det_slogdet(dtype, shape):
    a = well_conditioned(*shape, dtype=dtype)
    for layout in LAYOUTS:
        both(lambda m, x: m.linalg.inv(x), a, layout=layout)
        both(lambda m, x: m.inverse(x), a, layout=layout)
        both(lambda m, x: m.linalg.inv_ex(x), a, layout=layout)
        both(lambda m, x: m.linalg.det(x), a, layout=layout, rtol=1e-4)
        both(lambda m, x: x.det(), a, layout=layout, rtol=1e-4)
        both(lambda m, x: m.linalg.slogdet(x), a, layout=layout)
        both(lambda m, x: m.slogdet(x), a, layout=layout)
    if a.size:
        check(lambda m, x: m.linalg.inv(x), np.linalg.inv, [a], atol=1e-4, rtol=1e-4)
        check(lambda m, x: m.linalg.det(x), np.linalg.det, [a], atol=1e-3, rtol=1e-4)
        close(minitorch._C.linalg_inv(minitorch.tensor(a)), np.linalg.inv(a), atol=1e-4)
        close(minitorch._C.linalg_det(minitorch.tensor(a)), np.linalg.det(a), atol=1e-3)


def test_logdet_and_singular_matrices():
    a = well_conditioned(2, 3, 3)
    a[1] = -a[1]  # one negative determinant: NaN
    both(lambda m, x: m.logdet(x), a)
    both(lambda m, x: x.logdet(), spd(4, 4))
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    both(lambda m, x: m.linalg.det(x), s)
    both(lambda m, x: m.linalg.slogdet(x), s)
    assert minitorch.linalg.inv_ex(minitorch.tensor(s)).info.item() == 2
    same_error(lambda m, x: m.linalg.inv(x), s)
    same_error(lambda m, x: m.linalg.inv(x), np.stack([np.eye(2), s]))
    same_error(lambda m, x: m.linalg.inv_ex(x, check_errors=True), s)
    same_error(lambda m, x: m.linalg.solve(x, x[..., 0]), s)
    same_error(lambda m, x: m.linalg.solve(x, x), np.stack([np.eye(2), np.zeros((2, 2))]))
    with pytest.raises(minitorch.linalg.LinAlgError):
        minitorch.inverse(minitorch.tensor(s))
    assert issubclass(minitorch.linalg.LinAlgError, RuntimeError)


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_solve(dtype):
    a = well_conditioned(2, 4, 4, dtype=dtype)
    for layout in LAYOUTS:
        both(lambda m, x, y: m.linalg.solve(x, y), a, rng.standard_normal((2, 4, 3)).astype(dtype), layout=layout)
        both(lambda m, x, y: m.linalg.solve(x, y), a, rng.standard_normal((2, 4)).astype(dtype), layout=layout)
        both(lambda m, x, y: m.linalg.solve(x, y), a, rng.standard_normal(4).astype(dtype), layout=layout)
        both(lambda m, x, y: m.linalg.solve(x, y, left=False), a, rng.standard_normal((5, 2, 3, 4)).astype(dtype),
             layout=layout)
        both(lambda m, x, y: m.linalg.solve(x, y), a[0], rng.standard_normal((3, 4, 2)).astype(dtype), layout=layout)
    b = rng.standard_normal((2, 4, 3))
    check(lambda m, x, y: m.linalg.solve(x, y), np.linalg.solve, [a.astype(np.float64), b])
    close(minitorch._C.linalg_solve(minitorch.tensor(a), minitorch.tensor(b.astype(dtype))),
          np.linalg.solve(a, b), atol=1e-4)


def test_solve_errors():
    same_error(lambda m, x, y: m.linalg.solve(x, y), np.eye(2), np.ones(3))
    same_error(lambda m, x, y: m.linalg.solve(x, y, left=False), np.eye(2), np.ones((2, 3)))
    same_error(lambda m, x, y: m.linalg.solve(x, y, left=False), np.eye(3), np.ones(3))
    same_error(lambda m, x, y: m.linalg.solve(x, y), np.eye(2, dtype=np.float32), np.ones((2, 3)))
    same_error(lambda m, x, y: m.linalg.solve(x, y), np.eye(2, dtype=np.int64), np.ones(2, dtype=np.int64))
    same_error(lambda m, x, y: m.linalg.solve(x, y), np.ones((2, 3)), np.ones(2))
    same_error(lambda m, x, y: m.linalg.solve(x, y), np.eye(2), np.array(1.0))
    same_error(lambda m, x: m.linalg.inv(x), np.ones((2, 3)))
    same_error(lambda m, x: m.linalg.inv(x), np.ones(3))
    same_error(lambda m, x: m.linalg.inv(x), np.ones((2, 2), np.int64))
    same_error(lambda m, x: m.linalg.det(x), np.ones((2, 3)))
    same_error(lambda m, x: m.linalg.slogdet(x), np.ones(3))


@pytest.mark.parametrize("upper", (True, False))
@pytest.mark.parametrize("left", (True, False))
@pytest.mark.parametrize("unit", (True, False))
def test_solve_triangular(upper, left, unit):
    a = well_conditioned(3, 4, 4)
    b = rng.standard_normal((3, 4, 2) if left else (3, 2, 4))
    for layout in LAYOUTS:
        both(lambda m, x, y: m.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
             a, b, layout=layout)
    both(lambda m, x, y: m.linalg.solve_triangular(x, y, upper=upper, left=left), a[0], b)
    check_grad(lambda m, x, y: m.linalg.solve_triangular(x, y, upper=upper, left=left, unitriangular=unit),
               [a, b])
    same_error(lambda m, x, y: m.linalg.solve_triangular(x, y, upper=True), np.eye(2), np.ones(2))
    same_error(lambda m, x, y: m.linalg.solve_triangular(x, y, upper=True), np.eye(2), np.ones((3, 2)))
    same_error(lambda m, x, y: m.linalg.solve_triangular(x, y, upper=True), np.ones((2, 3)), np.ones((2, 2)))


# ---- factorisations ----

@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_cholesky(dtype):
    a = spd(3, 5, 5, dtype=dtype)
    for layout in LAYOUTS:
        both(lambda m, x: m.linalg.cholesky(x), a, layout=layout)
        both(lambda m, x: m.linalg.cholesky(x, upper=True), a, layout=layout)
        both(lambda m, x: m.linalg.cholesky_ex(x), a, layout=layout)
        both(lambda m, x: x.cholesky(), a, layout=layout)
    both(lambda m, x: m.linalg.cholesky(x), np.zeros((2, 0, 0), dtype))
    np.testing.assert_allclose(np.asarray(minitorch._C.linalg_cholesky(minitorch.tensor(a))),
                               np.linalg.cholesky(a.astype(np.float64)), rtol=1e-4, atol=1e-5)
    bad = np.array([[4.0, 2.0], [2.0, -3.0]])
    both(lambda m, x: m.linalg.cholesky_ex(x), bad)
    same_error(lambda m, x: m.linalg.cholesky(x), bad)
    same_error(lambda m, x: m.linalg.cholesky(x), np.stack([np.eye(2), bad]))
    same_error(lambda m, x: m.linalg.cholesky(x), np.ones((2, 3)))
    same_error(lambda m, x: m.linalg.cholesky(x), np.ones(3))
    same_error(lambda m, x: m.linalg.cholesky(x), np.ones((2, 2), np.int64))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 3), (2, 3, 6), (0, 3), (3, 0)])
def test_qr(shape):
    a = rng.standard_normal(shape)
    for layout in LAYOUTS:
        for mode in ("reduced", "complete", "r"):
            both(lambda m, x: m.linalg.qr(x, mode=mode), a, layout=layout)
        both(lambda m, x: x.qr(), a, layout=layout)
        both(lambda m, x: m.qr(x, some=False), a, layout=layout)
    q, r = minitorch.linalg.qr(minitorch.tensor(a))
    np.testing.assert_allclose(np.asarray(q @ r), a, atol=1e-10)
    np.testing.assert_allclose(np.asarray(minitorch._C.linalg_qr(minitorch.tensor(a), "r").R),
                               np.asarray(r), atol=1e-12)


def test_qr_errors():
    same_error(lambda m, x: m.linalg.qr(x, mode="foo"), np.ones((3, 2)))
    same_error(lambda m, x: m.linalg.qr(x), np.ones(3))
    same_error(lambda m, x: m.linalg.qr(x), np.ones((3, 2), np.int64))
    x = minitorch.ones(3, 2, dtype=minitorch.float64, requires_grad=True)
    for mode, message in (("r", "mode='r'"), ("complete", "mode='complete' and nrows > ncols")):
        with pytest.raises(RuntimeError, match=message):
            minitorch.linalg.qr(x, mode=mode).R.sum().backward()


def svd_invariants(m, x, full=False):
    """What the SVD determines whatever the signs of its vectors: S, |U|, |Vh| (distinct S), U's
    and Vh's first k = min(m, n) columns and rows (the rest of a full basis is any)."""
    u, s, vh = m.linalg.svd(x, full_matrices=full)
    k = s.shape[-1]
    return s, u[..., :k].abs(), vh[..., :k, :].abs()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 3), (2, 3, 6)])
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_svd(shape, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    for layout in LAYOUTS:
        both(lambda m, x: svd_invariants(m, x), a, layout=layout)
        both(lambda m, x: svd_invariants(m, x, True), a, layout=layout)
        both(lambda m, x: m.linalg.svdvals(x), a, layout=layout)
        both(lambda m, x: tuple(t.abs() for t in x.svd()), a, layout=layout)
        both(lambda m, x: x.svd(some=False)[0][..., :min(shape[-2:])].abs(), a, layout=layout)
    u, s, vh = minitorch.linalg.svd(minitorch.tensor(a), full_matrices=False)
    np.testing.assert_allclose(np.asarray((u * s.unsqueeze(-2)) @ vh), a, atol=1e-5)
    u, s, vh = minitorch._C._linalg_svd(minitorch.tensor(a), True, True)
    np.testing.assert_allclose(np.asarray(s), np.linalg.svd(a.astype(np.float64), compute_uv=False), rtol=1e-4)
    both(lambda m, x: m.svd(x, compute_uv=False), a)


def test_svd_edge_cases_and_errors():
    both(lambda m, x: m.linalg.svd(x), np.zeros((0, 3)))
    both(lambda m, x: m.linalg.svd(x, full_matrices=False), np.zeros((2, 3, 0)))
    same_error(lambda m, x: m.linalg.svd(x), np.array([[np.nan, 1.0], [1.0, 1.0]]))
    same_error(lambda m, x: m.linalg.svd(x), np.stack([np.eye(2), np.full((2, 2), np.nan)]))
    both(lambda m, x: m.linalg.svd(x), np.stack([np.eye(2), np.full((2, 2), np.inf)]))  # NaNs
    same_error(lambda m, x: m.linalg.svd(x), np.ones(3))
    same_error(lambda m, x: m.linalg.svdvals(x), np.ones((2, 2), np.int64))
    same_error(lambda m, x: m.linalg.svd(x, driver="gesvd"), np.ones((3, 3)))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_eigh(dtype):
    a = spd(3, 5, 5, dtype=dtype) - 5 * np.eye(5, dtype=dtype)
    for layout in LAYOUTS:
        for uplo in ("L", "U"):
            both(lambda m, x: (m.linalg.eigh(x, UPLO=uplo).eigenvalues, m.linalg.eigh(x, uplo)[1].abs()),
                 a, layout=layout)
            both(lambda m, x: m.linalg.eigvalsh(x, uplo), a, layout=layout)
    tri = np.triu(a)  # only the named triangle is read
    both(lambda m, x: m.linalg.eigvalsh(x, "U"), tri)
    w, v = minitorch.linalg.eigh(minitorch.tensor(a))
    np.testing.assert_allclose(np.asarray(w), np.linalg.eigvalsh(a.astype(np.float64)), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray((v * w.unsqueeze(-2)) @ v.mT), a, atol=1e-4)
    assert minitorch._C._linalg_eigh(minitorch.tensor(a), "L", False).eigenvectors.shape == (0,)
    both(lambda m, x: m.linalg.eigh(x), np.zeros((0, 0)))
    same_error(lambda m, x: m.linalg.eigh(x), np.ones((2, 3)))
    same_error(lambda m, x: m.linalg.eigh(x, UPLO="X"), np.ones((2, 2)))
    same_error(lambda m, x: m.linalg.eigvalsh(x), np.ones(3))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("n", (31, 32, 97, 128))
def test_eigh_at_every_thread_count(n, dtype, threads):
    """At two threads a matrix of 32 rows or more with its eigenvectors goes through sytrd, then
    stedc beside orgtr, then a gemm (cpu/linalg_spectral.c's eigh_overlapped) rather than syevd:
    NumPy's float64 eigenvalues, orthonormal eigenvectors that rebuild the matrix, both triangles,
    a batch; a matrix of huge entries (syevd scales it) and one with a NaN keep syevd's
    results."""
    a = rng.standard_normal((2, n, n))
    a = (a + np.swapaxes(a, -1, -2)).astype(dtype)
    tol = 2e-4 if dtype == "float32" else 1e-10
    for uplo in ("L", "U"):
        w, v = L.eigh(minitorch.tensor(a), UPLO=uplo)
        w, v = np.asarray(w), np.asarray(v)
        close(w, np.linalg.eigvalsh(a.astype(np.float64), UPLO=uplo), atol=tol * n, rtol=tol)
        close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(n), v.shape), atol=tol * n)
        close(v @ (w[..., None] * np.swapaxes(v, -1, -2)), a, atol=tol * n)
        t = torch.linalg.eigh(torch.tensor(a), UPLO=uplo)
        close(np.abs(v), np.abs(t.eigenvectors.numpy()), atol=10 * tol * n)  # the same vectors up to sign
    big = a[0] * (1e20 if dtype == "float32" else 1e200)  # beyond where syevd scales
    w, v = L.eigh(minitorch.tensor(big))
    close(np.asarray(w) / np.abs(big).max(), np.linalg.eigvalsh(big.astype(np.float64)) / np.abs(big).max(),
          atol=tol * n)
    bad = a[0].copy()
    bad[3, 1] = bad[1, 3] = np.nan
    w, v = L.eigh(minitorch.tensor(bad))
    assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v)).all()


@pytest.mark.parametrize("driver", (None, "gels", "gelsy", "gelsd", "gelss"))
def test_lstsq(driver):
    a, b = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 2))
    for layout in LAYOUTS:
        both(lambda m, x, y: m.linalg.lstsq(x, y, driver=driver), a, b, layout=layout, atol=1e-8)
        both(lambda m, x, y: m.linalg.lstsq(x, y, driver=driver), a[0], b[0, :, 0], layout=layout, atol=1e-8)
        both(lambda m, x, y: m.linalg.lstsq(x, y, driver=driver), a, b[:, :, 1], layout=layout, atol=1e-8)
        both(lambda m, x, y: m.linalg.lstsq(x, y, driver=driver), a, b[:1], layout=layout, atol=1e-8)
    wide = rng.standard_normal((3, 5))  # underdetermined: the minimum-norm solution
    both(lambda m, x, y: m.linalg.lstsq(x, y, driver=driver), wide, b[0, :3], atol=1e-8)
    if driver != "gels":  # a rank-deficient A
        low = np.outer(rng.standard_normal(6), rng.standard_normal(3))
        both(lambda m, x, y: m.linalg.lstsq(x, y, driver=driver).solution, low, b[0], atol=1e-8)
        both(lambda m, x, y: m.linalg.lstsq(x, y, 1e-3, driver=driver).rank, low, b[0])
    x = minitorch.linalg.lstsq(minitorch.tensor(a[0]), minitorch.tensor(b[0]), driver=driver).solution
    np.testing.assert_allclose(np.asarray(x), np.linalg.lstsq(a[0], b[0], rcond=None)[0], atol=1e-10)


def test_lstsq_errors():
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((5, 3)), np.ones((4, 2)))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((5, 3), np.float32), np.ones((5, 2)))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((5, 3), np.int64), np.ones((5, 2), np.int64))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones(5), np.ones(5))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((5, 3)), np.array(1.0))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((5, 3)), np.ones(4))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((2, 5, 3)), np.ones(5))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((5, 3)), np.ones((2, 5, 2)))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y), np.ones((2, 5, 3)), np.ones((3, 5, 2)))
    same_error(lambda m, x, y: m.linalg.lstsq(x, y, driver="foo"), np.ones((5, 3)), np.ones((5, 2)))


# ---- pinv, matrix_rank ----

@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (0, 3), (2, 0, 3)])
def test_pinv_matrix_rank(shape):
    a = rng.standard_normal(shape)
    for layout in LAYOUTS:
        both(lambda m, x: m.linalg.pinv(x), a, layout=layout)
        both(lambda m, x: x.pinverse(), a, layout=layout)
        both(lambda m, x: m.linalg.matrix_rank(x), a, layout=layout)
    if a.size:
        check(lambda m, x: m.linalg.pinv(x), np.linalg.pinv, [a], atol=1e-8)
        close(minitorch._C.linalg_pinv(minitorch.tensor(a)), np.linalg.pinv(a), atol=1e-8)
        close(minitorch._C.pinverse(minitorch.tensor(a), 1e-15), np.linalg.pinv(a), atol=1e-8)
    low = np.outer(rng.standard_normal(5), rng.standard_normal(4)) + 1e-9 * rng.standard_normal((5, 4))
    both(lambda m, x: m.linalg.matrix_rank(x), low)
    both(lambda m, x: m.linalg.matrix_rank(x, atol=1e-12), low)
    both(lambda m, x: m.linalg.matrix_rank(x, atol=0.5, rtol=0.1), low)
    both(lambda m, x: m.linalg.matrix_rank(x, rtol=1e-12), low)
    assert minitorch._C.linalg_matrix_rank(minitorch.tensor(spd(4, 4)), hermitian=True).item() == 4
    both(lambda m, x: m.linalg.pinv(x), low)
    both(lambda m, x: m.linalg.pinv(x, hermitian=True), spd(4, 4) - 4 * np.eye(4))
    both(lambda m, x: m.linalg.pinv(x, atol=0.1), low)
    same_error(lambda m, x: m.linalg.pinv(x), np.ones(3))
    same_error(lambda m, x: m.linalg.pinv(x), np.ones((3, 3), np.int64))
    same_error(lambda m, x: m.linalg.matrix_rank(x), np.ones(3))
    same_error(lambda m, x: m.linalg.matrix_rank(x), np.ones((3, 3), np.int64))


# ---- norms ----

@pytest.mark.parametrize("ord", [None, "fro", "nuc", inf, -inf, 1, -1, 2, -2])
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_matrix_norms(ord, dtype):
    a = rng.standard_normal((2, 3, 4)).astype(dtype)
    for layout in LAYOUTS:
        if ord is not None:
            both(lambda m, x: m.linalg.matrix_norm(x, ord), a, layout=layout)
            both(lambda m, x: m.linalg.matrix_norm(x, ord, dim=(0, 2), keepdim=True), a, layout=layout)
            both(lambda m, x: m.linalg.matrix_norm(x, ord, (-1, 0)), a, layout=layout)
            both(lambda m, x: m.linalg.norm(x[0], ord), a, layout=layout)
            both(lambda m, x: m.linalg.norm(x, ord, dim=(1, 2), keepdim=True), a, layout=layout)
        if ord in (None, "fro", "nuc"):
            both(lambda m, x: m.norm(x[0], ord or "fro"), a, layout=layout)
            both(lambda m, x: x.norm(ord or "fro", dim=(0, 1)), a, layout=layout)
        if not isinstance(ord, str):
            both(lambda m, x: m.linalg.norm(x, ord, dim=1), a, layout=layout)
            both(lambda m, x: m.linalg.norm(x.flatten(), ord), a, layout=layout)
    both(lambda m, x: m.linalg.matrix_norm(x, dtype=m.float64), a)
    both(lambda m, x: m.linalg.norm(x), a)
    if ord in (inf, -inf, 1, -1, 2, -2, "fro", "nuc"):
        np.testing.assert_allclose(np.asarray(minitorch.linalg.matrix_norm(minitorch.tensor(a), ord)),
                                   np.linalg.norm(a.astype(np.float64), ord, axis=(-2, -1)), rtol=1e-4)


@pytest.mark.parametrize("ord", [2, 1, 0, 3.5, inf, -inf, -1])
def test_vector_norm(ord):
    a = rng.standard_normal((3, 4, 5))
    for layout in LAYOUTS:
        both(lambda m, x: m.linalg.vector_norm(x, ord), a, layout=layout)
        both(lambda m, x: m.linalg.vector_norm(x, ord, dim=(0, 2), keepdim=True), a, layout=layout)
        both(lambda m, x: m.norm(x, ord, dim=1), a, layout=layout)
        both(lambda m, x: x.norm(ord), a, layout=layout)
        both(lambda m, x: m.linalg.vector_norm(x, ord, -1, dtype=m.float64), a, layout=layout)
    close(minitorch._C.linalg_vector_norm(minitorch.tensor(a), ord, -1), np.linalg.norm(a, ord, axis=-1))
    check(lambda m, x: m.linalg.vector_norm(x, ord, 1), lambda x: np.linalg.norm(x, ord, axis=1), [a])
    if ord not in (0, -inf, -1):
        check_grad(lambda m, x: m.linalg.vector_norm(x, ord, 1), [a])


@pytest.mark.parametrize("x_dtype,dtype", [("float32", "float16"), ("float64", "float32"), ("float32", "int64"),
                                           ("float32", "bool"), ("float32", "complex64"),
                                           ("complex128", "complex64"), ("complex64", "float64"),
                                           ("int64", "float64"), ("int64", "int32")])
@pytest.mark.parametrize("call", [lambda m, x, dt: m.linalg.vector_norm(x, dtype=dt),
                                  lambda m, x, dt: m.linalg.vector_norm(x, 1, dim=0, dtype=dt),
                                  lambda m, x, dt: m.norm(x, dtype=dt),
                                  lambda m, x, dt: m.linalg.norm(x, dtype=dt)])
def test_vector_norm_dtype_refusals(call, x_dtype, dtype):
    """dtype= must be float or complex, of the input's kind, and no narrower than the input's
    (PyTorch's order of checks and words)."""
    a = np.array([[3.0, -4.0], [1.0, 2.0]], x_dtype)
    same_error(lambda m, x: call(m, x, getattr(m, dtype)), a)


@pytest.mark.parametrize("x_dtype", ["float16", "float32", "float64"])
def test_vector_norm_widening_dtype(x_dtype):
    a = rng.standard_normal((3, 4)).astype(x_dtype)
    got = minitorch.linalg.vector_norm(minitorch.tensor(a), 3, dim=1, dtype=minitorch.float64)
    assert got.dtype == minitorch.float64
    np.testing.assert_allclose(got.numpy(), np.linalg.norm(a.astype(np.float64), 3, axis=1), rtol=1e-12)


@pytest.mark.parametrize("ord", [2, 1, 0, 3, 0.5, -2, inf, -inf])
def test_norm_of_one_element_is_its_magnitude(ord):
    # PyTorch reduces one element to |x| at any order: 1e-200 ** 2 would underflow to 0
    a = np.array([[1e-200], [0.0], [-3.0000001], [nan], [-inf], [1e200]])
    for dtype in ("float64", "float32"):
        x = a.astype(dtype)
        with np.errstate(over="ignore"):
            expect = np.abs(x)[:, 0] if ord != 0 else (x != 0)[:, 0].astype(dtype)
        for got in (minitorch.tensor(x).norm(ord, dim=1), minitorch.linalg.vector_norm(minitorch.tensor(x), ord, dim=(1,)),
                    minitorch.tensor(x).t().norm(ord, dim=0)):
            np.testing.assert_array_equal(np.asarray(got), expect)
        np.testing.assert_array_equal(np.asarray(minitorch.tensor(x).norm(ord, dim=1)),
                                      torch.tensor(x).norm(ord, dim=1).numpy())
    assert minitorch.tensor(-1e-200, dtype=minitorch.float64).norm(ord).item() == (1e-200 if ord else 1.0)


def test_norm_errors():
    same_error(lambda m, x: m.linalg.matrix_norm(x, "fro"), np.ones(3))
    same_error(lambda m, x: m.linalg.matrix_norm(x, "foo"), np.ones((3, 3)))
    same_error(lambda m, x: m.linalg.matrix_norm(x, 3), np.ones((3, 3)))
    same_error(lambda m, x: m.linalg.matrix_norm(x, dim=(0, 1, 2)), np.ones((3, 3, 3)))
    same_error(lambda m, x: m.linalg.matrix_norm(x), np.ones((3, 3), np.int64))
    same_error(lambda m, x: m.linalg.vector_norm(x), np.ones(3, np.int64))
    same_error(lambda m, x: m.linalg.norm(x, "fro"), np.ones((3, 3, 3)))
    same_error(lambda m, x: m.linalg.norm(x, 2), np.ones((3, 3, 3)))
    same_error(lambda m, x: m.linalg.norm(x, 2, dim=(0, 1, 2)), np.ones((3, 3, 3)))
    same_error(lambda m, x: m.norm(x, "nuc"), np.ones((3, 3, 3)))
    assert minitorch._C.linalg_norm(minitorch.ones(3, 3), 1).item() == 3
    assert minitorch._C.linalg_norm_str(minitorch.ones(3, 3), "fro").item() == 3
    assert minitorch._C.linalg_matrix_norm(minitorch.ones(3, 3), 2, (0, 1)).item() == pytest.approx(3)
    assert minitorch._C.linalg_matrix_norm_str(minitorch.ones(3, 3), "nuc", (0, 1)).item() == pytest.approx(3)


# ---- gradients ----

# functions of the decompositions that their vectors' signs do not change (|U|, Q R, ...)
GRADS = {
    "inv": lambda m, x: m.linalg.inv(x),
    "det": lambda m, x: m.linalg.det(x),
    "slogdet": lambda m, x: m.linalg.slogdet(x).logabsdet,
    "logdet": lambda m, x: m.logdet(x @ x.mT),
    "solve": lambda m, x: m.linalg.solve(x, x[..., :2] * 3 + 1),
    "solve_vector": lambda m, x: m.linalg.solve(x, x[..., 0]),
    "solve_left": lambda m, x: m.linalg.solve(x, x[..., :2, :] + 1, left=False),
    "cholesky": lambda m, x: m.linalg.cholesky(x @ x.mT + 3 * m.eye(x.shape[-1], dtype=x.dtype)),
    "cholesky_upper": lambda m, x: m.linalg.cholesky(x @ x.mT + 3 * m.eye(x.shape[-1], dtype=x.dtype), upper=True),
    "qr": lambda m, x: m.linalg.qr(x).Q * 2 + m.linalg.qr(x).R.sum(),
    "qr_wide": lambda m, x: m.linalg.qr(x[..., :2, :]).Q + m.linalg.qr(x[..., :2, :]).R.sum(),
    "svdvals": lambda m, x: m.linalg.svdvals(x),
    "svd": lambda m, x: m.linalg.svd(x)[0].abs().sum(-1) + m.linalg.svd(x)[2].abs().sum(-2),
    "svd_tall": lambda m, x: m.linalg.svd(x[..., :2], full_matrices=False).U.abs(),
    "svd_wide": lambda m, x: m.linalg.svd(x[..., :2, :], full_matrices=False).Vh.abs(),
    "eigvalsh": lambda m, x: m.linalg.eigvalsh(x + x.mT),
    "eigh": lambda m, x: m.linalg.eigh(x + x.mT).eigenvectors.abs() + m.linalg.eigh(x + x.mT).eigenvalues.sum(),
    "pinv": lambda m, x: m.linalg.pinv(x[..., :2]),
    "pinv_wide": lambda m, x: m.linalg.pinv(x[..., :2, :]),
    "matrix_norm_nuc": lambda m, x: m.linalg.matrix_norm(x, "nuc"),
    "matrix_norm_2": lambda m, x: m.linalg.matrix_norm(x, 2),
    "norm_fro": lambda m, x: m.linalg.norm(x, dim=(-2, -1)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients(name):
    a = well_conditioned(2, 3, 3)
    check_grad(GRADS[name], [a], atol=1e-5, rtol=1e-4)
    same_as_torch(GRADS[name], [a], layout="transposed", atol=1e-8, rtol=1e-6)


def test_gradient_node_names_and_the_identity():
    x = minitorch.tensor(well_conditioned(3, 3), requires_grad=True)
    names = {"LinalgInvExBackward0": L.inv(x), "LinalgDetBackward0": L.det(x),
             "LinalgSlogdetBackward0": L.slogdet(x)[1], "LinalgSolveExBackward0": L.solve(x, x),
             "LinalgSolveTriangularBackward0": L.solve_triangular(x, x, upper=True),
             "LinalgCholeskyExBackward0": L.cholesky(x @ x.mT), "LinalgQrBackward0": L.qr(x)[0],
             "LinalgSvdBackward0": L.svdvals(x), "LinalgEighBackward0": L.eigvalsh(x),
             "LinalgPinvBackward0": L.pinv(x)}
    for name, out in names.items():
        assert out.grad_fn.name() == name
    # repeated singular values: svdvals' gradient stays finite (U diag(g) Vh), as PyTorch's
    e = minitorch.eye(3, dtype=minitorch.float64, requires_grad=True)
    L.svdvals(e).sum().backward()
    np.testing.assert_allclose(np.asarray(e.grad), np.eye(3))
    e.grad = None
    L.matrix_norm(e, "nuc").backward()
    np.testing.assert_allclose(np.asarray(e.grad), np.eye(3))


def test_double_backward_of_inv():
    a = well_conditioned(3, 3)
    got = []
    for lib in (minitorch, torch):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(lib.linalg.inv(x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), x)
        got.append(np.asarray(h.detach()))
    np.testing.assert_allclose(got[0], got[1], rtol=1e-8)


def test_lstsq_has_no_gradient_yet():
    a = minitorch.tensor(rng.standard_normal((5, 3)), requires_grad=True)
    out = minitorch.linalg.lstsq(a, minitorch.ones(5, 1, dtype=minitorch.float64)).solution
    with pytest.raises(NotImplementedError, match="linalg_lstsq"):
        out.sum().backward()


def test_the_linalg_functions_are_the_ops():
    """minitorch.linalg's names are the op table's linalg_* functions (called here by them)."""
    C = minitorch._C
    a = minitorch.tensor(spd(2, 3, 3))
    b = minitorch.tensor(rng.standard_normal((2, 3, 2)))
    pairs = [(C.linalg_inv_ex(a).inverse, L.inv(a)), (C.linalg_slogdet(a).logabsdet, L.slogdet(a)[1]),
             (C.linalg_solve_triangular(a, b, upper=True), L.solve_triangular(a, b, upper=True)),
             (C.linalg_cholesky_ex(a).L, L.cholesky(a)), (C.linalg_svd(a, False).S, L.svd(a)[1]),
             (C.linalg_svdvals(a), L.svdvals(a)), (C.linalg_eigh(a).eigenvalues, L.eigvalsh(a)),
             (C.linalg_eigvalsh(a, "U"), L.eigh(a, "U")[0]), (C.linalg_lstsq(a, b).solution, L.solve(a, b))]
    for got, want in pairs:
        close(got, np.asarray(want), atol=1e-10)
    assert L.inv is C.linalg_inv and L.LinAlgError is C._LinAlgError


@pytest.mark.parametrize("driver", ("gels", "gelsy", "gelsd", "gelss"))
def test_non_finite_inputs_give_nans(driver):
    """LAPACK's iterative routines may never return on NaN or inf (sgelss loops in sbdsqr): the
    kernels give NaN there instead (PyTorch's lstsq raises an internal error from MKL)."""
    a = np.eye(3)
    a[0, 1] = np.nan
    r = L.lstsq(minitorch.tensor(a), minitorch.ones(3, 2, dtype=minitorch.float64), driver=driver)
    assert np.isnan(np.asarray(r.solution)).all()
    a[0, 1] = np.inf
    w, v = L.eigh(minitorch.tensor(a), UPLO="U")
    assert np.isnan(np.asarray(w)).all() and np.isnan(np.asarray(v)).all()
    np.testing.assert_allclose(np.asarray(L.eigvalsh(minitorch.tensor(a))), np.ones(3))  # the lower triangle
    s = L.svdvals(minitorch.tensor(a))
    assert np.isnan(np.asarray(s)).all()
