"""The CPU's fast paths for moving elements (issue 21), against NumPy and PyTorch: flip's rows
(a row kept in order is a memcpy, a reversed one a vectorised lane reversal, per element width).

Each path is taken at odd lengths (a vector's tail), on inputs laid out contiguous, transposed and
sliced, empty, at one thread and two, for every dtype it serves."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, to_layout, torch

# every width the row loops move (bool 1, int32/float32 4, int64/float64/complex64 8,
# complex128 16) and the narrow dtypes computed wide
DTYPES = ("bool", "uint8", "int8", "int16", "float16", "int32", "float32", "int64", "float64",
          "complex64", "complex128")


def sample(rng, shape, dtype):
    """Distinct values of dtype (in range for the narrow integers), bools of both values."""
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    a = rng.standard_normal(shape) * 60
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def exact(fn, ref, a, layout="contiguous"):
    """fn(minitorch, x) on a laid out as asked equals ref(a) bit for bit, in value, shape and
    dtype (a move computes nothing: complex parts and NaN payloads too), and PyTorch's fn(torch,
    x) where it is installed; the input is left as it was. Returns minitorch's result."""
    x = to_layout(a, layout)
    before = as_numpy(x)
    out = fn(minitorch, x)
    want = np.ascontiguousarray(ref(a))
    got = np.ascontiguousarray(as_numpy(out))
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    np.testing.assert_array_equal(np.ascontiguousarray(as_numpy(x)).view(np.uint8), np.ascontiguousarray(before).view(np.uint8))
    if torch is not None:
        t_out = fn(torch, torch.from_numpy(np.ascontiguousarray(a)))
        np.testing.assert_array_equal(got, t_out.numpy())
    return out


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(request.param)
    yield request.param
    minitorch.set_num_threads(before)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 7, 33, 129, 40001])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_flip_rows_reversed_and_kept(threads, dtype, n, layout):
    """A long row reversed (the last dim flipped, alone or with the others: one merged run), and
    rows kept in order (only the first dim flipped)."""
    rng = np.random.default_rng(n)
    a = sample(rng, (3, n), dtype)
    for dims in ([1], [0, 1], [0], [-1, 0]):
        out = exact(lambda m, x: m.flip(x, dims), lambda x: np.flip(x, dims), a, layout)
        assert out.is_contiguous()
    exact(lambda m, x: m.flip(x, [0]), lambda x: np.flip(x, 0), a[0], "sliced")
