"""rand, randn, uniform_ and normal_ with a complex dtype (a Fourier neural operator's weights are
torch.rand(..., dtype=torch.cfloat)): the draw of the real view (*, 2), both parts from one stream
in order, as PyTorch's, so one seed gives PyTorch's numbers; normal's std divided by sqrt(2) per
part, so that randn's complex values have E|z|^2 = 1."""
import numpy as np
import pytest

import minitorch
from helpers import torch


def test_rand_complex_is_the_real_draw_pairwise():
    minitorch.manual_seed(3)
    z = minitorch.rand(4, 3, dtype=minitorch.cfloat)
    minitorch.manual_seed(3)
    r = minitorch.rand(4, 3, 2)
    assert z.dtype == minitorch.complex64 and tuple(z.shape) == (4, 3)
    np.testing.assert_array_equal(minitorch.view_as_real(z).numpy(), r.numpy())


def test_randn_complex_has_unit_variance_and_halved_parts():
    minitorch.manual_seed(5)
    z = minitorch.randn(20000, dtype=minitorch.cdouble)
    minitorch.manual_seed(5)
    r = minitorch.randn(20000, 2, dtype=minitorch.float64)
    np.testing.assert_allclose(minitorch.view_as_real(z).numpy(), r.numpy() / np.sqrt(2), rtol=1e-15)
    zz = z.numpy()
    assert abs(np.mean(np.abs(zz) ** 2) - 1) < 0.05 and abs(zz.mean()) < 0.05


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_in_place_fills_of_a_complex_view(dtype):
    base = minitorch.zeros(3, 4, dtype=getattr(minitorch, dtype))
    view = base[:, ::2]  # strided: only these elements are drawn
    v = base._version
    assert view.uniform_(-1, 2) is view and base._version == v + 1
    parts = minitorch.view_as_real(view).numpy()
    assert ((parts >= -1) & (parts < 2)).all()
    assert not base[:, 1::2].numpy().any()
    view.normal_(3.0, 0.5)
    assert np.abs(view.numpy().real - 3).max() < 5 and np.abs(view.numpy().imag - 3).max() < 5


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("call", [
    lambda lib: lib.rand(5, dtype=lib.cfloat),
    lambda lib: lib.randn(2, 3, dtype=lib.cdouble),
    lambda lib: lib.randn(4, dtype=lib.cfloat, generator=lib.Generator().manual_seed(11)),
    lambda lib: lib.empty(3, dtype=lib.cfloat).normal_(1, 2),
    lambda lib: lib.empty(3, dtype=lib.cdouble).uniform_(-1, 2),
    lambda lib: lib.randn_like(lib.zeros(2, 2, dtype=lib.cfloat)),
    lambda lib: lib.rand_like(lib.zeros(3, dtype=lib.cdouble)),
])
def test_same_seed_same_numbers_as_torch(call):
    minitorch.manual_seed(0)
    torch.manual_seed(0)
    ours, theirs = call(minitorch), call(torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_complex_randn_leaf_and_errors():
    z = minitorch.randn(2, dtype=minitorch.cfloat, requires_grad=True)
    assert z.requires_grad and z.is_leaf
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        minitorch.empty(2, dtype=minitorch.cfloat).normal_(0, -1)
