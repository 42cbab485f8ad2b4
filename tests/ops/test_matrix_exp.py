"""linalg.matrix_exp / matrix_exp (scaling and squaring around a Pade [13/13] approximant) and
nn.utils.parametrizations.orthogonal on it against PyTorch: values across norms (no squaring to
many), batches, non-contiguous inputs, float32 and float64, empty and 1x1 matrices, NaN,
gradients, PyTorch's messages."""
import numpy as np
import pytest

import minitorch
from helpers import same_as_torch

torch = pytest.importorskip("torch")
rng = np.random.default_rng(3)


@pytest.mark.parametrize("scale", [1e-3, 0.3, 2.0, 10.0, 60.0])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (1, 1), (2, 1, 1), (7, 7)])
def test_values_and_gradients(scale, shape):
    a = rng.standard_normal(shape) * scale / shape[-1]
    tol = dict(atol=1e-10, rtol=1e-9)
    same_as_torch(lambda lib, x: lib.linalg.matrix_exp(x), [a], **tol)
    same_as_torch(lambda lib, x: lib.matrix_exp(x), [a], layout="transposed", **tol)
    same_as_torch(lambda lib, x: x.matrix_exp(), [a], **tol)


def test_float32_and_layouts():
    a = rng.standard_normal((3, 5, 5)).astype("float32")
    same_as_torch(lambda lib, x: lib.linalg.matrix_exp(x), [a], atol=1e-5, rtol=1e-4)
    same_as_torch(lambda lib, x: lib.linalg.matrix_exp(x), [a], layout="transposed", atol=1e-5, rtol=1e-4)


def test_known_values():
    # exp of a rotation generator is the rotation; of a nilpotent matrix, I + N
    t = 0.7
    r = minitorch.linalg.matrix_exp(minitorch.tensor([[0.0, -t], [t, 0.0]], dtype=minitorch.float64))
    np.testing.assert_allclose(r.numpy(), [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]], atol=1e-15)
    n = minitorch.linalg.matrix_exp(minitorch.tensor([[0.0, 3.0], [0.0, 0.0]]))
    np.testing.assert_allclose(n.numpy(), [[1.0, 3.0], [0.0, 1.0]], atol=1e-6)


def test_edge_cases_and_errors():
    same_as_torch(lambda lib, x: lib.linalg.matrix_exp(x), [np.zeros((0, 0))])
    same_as_torch(lambda lib, x: lib.linalg.matrix_exp(x), [np.zeros((2, 0, 0))])
    nan = np.eye(3)
    nan[1, 2] = np.nan
    got = minitorch.linalg.matrix_exp(minitorch.tensor(nan)).numpy()
    assert np.isnan(got).any()
    for a, msg in [(minitorch.ones(3), "The input tensor A must have at least 2 dimensions"),
                   (minitorch.ones(2, 3), "A must be batches of square matrices, but they are 2 by 3 matrices"),
                   (minitorch.ones(2, 2, dtype=minitorch.int64), "Expected a floating point or complex tensor as input. Got Long")]:
        with pytest.raises(RuntimeError, match="linalg.matrix_exp: " + msg):
            minitorch.linalg.matrix_exp(a)


@pytest.mark.parametrize("orthogonal_map", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_parametrization_as_torch(orthogonal_map, shape):
    results = []
    for lib in (minitorch, torch):
        lib.manual_seed(0)
        lin = lib.nn.Linear(shape[1], shape[0]).double()
        with lib.no_grad():
            lin.weight.copy_(lib.tensor(np.arange(np.prod(shape)).reshape(shape) % 7 / 7.0 - 0.4))
        lib.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=orthogonal_map)
        q = lin.weight
        x = lib.tensor(np.linspace(-1, 1, 2 * shape[1]).reshape(2, shape[1]))
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            lin(x).pow(2).sum().backward()
            opt.step()
        results.append((q.detach().numpy(), lin.weight.detach().numpy(),
                        lin.parametrizations.weight.original.detach().numpy()))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, atol=1e-9, rtol=1e-8)
    w = results[0][1]
    k = min(shape)
    np.testing.assert_allclose((w.T @ w if shape[0] >= shape[1] else w @ w.T), np.eye(k), atol=1e-12)


def test_orthogonal_errors():
    P = minitorch.nn.utils.parametrizations
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1 dimensions."):
        P.orthogonal(minitorch.nn.Linear(3, 3), "bias")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: qr'):
        P.orthogonal(minitorch.nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        P.orthogonal(minitorch.nn.Linear(3, 3), "w")


def test_the_op_behind_the_functions():
    a = rng.standard_normal((2, 3, 3))
    got = minitorch._C.linalg_matrix_exp(minitorch.tensor(a)).numpy()
    np.testing.assert_allclose(got, torch.linalg.matrix_exp(torch.tensor(a)).numpy(), rtol=1e-12, atol=1e-14)
