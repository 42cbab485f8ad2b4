"""torch.lobpcg: the k extreme eigenpairs of symmetric matrices (and of pencils (A, B)) against
NumPy's eigh (float64) and PyTorch's lobpcg: values, eigenvectors (up to sign: through
|X^T V| and the residual), largest and smallest, given starting vectors, a preconditioner,
batches, float32; gradients of eigenvalues and (sign-free functions of) eigenvectors against the
eigh-based ones of PyTorch and its lobpcg's; PyTorch's refusals."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, raises_like_torch, torch

RNG = np.random.default_rng(1922)


def _spd(m, seed, gap=True):
    r = np.random.default_rng(seed)
    q, _ = np.linalg.qr(r.standard_normal((m, m)))
    w = np.linspace(1.0, 10.0, m) if gap else r.uniform(1, 10, m)
    w[-3:] = [14.0, 17.0, 21.0]
    return (q * w) @ q.T


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3])
def test_against_numpy(k, largest):
    a = _spd(30, k)
    E, X = minitorch.lobpcg(minitorch.tensor(a), k=k, largest=largest)
    w, v = np.linalg.eigh(a)
    idx = np.argsort(w)[::-1][:k] if largest else np.argsort(w)[:k]
    assert tuple(E.shape) == (k,) and tuple(X.shape) == (30, k) and E.dtype == minitorch.float64
    np.testing.assert_allclose(as_numpy(E), w[idx], rtol=1e-6)
    Xn = as_numpy(X)
    np.testing.assert_allclose(np.abs(Xn.T @ v[:, idx]), np.eye(k), atol=1e-4)
    np.testing.assert_allclose(a @ Xn, Xn * as_numpy(E), atol=1e-5)


def test_generalized_preconditioned_given_x_and_batches():
    a, b = _spd(24, 5), _spd(24, 6) / 10 + np.eye(24)
    E, X = minitorch.lobpcg(minitorch.tensor(a), k=2, B=minitorch.tensor(b), n=3, niter=-1)
    lb = np.linalg.cholesky(b)
    li = np.linalg.inv(lb)
    w = np.linalg.eigvalsh(li @ a @ li.T)
    np.testing.assert_allclose(as_numpy(E), w[::-1][:2], rtol=1e-6)
    Xn = as_numpy(X)
    np.testing.assert_allclose(Xn.T @ b @ Xn, np.eye(2), atol=1e-8)  # B-orthonormal
    x0 = minitorch.tensor(RNG.standard_normal((24, 2)))
    ik = minitorch.tensor(np.linalg.inv(a + np.eye(24)))
    E2, _ = minitorch.lobpcg(minitorch.tensor(a), X=x0, iK=ik, largest=False)
    np.testing.assert_allclose(as_numpy(E2), np.linalg.eigvalsh(a)[:2], rtol=1e-6)
    batch = np.stack([_spd(18, s) for s in (1, 2, 3, 4)]).reshape(2, 2, 18, 18)
    E3, X3 = minitorch.lobpcg(minitorch.tensor(batch), k=2)
    assert tuple(E3.shape) == (2, 2, 2) and tuple(X3.shape) == (2, 2, 18, 2)
    np.testing.assert_allclose(as_numpy(E3), np.linalg.eigvalsh(batch)[..., ::-1][..., :2], rtol=1e-6)
    E4, _ = minitorch.lobpcg(minitorch.tensor(a, dtype=minitorch.float32), k=1)
    assert E4.dtype == minitorch.float32
    np.testing.assert_allclose(as_numpy(E4), [21.0], rtol=1e-3)


def test_tracker_sees_each_step():
    steps = []
    minitorch.lobpcg(minitorch.tensor(_spd(30, 0)), k=2, tracker=lambda w: steps.append(w.ivars["istep"]))
    assert steps[0] == 0 and steps == sorted(steps) and len(steps) > 1


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
def test_same_as_torch_with_gradients():
    """the values of PyTorch's lobpcg, and the gradients of E and of X X^T (free of the signs)
    with respect to A against those through PyTorch's lobpcg and its eigh."""
    a = _spd(30, 9)
    wt = RNG.standard_normal((30, 30))
    ge = RNG.standard_normal(3)

    def loss(E, X, lib):
        return (E * lib.tensor(ge)).sum() + ((X @ X.mT) * lib.tensor(wt)).sum()

    am = minitorch.tensor(a, requires_grad=True)
    E, X = minitorch.lobpcg(am, k=3)
    loss(E, X, minitorch).backward()
    at = torch.tensor(a, requires_grad=True)
    Et, Xt = torch.lobpcg(at, k=3)
    loss(Et, Xt, torch).backward()
    np.testing.assert_allclose(as_numpy(E.detach()), Et.detach().numpy(), rtol=1e-7)
    ae = torch.tensor(a, requires_grad=True)
    w, v = torch.linalg.eigh((ae + ae.mT) / 2)
    loss(w.flip(0)[:3], v.flip(1)[:, :3], torch).backward()
    np.testing.assert_allclose(as_numpy(am.grad), ae.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(as_numpy(am.grad), at.grad.numpy(), rtol=1e-4, atol=1e-5)


BAD = [
    lambda m: m.lobpcg(m.ones(4, 5), k=1),
    lambda m: m.lobpcg(m.eye(5), k=2),
    lambda m: m.lobpcg(m.eye(9), k=1, B=m.eye(8)),
    lambda m: m.lobpcg(m.eye(9), X=m.ones(8, 1)),
]


@pytest.mark.parametrize("fn", BAD)
def test_bad_calls_raise_as_torch(fn):
    raises_like_torch(fn)


def test_refusal_messages():
    with pytest.raises(AssertionError, match=r"A must be square, got shape minitorch.Size\(\[4, 5\]\)"):
        minitorch.lobpcg(minitorch.ones(4, 5), k=1)
    with pytest.raises(ValueError, match=r"LOBPCG algorithm is not applicable when the number of A rows \(=5\) is "
                                         r"smaller than 3 x the number of requested eigenpairs \(=2\)"):
        minitorch.lobpcg(minitorch.eye(5), k=2)
