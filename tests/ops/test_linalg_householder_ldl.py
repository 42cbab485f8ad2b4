"""torch.geqrf (and Tensor.geqrf), linalg.householder_product (Tensor/torch.orgqr), torch.ormqr,
linalg.ldl_factor(_ex) and linalg.ldl_solve against PyTorch and NumPy: values (geqrf's and
sytrf's own outputs equal PyTorch's, the same LAPACK), reconstructions, gradients where PyTorch
has them (householder_product, ormqr), batches, empty matrices, non-contiguous inputs, errors."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, check_grad, same_as_torch, same_error, torch

RNG = np.random.default_rng(53)
C = minitorch._C
L = minitorch.linalg


def sym(*shape):
    a = RNG.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 4, 2), (0, 3), (2, 0, 0), (1, 1)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_geqrf(shape, dtype, layout):
    x = RNG.standard_normal(shape).astype(dtype)
    same_as_torch(lambda m, x: m.geqrf(x)[0], [x], layout=layout, grad=False, atol=1e-5)
    same_as_torch(lambda m, x: x.geqrf()[1], [x], layout=layout, grad=False, atol=1e-5)
    a, tau = C.geqrf(minitorch.tensor(x))
    assert a.dtype == tau.dtype == getattr(minitorch, dtype) and tuple(tau.shape) == shape[:-2] + (min(shape[-2:]),)
    # householder_product of geqrf's result is qr's Q (for m >= n)
    if shape[-2] >= shape[-1]:
        q = L.householder_product(a, tau).numpy()
        r = np.triu(a.numpy()[..., : shape[-1], :])
        np.testing.assert_allclose(q @ r, x, atol=1e-4 if dtype == "float32" else 1e-10)


def test_geqrf_no_gradient_and_errors():
    x = minitorch.randn(3, 3, dtype=minitorch.float64, requires_grad=True)
    with pytest.raises((RuntimeError, NotImplementedError)):
        minitorch.geqrf(x)[0].sum().backward()
    same_error(lambda m, x: m.geqrf(x), np.zeros(3))
    same_error(lambda m, x: m.geqrf(x), np.zeros((3, 3), np.float16))
    same_error(lambda m, x: m.geqrf(x), np.zeros((3, 3), np.int64))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((5, 3), 2), ((4, 4), 4), ((2, 4, 3), 3), ((4, 3), 0),
                                     ((4, 0), 0), ((0, 0), 0)])
def test_householder_product(shape, k, layout):
    a = RNG.standard_normal(shape)
    tau = RNG.uniform(0.2, 1.8, shape[:-2] + (k,))
    same_as_torch(lambda m, a, t: m.linalg.householder_product(a, t), [a, tau], layout=layout, atol=1e-10)
    same_as_torch(lambda m, a, t: m.orgqr(a, t), [a, tau], layout=layout, grad=False, atol=1e-10)
    same_as_torch(lambda m, a, t: a.orgqr(t), [a, tau], layout=layout, grad=False, atol=1e-10)
    if 0 not in shape and k > 0:  # no reflectors: PyTorch gives no gradient, minitorch zeros
        check_grad(lambda m, a, t: m.linalg.householder_product(a, t), [a, tau])


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("shape,other", [((5, 3), (5, 2)), ((4, 4), (4, 3)), ((2, 4, 3), (2, 4, 5)),
                                         ((4, 5), (4, 6))])
def test_ormqr(shape, other, left, transpose):
    a = RNG.standard_normal(shape)
    c = RNG.standard_normal(other if left else other[:-2] + (other[-1], other[-2]))
    k = min(shape[-2], shape[-1])
    tau = RNG.uniform(0.2, 1.8, shape[:-2] + (k,))
    same_as_torch(lambda m, a, t, c: m.ormqr(a, t, c, left, transpose), [a, tau, c], atol=1e-10)
    same_as_torch(lambda m, a, t, c: a.ormqr(t, c, left=left, transpose=transpose), [a, tau, c], grad=False,
                  atol=1e-10)
    check_grad(lambda m, a, t, c: m.ormqr(a, t, c, left, transpose), [a, tau, c])


def test_ormqr_applies_qr_q():
    x = RNG.standard_normal((5, 3))
    c = RNG.standard_normal((5, 2))
    a, tau = minitorch.geqrf(minitorch.tensor(x))
    q = np.linalg.qr(x, mode="complete")[0]
    # Q from geqrf differs from NumPy's only by the signs of its columns: Q^T Q c is c either way
    qc = minitorch.ormqr(a, tau, minitorch.tensor(c)).numpy()
    np.testing.assert_allclose(minitorch.ormqr(a, tau, minitorch.tensor(qc), transpose=True).numpy(), c, atol=1e-12)
    np.testing.assert_allclose(np.abs(q.T @ qc), np.abs(q.T @ (q @ (q.T @ qc))), atol=1e-12)


HOUSEHOLDER_ERRORS = [
    ((3, 4), (2,)), ((4, 3), (4,)), ((4, 3), (2, 2)), ((4,), (2,)), ((2, 4, 3), (3, 3)), ((2, 4, 3), (2,)),
]


@pytest.mark.parametrize("a,t", HOUSEHOLDER_ERRORS)
def test_householder_product_errors(a, t):
    same_error(lambda m, a, t: m.linalg.householder_product(a, t), np.zeros(a), np.zeros(t))


def test_householder_product_dtype_errors():
    same_error(lambda m, a, t: m.linalg.householder_product(a, t), np.zeros((4, 3), np.float32), np.zeros(2))
    same_error(lambda m, a, t: m.linalg.householder_product(a, t), np.zeros((4, 3), np.int64),
               np.zeros(2, np.int64))
    same_error(lambda m, a, t: m.linalg.householder_product(a, t), np.zeros((4, 3), np.float16),
               np.zeros(2, np.float16))


ORMQR_ERRORS = [
    ((4,), (2,), (4, 2), True), ((4, 3), (3,), (4,), True), ((4, 3), (1, 3), (4, 2), True),
    ((2, 4, 3), (3, 3), (2, 4, 2), True), ((2, 4, 3), (2, 3), (3, 4, 2), True), ((2, 4, 3), (2, 3), (4, 2), True),
    ((4, 3), (2,), (4, 2), True), ((4, 3), (4,), (4, 2), True), ((4, 3), (2,), (3, 2), True),
    ((4, 3), (2,), (2, 4), False), ((4, 3), (2,), (5, 4), False),
]


@pytest.mark.parametrize("a,t,c,left", ORMQR_ERRORS)
def test_ormqr_errors(a, t, c, left):
    same_error(lambda m, a, t, c: m.ormqr(a, t, c, left=left), np.zeros(a), np.zeros(t), np.zeros(c))


def test_ormqr_dtype_errors():
    z = np.zeros
    same_error(lambda m, a, t, c: m.ormqr(a, t, c), z((4, 3), np.float32), z(3), z((4, 2), np.float32))
    same_error(lambda m, a, t, c: m.ormqr(a, t, c), z((4, 3), np.float32), z(3, np.float32), z((4, 2)))
    same_error(lambda m, a, t, c: m.ormqr(a, t, c), z((4, 3), np.int64), z(3, np.int64), z((4, 2), np.int64))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(4, 4), (6, 6), (2, 3, 5, 5), (1, 1), (0, 0), (2, 0, 0)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_ldl_factor_and_solve(shape, dtype, layout):
    a = sym(*shape).astype(dtype)
    same_as_torch(lambda m, a: m.linalg.ldl_factor(a)[0], [a], layout=layout, grad=False, atol=1e-5)
    same_as_torch(lambda m, a: m.linalg.ldl_factor(a, hermitian=True)[1], [a], layout=layout, grad=False)
    same_as_torch(lambda m, a: m.linalg.ldl_factor_ex(a)[2], [a], layout=layout, grad=False)
    n = shape[-1]
    b = RNG.standard_normal(shape[:-1] + (3,)).astype(dtype)

    def solve(m, a, b):
        ld, piv = m.linalg.ldl_factor(a)
        return m.linalg.ldl_solve(ld, piv, b)

    same_as_torch(solve, [a, b], layout=layout, grad=False, atol=1e-4 if dtype == "float32" else 1e-10)
    if n:
        ld, piv, info = C.linalg_ldl_factor_ex(minitorch.tensor(a), hermitian=False, check_errors=False)
        assert not info.numpy().any() and piv.dtype == minitorch.int32
        x = C.linalg_ldl_solve(ld, piv, minitorch.tensor(b)).numpy()
        np.testing.assert_allclose(a @ x, b, atol=1e-3 if dtype == "float32" else 1e-9)
        ld2, piv2 = C.linalg_ldl_factor(minitorch.tensor(a))
        np.testing.assert_array_equal(ld2.numpy(), ld.numpy())


def test_ldl_solve_broadcasts_batches():
    a = sym(4, 4)
    b = RNG.standard_normal((2, 3, 4, 2))
    ld, piv = L.ldl_factor(minitorch.tensor(a))
    x = L.ldl_solve(ld, piv, minitorch.tensor(b)).numpy()
    assert x.shape == (2, 3, 4, 2)
    np.testing.assert_allclose(a @ x, b, atol=1e-10)


def test_ldl_singular():
    z = minitorch.zeros(2, 3, 3, dtype=minitorch.float64)
    ld, piv, info = L.ldl_factor_ex(z)
    assert info.tolist() == [1, 1]
    with pytest.raises(RuntimeError, match="Batch element 0"):
        L.ldl_factor(z)
    with pytest.raises(RuntimeError, match="ldl_factor_ex"):
        L.ldl_factor_ex(z[0], check_errors=True)


def test_ldl_errors():
    a = sym(4, 4)
    ld, piv = L.ldl_factor(minitorch.tensor(a))
    p = piv.numpy()
    same_error(lambda m, a: m.linalg.ldl_factor(a), np.zeros((3, 4)))
    same_error(lambda m, a: m.linalg.ldl_factor(a), np.zeros(3))
    same_error(lambda m, a: m.linalg.ldl_factor(a), np.zeros((3, 3), np.float16))
    same_error(lambda m, a: m.linalg.ldl_factor(a), np.zeros((3, 3), np.int64))
    same_error(lambda m, ld, p, b: m.linalg.ldl_solve(ld, p, b), ld.numpy(), p, np.zeros((3, 2)))
    same_error(lambda m, ld, p, b: m.linalg.ldl_solve(ld, p, b), ld.numpy(), p, np.zeros((4, 2), np.float32))
    same_error(lambda m, ld, p, b: m.linalg.ldl_solve(ld, p, b), ld.numpy(), p[:3], np.zeros((4, 2)))
    same_error(lambda m, ld, p, b: m.linalg.ldl_solve(ld, p, b), ld.numpy(), p, np.zeros(4))
    # pivots LAPACK would read out of bounds are refused
    for bad in ([0, 1, 2, 3], [5, 1, 2, 3], [1, 2, 3, -4], [-1, 2, 3, 4]):
        with pytest.raises(RuntimeError, match="is not a pivot of ldl_factor"):
            L.ldl_solve(ld, minitorch.tensor(bad, dtype=minitorch.int32), minitorch.ones(4, 1, dtype=minitorch.float64))


def test_ldl_no_gradient():
    x = minitorch.tensor(sym(3, 3), requires_grad=True)
    with pytest.raises((RuntimeError, NotImplementedError)):
        L.ldl_factor(x)[0].sum().backward()
