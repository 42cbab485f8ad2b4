"""Factories against NumPy and PyTorch: linspace, logspace, eye (values, dtypes,
dtype/device/requires_grad keywords), randint and randint_like (both overloads, range, dtype),
random_, randperm, and bad calls."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import check, raises_like_torch

DTYPES = ("float32", "float64", "int64", "int32")


def torch_dtype_name(t):
    return str(t.dtype).split(".")[-1]


@given(start=st.integers(-20, 20), end=st.integers(-20, 20), steps=st.integers(0, 12),
       dtype=st.sampled_from((None,) + DTYPES), half=st.booleans())
def test_linspace_like_torch_and_numpy(start, end, steps, dtype, half):
    torch = pytest.importorskip("torch")
    s = start + 0.5 if half else start
    kw = {} if dtype is None else {"dtype": getattr(minitorch, dtype)}
    got = minitorch.linspace(s, end, steps, **kw)
    want = torch.linspace(s, end, steps, **({} if dtype is None else {"dtype": getattr(torch, dtype)}))
    assert got.shape == (steps,) and str(got.dtype).split(".")[-1] == torch_dtype_name(want)
    np.testing.assert_allclose(np.array(got.tolist(), np.float64), want.double().numpy(), rtol=1e-6, atol=1e-5)
    if dtype in (None, "float32", "float64"):
        np.testing.assert_allclose(got.tolist(), np.linspace(s, end, steps), rtol=1e-5, atol=1e-5)


def test_linspace_ends_are_exact():
    x = minitorch.linspace(-1.3, 7.9, 11)
    assert x.dtype == minitorch.float32
    assert x.tolist()[0] == np.float32(-1.3) and x.tolist()[-1] == np.float32(7.9)
    assert minitorch.linspace(3, 5, 1).tolist() == [3.0]
    assert minitorch.linspace(0, 1, steps=0).shape == (0,)


@given(start=st.integers(-3, 3), end=st.integers(-3, 3), steps=st.integers(0, 8),
       base=st.sampled_from([10.0, 2.0, 0.5, 3]), dtype=st.sampled_from((None, "float32", "float64")))
def test_logspace_like_numpy_and_torch(start, end, steps, base, dtype):
    kw = {} if dtype is None else {"dtype": getattr(minitorch, dtype)}
    got = minitorch.logspace(start, end, steps, base, **kw)
    np.testing.assert_allclose(got.tolist(), np.logspace(start, end, steps, base=base), rtol=1e-5)
    torch = pytest.importorskip("torch")
    want = torch.logspace(start, end, steps, base, **({} if dtype is None else {"dtype": getattr(torch, dtype)}))
    assert str(got.dtype).split(".")[-1] == torch_dtype_name(want)


def test_logspace_integer_dtype():
    assert minitorch.logspace(0, 3, 4, base=2, dtype=minitorch.int64).tolist() == [1, 2, 4, 8]


@pytest.mark.parametrize("n, m", [(0, None), (1, None), (3, None), (2, 4), (4, 2), (3, 0)])
@pytest.mark.parametrize("dtype", (None,) + DTYPES + ("bool",))
def test_eye(n, m, dtype):
    kw = {} if dtype is None else {"dtype": getattr(minitorch, dtype)}
    args = (n,) if m is None else (n, m)
    got = minitorch.eye(*args, **kw)
    np.testing.assert_array_equal(np.array(got.tolist()).reshape(got.shape), np.eye(n, m))
    check(lambda lib: lib.eye(*args, **({} if dtype is None else {"dtype": getattr(lib, dtype)})),
          lambda: np.eye(n, m), [])


def test_factory_keywords():
    for f in (lambda **kw: minitorch.linspace(0, 1, 3, **kw), lambda **kw: minitorch.logspace(0, 1, 3, **kw),
              lambda **kw: minitorch.eye(2, **kw), lambda **kw: minitorch.randperm(3, **kw),
              lambda **kw: minitorch.randint(0, 5, (2,), **kw)):
        x = f(dtype=minitorch.float64, device="cpu", requires_grad=True)
        assert x.dtype == minitorch.float64 and x.device.type == "cpu" and x.requires_grad


BAD = [
    lambda m: m.linspace(0, 1, -1),
    lambda m: m.linspace(0, 1, 3, dtype=m.bool),
    lambda m: m.linspace(0, 1, 2.5),
    lambda m: m.logspace(0, 1, -2),
    lambda m: m.eye(-1),
    lambda m: m.eye(2, -1),
    lambda m: m.randint(0, 0, (2,)),
    lambda m: m.randint(3, 2, (2,)),
    lambda m: m.randint(10, 5),
    lambda m: m.randint(5),
    lambda m: m.randint(1, 2, 3, (4,)),
    lambda m: m.randperm(-1),
    lambda m: m.randperm(3, dtype=m.bool),
    lambda m: m.zeros(-1),
    lambda m: m.empty(2).random_(5, 3),
]


@pytest.mark.parametrize("fn", BAD)
def test_bad_calls_raise_like_torch(fn):
    raises_like_torch(fn)


def test_messages():
    with pytest.raises(RuntimeError, match="^number of steps must be non-negative$"):
        minitorch.linspace(0, 1, -1)
    with pytest.raises(RuntimeError, match="^n must be greater or equal to 0, got -1$"):
        minitorch.eye(-1)
    with pytest.raises(RuntimeError, match=r"^random_ expects 'from' to be less than 'to', but got from=3 >= to=2$"):
        minitorch.randint(3, 2, (2,))
    with pytest.raises(RuntimeError, match=r"^zeros: Dimension size must be non-negative\.$"):  # torch 2.13's words
        minitorch.zeros(-1)
    with pytest.raises(RuntimeError, match=r"^Trying to create tensor with negative dimension -1: \[-1\]$"):
        minitorch.ones(-1)


# ---- random integers ----

@pytest.mark.parametrize("args, low, high", [((10, (1000,)), 0, 10), ((-3, 4, (1000,)), -3, 4), ((5, 6, (50,)), 5, 6)])
def test_randint_overloads_and_range(args, low, high):
    x = minitorch.randint(*args)
    assert x.dtype == minitorch.int64 and x.shape == args[-1]
    v = np.array(x.tolist())
    assert v.min() >= low and v.max() < high
    if high - low > 1:
        assert len(set(v.tolist())) == high - low  # 1000 draws see every value


def test_randint_keywords_and_dtypes():
    x = minitorch.randint(low=2, high=4, size=(3, 2), dtype=minitorch.float32)
    assert x.shape == (3, 2) and x.dtype == minitorch.float32 and set(x.flatten().tolist()) <= {2.0, 3.0}
    assert minitorch.randint(7, size=[4]).shape == (4,)
    assert minitorch.randint(high=7, size=(0, 2)).shape == (0, 2)
    assert minitorch.randint(-2**40, 2**40, (3,)).dtype == minitorch.int64
    with pytest.raises(TypeError):
        minitorch.randint(1, 2, (3,), colour=1)
    with pytest.raises(TypeError):
        minitorch.randint(2, (3,), high=4)


def test_randint_is_reproducible_with_a_seed():
    minitorch.manual_seed(3)
    a = minitorch.randint(0, 1000, (20,)).tolist()
    minitorch.manual_seed(3)
    assert minitorch.randint(0, 1000, (20,)).tolist() == a


def test_randint_like():
    base = minitorch.ones(2, 3, dtype=minitorch.int32)
    x = minitorch.randint_like(base, 10)
    assert x.shape == (2, 3) and x.dtype == minitorch.int32
    y = minitorch.randint_like(minitorch.ones(4), 3, 5, dtype=minitorch.int64)
    assert y.dtype == minitorch.int64 and set(y.tolist()) <= {3, 4}
    torch = pytest.importorskip("torch")
    got = minitorch.randint_like(minitorch.ones(4), 10)
    assert str(got.dtype).split(".")[-1] == torch_dtype_name(torch.randint_like(torch.ones(4), 10))


@pytest.mark.parametrize("dtype", DTYPES)
def test_random_(dtype):
    x = minitorch.empty(500, dtype=getattr(minitorch, dtype))
    v0 = x._version
    assert x.random_(3) is x and x._version == v0 + 1
    assert set(x.tolist()) == {0, 1, 2}
    x.random_(-4, -2)
    assert set(x.tolist()) == {-4, -3}
    x.random_()
    assert min(x.tolist()) >= 0
    b = minitorch.empty(100, dtype=minitorch.bool).random_()
    assert set(b.tolist()) == {False, True}


@pytest.mark.parametrize(
    "dtype, args, message",
    [("int32", (2**62,), "to - 1 is out of bounds for int"), ("int32", (2**31 + 1,), "to - 1 is out of bounds for int"),
     ("int32", (-(2**31) - 1, 5), "from is out of bounds for int"), ("bool", (3,), "to - 1 is out of bounds for bool"),
     ("bool", (-1, 1), "from is out of bounds for bool"), ("int64", (-(2**63),), "random_ expects 'from' to be less")],
)
def test_random_bounds_outside_the_dtype_raise_like_torch(dtype, args, message):
    # int32.random_(2**62) drew from [0, 2**62) and wrapped to negative values; PyTorch checks
    # that from and to - 1 are values of the dtype.
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match=message):
            lib.empty(10, dtype=getattr(lib, dtype)).random_(*args)


@pytest.mark.parametrize(
    "dtype, args, lo, hi",
    [("int32", (2**31,), 0, 2**31 - 1), ("int32", (-(2**31), 2**31), -(2**31), 2**31 - 1),
     ("int32", (), 0, 2**31 - 1), ("int64", (), 0, 2**63 - 1), ("int64", (-(2**63), 2**63 - 1), -(2**63), 2**63 - 2),
     ("int64", (2**63 - 2, 2**63 - 1), 2**63 - 2, 2**63 - 2), ("bool", (0, 2), 0, 1), ("float32", (), 0, 2**24)],
)
def test_random_fills_the_whole_range(dtype, args, lo, hi):
    # without `to` the range includes the dtype's largest value, as PyTorch's; a span past
    # INT64_MAX is drawn without signed overflow
    x = minitorch.empty(4000, dtype=getattr(minitorch, dtype)).random_(*args)
    v = np.asarray(x.tolist(), dtype=object)
    assert v.min() >= lo and v.max() <= hi
    if hi - lo > 2**20:  # a wide range reaches both halves
        assert v.min() < lo + (hi - lo) // 4 and v.max() > hi - (hi - lo) // 4


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("dtype", (None,) + DTYPES)
def test_randperm_is_a_permutation(n, dtype):
    kw = {} if dtype is None else {"dtype": getattr(minitorch, dtype)}
    x = minitorch.randperm(n, **kw)
    assert x.shape == (n,) and x.dtype == (getattr(minitorch, dtype) if dtype else minitorch.int64)
    assert sorted(x.tolist()) == list(range(n))
