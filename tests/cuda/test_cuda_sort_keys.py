"""A NumPy model of cuda/sort.cu's sort keys (key_of<T>::map, ~key for descending, only bit 0
of bool keys on the one-row radix sort), checked without a GPU: a stable sort of the model's
unsigned keys must give the CPU sort's indices exactly (ties, NaN of either sign, +-inf, -0.0,
integer extremes). Keep the model in step with sort.cu."""
import numpy as np
import pytest

import minitorch

RNG = np.random.default_rng(1)
UNSIGNED = {np.float32: np.uint32, np.float64: np.uint64, np.int32: np.uint32, np.int64: np.uint64,
            np.bool_: np.uint32}


def keys(a, desc, one_row):
    """sort.cu's keys of a, as unsigned integers that a stable ascending sort orders."""
    u = UNSIGNED[a.dtype.type]
    sign = u(1) << u(8 * np.dtype(u).itemsize - 1)
    if a.dtype == np.bool_:
        k = a.astype(u)
    elif a.dtype.kind == "i":
        k = a.view(u) ^ sign
    else:
        b = np.where(a == 0, u(0), a.view(u))  # -0.0 -> +0.0
        k = np.where(b & sign, ~b, b | sign)
        k = np.where(np.isnan(a), ~u(0), k)
    k = ~k if desc else k
    return k & u(1) if a.dtype == np.bool_ and one_row else k  # begin_bit 0, end_bit 1


def sample(dtype, shape):
    n = int(np.prod(shape))
    if dtype == np.bool_:
        return RNG.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if dtype in (np.int32, np.int64):
        info = np.iinfo(dtype)
        a = RNG.integers(-3, 4, n).astype(dtype)
        a[RNG.random(n) < 0.1] = info.min
        a[RNG.random(n) < 0.1] = info.max
        return a.reshape(shape)
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-45, -1e-45])
    a = RNG.integers(-3, 4, n).astype(np.float64) / 2
    pick = RNG.random(n) < 0.4
    a[pick] = RNG.choice(specials, int(pick.sum()))
    return a.astype(dtype).reshape(shape)


@pytest.mark.parametrize("dtype", list(UNSIGNED))
@pytest.mark.parametrize("desc", [False, True])
def test_keys_order_like_the_cpu_sort(dtype, desc):
    for shape in [(1, 500), (7, 60)]:
        a = sample(dtype, shape)
        want = minitorch.sort(minitorch.tensor(a), dim=1, descending=desc, stable=True)[1].numpy()
        for one_row in (True, False):
            got = np.argsort(keys(a, desc, one_row), axis=1, kind="stable")
            np.testing.assert_array_equal(got, want, err_msg=f"one_row={one_row}")
