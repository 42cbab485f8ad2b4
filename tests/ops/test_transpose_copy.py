"""Copies whose two inner dims transpose (x.t().contiguous(), a permute's contiguous(), copy_ of
a transposed source), which csrc/cpu/copy.c moves in 16x16 tiles for elements of 2, 4 and 8
bytes (4-byte ones transposed in vectors, the tiles at the edges element by element): equal to
NumPy's, element for element and bit for bit, for every dtype, across tile edges, with outer dims,
strided sources, channels-last layouts and at 1 and 2 threads."""
import numpy as np
import pytest

import minitorch
from helpers import torch

rng = np.random.default_rng(1621)
DTYPES = [np.float32, np.float64, np.int64, np.int32, np.int16, np.float16, np.int8, np.uint8, np.bool_,
          np.complex64]


def sample(shape, dtype):
    a = rng.standard_normal(shape) * 50
    if dtype == np.complex64:
        return (a + 1j * rng.standard_normal(shape)).astype(dtype)
    return (a > 0) if dtype == np.bool_ else a.astype(dtype)


def same(got, want):
    got = got.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(16, 16), (17, 33), (15, 100), (100, 15), (64, 48), (513, 257)])
def test_transpose_contiguous(dtype, shape, threads):
    a = sample(shape, dtype)
    got = minitorch.tensor(a).t().contiguous()
    assert got.is_contiguous()
    same(got, np.ascontiguousarray(a.T))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8])
@pytest.mark.parametrize("perm", [(0, 2, 1), (1, 0, 2), (2, 1, 0), (0, 2, 3, 1), (3, 1, 2, 0), (0, 3, 1, 2)])
def test_permute_contiguous_with_outer_dims(dtype, perm, threads):
    shape = (3, 20, 37, 18)[:len(perm)] if len(perm) == 3 else (3, 20, 37, 18)
    a = sample(shape, dtype)
    same(minitorch.tensor(a).permute(*perm).contiguous(), np.ascontiguousarray(a.transpose(perm)))


def test_strided_and_offset_sources_copy_and_cast(threads):
    a = sample((70, 90), np.float32)
    t = minitorch.tensor(a)
    same(t[3:, 5::2].t().contiguous(), np.ascontiguousarray(a[3:, 5::2].T))  # source not unit: cast loop
    same(t[3:67, 5:85].t().contiguous(), np.ascontiguousarray(a[3:67, 5:85].T))  # offset rows
    same(t.t().double(), a.T.astype(np.float64))  # another dtype: the cast loop (strides kept)
    out = minitorch.empty(90, 70)
    out.copy_(t.t())
    same(out, np.ascontiguousarray(a.T))
    out = minitorch.empty(90, 70, dtype=minitorch.float64)[:, :]
    out.copy_(t.t())
    same(out, a.T.astype(np.float64))


@pytest.mark.parametrize("shape", [(2, 16, 16, 16), (3, 17, 5, 33), (2, 64, 7, 9), (1, 40, 16, 1)])
def test_channels_last_round_trips_keep_every_bit(shape, threads):
    """NCHW -> NHWC -> NCHW of float32 with NaNs (payloads), infinities and -0.0, and of int32"""
    bits = rng.integers(0, 2 ** 32, size=shape, dtype=np.uint64).astype(np.uint32)
    bits.flat[::7] = 0x7FC00001  # a NaN with a payload
    bits.flat[1::11] = 0x80000000  # -0.0
    bits.flat[2::13] = 0xFF800000  # -inf
    for a in (bits.view(np.float32), bits.view(np.int32)):
        cl = minitorch.tensor(a).contiguous(memory_format=minitorch.channels_last)
        assert cl.is_contiguous(memory_format=minitorch.channels_last)
        assert np.array_equal(np.ascontiguousarray(cl.permute(0, 2, 3, 1).numpy()).view(np.uint32),
                              np.ascontiguousarray(a.transpose(0, 2, 3, 1)).view(np.uint32))
        back = cl.contiguous()
        assert back.is_contiguous()
        assert np.array_equal(back.numpy().view(np.uint32), a.view(np.uint32))


def test_in_place_transpose_of_self_is_copied_first():
    a = sample((40, 40), np.float32)
    t = minitorch.tensor(a)
    t.copy_(t.t())
    same(t, np.ascontiguousarray(a.T))


def test_against_pytorch():
    if torch is None:
        pytest.skip("needs PyTorch")
    a = sample((33, 65, 17), np.float32)
    got = minitorch.tensor(a).permute(2, 0, 1).contiguous()
    want = torch.tensor(a).permute(2, 0, 1).contiguous()
    assert tuple(got.stride()) == tuple(want.stride())
    np.testing.assert_array_equal(got.numpy(), want.numpy())
