"""Issue 21: the 2-norm of float32 sums its squares by reduce.c's float cascade (as sum does) and
again in float64 where float's range may not hold the sum (overflow, underflow, NaN). Against
NumPy in float64 and PyTorch, at 1 and 2 threads: lengths around the cascade's blocks and its
zero-padded tail, layouts, squares that overflow or underflow float, NaN, infinities, zeros,
negative zero and empty rows, and the error no worse than PyTorch's."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, check, check_grad

torch = pytest.importorskip("torch")

TOL = dict(atol=1e-6, rtol=1e-5)
# around the cascade's block (64 floats), its whole vectors (16) and its padded tail
LENGTHS = (1, 3, 15, 16, 17, 31, 33, 63, 64, 65, 100, 127, 129, 1000, 4097)


def norm64(a, axis=None):
    """The 2-norm in float64 (NumPy's norm of a float32 array squares in float32)."""
    return np.sqrt(np.sum(np.square(a.astype(np.float64)), axis=axis))


@pytest.mark.parametrize("n", LENGTHS)
def test_rows_of_every_length(threads, n):
    a = np.random.default_rng(n).standard_normal((5, n)).astype(np.float32)
    for layout in LAYOUTS:
        check(lambda m, x: x.norm(dim=-1), lambda x: norm64(x, -1), [a], layout=layout, **TOL)
        check(lambda m, x: x.norm(), lambda x: norm64(x), [a], layout=layout, **TOL)
        check(lambda m, x: m.linalg.vector_norm(x, 2, dim=1, keepdim=True),
              lambda x: norm64(x, 1)[:, None], [a], layout=layout, **TOL)


def test_squares_past_float_range_nan_inf_and_zeros(threads):
    rows = {
        "overflow": [1e20, -1e20, 3.0],       # squares past FLT_MAX, the norm within range
        "sum overflows": [1e19] * 40,         # each square fits, their sum does not
        "underflow": [1e-30, -2e-30, 3e-25],  # squares below float's smallest
        "subnormal": [1e-40, 3e-41],
        "nan": [1.0, np.nan, 2.0],
        "inf": [1.0, -np.inf, 2.0],
        "zeros": [0.0, 0.0, 0.0],
        "negative zeros": [-0.0, -0.0, -0.0],
    }
    sub_ulp = float(np.spacing(np.float32(0)))  # a subnormal float32 result's own rounding
    for name, row in rows.items():
        for length in (len(row), 70):  # alone, and in a row long enough for whole blocks
            a = np.resize(np.array(row, np.float32), length)[None, :]
            got = as_numpy(minitorch.tensor(a).norm(dim=1))
            np.testing.assert_allclose(got, norm64(a, 1), rtol=1e-6, atol=sub_ulp, err_msg=name)
            assert not np.signbit(got).any(), name
            np.testing.assert_allclose(as_numpy(minitorch.tensor(a).norm()), norm64(a), rtol=1e-6, atol=sub_ulp,
                                       err_msg=name)


def test_empty(threads):
    check(lambda m, x: x.norm(dim=1), lambda x: np.zeros(3), [np.zeros((3, 0), np.float32)])
    check(lambda m, x: x.norm(), lambda x: np.float64(0), [np.zeros((0, 4), np.float32)])


@pytest.mark.parametrize("shape", [(4, 1 << 20), (64, 100003), (1 << 22,)])
def test_as_accurate_as_pytorch(threads, shape):
    a = (np.random.default_rng(0).standard_normal(shape) + 0.25).astype(np.float32)
    ref = norm64(a, -1)
    ours = np.abs(as_numpy(minitorch.tensor(a).norm(dim=-1)) - ref).max()
    theirs = np.abs(torch.tensor(a).norm(dim=-1).double().numpy() - ref).max()
    ulp = np.spacing(np.abs(ref).astype(np.float32)).max()
    assert ours <= 2 * theirs + ulp, f"error {ours:.3g}, PyTorch's {theirs:.3g} (ulp {ulp:.3g})"


def test_gradients(threads):
    a = np.random.default_rng(1).standard_normal((3, 70)).astype(np.float32)
    check_grad(lambda m, x: x.norm(dim=1), [a])
