"""Issue 21: float32 fmod and remainder compute fmod in float, q = x / y, t = trunc(q) and
x - t * y by one fma, exact while |q| < 2^23 (elementwise.c's fmod_exact_f32), libm's fmodf
past it. Bit for bit against NumPy's fmod (exact, as libm's) and PyTorch's results, at 1 and 2
threads: quotients at and around 2^23, quotients that round up onto an integer, divisors and
dividends of far apart exponents, subnormals, zeros of either sign, inf, NaN, a zero divisor,
contiguous, broadcast and strided operands, and in place (the output one of the inputs)."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")
f32 = np.float32


def reference(fn, x, y):
    """NumPy's fmod and, for remainder, PyTorch's rule on it (the divisor's sign for a nonzero
    remainder, fmod + y in float; a zero keeps fmod's sign)."""
    with np.errstate(all="ignore"):
        mod = np.fmod(x, y)
        if fn == "remainder":
            mod = np.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod).astype(f32)
    return mod


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    bad = np.flatnonzero(got[~nan].view(np.uint32) != want[~nan].view(np.uint32))
    assert bad.size == 0, f"{bad.size} differ, first {got[~nan][bad[:5]]} != {want[~nan][bad[:5]]}"


def hard_pairs(seed=0):
    rng = np.random.default_rng(seed)
    # far apart exponents: mantissas and exponents drawn apart, both signs
    n = 20000
    x = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-140, 127, n) * rng.choice([-1, 1], n)).astype(f32)
    y = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-140, 127, n) * rng.choice([-1, 1], n)).astype(f32)
    # quotients near 2^23 (the fast path's bound) and near the integers below it
    yy = rng.uniform(0.5, 4, 3000).astype(f32)
    k = np.concatenate([2.0 ** 23 + rng.integers(-3, 4, 1000), rng.integers(1, 1 << 23, 2000)])
    xx = (k * yy).astype(f32)
    near = np.concatenate([xx, np.nextafter(xx, f32(0)), np.nextafter(xx, f32(np.inf))])
    # |x| a hair below |y|: the quotient rounds up to 1
    below = np.nextafter(yy, f32(0))
    special = np.array([0.0, -0.0, 1e-45, -1e-45, 1.17e-38, 3e-39, 1.0, -1.0, 0.3, 3.4e38, -3.4e38,
                        np.inf, -np.inf, np.nan, 8388608.0, 8388607.5, 16777216.0], f32)
    sx, sy = np.repeat(special, special.size), np.tile(special, special.size)
    xs = np.concatenate([x, near, -near, below, -below, sx])
    ys = np.concatenate([y, np.tile(yy, 3), np.tile(-yy, 3), yy, -yy, sy])
    return xs, ys


@pytest.mark.parametrize("fn", ["fmod", "remainder"])
def test_bit_for_bit_against_numpy_and_torch(threads, fn):
    x, y = hard_pairs()
    got = getattr(minitorch, fn)(minitorch.tensor(x), minitorch.tensor(y)).numpy()
    same_bits(got, reference(fn, x, y))
    # PyTorch's own vectorised fmod is exact only while the quotient is small (NaN where x / y
    # overflows): there its bits are NumPy's, and ours
    with np.errstate(all="ignore"):
        small = np.abs(x / y) < 2.0 ** 23
    same_bits(got[small], getattr(torch, fn)(torch.tensor(x[small]), torch.tensor(y[small])).numpy())


@pytest.mark.parametrize("fn", ["fmod", "remainder"])
@pytest.mark.parametrize("n", [1, 255, 257, 70001])
def test_broadcast_strided_and_in_place(threads, fn, n):
    rng = np.random.default_rng(n)
    base = (rng.standard_normal((n, 3)) * 1e3).astype(f32)
    base[::7, 1] = -0.0
    for divisor in (0.3, -2.5, 1e-30, 0.0, -0.0, float("inf"), float("nan")):
        want = reference(fn, base[:, 1], f32(divisor))
        same_bits(getattr(minitorch, fn)(minitorch.tensor(base)[:, 1], divisor).numpy(), want)
        t = minitorch.tensor(np.ascontiguousarray(base[:, 1]))
        getattr(t, fn + "_")(divisor)  # in place: the output is the input
        same_bits(t.numpy(), want)
    # a tensor divisor: strided, broadcast from one element, and the output one of the inputs
    y = (rng.uniform(0.1, 5, n) * rng.choice([-1, 1], n)).astype(f32)
    want = reference(fn, base[:, 0], y)
    same_bits(getattr(minitorch, fn)(minitorch.tensor(base)[:, 0], minitorch.tensor(y)).numpy(), want)
    one = minitorch.tensor(np.array([-0.7], f32))
    same_bits(getattr(minitorch, fn)(minitorch.tensor(base[:, 2].copy()), one).numpy(),
              reference(fn, base[:, 2], f32(-0.7)))
    ty = minitorch.tensor(y)
    out = getattr(minitorch, fn)(minitorch.tensor(base[:, 0].copy()), ty, out=ty)
    same_bits(out.numpy(), want)


def test_negative_zero_and_empty(threads):
    x = np.array([-0.0, 0.0, -3.0, 3.0, -0.6, 0.6], f32)
    for fn in ("fmod", "remainder"):
        for d in (0.3, -0.3, 3.0, -3.0):
            got = getattr(minitorch, fn)(minitorch.tensor(x), d).numpy()
            same_bits(got, reference(fn, x, f32(d)))
            same_bits(got, getattr(torch, fn)(torch.tensor(x), d).numpy())
        assert getattr(minitorch, fn)(minitorch.zeros(0), 2.0).shape == (0,)
