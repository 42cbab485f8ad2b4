"""nn.init's trunc_normal_, orthogonal_, eye_, dirac_ and sparse_ against PyTorch: the same values
from the same seed (PyTorch's algorithms, its draws), the distributions' properties, and errors;
the deprecated names without the underscore."""
import math

import numpy as np
import pytest

import minitorch
from helpers import torch

init = minitorch.nn.init
needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def both(fn, shape, seed=0, dtype="float32"):
    """fn(lib, tensor) on an empty tensor of shape in each library, from the same seed."""
    minitorch.manual_seed(seed)
    got = fn(minitorch, minitorch.empty(shape, dtype=getattr(minitorch, dtype)))
    torch.manual_seed(seed)
    want = fn(torch, torch.empty(shape, dtype=getattr(torch, dtype)))
    return got.numpy(), want.numpy()


@needs_torch
@pytest.mark.parametrize("args", [(0.0, 1.0, -2.0, 2.0), (0.5, 0.2, 0.0, 1.0), (0.0, 1.0, 1.5, 3.0),
                                  (0.0, 0.02, -0.04, 0.04), (2.0, 1.0, -1.0, 0.5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trunc_normal_same_draws_as_pytorch(args, dtype):
    got, want = both(lambda m, t: m.nn.init.trunc_normal_(t, *args), (40, 30), seed=5, dtype=dtype)
    np.testing.assert_array_equal(got, want)
    mean, std, a, b = args
    assert got.min() >= a and got.max() <= b


def test_trunc_normal_moments_and_generator():
    g = minitorch.Generator().manual_seed(1)
    t = init.trunc_normal_(minitorch.empty(200000), mean=0.0, std=1.0, a=-1.0, b=1.0, generator=g)
    x = t.numpy()
    assert -1.0 <= x.min() and x.max() <= 1.0
    # the standard normal truncated to [-1, 1]: variance 1 - 2 phi(1) / (2 Phi(1) - 1)
    phi1 = math.exp(-0.5) / math.sqrt(2 * math.pi)
    var = 1 - 2 * phi1 / math.erf(1 / math.sqrt(2))
    assert abs(x.mean()) < 0.01 and abs(x.var() - var) < 0.01
    again = init.trunc_normal_(minitorch.empty(200000), a=-1.0, b=1.0, generator=minitorch.Generator().manual_seed(1))
    np.testing.assert_array_equal(again.numpy(), x)


def test_trunc_normal_warns_far_from_bounds():
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        init.trunc_normal_(minitorch.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)


@needs_torch
@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 4), (6, 2, 3), (2, 3, 2, 2)])
def test_orthogonal_same_as_pytorch(shape):
    got, want = both(lambda m, t: m.nn.init.orthogonal_(t, gain=1.5), shape, seed=2, dtype="float64")
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (7, 2, 2)])
def test_orthogonal_is_orthogonal(shape):
    w = init.orthogonal_(minitorch.empty(shape, dtype=minitorch.float64), gain=2.0).numpy().reshape(shape[0], -1)
    small = w @ w.T if w.shape[0] <= w.shape[1] else w.T @ w
    np.testing.assert_allclose(small, 4.0 * np.eye(small.shape[0]), atol=1e-12)


def test_orthogonal_errors_and_empty():
    with pytest.raises(ValueError, match="Only tensors with 2 or more dimensions are supported"):
        init.orthogonal_(minitorch.empty(3))
    assert init.orthogonal_(minitorch.empty(0, 3)).shape == (0, 3)


@pytest.mark.parametrize("shape", [(3, 5), (4, 2), (3, 3)])
def test_eye_(shape):
    w = minitorch.empty(shape, requires_grad=True)
    out = init.eye_(w)
    assert out is w and w.requires_grad
    np.testing.assert_array_equal(w.detach().numpy(), np.eye(*shape, dtype="float32"))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.eye_(minitorch.empty(2, 2, 2))


@needs_torch
@pytest.mark.parametrize("shape,groups", [((4, 3, 3), 1), ((6, 2, 3, 3), 2), ((3, 5, 2, 4), 1), ((4, 2, 3, 3, 3), 2),
                                          ((6, 4, 1, 2), 3)])
def test_dirac_same_as_pytorch(shape, groups):
    got, want = both(lambda m, t: m.nn.init.dirac_(t, groups), shape)
    np.testing.assert_array_equal(got, want)


def test_dirac_identity_conv_and_errors():
    x = minitorch.randn(2, 3, 5, 5)
    w = init.dirac_(minitorch.empty(3, 3, 3, 3))
    np.testing.assert_allclose(minitorch.nn.functional.conv2d(x, w, padding=1).numpy(), x.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="Only tensors with 3, 4, or 5 dimensions are supported"):
        init.dirac_(minitorch.empty(3, 3))
    with pytest.raises(ValueError, match="dim 0 must be divisible by groups"):
        init.dirac_(minitorch.empty(5, 3, 3), groups=2)


@needs_torch
@pytest.mark.parametrize("sparsity", [0.1, 0.5, 0.9])
def test_sparse_same_as_pytorch(sparsity):
    got, want = both(lambda m, t: m.nn.init.sparse_(t, sparsity, std=0.5), (10, 6), seed=4)
    np.testing.assert_array_equal(got, want)
    assert ((got == 0).sum(0) == math.ceil(sparsity * 10)).all()


def test_sparse_errors():
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
        init.sparse_(minitorch.empty(2, 2, 2), 0.5)


def test_deprecated_names_warn_and_work():
    with pytest.warns(FutureWarning, match=r"`nn.init.eye` is now deprecated in favor of `nn.init.eye_`."):
        w = init.eye(minitorch.empty(2, 2))
    np.testing.assert_array_equal(w.numpy(), np.eye(2))
    for name in ("uniform", "normal", "constant", "dirac", "xavier_uniform", "xavier_normal", "kaiming_uniform",
                 "kaiming_normal", "orthogonal", "sparse"):
        assert getattr(init, name).__name__ == name
