"""Elementwise ops with an operand that steps through the inner dims in the other order (x + y.t(),
a permuted input, a strided one): csrc/cpu/iter.c walks such loops in tiles of 16 rows and copies
each transposed input's tile into a contiguous buffer (copy.c's vector tiles) before the loop runs.

The result must equal the same op on contiguous copies of the operands (the untiled loop), bit for
bit, for every dtype class, across tile edges, with broadcast, outer dims, strided sources, in
place, overlapping, through out= and casts, at 1 and 2 threads; and NumPy's or PyTorch's values."""
import numpy as np
import pytest

import minitorch
from helpers import torch

rng = np.random.default_rng(2121)
DTYPES = [minitorch.bool, minitorch.uint8, minitorch.int8, minitorch.int16, minitorch.int32, minitorch.int64,
          minitorch.float16, minitorch.bfloat16, minitorch.float32, minitorch.float64, minitorch.complex64,
          minitorch.complex128]
# the iterator's two inner dims (n1, n0) after the transpose: across the 16-row tiles and the
# buffer's lengths (128 elements of 4 bytes, 32 of 16), and shorter than a tile either way
SHAPES = [(16, 16), (17, 33), (2, 40), (40, 2), (3, 300), (300, 3), (129, 257), (1, 50), (50, 1)]


def sample(shape, dtype):
    """Values of dtype (small integers for the integer dtypes, so no op overflows)."""
    a = rng.standard_normal(shape) * 4
    if dtype == minitorch.bool:
        return minitorch.tensor(a > 0)
    t = minitorch.tensor(a.round() if not (dtype.is_floating_point or dtype.is_complex) else a)
    if dtype.is_complex:
        t = minitorch.complex(t, minitorch.tensor(rng.standard_normal(shape)))
    return t.to(dtype)


def same(got, want):
    """Bit for bit (NaN where NaN), with shape, dtype and strides of the result compared too."""
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.contiguous(), want.contiguous()
    assert bool(((g == w) | ((g != g) & (w != w))).all())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_binary_with_a_transposed_operand(dtype, shape, threads):
    x, y = sample(shape, dtype), sample(shape[::-1], dtype)
    op = minitorch.logical_xor if dtype == minitorch.bool else minitorch.add
    same(op(x, y.t()), op(x, y.t().contiguous()))
    same(op(y.t(), x), op(y.t().contiguous(), x))
    if dtype != minitorch.bool:
        same(x * y.t(), x * y.t().contiguous())


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.int64, minitorch.float16])
def test_against_numpy(dtype, threads):
    x, y = sample((70, 90), dtype), sample((90, 70), dtype)
    np.testing.assert_array_equal((x + y.t()).numpy(), x.numpy() + y.numpy().T)
    np.testing.assert_array_equal((x - y.t()).numpy(), x.numpy() - y.numpy().T)


@pytest.mark.skipif(torch is None, reason="PyTorch is not installed")
@pytest.mark.parametrize("shape", [(256, 1024), (33, 65)])
def test_against_torch(shape, threads):
    a, b = rng.standard_normal(shape, np.float32), rng.standard_normal(shape[::-1], np.float32)
    got = minitorch.tensor(a) + minitorch.tensor(b).t()
    want = torch.tensor(a) + torch.tensor(b).t()
    assert got.stride() == want.stride()
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    got = minitorch.atan2(minitorch.tensor(a), minitorch.tensor(b).t())
    np.testing.assert_allclose(got.numpy(), torch.atan2(torch.tensor(a), torch.tensor(b).t()).numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.complex64, minitorch.bfloat16])
def test_unary_into_a_contiguous_output(dtype, threads):
    x = sample((45, 70), dtype)
    out = minitorch.empty(70, 45, dtype=dtype)
    minitorch.neg(x.t(), out=out)
    assert out.is_contiguous()
    same(out, -x.t().contiguous())
    out = minitorch.empty(70, 45, dtype=dtype)
    minitorch.exp(x.t(), out=out)
    same(out, minitorch.exp(x.t().contiguous()))


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64, minitorch.int32])
def test_three_inputs_of_three_layouts(dtype, threads):
    """Every input transposed, and each buffered: where and addcmul with three tiled inputs."""
    c = sample((37, 50), minitorch.bool)
    x, y, z = sample((50, 37), dtype), sample((50, 37), dtype), sample((37, 50), dtype)
    same(minitorch.where(c.t(), x, y), minitorch.where(c.t().contiguous(), x, y))
    same(minitorch.where(c, x.t(), z), minitorch.where(c, x.t().contiguous(), z))
    same(minitorch.addcmul(z, x.t(), y.t(), value=2), minitorch.addcmul(z, x.t().contiguous(), y.t().contiguous(),
                                                                         value=2))


@pytest.mark.parametrize("perm", [(0, 2, 1), (2, 1, 0), (1, 2, 0), (2, 0, 1)])
def test_permuted_with_outer_dims(perm, threads):
    x = sample((5, 37, 19), minitorch.float32)
    shape = tuple(x.shape[p] for p in perm)
    y = sample(shape, minitorch.float32)
    same(y + x.permute(*perm), y + x.permute(*perm).contiguous())
    same(minitorch.maximum(x.permute(*perm), y), minitorch.maximum(x.permute(*perm).contiguous(), y))


def test_broadcast_and_strided_sources(threads):
    x = sample((4, 1, 40, 30), minitorch.float64)
    y = sample((60, 81), minitorch.float64)
    yt = y[::2, 1::2].t()  # strides (2 rows, 1 column) in elements: transposed, not unit along dim 1
    same(x + yt, x + yt.contiguous())
    same(x[:, :, ::2, :] + yt[::2], x[:, :, ::2, :] + yt[::2].contiguous())
    row = sample((40, 1), minitorch.float64)  # broadcast along dim 0, beside a transposed operand
    same(row + yt + row.t()[:, :1], row + yt.contiguous() + row.t()[:, :1].contiguous())


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.int64, minitorch.complex128])
def test_in_place_and_overlapping(dtype, threads):
    x, y = sample((33, 47), dtype), sample((47, 33), dtype)
    want = x + y.t().contiguous()
    x.add_(y.t())
    same(x, want)
    z = y.clone()
    z.t().mul_(x)  # the output transposed, the input contiguous
    same(z, y * x.t().contiguous())
    s = sample((40, 40), dtype)
    want = s + s.t().contiguous()
    s.add_(s.t())  # self read transposed while written: through a temporary
    same(s, want)


@pytest.mark.parametrize("dtype", [minitorch.float64, minitorch.int32, minitorch.float16, minitorch.bool])
def test_casting_copies(dtype, threads):
    """copy_ and to() between dtypes take the cast loop, tiled as any other."""
    x = sample((70, 90), minitorch.float32)
    out = minitorch.empty(90, 70, dtype=dtype)
    out.copy_(x.t())
    same(out, x.t().contiguous().to(dtype))
    same(x.t().to(dtype).contiguous(), x.t().contiguous().to(dtype))
