"""The elementwise loops whose operands are each contiguous or one number (stride 0: a Python
number, a 0-dim tensor, a broadcast row or column), one vectorised loop per pattern
(csrc/cpu/elementwise.c's EW_PATTERN): every pattern of binary and ternary rows against float64
NumPy and PyTorch, integer rows and the zero-divisor flag, inner loops of 1 element and across the
vector width; and clamp by Python numbers, which runs as the row's scalars (clamp_min, clamp_max,
hardtanh's row): values, signed zeros and NaN as PyTorch's, dtypes, in place, out=, gradients."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, check, check_grad, torch

rng = np.random.default_rng(2121)
F32 = np.float32


def arrays(*shapes, dtype=F32):
    out = []
    for s in shapes:
        a = rng.standard_normal(s) * 3
        out.append(a.astype(dtype) if dtype != np.int64 else np.round(a).astype(np.int64))
    return out


# each operand contiguous along the inner dim (n,) or a number along it: (1,) or (m, 1) columns
PATTERNS2 = [((7, 33), (7, 1)), ((7, 1), (7, 33)), ((1, 33), (7, 1)), ((7, 33), (1,)), ((1,), (7, 33))]
PATTERNS3 = [((5, 17), (5, 1), (1,)), ((5, 1), (5, 17), (1,)), ((5, 1), (1,), (5, 17)),
             ((5, 17), (5, 17), (1,)), ((5, 17), (1,), (5, 17)), ((1,), (5, 17), (5, 17)),
             ((5, 1), (1, 17), (5, 1))]

BINARY = {
    "add": (lambda m, x, y: m.add(x, y, alpha=2), lambda x, y: x + 2 * y),
    "sub": (lambda m, x, y: x - y, lambda x, y: x - y),
    "mul": (lambda m, x, y: x * y, lambda x, y: x * y),
    "div": (lambda m, x, y: x / y, lambda x, y: x / y),
    "maximum": (lambda m, x, y: m.maximum(x, y), np.maximum),
    "atan2": (lambda m, x, y: m.atan2(x, y), np.arctan2),
    "gt": (lambda m, x, y: x > y, lambda x, y: x > y),
}
TERNARY = {
    "where": (lambda m, x, y, z: m.where(x > 0, y, z), lambda x, y, z: np.where(x > 0, y, z)),
    "addcmul": (lambda m, x, y, z: m.addcmul(x, y, z, value=0.5), lambda x, y, z: x + 0.5 * y * z),
    "lerp": (lambda m, x, y, z: m.lerp(x, y, z), lambda x, y, z: x + z * (y - x)),
    "clamp": (lambda m, x, y, z: m.clamp(x, y, z), lambda x, y, z: np.minimum(np.maximum(x, y), z)),
}


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("shapes", PATTERNS2)
def test_binary_rows_with_a_number_in_either_place(op, shapes):
    fn, ref = BINARY[op]
    check(fn, ref, arrays(*shapes), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("op", sorted(TERNARY))
@pytest.mark.parametrize("shapes", PATTERNS3)
def test_ternary_rows_with_numbers_in_every_pattern(op, shapes):
    fn, ref = TERNARY[op]
    check(fn, ref, arrays(*shapes), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 63, 64, 65, 1000])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_outer_and_a_python_number_at_every_length(n, layout):
    a, b = arrays((n,), (n,))
    check(lambda m, x, y: m.outer(x, y), np.outer, [a, b], layout=layout)
    check(lambda m, x: x / (x + 3), lambda x: x / (x + 3), [a], layout=layout, atol=1e-6, rtol=1e-6)
    check(lambda m, x: 3 - x, lambda x: 3 - x, [a], layout=layout)


def test_integer_rows_with_numbers_and_the_zero_divisor():
    a, b = arrays((6, 40), (6, 1), dtype=np.int64)
    check(lambda m, x, y: x * y + 7, lambda x, y: x * y + 7, [a, b])
    check(lambda m, x: m.floor_divide(x, 3), lambda x: np.floor_divide(x, 3), [a])
    check(lambda m, x: m.remainder(x, -4), lambda x: np.remainder(x, -4), [a])
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        minitorch.floor_divide(minitorch.tensor(a), 0)


def test_nan_and_inf_through_a_number_operand():
    x = np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan] * 5, F32)
    for v in (0.0, np.inf, -np.inf, np.nan, -2.5):
        check(lambda m, t, v=v: t * v, lambda t, v=v: t * v, [x])
        check(lambda m, t, v=v: m.maximum(t, m.tensor(v)), lambda t, v=v: np.maximum(t, v), [x])


def test_in_place_with_a_number_read_from_self():
    """The number of an inner loop is read once: where it is an element of self, the result is
    the one of self's values before the op (the plan copies an input that overlaps the output;
    PyTorch refuses some of these overlaps and reads others as it writes)."""
    x = np.arange(12, dtype=F32).reshape(3, 4)
    for col in (0, 3):
        t = minitorch.tensor(x)
        t.add_(t[:, col:col + 1])
        np.testing.assert_array_equal(t.numpy(), x + x[:, col:col + 1])
    t = minitorch.tensor(x)
    t.mul_(t[1, 1])
    np.testing.assert_array_equal(t.numpy(), x * x[1, 1])


# ---- clamp by Python numbers ----

CLAMP_X = np.array([-2.0, -0.5, -0.0, 0.0, 0.3, 0.5, 2.0, np.inf, -np.inf, np.nan] * 7, F32)


def same_bits_as_torch(got, want):
    got, want = got.numpy(), want.numpy()
    assert got.dtype == want.dtype
    nan = np.isnan(want) if want.dtype.kind == "f" else np.zeros(want.shape, bool)
    np.testing.assert_array_equal(np.isnan(got) if got.dtype.kind == "f" else nan, nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint8), want[~nan].view(np.uint8))


BOUNDS = [(-0.5, 0.5), (0.0, 1.0), (-1.0, -0.0), (0.0, 0.0), (1.0, -1.0), (None, 0.0), (0.0, None),
          (np.nan, 1.0), (-1.0, np.nan), (-np.inf, np.inf), (2, 3)]


@pytest.mark.parametrize("lo,hi", BOUNDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_clamp_by_numbers_bit_for_bit_as_pytorch(lo, hi, layout):
    if torch is None:
        pytest.skip("needs PyTorch")
    from helpers import to_layout
    got = minitorch.clamp(to_layout(CLAMP_X, layout), lo, hi)
    want = torch.clamp(torch.tensor(CLAMP_X), lo, hi)
    same_bits_as_torch(got, want)  # -0.0 kept at a bound of 0.0, as PyTorch's clamp of numbers
    lo64, hi64 = -np.inf if lo is None else lo, np.inf if hi is None else hi
    ref = np.minimum(np.maximum(CLAMP_X.astype(np.float64), lo64), hi64)  # NaN from any side
    np.testing.assert_array_equal(got.numpy(), ref.astype(F32))


@pytest.mark.parametrize("dtype,lo,hi", [(np.int64, -2, 3), (np.int32, 0, None), (np.int64, 0.5, 2.5),
                                         (np.float64, -0.25, 0.75), (np.int32, None, -1)])
def test_clamp_by_numbers_dtypes(dtype, lo, hi):
    x = np.array([-7, -2, 0, 1, 2, 5, 9], dtype)
    check(lambda m, t: m.clamp(t, lo, hi), lambda t: np.clip(t, lo, hi), [x])


def test_clamp_by_numbers_in_place_out_and_a_bool_is_refused():
    x = np.linspace(-2, 2, 33).astype(F32)
    t = minitorch.tensor(x)
    r = t.clamp_(-1, 1)
    assert r is t
    np.testing.assert_array_equal(t.numpy(), np.clip(x, -1, 1))
    out = minitorch.empty(33)
    minitorch.clamp(minitorch.tensor(x), min=0.5, out=out)
    np.testing.assert_array_equal(out.numpy(), np.maximum(x, F32(0.5)))
    i = minitorch.tensor(np.arange(5))
    with pytest.raises(RuntimeError):
        i.clamp_(0.5, 1.5)  # a float result cannot be written into int64 self, as PyTorch refuses
    with pytest.raises(NotImplementedError):
        minitorch.tensor([True, False]).clamp(True, True)


@pytest.mark.parametrize("lo,hi", [(-0.5, 0.5), (None, 0.1), (-0.1, None)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_clamp_by_numbers_gradient(lo, hi, layout):
    x = (rng.standard_normal((4, 9)) * 2).astype(np.float64)
    check_grad(lambda m, t: m.clamp(t, lo, hi), [x], layout=layout)
