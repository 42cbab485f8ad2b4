"""Complex reductions beyond sum/mean against PyTorch and NumPy (complex128
reference): cumsum of complex tensors along each dim with its gradient (PyTorch's conjugate
Wirtinger convention), sum/mean/cumsum with a complex dtype= (real inputs cast first), on
non-contiguous, empty and NaN inputs; PyTorch's errors."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, complex_sample, same_as_torch_complex, same_error, to_layout, torch

rng = np.random.default_rng(1920)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1, -1, -3])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_cumsum(dtype, dim, layout):
    z = complex_sample(rng, (2, 3, 4), dtype)
    got = as_numpy(to_layout(z, layout).cumsum(dim))
    np.testing.assert_allclose(got, np.cumsum(z.astype(np.complex128), axis=dim), rtol=1e-5, atol=1e-5)
    same_as_torch_complex(lambda m, x: m.cumsum(x, dim), [z], layout=layout, atol=1e-5)


def test_cumsum_nan_empty_and_zero_dim():
    z = complex_sample(rng, (5,))
    z[2] = complex(np.nan, 1.0)
    got = as_numpy(minitorch.tensor(z).cumsum(0))
    np.testing.assert_array_equal(np.isnan(got.real), [False, False, True, True, True])
    np.testing.assert_allclose(got.imag, np.cumsum(z.imag))
    assert minitorch.zeros(0, 3, dtype=minitorch.cfloat).cumsum(1).shape == (0, 3)
    assert minitorch.tensor(1 + 2j).cumsum(0).item() == 1 + 2j
    same_error(lambda m, x: m.cumsum(x, 2), complex_sample(rng, (2, 2)))


@pytest.mark.parametrize("op", ["sum", "mean"])
def test_reductions_with_complex_dtype(op):
    r = rng.standard_normal((3, 4))
    for dtype in ("complex64", "complex128"):
        got = getattr(minitorch.tensor(r), op)(1, dtype=getattr(minitorch, dtype))
        assert str(got.dtype) == f"minitorch.{dtype}"
        np.testing.assert_allclose(as_numpy(got), getattr(np, op)(r, axis=1).astype(dtype), rtol=1e-6)
        if torch is not None:
            want = getattr(torch.tensor(r), op)(1, dtype=getattr(torch, dtype))
            np.testing.assert_allclose(as_numpy(got), want.numpy(), rtol=1e-6)
    z = complex_sample(rng, (3, 4), "complex64")
    got = getattr(minitorch.tensor(z), op)(dtype=minitorch.complex128)
    assert got.dtype == minitorch.complex128
    np.testing.assert_allclose(got.item(), getattr(np, op)(z.astype(np.complex128)), rtol=1e-6)


def test_cumsum_with_complex_dtype():
    r = rng.standard_normal((2, 3))
    got = minitorch.tensor(r).cumsum(1, dtype=minitorch.complex64)
    assert got.dtype == minitorch.complex64
    np.testing.assert_allclose(as_numpy(got), np.cumsum(r, 1).astype(np.complex64), rtol=1e-6)
    # the gradient of a real input through the cast is the real part of the complex one
    x = minitorch.tensor(r, requires_grad=True)
    minitorch.view_as_real(x.cumsum(0, dtype=minitorch.complex128)).sum().backward()
    np.testing.assert_allclose(as_numpy(x.grad), [[2.0] * 3, [1.0] * 3])
