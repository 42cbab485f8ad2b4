"""The CPU's fast paths for moving elements (issue 21), against NumPy and PyTorch: flip's rows
(a row kept in order is a memcpy, a reversed one a vectorised lane reversal, per element width);
float16 conversions (F16C, through float32 for the other dtypes); strided copies of one dtype
(words moved as they are).

Each path is taken at odd lengths (a vector's tail), on inputs laid out contiguous, transposed and
sliced, empty, at one thread and two, for every dtype it serves."""
import warnings

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


def float16_values(rng, n):
    """float16-relevant float32 values: normals, subnormals of float16, ties of its rounding
    (1 + 2^-11 and its odd neighbour), overflow to infinity (65520), infinities, NaNs, -0.0."""
    special = np.array([0.0, -0.0, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11, 65504, 65519, 65520, -70000,
                        2.0**-24, 2.0**-25, 3 * 2.0**-26, 6e-8, 1e-10, np.inf, -np.inf, np.nan,
                        -np.nan, 0.1, -0.3333], np.float32)
    return np.concatenate([special, (rng.standard_normal(n) * 100).astype(np.float32)])


def as_float16(a):
    with np.errstate(over="ignore"):  # 65520 and up round to infinity, as meant
        return a.astype(np.float16)


def assert_same_bits_or_nan(got, want):
    """Equal, NaN where NaN (a NaN's payload is the hardware's: not compared)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind in "fc":
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan], want[~nan])
        np.testing.assert_array_equal(np.signbit(got[~nan].real), np.signbit(want[~nan].real))
    else:
        np.testing.assert_array_equal(got, want)


REAL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64")


@pytest.mark.parametrize("other", REAL + ("bfloat16",))
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 300, 4099])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_float16_conversions(threads, other, n, layout):
    """float16 to and from each real dtype (F16C where the CPU has it, 8 an instruction, tails
    one at a time), against PyTorch's conversion and NumPy's."""
    if torch is None:
        pytest.skip("needs PyTorch")
    rng = np.random.default_rng(n)
    v = float16_values(rng, n).reshape(1, -1).repeat(2, 0)
    if other not in ("float32", "float64", "bfloat16"):  # integers take values in their range
        v = np.nan_to_num(np.clip(v, -100, 100)).astype(np.float32)
    h = as_float16(v)
    mt_dt, t_dt = getattr(minitorch, other), getattr(torch, other)
    # float16 -> other
    got = to_layout(h, layout).to(mt_dt)
    want = torch.from_numpy(h).to(t_dt)
    if other == "bfloat16":
        got, want = got.float(), want.float()
    assert_same_bits_or_nan(as_numpy(got), want.numpy())
    # other -> float16 (a bfloat16 from float32 values)
    src = torch.from_numpy(v).to(t_dt)
    x = minitorch.from_numpy(v).to(mt_dt)
    if layout == "transposed":
        x = x.t().contiguous().t()
    elif layout == "sliced":
        x = minitorch.stack([x, x], -1)[..., 0]
    got = x.half()
    assert_same_bits_or_nan(as_numpy(got), src.half().numpy())
    if other == "float32":  # NumPy's float32 -> float16 is round to nearest even too
        assert_same_bits_or_nan(as_numpy(got), as_float16(v))


@pytest.mark.parametrize("dtype", DTYPES + ("bfloat16",))
@pytest.mark.parametrize("n", [0, 1, 9, 1000])
def test_strided_copies_of_one_dtype_move_bits(threads, dtype, n):
    """A strided copy of one dtype moves words as they are: a float16's NaN payload and -0.0
    survive, every dtype of every width; a bool's byte is still normalised (0 or 1 out)."""
    rng = np.random.default_rng(n)
    if dtype == "bfloat16":
        a = minitorch.from_numpy(float16_values(rng, n)).bfloat16()
        for view in (a[::2], a.flip(0)[::3], a.expand(3, -1)[:, 1:]):
            np.testing.assert_array_equal(as_numpy(view.contiguous().view(minitorch.int16)),
                                          as_numpy(view.view(minitorch.int16).contiguous()))
        return
    a = sample(rng, (n,), dtype)
    if dtype == "float16":
        a = as_float16(float16_values(rng, n))
        a.view(np.uint16)[:: 5] = 0x7D01  # a signalling NaN with a payload
    exact(lambda m, x: x[::2].contiguous(), lambda x: x[::2], a)
    exact(lambda m, x: x[1::3].clone(), lambda x: x[1::3], a)
    exact(lambda m, x: x.expand(3, -1)[:, ::2].contiguous(), lambda x: np.broadcast_to(x, (3,) + x.shape)[:, ::2], a)
    if dtype == "float16":  # the bits themselves, payloads included (no conversion on the way)
        got = as_numpy(minitorch.from_numpy(a)[::2].contiguous()).view(np.uint16)
        np.testing.assert_array_equal(got, a[::2].view(np.uint16))


@pytest.mark.parametrize("complex_dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("other", REAL + ("float16",))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_conversions_to_and_from_complex(threads, complex_dtype, other, layout):
    """A real tensor to complex (v, 0) and a complex one to real by its real part (PyTorch warns),
    contiguous runs vectorised, at odd lengths, against PyTorch."""
    if torch is None:
        pytest.skip("needs PyTorch")
    rng = np.random.default_rng(3)
    for n in (0, 1, 7, 33, 1001):
        real = as_float16(sample(rng, (2, n), "float32")) if other == "float16" else sample(rng, (2, n), other)
        got = to_layout(real, layout).to(getattr(minitorch, complex_dtype))
        want = torch.from_numpy(np.ascontiguousarray(real)).to(getattr(torch, complex_dtype))
        assert_same_bits_or_nan(as_numpy(got), want.numpy())
        z = sample(rng, (2, n), complex_dtype)
        if other in ("uint8", "int8", "int16", "int32", "int64"):  # real parts in their range
            z = (np.clip(z.real, -100, 100) + 1j * z.imag).astype(complex_dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # both warn that the imaginary parts are dropped
            got = to_layout(z, layout).to(getattr(minitorch, other))
            want = torch.from_numpy(np.ascontiguousarray(z)).to(getattr(torch, other))
        assert_same_bits_or_nan(as_numpy(got), want.numpy())


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex128", "float16"])
@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (5, 3), (257, 129), (64, 1)])
def test_stack_and_cat_of_short_chunks(threads, dtype, shape):
    """Chunks under 64 bytes on average (stack along the last dim, cat of thin slices) are copied
    input by input into strided slices of the result; longer ones row by row."""
    rng = np.random.default_rng(shape[0])
    arrays = [sample(rng, shape, dtype) for _ in range(3)]
    for dim in (-1, 0, 1):
        got = minitorch.stack([minitorch.from_numpy(a) for a in arrays], dim)
        np.testing.assert_array_equal(as_numpy(got), np.stack(arrays, dim))
    thin = [a[:, :k] for a, k in zip(arrays, (1, 2, 0))]
    got = minitorch.cat([minitorch.tensor(a) for a in thin], 1)
    np.testing.assert_array_equal(as_numpy(got), np.concatenate(thin, 1))
    got = minitorch.cat([to_layout(a, "transposed") for a in arrays], -1)  # not contiguous
    np.testing.assert_array_equal(as_numpy(got), np.concatenate(arrays, -1))
    if torch is not None:
        want = torch.stack([torch.from_numpy(a) for a in arrays], -1)
        np.testing.assert_array_equal(as_numpy(minitorch.stack([minitorch.from_numpy(a) for a in arrays], -1)),
                                      want.numpy())


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_complex_to_bool_reads_both_parts(dtype, layout):
    """A complex value is true where either part is nonzero (NaN included), as PyTorch's, with
    no warning (nothing is discarded)."""
    z = np.array([[0, 1j, -0.0 - 0j, 2 + 0j, complex("nan"), complex(0, float("nan")), 1e-30j] * 5] * 2, dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = to_layout(z, layout).bool()
        into = minitorch.zeros(z.shape, dtype=minitorch.bool).copy_(to_layout(z, layout))
    want = (z.real != 0) | (z.imag != 0)
    np.testing.assert_array_equal(as_numpy(got), want)
    np.testing.assert_array_equal(as_numpy(into), want)
    if torch is not None:
        np.testing.assert_array_equal(as_numpy(got), torch.from_numpy(z).bool().numpy())
