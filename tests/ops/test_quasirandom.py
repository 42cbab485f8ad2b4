"""torch.quasirandom.SobolEngine: unscrambled points equal PyTorch's exactly (every dimension of
the table, draws in pieces, draw_base2, fast_forward, reset, float32 and float64, out=); the
direction numbers satisfy the Sobol' properties on their own (a 2^m block of points from the start
has one point in each of the 2^m intervals of every dimension); scrambled points are random but
keep those properties, differ with the seed and repeat with it; PyTorch's refusals."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, torch

SobolEngine = minitorch.quasirandom.SobolEngine


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unscrambled_points_equal_torch(dtype):
    """all 1111 dimensions, 70 points drawn as 1 + 5 + 64, then 3 more after skipping 100."""
    mine = SobolEngine(SobolEngine.MAXDIM)
    ref = torch.quasirandom.SobolEngine(SobolEngine.MAXDIM)
    mdt, tdt = getattr(minitorch, dtype), getattr(torch, dtype)
    got = [mine.draw(1, dtype=mdt), mine.draw(5, dtype=mdt), mine.draw(64, dtype=mdt)]
    want = [ref.draw(1, dtype=tdt), ref.draw(5, dtype=tdt), ref.draw(64, dtype=tdt)]
    mine.fast_forward(100)
    ref.fast_forward(100)
    got.append(mine.draw(3, dtype=mdt))
    want.append(ref.draw(3, dtype=tdt))
    for g, w in zip(got, want):
        assert g.dtype == mdt and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(as_numpy(g), w.numpy())
    assert mine.num_generated == ref.num_generated == 173
    np.testing.assert_array_equal(as_numpy(mine.quasi), ref.quasi.numpy())


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
def test_base2_fast_forward_reset_and_out_equal_torch():
    mine, ref = SobolEngine(7), torch.quasirandom.SobolEngine(7)
    np.testing.assert_array_equal(as_numpy(mine.draw_base2(3)), ref.draw_base2(3).numpy())
    np.testing.assert_array_equal(as_numpy(mine.draw_base2(3)), ref.draw_base2(3).numpy())
    mine.reset().fast_forward(5)
    ref.reset().fast_forward(5)
    out = minitorch.empty(0)
    assert mine.draw(4, out=out) is out
    np.testing.assert_array_equal(as_numpy(out), ref.draw(4).numpy())
    mine.reset()
    ref.reset()
    np.testing.assert_array_equal(as_numpy(mine.draw(9)), ref.draw(9).numpy())
    assert repr(mine) == repr(ref) == "SobolEngine(dimension=7)"
    assert repr(SobolEngine(2, scramble=True, seed=3)) == "SobolEngine(dimension=2, scramble=True, seed=3)"


def _balanced(points, m):
    """each dimension of a 2^m block has exactly one point in each interval [k/2^m, (k+1)/2^m)"""
    cells = np.floor(points * 2 ** m).astype(np.int64)
    return all(sorted(cells[:, j]) == list(range(2 ** m)) for j in range(points.shape[1]))


@pytest.mark.parametrize("scramble", [False, True])
def test_stratification(scramble):
    """the first 2^m points, every m to 8, fill every one-dimensional elementary interval once;
    pairs of dimensions fill the 2^a x 2^b boxes of a (t, m, s)-net at least as the first two
    (the unit cell pairs (0, 1) hold one point per 2^m/4 x 4 box); all points lie in [0, 1)."""
    eng = SobolEngine(40, scramble=scramble, seed=7)
    pts = as_numpy(eng.draw_base2(8, dtype=minitorch.float64))
    assert pts.min() >= 0 and pts.max() < 1
    for m in range(9):
        assert _balanced(pts[:2 ** m], m), m
    boxes = np.floor(pts[:, 0] * 64).astype(int) * 4 + np.floor(pts[:, 1] * 4).astype(int)
    assert sorted(boxes) == list(range(256))


def test_scrambled_points_are_random_but_seeded():
    """the same seed repeats the points, another one (or none) changes them; scrambled points
    are all distinct, their mean is near 1/2 and their first point is not 0 (the shift)."""
    a = as_numpy(SobolEngine(5, scramble=True, seed=11).draw(256, dtype=minitorch.float64))
    b = as_numpy(SobolEngine(5, scramble=True, seed=11).draw(256, dtype=minitorch.float64))
    c = as_numpy(SobolEngine(5, scramble=True, seed=12).draw(256, dtype=minitorch.float64))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert len(np.unique(a[:, 0])) == 256 and (a[0] != 0).all()
    assert np.abs(a.mean(0) - 0.5).max() < 0.01
    plain = as_numpy(SobolEngine(5).draw(256, dtype=minitorch.float64))
    assert (plain[0] == 0).all() and not np.array_equal(a, plain)


@pytest.mark.parametrize("lib", [minitorch] + ([torch] if torch is not None else []), ids=lambda m: m.__name__)
def test_refusals(lib):
    with pytest.raises(ValueError, match="Supported range of dimensionality for SobolEngine is"):
        lib.quasirandom.SobolEngine(0)
    eng = lib.quasirandom.SobolEngine(3)
    eng.draw(3)
    with pytest.raises(ValueError, match=r"The balance properties of Sobol' points require n to be a power of 2. "
                                         r"3 points have been previously generated, then: n=3\+2\*\*2=7"):
        eng.draw_base2(2)


def test_dimension_bound():
    SobolEngine(1111).draw(2)
    with pytest.raises(ValueError, match=r"\[1, 1111\]"):
        SobolEngine(1112)
