"""Tensor factories and the small value types around them: tensor() and its dtype inference,
zeros/ones/empty/full and their _like variants, arange, rand/randn and the seed, dtype objects,
Size, and the scalar queries and conversions (item, tolist, size, dim, numel, float() ... to())."""
import pickle
import warnings

import numpy as np
import pytest

import minitorch

DTYPE_NAMES = ("float32", "float64", "int64", "int32", "bool")
NP = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "int32": np.int32, "bool": np.bool_}


def name(dtype):
    return str(dtype).split(".")[-1]


# ---- tensor(data): dtype inference, as PyTorch's: bool < int64 < float32 (the default float) ----

# (id, data as source text, the dtype minitorch and PyTorch infer)
INFERENCE = [
    ("float", "1.5", "float32"),
    ("int", "3", "int64"),
    ("bool", "True", "bool"),
    ("list_int_float", "[1, 2.5]", "float32"),
    ("list_bool_int", "[True, 1]", "int64"),
    ("list_bools", "[True, False]", "bool"),
    ("list_bool_float", "[True, 2.5]", "float32"),
    ("nested_mixed", "[[1, 2], [3, 4.0]]", "float32"),
    ("tuple", "(1, 2)", "int64"),
    ("tuple_of_lists", "((1, 2), [3, 4])", "int64"),
    ("empty_list", "[]", "float32"),
    ("empty_nested", "[[], []]", "float32"),
    ("np_float64_array", "np.array([1.5, 2.5])", "float64"),
    ("np_float32_array", "np.array([1.5], dtype=np.float32)", "float32"),
    ("np_int64_array", "np.array([1, 2])", "int64"),
    ("np_int32_array", "np.array([1, 2], dtype=np.int32)", "int32"),
    ("np_bool_array", "np.array([True])", "bool"),
    ("np_0d_array", "np.array(5)", "int64"),
    ("np_float64_scalar", "np.float64(2.5)", "float64"),
    ("np_float32_scalar", "np.float32(2.5)", "float32"),
    ("np_int64_scalar", "np.int64(2)", "int64"),
    ("np_bool_scalar", "np.bool_(True)", "bool"),
    ("tensor_in_list", "[L.tensor(1.5), 2]", "float32"),
    ("int_then_tensor", "[1, L.tensor(1.5)]", "float32"),
    ("int_tensor", "L.tensor([1, 2])", "int64"),
    ("int32_tensor", "L.tensor([1, 2], dtype=L.int32)", "int32"),
    ("list_of_np_float32", "[np.float32(1.0)]", "float32"),
    ("list_of_np_float64", "[np.float64(2.5)]", "float64"),
    ("list_of_np_int32", "[np.int32(1)]", "int32"),
    ("list_of_np_bool", "[np.bool_(True)]", "bool"),
]
INFERENCE_BUGS: dict = {}


@pytest.mark.parametrize(
    "case, src, expected",
    [pytest.param(*c, marks=pytest.mark.xfail(strict=True, reason=INFERENCE_BUGS[c[0]])) if c[0] in INFERENCE_BUGS
     else c for c in INFERENCE],
    ids=[c[0] for c in INFERENCE],
)
def test_dtype_inference(case, src, expected):
    t = minitorch.tensor(eval(src, {"L": minitorch, "np": np}))
    assert name(t.dtype) == expected


@pytest.mark.parametrize("case, src, expected", INFERENCE, ids=[c[0] for c in INFERENCE])
def test_dtype_inference_table_is_torchs(case, src, expected):
    torch = pytest.importorskip("torch")
    assert name(torch.tensor(eval(src, {"L": torch, "np": np})).dtype) == expected


@pytest.mark.parametrize(
    "data, shape",
    [(1.5, ()), ([1, 2, 3], (3,)), ([[1, 2], [3, 4], [5, 6]], (3, 2)), ([], (0,)), ([[]], (1, 0)),
     ([[], []], (2, 0)), ([[[]]], (1, 1, 0)), ([[[1], [2]]], (1, 2, 1))],
)
def test_shape_inference(data, shape):
    t = minitorch.tensor(data)
    assert t.shape == shape
    assert t.tolist() == data


@pytest.mark.parametrize(
    "data, dtype, expected",
    [
        ([1.7, -2.7], minitorch.int64, [1, -2]),
        ([1.7, -2.7], minitorch.int32, [1, -2]),
        ([1.7, 0.0, -0.5], minitorch.bool, [True, False, True]),
        ([1, 2], minitorch.float64, [1.0, 2.0]),
        ([True, False], minitorch.float32, [1.0, 0.0]),
        ([[1], [2]], minitorch.int32, [[1], [2]]),
        (0.1, minitorch.float64, 0.1),
        (0.1, minitorch.float32, float(np.float32(0.1))),
        ([1.5], float, [1.5]),   # Python types stand for dtypes: float -> float64
        ([2], int, [2]),
        ([2], bool, [True]),
    ],
)
def test_explicit_dtype(data, dtype, expected):
    t = minitorch.tensor(data, dtype=dtype)
    want = {float: minitorch.float64, int: minitorch.int64, bool: minitorch.bool}.get(dtype, dtype)
    assert t.dtype == want
    assert t.tolist() == expected


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_tensor_from_numpy_array_copies(dtype, layout):
    a = (np.arange(12) % 3).astype(dtype).reshape(3, 4)
    src = {"contiguous": a, "transposed": a.T, "strided": a[:, ::2]}[layout]
    t = minitorch.tensor(src)
    assert t.dtype == getattr(minitorch, dtype)
    assert t.is_contiguous()
    np.testing.assert_array_equal(np.asarray(t), src)
    src[...] = 0  # a copy: the tensor keeps its values
    assert np.asarray(t).any()


def test_tensor_of_tensor_copies():
    s = minitorch.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match=r"recommended to use sourceTensor.detach\(\).clone\(\)"):
        t = minitorch.tensor(s)
    t[0] = 5
    assert s.tolist() == [1.0, 2.0]
    with pytest.warns(UserWarning):
        assert minitorch.tensor(s, dtype=minitorch.int64).dtype == minitorch.int64


@pytest.mark.parametrize(
    "value", [0.0, -0.0, 1e-30, 3.4e38, float("inf"), float("-inf"), 2**62, -2**63, 2**63 - 1]
)
def test_scalar_roundtrip(value):
    t = minitorch.tensor(value, dtype=minitorch.float64 if isinstance(value, float) else minitorch.int64)
    assert t.item() == value
    assert type(t.item()) is type(value)


def test_nan_roundtrip():
    assert np.isnan(minitorch.tensor(float("nan")).item())


def test_float32_overflow_is_inf():
    assert minitorch.tensor([1e40, -1e300]).tolist() == [float("inf"), float("-inf")]


@pytest.mark.parametrize(
    "data, exc",
    [([[1, 2], [3]], ValueError), ([[1], []], ValueError), ([1, "a"], TypeError), ("abc", TypeError)],
    ids=["ragged", "ragged_empty", "str_in_list", "str"],
)
def test_bad_data_raises(data, exc):
    with pytest.raises(exc):
        minitorch.tensor(data)


@pytest.mark.parametrize("data", [[1, [2, 3]], [1.5, [2, [3, 4]]]], ids=["leaf_then_list", "deeper"])
def test_scalar_beside_sequence_raises(data):
    with pytest.raises((TypeError, ValueError)):
        minitorch.tensor(data)


def test_tensor_kwargs():
    t = minitorch.tensor([1.0], requires_grad=True)
    assert t.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        minitorch.tensor([1], requires_grad=True)
    with pytest.raises(TypeError):
        minitorch.tensor([1], dtype="float32")
    with pytest.raises(TypeError):
        minitorch.tensor([1], foo=1)
    # PyTorch's parser takes only a bool, not any truthy object
    with pytest.raises(TypeError, match="argument 'requires_grad' must be bool, not object"):
        minitorch.tensor([1.0], requires_grad=object())


# ---- zeros / ones / empty / full and the _like variants ----

FILLS = {
    "zeros": (lambda size, **kw: minitorch.zeros(size, **kw), 0),
    "ones": (lambda size, **kw: minitorch.ones(size, **kw), 1),
    "full": (lambda size, **kw: minitorch.full(size, 7, **kw), 7),
}


@pytest.mark.parametrize("size", [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 1, 1, 5)])
@pytest.mark.parametrize("dtype", DTYPE_NAMES)
@pytest.mark.parametrize("factory", FILLS)
def test_filled_factories(factory, dtype, size):
    make, value = FILLS[factory]
    t = make(size, dtype=getattr(minitorch, dtype))
    assert t.shape == size and t.dtype == getattr(minitorch, dtype)
    assert t.is_contiguous() and t.storage_offset() == 0
    np.testing.assert_array_equal(np.asarray(t), np.full(size, value, dtype=NP[dtype]))


@pytest.mark.parametrize(
    "call",
    [lambda f: f(2, 3), lambda f: f((2, 3)), lambda f: f([2, 3]), lambda f: f(minitorch.Size([2, 3])),
     lambda f: f(np.int64(2), 3), lambda f: f(size=(2, 3))],
    ids=["varargs", "tuple", "list", "Size", "numpy_int", "size_kwarg"],
)
@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_forms(factory, call):
    t = call(getattr(minitorch, factory))
    assert t.shape == (2, 3) and t.dtype == minitorch.float32


@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_scalar_forms(factory):
    f = getattr(minitorch, factory)
    assert f(()).shape == () and f([]).shape == () and f(0).shape == (0,)


@pytest.mark.parametrize("size", [(-1,), (2, -1), (-3, 0)])
@pytest.mark.parametrize("factory", ["zeros", "ones", "empty", "rand", "randn"])
def test_negative_size_raises_runtime_error(factory, size):
    words = "Dimension size must be non-negative" if factory == "zeros" else "negative dimension"
    with pytest.raises(RuntimeError, match=words):
        getattr(minitorch, factory)(*size)


def test_full_negative_size():
    with pytest.raises(RuntimeError):
        minitorch.full((-1,), 2.0)


@pytest.mark.parametrize("bad", [2.0, "a", None, (2, "a"), (2, 2.0)], ids=["float", "str", "None", "str_in_tuple", "float_in_tuple"])
def test_bad_size_type_raises_type_error(bad):
    with pytest.raises(TypeError, match="must be tuple of ints"):
        minitorch.zeros(bad)


def test_zero_size_dims_allow_huge_others():
    assert minitorch.zeros(2, 0, 2**62).shape == (2, 0, 2**62)


@pytest.mark.parametrize("size", [(2**62, 2**62), (2**31, 2**31, 2**31), (2**62,)])
def test_huge_size_raises_overflow(size):
    with pytest.raises(RuntimeError, match="overflow"):
        minitorch.empty(*size)


@pytest.mark.parametrize(
    "fill, dtype", [(7, "int64"), (7.5, "float32"), (True, "bool"), (np.float64(1.0), "float32")]
)
def test_full_infers_dtype_from_value(fill, dtype):
    t = minitorch.full((2, 3), fill)
    assert name(t.dtype) == dtype
    assert np.asarray(t).tolist() == [[fill] * 3] * 2


def test_full_with_dtype():
    assert minitorch.full((2,), 7, dtype=minitorch.float64).tolist() == [7.0, 7.0]
    assert minitorch.full((2,), 2.9, dtype=minitorch.int32).tolist() == [2, 2]


@pytest.mark.parametrize("dtype", ["int64", "float32", "float64", "bool"])
def test_factory_dtypes_match_torch(dtype):
    torch = pytest.importorskip("torch")
    for f in ("zeros", "ones", "empty"):
        assert name(getattr(minitorch, f)(2, dtype=getattr(minitorch, dtype)).dtype) == \
            name(getattr(torch, f)(2, dtype=getattr(torch, dtype)).dtype)
    assert name(minitorch.full((2,), 7).dtype) == name(torch.full((2,), 7).dtype)


LIKES = ["zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"]


def like(fname, t, **kw):
    f = getattr(minitorch, fname)
    return f(t, 3, **kw) if fname == "full_like" else f(t, **kw)


@pytest.mark.parametrize("fname", LIKES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_like_keeps_shape_and_dtype(fname, dtype):
    src = minitorch.ones(2, 3, dtype=getattr(minitorch, dtype))
    t = like(fname, src)
    assert t.shape == (2, 3) and t.dtype == src.dtype
    assert t.data_ptr() != src.data_ptr()


@pytest.mark.parametrize("fname", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_values_and_dtype_override(fname):
    src = minitorch.ones(2, 3, dtype=minitorch.int32)
    t = like(fname, src)
    assert t.dtype == minitorch.int32
    value = {"zeros_like": 0, "ones_like": 1, "full_like": 3}.get(fname)
    if value is not None:
        assert t.tolist() == [[value] * 3] * 2
    t = like(fname, src, dtype=minitorch.float64)
    assert t.dtype == minitorch.float64 and t.shape == (2, 3)


@pytest.mark.parametrize("fn", ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like"])
@pytest.mark.parametrize("make", [
    lambda m: m.ones(2, 3).t(),                       # dense, transposed: strides kept
    lambda m: m.ones(2, 3, 4).permute(2, 0, 1),       # dense, permuted: strides kept
    lambda m: m.ones(1, 3, 1, 2).permute(3, 2, 1, 0),  # size-1 dims keep their strides too
    lambda m: m.ones(4, 6)[:, ::2],                   # gaps: contiguous
    lambda m: m.ones(3, 1).expand(3, 4),              # overlap: contiguous
    lambda m: m.ones(0, 3).t(),
    lambda m: m.ones(3, 4, 10)[..., ::2].permute(2, 0, 1),  # gaps, permuted: dense in its order
    lambda m: m.ones(3, 4).t()[1:],                          # gaps, transposed
])
def test_like_preserves_dense_strides(fn, make):
    src = make(minitorch)
    args = (2.5,) if fn == "full_like" else ()
    out = getattr(minitorch, fn)(src, *args, requires_grad=fn != "empty_like" and src.numel() > 0)
    assert out.shape == src.shape and out.is_leaf
    try:
        import torch
    except ImportError:
        return
    ref = getattr(torch, fn)(make(torch), *args)
    assert out.stride() == ref.stride()
    if fn in ("zeros_like", "ones_like", "full_like"):
        np.testing.assert_array_equal(out.numpy() if not out.requires_grad else out.detach().numpy(), ref.numpy())


def test_rand_like_of_int_raises():
    with pytest.raises(NotImplementedError):
        minitorch.rand_like(minitorch.ones(2, dtype=minitorch.int64))


# ---- arange ----

@pytest.mark.parametrize(
    "args, kwargs, expected, dtype",
    [
        ((5,), {}, [0, 1, 2, 3, 4], "int64"),
        ((0,), {}, [], "int64"),
        ((2, 5), {}, [2, 3, 4], "int64"),
        ((0, 10, 3), {}, [0, 3, 6, 9], "int64"),
        ((10, 0, -3), {}, [10, 7, 4, 1], "int64"),
        ((5, 5), {}, [], "int64"),
        ((1, 2, 0.25), {}, [1.0, 1.25, 1.5, 1.75], "float32"),
        ((5.0,), {}, [0.0, 1.0, 2.0, 3.0, 4.0], "float32"),
        ((0.5, 3), {}, [0.5, 1.5, 2.5], "float32"),
        ((1, -1, -0.5), {}, [1.0, 0.5, 0.0, -0.5], "float32"),
        ((5,), {"dtype": minitorch.float64}, [0.0, 1.0, 2.0, 3.0, 4.0], "float64"),
        ((3,), {"dtype": minitorch.int32}, [0, 1, 2], "int32"),
        ((0, 3.5), {"dtype": minitorch.int32}, [0, 1, 2, 3], "int32"),
        ((np.int64(3),), {}, [0, 1, 2], "int64"),
        ((0, 5, 2**63 - 1), {}, [0], "int64"),
    ],
)
def test_arange(args, kwargs, expected, dtype):
    t = minitorch.arange(*args, **kwargs)
    assert name(t.dtype) == dtype
    assert t.tolist() == expected
    assert t.dim() == 1 and t.is_contiguous()


@pytest.mark.parametrize("args", [(0, 1, 0.1), (0, 1, 0.3), (-1, 1, 0.2), (1e-3, 1, 1e-2), (0, 100, 7)])
def test_arange_length_and_values_match_torch(args):
    torch = pytest.importorskip("torch")
    t, r = minitorch.arange(*args), torch.arange(*args)
    assert t.shape == tuple(r.shape) and name(t.dtype) == name(r.dtype)
    np.testing.assert_allclose(np.asarray(t), r.numpy(), rtol=1e-6, atol=1e-6)


def _arange_rule(start, end, step, dtype):
    """PyTorch's CPU arange, value by value, in exact arithmetic rounded once per fused a * b + c:
    lane k of a 256-bit vector starting at i0 is base + k * step, base = start + i0 * step rounded
    to the dtype; the tail of fewer than two vectors is start + i * step."""
    from fractions import Fraction

    def fma(a, b, c):
        return float(Fraction(a) * Fraction(b) + Fraction(c))

    n = int(np.ceil((end - start) / step))
    lanes = 32 // np.dtype(dtype).itemsize
    out = []
    for i in range(n):
        if i >= n - n % (2 * lanes):
            out.append(fma(step, i, start))
        else:
            base = float(np.dtype(dtype).type(fma(step, i - i % lanes, start)))
            out.append(fma(i % lanes, step, base))
    return np.array(out).astype(dtype)


@pytest.mark.parametrize("args", [(0, 1, 0.02), (-3.1, 2.7, 0.013), (5, -5, -0.3), (0.5, 300.5, 0.7), (0, 1, 0.1)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_arange_float_values_bit_for_bit(args, dtype):
    # ZTM's torch.arange(0, 1, 0.02) data: PyTorch's [9] is 0.17999999f (0.16f + 0.02), not 0.18f
    t = minitorch.arange(*args, dtype=getattr(minitorch, dtype))
    np.testing.assert_array_equal(np.asarray(t), _arange_rule(*args, dtype))
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(np.asarray(t), torch.arange(*args, dtype=getattr(torch, dtype)).numpy())


@pytest.mark.parametrize(
    "args, message",
    [((0, 1, 0), "step must be nonzero"), ((0, 10, 0.0), "step must be nonzero"),
     ((float("nan"),), "unsupported range"), ((0, float("inf")), "unsupported range"),
     ((2**62,), "overflow")],
)
def test_arange_errors(args, message):
    with pytest.raises(RuntimeError, match=message):
        minitorch.arange(*args)


@pytest.mark.parametrize(
    "args, dtype, expected",
    [((0, 5, 1.5), "int64", [0, 1, 2, 3, 4]), ((0.5, 5, 1.5), "int64", [0, 1, 2, 3, 4]),
     ((-1, -5.2, -1.5), "int64", [-1, -2, -3, -4]), ((0.9, 3.9, 1), "int64", [0, 1, 2]),
     ((5, 0, -1.5), "int64", [5, 4, 3, 2, 1]), ((2**53 + 1, 2**53 + 4), "int64", [2**53 + 1, 2**53 + 2, 2**53 + 3]),
     ((0, 5, 1.5), "int32", [0, 1, 2, 3]), ((-1, -5.2, -1.5), "int32", [-1, -2, -3]),
     ((0.5, 5, 1.5), "int32", [0, 1, 2]), ((0, 2**53, 2**52), "float64", [0.0, 2.0**52])],
)
def test_arange_integer_dtype_truncates_start_end_step(args, dtype, expected):
    # PyTorch computes an integer arange from start and step taken as int64 first (its accumulate
    # type), and sizes an int64 one in int64 from the truncated end too: arange(0, 5, 1.5,
    # dtype=int64) is 0..4, where minitorch counted ceil(5 / 1.5) = 4 values of 0, 1.5, 3, 4.5.
    t = minitorch.arange(*args, dtype=getattr(minitorch, dtype))
    assert t.tolist() == expected and name(t.dtype) == dtype
    torch = pytest.importorskip("torch")
    assert torch.arange(*args, dtype=getattr(torch, dtype)).tolist() == expected


@pytest.mark.parametrize(
    "args, dtype, cls, message",
    [((0, 5, 0.5), "int64", ValueError, "step must be nonzero"),
     ((0, 5, float("nan")), "float32", RuntimeError, "step must be nonzero"),
     ((0.0, 1e19, 1e18), "int64", RuntimeError, "value cannot be converted to type int64_t without overflow"),
     ((0, 5, 1e300), "int32", RuntimeError, "value cannot be converted to type int64_t without overflow")],
)
def test_arange_integer_dtype_errors(args, dtype, cls, message):
    with pytest.raises(cls, match=message):
        minitorch.arange(*args, dtype=getattr(minitorch, dtype))
    torch = pytest.importorskip("torch")
    with pytest.raises(cls, match=message):
        torch.arange(*args, dtype=getattr(torch, dtype))


def test_arange_int64_extremes_count_without_overflow():
    # i * step passes INT64_MAX on the way to a value in range
    assert minitorch.arange(-(2**63), 2**63 - 1, 2**62).tolist() == [-(2**63), -(2**62), 0, 2**62]


@pytest.mark.parametrize("args", [(5, 0), (0, 5, -1)])
def test_arange_inconsistent_sign_message(args):
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        minitorch.arange(*args)


def test_arange_tensor_bound():
    assert minitorch.arange(minitorch.tensor(3)).tolist() == [0, 1, 2]


# ---- rand / randn / manual_seed ----

N = 20000


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_rand_range_and_moments(dtype):
    minitorch.manual_seed(0)
    a = np.asarray(minitorch.rand(N, dtype=dtype))
    assert a.dtype == (np.float32 if dtype == minitorch.float32 else np.float64)
    assert a.min() >= 0.0 and a.max() < 1.0
    assert abs(a.mean() - 0.5) < 0.02
    assert abs(a.std() - (1 / 12) ** 0.5) < 0.01
    assert len(np.unique(a)) > N * 0.99


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_randn_moments(dtype):
    minitorch.manual_seed(1)
    a = np.asarray(minitorch.randn(N, dtype=dtype)).astype(np.float64)
    assert np.isfinite(a).all()
    assert abs(a.mean()) < 0.04
    assert abs(a.std() - 1.0) < 0.03
    assert 0.66 < np.mean(np.abs(a) < 1) < 0.71  # about 68.3% within one sigma


def test_rand_shapes():
    assert minitorch.rand(3, 4).shape == (3, 4)
    assert minitorch.randn((2, 0)).shape == (2, 0)
    assert minitorch.rand(()).shape == ()


@pytest.mark.parametrize("factory", ["rand", "randn"])
def test_manual_seed_reproducible(factory):
    f = getattr(minitorch, factory)
    minitorch.manual_seed(1234)
    a = f(100).tolist()
    b = f(100).tolist()
    minitorch.manual_seed(1234)
    assert f(100).tolist() == a
    assert f(100).tolist() == b
    assert a != b
    minitorch.manual_seed(4321)
    assert f(100).tolist() != a
    assert minitorch.initial_seed() == 4321


def test_seed_is_shared_by_in_place_fills():
    minitorch.manual_seed(7)
    a = minitorch.empty(50).uniform_().tolist()
    minitorch.manual_seed(7)
    assert minitorch.rand(50).tolist() == a


@pytest.mark.parametrize("dtype", [minitorch.int64, minitorch.int32, minitorch.bool])
@pytest.mark.parametrize("factory", ["rand", "randn"])
def test_random_of_integral_dtype_raises(factory, dtype):
    with pytest.raises(NotImplementedError, match="not implemented for"):
        getattr(minitorch, factory)(2, dtype=dtype)


# ---- dtype objects ----

@pytest.mark.parametrize(
    "dtype, is_float, itemsize, signed",
    [("float32", True, 4, True), ("float64", True, 8, True), ("int64", False, 8, True),
     ("int32", False, 4, True), ("bool", False, 1, False)],
)
def test_dtype_objects(dtype, is_float, itemsize, signed):
    d = getattr(minitorch, dtype)
    assert isinstance(d, minitorch.dtype)
    assert repr(d) == f"minitorch.{dtype}" == str(d)
    assert d.is_floating_point is is_float
    assert d.itemsize == itemsize
    assert d.is_signed is signed
    assert d.is_complex is False
    assert pickle.loads(pickle.dumps(d)) is d
    assert minitorch.zeros(2, dtype=d).element_size() == itemsize
    assert minitorch.zeros(2, dtype=d).is_floating_point() is is_float


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_dtype_objects_match_torch(dtype):
    torch = pytest.importorskip("torch")
    d, r = getattr(minitorch, dtype), getattr(torch, dtype)
    assert (d.is_floating_point, d.itemsize, d.is_signed) == (r.is_floating_point, r.itemsize, r.is_signed)
    assert repr(d).replace("minitorch", "torch") == repr(r)


@pytest.mark.parametrize(
    "alias, dtype", [("float", "float32"), ("double", "float64"), ("long", "int64"), ("int", "int32")]
)
def test_dtype_aliases(alias, dtype):
    assert getattr(minitorch, alias) is getattr(minitorch, dtype)


def test_dtype_equality_and_hash():
    assert minitorch.float32 == minitorch.float32 and minitorch.float32 != minitorch.float64
    assert len({minitorch.float32, minitorch.float, minitorch.int64, minitorch.long}) == 2
    assert minitorch.get_default_dtype() is minitorch.float32


# ---- Size and the shape queries ----

def test_shape_is_size():
    t = minitorch.zeros(2, 3)
    assert isinstance(t.shape, minitorch.Size) and isinstance(t.shape, tuple)
    assert t.shape == (2, 3)
    assert t.size() == t.shape and isinstance(t.size(), minitorch.Size)
    assert repr(t.shape) == "minitorch.Size([2, 3])"
    assert repr(minitorch.zeros(()).shape) == "minitorch.Size([])"
    assert type(t.shape[0]) is int
    assert t.shape[1:] == (3,)
    a, b = t.shape
    assert (a, b) == (2, 3)


def test_size_type():
    s = minitorch.Size([2, 3, 4])
    assert s == (2, 3, 4) and s.numel() == 24 and minitorch.Size([]).numel() == 1
    assert minitorch.zeros(s).shape == s


def test_size_slicing_and_arithmetic_keep_size():
    """As PyTorch 2.13's: a slice, s + tuple, tuple + s (Size.__radd__; d2l's X.reshape((1, 1) + X.shape))
    and s * n are Sizes; an index is an int."""
    s = minitorch.Size([2, 3, 4])
    for got, want in ((s[1:], (3, 4)), (s[::-1], (4, 3, 2)), (s[:0], ()), (s + (5,), (2, 3, 4, 5)), (s * 2, (2, 3, 4) * 2),
                      (minitorch.ones(2, 3).shape[-1:], (3,)), ((1,) + s, (1, 2, 3, 4)), (() + s, (2, 3, 4)),
                      (s + s, (2, 3, 4) * 2), (2 * s, (2, 3, 4) * 2)):
        assert type(got) is minitorch.Size and got == want
    assert repr((1, 1) + minitorch.ones(2, 3).shape) == "minitorch.Size([1, 1, 2, 3])"
    assert type(s[0]) is int and s[-1] == 4
    assert repr(s[1:]) == "minitorch.Size([3, 4])"
    with pytest.raises(TypeError, match=r"^can only concatenate tuple \(not list\) to minitorch.Size$"):
        s + [5]
    with pytest.raises(TypeError, match="unsupported operand"):
        1 + s
    with pytest.raises(TypeError, match=r"takes an iterable of 'int' \(item 0 is 'float'\)"):
        (1.5,) + s
    with pytest.raises(IndexError):
        s[3]


def test_size_items_are_ints():
    """Size() holds ints, as PyTorch's: bools, NumPy integers and 0-d integer tensors become ints
    through __index__; floats, strings and float tensors are TypeErrors naming the item."""
    got = minitorch.Size([True, np.int64(2), minitorch.tensor(3), 4])
    assert got == (1, 2, 3, 4) and all(type(v) is int for v in got)
    for bad, k, name in (([2.0], 0, "float"), ([1, "a"], 1, "str"), ([minitorch.tensor(2.5)], 0, "Tensor")):
        with pytest.raises(TypeError, match=rf"^minitorch.Size\(\) takes an iterable of 'int' \(item {k} is '{name}'\)$"):
            minitorch.Size(bad)
    assert minitorch.Size(v for v in (5, 6)) == (5, 6)
    torch = pytest.importorskip("torch")
    assert list(torch.Size([True, torch.tensor(3)])) == list(minitorch.Size([True, minitorch.tensor(3)]))
    assert type((1,) + torch.Size([2])) is torch.Size  # the behaviour followed above


@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (2, 0, 3), (1, 1, 1, 1)])
def test_dim_numel_size(shape):
    t = minitorch.zeros(shape)
    assert t.dim() == t.ndim == t.ndimension() == len(shape)
    assert t.numel() == t.nelement() == minitorch.numel(t) == int(np.prod(shape))
    assert [t.size(d) for d in range(len(shape))] == list(shape)
    assert [t.size(d - len(shape)) for d in range(len(shape))] == list(shape)
    assert t.nbytes == t.numel() * 4 and t.itemsize == 4
    if shape:
        assert len(t) == shape[0]
        assert t.size(dim=0) == shape[0]


def test_size_out_of_range():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        minitorch.zeros(2, 3).size(2)
    with pytest.raises(IndexError):
        minitorch.zeros(2, 3).size(-3)
    with pytest.raises(TypeError):
        len(minitorch.zeros(()))


# ---- item, tolist and conversions ----

@pytest.mark.parametrize(
    "data, dtype, value, pytype",
    [(3.5, minitorch.float32, 3.5, float), (3.5, minitorch.float64, 3.5, float), ([7], minitorch.int32, 7, int),
     ([[7]], minitorch.int64, 7, int), (True, minitorch.bool, True, bool), (0.1, minitorch.float32, float(np.float32(0.1)), float)],
)
def test_item(data, dtype, value, pytype):
    v = minitorch.tensor(data, dtype=dtype).item()
    assert v == value and type(v) is pytype


@pytest.mark.parametrize("data, n", [([1, 2], 2), ([], 0), ([[1, 2], [3, 4]], 4)])
def test_item_of_many_raises(data, n):
    with pytest.raises(RuntimeError, match=f"a Tensor with {n} elements cannot be converted to Scalar"):
        minitorch.tensor(data).item()


def test_item_of_view():
    t = minitorch.arange(12).view(3, 4)
    assert t[2, 1].item() == 9 and t.t()[3, 2].item() == 11


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_tolist_types(dtype):
    a = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    out = minitorch.tensor(a).tolist()
    assert out == a.tolist()
    assert type(out[0][1]) is type(a.tolist()[0][1])


def test_tolist_of_0d_and_views():
    assert minitorch.tensor(2.5).tolist() == 2.5
    assert minitorch.arange(6).view(2, 3).t().tolist() == [[0, 3], [1, 4], [2, 5]]
    assert minitorch.zeros(2, 0).tolist() == [[], []]


@pytest.mark.parametrize(
    "method, dtype", [("float", "float32"), ("double", "float64"), ("long", "int64"), ("int", "int32"), ("bool", "bool")]
)
@pytest.mark.parametrize("src", DTYPE_NAMES)
def test_conversion_methods(src, method, dtype):
    a = np.array([[0, 1], [-2, 3]], dtype=src) if src != "bool" else np.array([[True, False], [False, True]])
    if src.startswith("float"):
        a = a + np.array([[0.0, 0.75], [-0.25, 0.5]], dtype=src)
    t = minitorch.tensor(a).t()  # a strided source
    out = getattr(t, method)()
    assert name(out.dtype) == dtype
    assert out.shape == t.shape
    np.testing.assert_array_equal(np.asarray(out), a.T.astype(dtype))
    out2 = t.to(getattr(minitorch, dtype))
    np.testing.assert_array_equal(np.asarray(out2), a.T.astype(dtype))
    assert t.to(dtype=getattr(minitorch, dtype)).dtype == out.dtype


def test_to_same_dtype_returns_self_unless_copy():
    t = minitorch.ones(2)
    assert t.to(minitorch.float32) is t
    assert t.float() is t
    c = t.to(minitorch.float32, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr()


@pytest.mark.parametrize("dtype", [None, "float32", "float64", "int64", "int32", "bool"])
def test__to_copy_always_copies(dtype):
    t = minitorch.tensor([[0.0, 1.5], [-2.5, 3.0]]).t()
    kw = {} if dtype is None else {"dtype": getattr(minitorch, dtype)}
    c = minitorch._to_copy(t, **kw)
    assert c is not t and c.data_ptr() != t.data_ptr()
    assert c.dtype == (t.dtype if dtype is None else getattr(minitorch, dtype))
    np.testing.assert_array_equal(np.asarray(c), np.asarray(t).astype(dtype or "float32"))
    c.fill_(0)
    assert t.tolist() == [[0.0, -2.5], [1.5, 3.0]]


def test_to_other_tensor_and_device():
    t = minitorch.ones(2)
    assert t.to(minitorch.zeros(1, dtype=minitorch.int64)).dtype == minitorch.int64
    assert t.to("cpu") is t
    with pytest.raises(TypeError):
        t.to(foo=1)


@pytest.mark.parametrize("conv, value", [(float, 2.5), (int, 2), (bool, True)])
def test_python_scalar_conversions(conv, value):
    assert conv(minitorch.tensor([2.5])) == value
    assert conv(minitorch.tensor([[2.5]], dtype=minitorch.float64)) == value


def test_bool_of_many_raises():
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(minitorch.zeros(2))


@pytest.mark.parametrize("conv", [float, int])
def test_python_scalar_conversion_of_many_raises_value_error(conv):
    with pytest.raises(ValueError, match="only one element tensors can be converted to Python scalars"):
        conv(minitorch.zeros(2))


@pytest.mark.parametrize("dtype, name", [(minitorch.float32, "FloatTensor"), (minitorch.float64, "DoubleTensor"),
                                         (minitorch.int64, "LongTensor"), (minitorch.int32, "IntTensor"),
                                         (minitorch.bool, "BoolTensor")])
def test_legacy_type_name(dtype, name):
    assert minitorch.zeros(2, dtype=dtype).type() == "minitorch." + name
    assert minitorch.zeros(2).type(dtype).dtype == dtype


NESTED_ARRAYS = {
    "rows_float64": lambda: [np.array([1.0, 2.0]), np.array([3.0, 4.0])],
    "int32_2d": lambda: [np.array([[1, 2]], dtype=np.int32)],
    "bool_deep": lambda: [[np.array([True, False])]],
    "mixed_with_numbers": lambda: [np.array([1, 2], dtype=np.int16), [3, 4]],
    "ragged": lambda: [np.array([1.0, 2.0]), np.array([3.0])],
    "zero_d": lambda: [np.array(1.0), np.array(2.0)],
    "tensor_of_two": lambda: [minitorch.ones(2)],
    # every object of the sequence protocol reads as its items (MIT 6.S191's tensor(range(100)))
    "range": lambda: range(100),
    "empty_range": lambda: range(0),
    "ranges_in_a_list": lambda: [range(3), range(3, 6)],
    "deque_of_floats": lambda: __import__("collections").deque([1.5, 2.0]),
    "ragged_ranges": lambda: [range(3), range(2)],
    "str": lambda: "abc",
    "strs_in_a_list": lambda: ["ab", "cd"],
    "number_then_str": lambda: [1, "a"],
    "list_then_str": lambda: [[1], "ab"],
    "bytes": lambda: b"ab",
    "bytearray": lambda: bytearray(b"ab"),
    # objects that are neither numbers nor sequences: PyTorch's RuntimeError "Could not infer dtype"
    "dict": lambda: {1: 2},
    "set": lambda: {1, 2},
    "object_in_a_list": lambda: [1, object()],
    "none_in_a_list": lambda: [None],
}


@pytest.mark.parametrize("name", NESTED_ARRAYS)
def test_arrays_nested_in_a_list_read_as_torch_reads_them(name):
    # minitorch.tensor([np.array(..), ...]) raised SystemError (NULL without an exception)
    torch = pytest.importorskip("torch")
    data = NESTED_ARRAYS[name]()
    torch_data = [torch.ones(2)] if name == "tensor_of_two" else data
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns that a list of arrays is slow
            want = torch.tensor(torch_data)
    except Exception as e:  # noqa: BLE001 - the same class is expected
        with pytest.raises(type(e)):
            minitorch.tensor(data)
        return
    got = minitorch.tensor(data)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist()


def test_float_of_a_tensor_requiring_grad_warns_once_a_process():
    # PyTorch 2.13 warns (TORCH_WARN_ONCE) on float() alone, not int()/item()/bool(), and only in
    # grad mode (not under no_grad or inference_mode: LBFGS's float(closure()) is quiet); the test's
    # process may have warned already, so a child process counts the warnings
    import subprocess
    import sys

    code = ("import warnings, minitorch as t\n"
            "x = t.tensor(2.0, requires_grad=True)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    with t.no_grad():\n"
            "        float(x)\n"
            "    with t.inference_mode():\n"
            "        float(x)\n"
            "    p = t.nn.Parameter(t.tensor([1.0, -2.0]))\n"
            "    o = t.optim.LBFGS([p], max_iter=2)\n"
            "    o.step(lambda: (o.zero_grad(), (p ** 2).sum().backward())[0] or (p ** 2).sum())\n"
            "    int(x); x.item(); bool(x); float(x); float(x * 2); float(t.tensor(1.0))\n"
            "print([str(m.message) for m in w])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                         "behavior.\nConsider using tensor.detach() first."]


def test_fills_of_zero_and_negative_zero_keep_their_bits():
    """A zero fill of a contiguous run is a memset (cpu/copy.c); -0.0 is not all zero bytes."""
    neg = minitorch.full((300, 301), -0.0).numpy()
    assert neg.shape == (300, 301) and (neg == 0).all() and np.signbit(neg).all()
    zero = minitorch.ones(300, 301, dtype=minitorch.float64).fill_(0).numpy()
    assert (zero == 0).all() and not np.signbit(zero).any()
    x = minitorch.ones(300, 302)
    x[:, ::2].fill_(0)  # strided: the loop, not memset; the other columns untouched
    np.testing.assert_array_equal(x.numpy(), np.tile([0.0, 1.0], (300, 151)))
    for dt in (minitorch.int32, minitorch.int64, minitorch.bool, minitorch.complex64):
        assert not minitorch.zeros(1000, dtype=dt).numpy().any()


@pytest.mark.parametrize("call", [
    lambda lib, x: x.copy_(other=lib.tensor([1.0, 2.0])),
    lambda lib, x: x.copy_(lib.tensor([3, 4]), non_blocking=True),
    lambda lib, x: x.copy_(2.5),
    lambda lib, x: lib.Tensor.copy_(x, lib.tensor([5.0, 6.0]), False),
])
def test_copy_keywords_as_torch(call):
    """Tensor.copy_(other, non_blocking=False): PyTorch's Python names (the schema's is `src`)."""
    torch = pytest.importorskip("torch")
    got = call(minitorch, minitorch.zeros(2))
    want = call(torch, torch.zeros(2))
    assert got.tolist() == want.tolist() and str(got.dtype)[len("minitorch."):] == str(want.dtype)[len("torch."):]


@pytest.mark.parametrize("call", [
    lambda lib, x: x.copy_("a"), lambda lib, x: x.copy_(None), lambda lib, x: x.copy_([1.0, 2.0]),
    lambda lib, x: lib.Tensor.copy_(x, "a"), lambda lib, x: x.copy_(x, non_blocking="a"),
])
def test_copy_type_errors_name_the_source_other(call):
    """copy_'s TypeError names the source as PyTorch's Python signature does: 'other'."""
    torch = pytest.importorskip("torch")
    errors = []
    for lib in (minitorch, torch):
        with pytest.raises(TypeError) as e:
            call(lib, lib.zeros(2))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
