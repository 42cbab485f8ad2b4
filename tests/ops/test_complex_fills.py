"""Python complex numbers as fill values against PyTorch: full infers the
complex dtype of the default float as PyTorch does (full((2,), 1+2j) is complex64), full_like,
new_full, fill_ and masked_fill keep both parts, and a complex value with an imaginary part into a
real dtype is PyTorch's error; add/sub's complex alpha as PyTorch refuses it for real tensors."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, same_error, torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def same(got, want):
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], f"{got.dtype} != {want.dtype}"
    np.testing.assert_array_equal(as_numpy(got), want.numpy())


def test_full_infers_complex():
    t = minitorch.full((2,), 1 + 2j)
    assert t.dtype == minitorch.complex64 and t.tolist() == [1 + 2j, 1 + 2j]
    assert minitorch.full((1,), 3 + 0j).dtype == minitorch.complex64  # complex even with no imaginary part
    assert minitorch.full((2,), -1j, dtype=minitorch.complex128).tolist() == [-1j, -1j]
    assert minitorch.full((2,), 2 + 0j, dtype=minitorch.float32).tolist() == [2.0, 2.0]
    old = minitorch.get_default_dtype()
    minitorch.set_default_dtype(minitorch.float64)
    try:
        assert minitorch.full((1,), 1j).dtype == minitorch.complex128
    finally:
        minitorch.set_default_dtype(old)
    # a 0-dim complex tensor as the value, as PyTorch's Scalar takes it
    assert minitorch.full((2,), minitorch.tensor(1 - 1j)).tolist() == [1 - 1j, 1 - 1j]


@needs_torch
@pytest.mark.parametrize("value", [1 + 2j, -0.5j, 3 + 0j, complex(float("nan"), 1)])
def test_fills_as_torch(value):
    same(minitorch.full((2, 3), value), torch.full((2, 3), value))
    z = np.zeros((2, 3), np.complex64)
    same(minitorch.full_like(minitorch.tensor(z), value), torch.full_like(torch.tensor(z), value))
    same(minitorch.tensor(z).new_full((3,), value), torch.tensor(z).new_full((3,), value))
    same(minitorch.tensor(z.astype(np.complex128)).fill_(value), torch.tensor(z.astype(np.complex128)).fill_(value))
    same(minitorch.tensor(z)[:, ::2].fill_(minitorch.tensor(value)), torch.tensor(z)[:, ::2].fill_(torch.tensor(value)))
    mask = np.array([[True, False, True], [False, False, True]])
    same(minitorch.tensor(z).masked_fill(minitorch.tensor(mask), value),
         torch.tensor(z).masked_fill(torch.tensor(mask), value))
    m, t = minitorch.tensor(z.astype(np.complex128)), torch.tensor(z.astype(np.complex128))
    m.masked_fill_(minitorch.tensor(mask[1]), value)  # the mask broadcast
    t.masked_fill_(torch.tensor(mask[1]), value)
    same(m, t)


def test_masked_fill_gradient():
    """masked_fill's gradient for a complex self: g where the mask is off, 0 where it filled."""
    z = np.array([1 + 1j, 2 - 1j, -3j])
    x = minitorch.tensor(z, requires_grad=True)
    y = x.masked_fill(minitorch.tensor([False, True, False]), 5j)
    minitorch.view_as_real(y * (2 - 1j)).sum().backward()
    np.testing.assert_allclose(as_numpy(x.grad), [1 + 3j, 0, 1 + 3j])
    if torch is not None:
        t = torch.tensor(z, requires_grad=True)
        torch.view_as_real(t.masked_fill(torch.tensor([False, True, False]), 5j) * (2 - 1j)).sum().backward()
        np.testing.assert_allclose(as_numpy(x.grad), t.grad.numpy())


def test_errors_as_torch():
    real = np.zeros(2, np.float32)
    same_error(lambda m, x: x.fill_(1 + 2j), real)
    same_error(lambda m, x: x.fill_(1 + 2j), real.astype(np.float64))
    same_error(lambda m, x: x.fill_(1j), real.astype(np.int64))
    same_error(lambda m, x: m.full((2,), 1 + 2j, dtype=m.float32), real)
    same_error(lambda m, x: m.full_like(x, 1j), real)
    same_error(lambda m, x: x.new_full((2,), 1j), real)
    same_error(lambda m, x: x.masked_fill(x > 0, 2j), real)
    same_error(lambda m, x: m.add(x, x, alpha=1j), real)
    same_error(lambda m, x: m.sub(x, x, alpha=m.tensor(2j)), real)
    # the real part of a complex 0-dim value fills a real tensor when there is no imaginary part
    assert minitorch.zeros(2).fill_(3 + 0j).tolist() == [3.0, 3.0]
    assert minitorch.zeros(2, dtype=minitorch.bool).fill_(1j).tolist() == [True, True]


def test_complex_alpha_with_imaginary_part_refused():
    z = minitorch.tensor([1 + 1j])
    with pytest.raises(NotImplementedError, match="add: a complex alpha"):
        minitorch.add(z, z, alpha=1j)
    assert minitorch.add(z, z, alpha=2 + 0j).tolist() == [3 + 3j]
