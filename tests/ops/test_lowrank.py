"""svd_lowrank and pca_lowrank: reconstruction of low-rank matrices against NumPy's float64 SVD
(tall, wide, batched, float32/float64, sparse input, M), PCA's variances against NumPy's
covariance eigenvalues, and against torch with the same seed (minitorch's randn draws PyTorch's
numbers): the same singular values and the same vectors up to each column's sign (LAPACK may
choose either sign of a singular vector pair)."""
import numpy as np
import pytest

import minitorch


def low_rank(shape, rank, noise=0.0, seed=0):
    rng = np.random.default_rng(seed)
    *batch, m, n = shape
    a = rng.standard_normal((*batch, m, rank)) @ rng.standard_normal((*batch, rank, n))
    return a + noise * rng.standard_normal(a.shape)


@pytest.mark.parametrize("shape", [(30, 20), (12, 40), (3, 16, 10), (2, 9, 25)])
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-9), ("float32", 2e-4)])
def test_svd_lowrank_reconstructs_a_low_rank_matrix(shape, dtype, tol):
    a = low_rank(shape, 4)
    minitorch.manual_seed(0)
    u, s, v = minitorch.svd_lowrank(minitorch.tensor(a.astype(dtype)), q=6)
    m, n = shape[-2:]
    assert tuple(u.shape) == (*shape[:-2], m, 6) and tuple(s.shape) == (*shape[:-2], 6)
    assert tuple(v.shape) == (*shape[:-2], n, 6) and u.dtype == getattr(minitorch, dtype)
    u, s, v = (x.numpy().astype(np.float64) for x in (u, s, v))
    back = u @ (s[..., :, None] * np.swapaxes(v, -1, -2))
    scale = np.abs(a).max()
    np.testing.assert_allclose(back, a, atol=tol * scale * 10)
    np.testing.assert_allclose(s[..., :4], np.linalg.svd(a, compute_uv=False)[..., :4], rtol=tol)
    np.testing.assert_allclose(np.swapaxes(u, -1, -2) @ u, np.broadcast_to(np.eye(6), (*shape[:-2], 6, 6)), atol=tol * 10)


def test_svd_lowrank_with_m_is_the_svd_of_a_minus_m():
    a = low_rank((20, 15), 3, seed=1)
    shift = np.random.default_rng(2).standard_normal((1, 15))
    minitorch.manual_seed(0)
    u, s, v = minitorch.svd_lowrank(minitorch.tensor(a + shift), q=5, M=minitorch.tensor(shift))
    np.testing.assert_allclose(s.numpy()[:3], np.linalg.svd(a, compute_uv=False)[:3], rtol=1e-9)


def test_pca_lowrank_variances_are_the_covariance_eigenvalues():
    rng = np.random.default_rng(3)
    x = low_rank((200, 8), 3, noise=0.01, seed=3) + rng.standard_normal(8) * 5  # off-centre data
    minitorch.manual_seed(0)
    u, s, v = minitorch.pca_lowrank(minitorch.tensor(x), q=3)
    eig = np.sort(np.linalg.eigvalsh(np.cov(x, rowvar=False)))[::-1][:3]
    np.testing.assert_allclose(s.numpy() ** 2 / (200 - 1), eig, rtol=1e-6)
    minitorch.manual_seed(0)
    us, ss, vs = minitorch.pca_lowrank(minitorch.tensor(x).to_sparse(), q=3)
    np.testing.assert_allclose(ss.numpy(), s.numpy(), rtol=1e-9)
    np.testing.assert_allclose(np.abs(vs.numpy()), np.abs(v.numpy()), atol=1e-8)


def test_pca_lowrank_errors():
    a = minitorch.ones(4, 3)
    with pytest.raises(ValueError, match=r"q\(=4\) must be non-negative integer and not greater than min\(m, n\)=3"):
        minitorch.pca_lowrank(a, q=4)
    with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
        minitorch.pca_lowrank(a, niter=-1)


@pytest.mark.parametrize("fn", ["svd_lowrank", "pca_lowrank"])
@pytest.mark.parametrize("shape", [(30, 20), (12, 40), (3, 16, 10)])
def test_matches_torch_with_the_same_seed(fn, shape):
    torch = pytest.importorskip("torch")
    a = low_rank(shape, 4, noise=0.05, seed=4)
    minitorch.manual_seed(7)
    mine = getattr(minitorch, fn)(minitorch.tensor(a), q=4)
    torch.manual_seed(7)
    theirs = getattr(torch, fn)(torch.tensor(a), q=4)
    np.testing.assert_allclose(mine[1].numpy(), theirs[1].numpy(), rtol=1e-10)
    for x, y in ((mine[0], theirs[0]), (mine[2], theirs[2])):
        x, y = x.numpy(), y.numpy()
        sign = np.sign(np.sum(x * y, axis=-2, keepdims=True))
        np.testing.assert_allclose(x * sign, y, atol=1e-9)
