"""The float32 loops that replace the table's for fmod, remainder and where, and the branchless
maximum/minimum that clamp builds on: bit for bit against NumPy (fmod is exact, so every exact
method agrees; remainder is core/math.h's sign rule on it, as before these loops) over the values that take each path of the fast fmod (quotients near integers,
beyond 2^29, zeros of either sign, subnormals, inf, NaN), broadcast and strided operands, and
block edges (256 elements a block)."""
import numpy as np
import pytest

import minitorch


def tricky_pairs(seed=0):
    rng = np.random.default_rng(seed)
    f = np.float32
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.3, -0.3, 1e-45, -1e-45, 1e-38, 3e38, -3e38,
                        np.inf, -np.inf, np.nan, 7.0, 2.5, 1e10, -1e10], f)
    x = np.concatenate([rng.standard_normal(3000).astype(f) * 10, special.repeat(len(special)),
                        rng.uniform(-1e9, 1e9, 500).astype(f)])
    y = np.concatenate([np.full(3000, f(0.3)) * np.where(rng.random(3000) < 0.5, 1, -1).astype(f),
                        np.tile(special, len(special)), rng.uniform(-2, 2, 500).astype(f)])
    # quotients a hair below an integer: x = n*y rounded down one ulp
    n = rng.integers(1, 1 << 20, 1000).astype(f)
    yy = rng.uniform(0.1, 3, 1000).astype(f)
    xx = np.nextafter((n * yy).astype(f), f(0))
    return np.concatenate([x, xx, -xx]), np.concatenate([y, yy, yy])


def reference(fn, x, y):
    """NumPy's fmod, and for remainder core/math.h's rule on it (the divisor's sign for a
    nonzero remainder; a zero keeps fmod's sign, where np.remainder gives the divisor's)."""
    with np.errstate(all="ignore"):
        mod = np.fmod(x, y)
        if fn == "remainder":
            mod = np.where((mod != 0) & ((y < 0) != (mod < 0)), mod + y, mod).astype(np.float32)
    return mod


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    assert np.array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


@pytest.mark.parametrize("fn", ["fmod", "remainder"])
def test_fmod_and_remainder_are_libms_bit_for_bit(fn):
    x, y = tricky_pairs()
    want = reference(fn, x, y)
    same_bits(getattr(minitorch, fn)(minitorch.tensor(x), minitorch.tensor(y)).numpy(), want)


@pytest.mark.parametrize("fn", ["fmod", "remainder"])
@pytest.mark.parametrize("n", [1, 255, 256, 257, 1000])
def test_fmod_and_remainder_with_a_scalar_and_strided_input(fn, n):
    rng = np.random.default_rng(n)
    base = (rng.standard_normal((n, 3)) * 50).astype(np.float32)
    for divisor in (0.3, -2.5, 0.0, float("inf")):
        want = reference(fn, base[:, 1], np.float32(divisor))
        got = getattr(minitorch, fn)(minitorch.tensor(base)[:, 1], divisor)
        same_bits(got.numpy(), want)


def test_where_selects_through_broadcast_and_strided_operands():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((300, 40)).astype(np.float32)
    y = rng.standard_normal((40,)).astype(np.float32)
    c = rng.random((40, 300)) < 0.5
    got = minitorch.where(minitorch.tensor(c).t(), minitorch.tensor(x), minitorch.tensor(y))
    same_bits(got.numpy(), np.where(c.T, x, y))
    got = minitorch.where(minitorch.tensor(x) > 0, minitorch.tensor(x)[:, ::2].repeat(1, 2), 0.0)
    same_bits(got.numpy(), np.where(x > 0, np.tile(x[:, ::2], (1, 2)), np.float32(0)))


def test_clamp_maximum_minimum_propagate_nan_from_every_side():
    v = np.array([np.nan, -2.0, 0.0, 2.0, np.inf, -np.inf, -0.0], np.float32)
    t = minitorch.tensor(v)
    same_bits(t.clamp(-1.0, 1.0).numpy(), np.minimum(np.maximum(v, np.float32(-1)), np.float32(1)))
    same_bits(t.clamp(float("nan"), 1.0).numpy(), np.full(7, np.nan, np.float32))
    same_bits(minitorch.maximum(t, t.flip(0)).numpy(), np.maximum(v, v[::-1]))
    same_bits(minitorch.minimum(t, t.flip(0)).numpy(), np.minimum(v, v[::-1]))
    big = np.random.default_rng(3).standard_normal(5000).astype(np.float32)
    big[::7] = np.nan
    same_bits(minitorch.tensor(big).clamp(-0.5, 0.5).numpy(),
              np.minimum(np.maximum(big, np.float32(-0.5)), np.float32(0.5)))


def test_sqrt_of_negatives_and_specials():
    v = np.array([-1.0, -0.0, 0.0, 4.0, np.inf, -np.inf, np.nan, 1e-45, 2.0], np.float32)
    with np.errstate(all="ignore"):
        same_bits(minitorch.tensor(v).sqrt().numpy(), np.sqrt(v))


def test_masked_fill_with_broadcast_mask_and_value():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((64, 300)).astype(np.float32)
    mask = rng.random(300) < 0.3
    same_bits(minitorch.tensor(x).masked_fill(minitorch.tensor(mask), -1e9).numpy(),
              np.where(mask, np.float32(-1e9), x))
    mask2 = rng.random((300, 64)) < 0.5
    got = minitorch.tensor(x).masked_fill(minitorch.tensor(mask2).t(), float("nan")).numpy()
    same_bits(got, np.where(mask2.T, np.float32(np.nan), x))
