"""sum against NumPy and PyTorch: all dims, one dim, tuples of dims, keepdim, dtype."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, check, layouts, raises_like_torch, shapes, to_layout


@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "int32", "bool"))
@given(data=st.data(), layout=layouts, keepdim=st.booleans())
def test_sum(dtype, data, layout, keepdim):
    a = data.draw(arrays(dtype, shapes()))
    lay = layout if a.ndim else "contiguous"
    check(lambda m, x: x.sum(), lambda x: np.sum(x), [a], layout=lay, atol=1e-4)
    if a.ndim == 0:
        return
    dims = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=a.ndim,
                              unique_by=lambda d: d % a.ndim))
    check(lambda m, x: m.sum(x, dims[0], keepdim), lambda x: np.sum(x, axis=dims[0], keepdims=keepdim),
          [a], layout=lay, atol=1e-4)
    check(lambda m, x: x.sum(dim=tuple(dims), keepdim=keepdim),
          lambda x: np.sum(x, axis=tuple(dims), keepdims=keepdim), [a], layout=lay, atol=1e-4)


@pytest.mark.parametrize("dtype, out", [("int32", minitorch.int64), ("bool", minitorch.int64),
                                        ("float64", minitorch.float64), ("float32", minitorch.float32)])
def test_sum_result_dtype(dtype, out):
    check(lambda m, x: x.sum(), np.sum, [np.ones((2, 3), dtype)], dtype=out)


def test_sum_dtype_argument():
    check(lambda m, x: x.sum(dtype=m.float64), np.sum, [np.arange(6, dtype=np.int64)], dtype=minitorch.float64)
    check(lambda m, x: x.sum(0, dtype=m.int32), lambda x: np.sum(x, 0), [np.ones((3, 2), np.int64)],
          dtype=minitorch.int32)


def test_sum_float32_is_accurate():
    # 1e6 times 0.1: a naive float32 running sum is off by about 1e3 (each add rounds at the
    # running total's scale); the float cascade stays within two units in the last place of
    # the float32 result, as PyTorch's does (tests/ops/test_reduce_kernels.py compares the two).
    a = np.full(1_000_003, 0.1, np.float32)
    got = minitorch.from_numpy(a).sum().item()
    want = np.sum(a.astype(np.float64))
    assert abs(got - want) <= 2 * np.spacing(np.float32(want))


def test_sum_of_empty_is_zero():
    assert minitorch.zeros(0, 3).sum().item() == 0
    assert minitorch.zeros(0, 3).sum(0).tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize("fn", [lambda m, x: x.sum(2), lambda m, x: x.sum((0, 0)), lambda m, x: x.sum(-3),
                                lambda m, x: x.sum("a")])
def test_sum_bad_dims(fn):
    raises_like_torch(fn, np.ones((2, 3), np.float32))


# ---- the other reductions: one row per op, each over all dims, a dim or a tuple of dims ----

ALL = ("float32", "float64", "int64", "int32", "bool")
FLOATS = ("float32", "float64")


def _norm(p):
    def ref(x, axis=None, keepdims=False):
        a = np.abs(x.astype(np.float64))
        if p == np.inf:
            return np.max(a, axis=axis, keepdims=keepdims)
        if p == 0:
            return np.sum(a != 0, axis=axis, keepdims=keepdims).astype(np.float64)
        return np.sum(a ** p, axis=axis, keepdims=keepdims) ** (1 / p)
    return ref


def _logsumexp(x, axis=None, keepdims=False):
    x = x.astype(np.float64)
    m = np.max(x, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m
    return r if keepdims else np.squeeze(r, axis=axis)


# name: (call with dims (None for all, else an int or a tuple), NumPy reference, dtypes,
#        whether a tuple of dims is accepted, whether an empty reduction is an error)
REDUCTIONS = {
    "mean": (lambda m, x, d, k: x.mean() if d is None else m.mean(x, d, k), np.mean, FLOATS, True, False),
    "prod": (lambda m, x, d, k: x.prod() if d is None else x.prod(d, keepdim=k), np.prod, ALL, False, False),
    "amax": (lambda m, x, d, k: m.amax(x) if d is None else x.amax(d, k), np.amax, ALL, True, True),
    "amin": (lambda m, x, d, k: x.amin() if d is None else m.amin(x, dim=d, keepdim=k), np.amin, ALL, True, True),
    "all": (lambda m, x, d, k: m.all(x) if d is None else x.all(d, k), np.all, ALL, True, False),
    "any": (lambda m, x, d, k: x.any() if d is None else m.any(x, d, keepdim=k), np.any, ALL, True, False),
    "norm": (lambda m, x, d, k: x.norm() if d is None else m.norm(x, 2, d, k), _norm(2), FLOATS, True, False),
    "norm1": (lambda m, x, d, k: x.norm(p=1, dim=d, keepdim=k), _norm(1), FLOATS, True, False),
    "norm3": (lambda m, x, d, k: x.norm(3, d, k), _norm(3), FLOATS, True, False),
    "norm_inf": (lambda m, x, d, k: x.norm(float("inf"), d, k), _norm(np.inf), FLOATS, True, True),
    "norm0": (lambda m, x, d, k: x.norm(0, d, k), _norm(0), FLOATS, True, False),
    "var": (lambda m, x, d, k: x.var() if d is None else m.var(x, d, keepdim=k),
            lambda x, axis=None, keepdims=False: np.var(x, axis=axis, keepdims=keepdims, ddof=1), FLOATS, True, False),
    "std": (lambda m, x, d, k: m.std(x) if d is None else x.std(d, unbiased=False, keepdim=k),
            lambda x, axis=None, keepdims=False: np.std(x, axis=axis, keepdims=keepdims, ddof=0 if axis is not None else 1),
            FLOATS, True, False),
    "logsumexp": (lambda m, x, d, k: m.logsumexp(x, tuple(range(x.dim())) if d is None else d, k), _logsumexp,
                  ALL, True, False),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@given(data=st.data(), layout=layouts, keepdim=st.booleans())
def test_reduction(name, data, layout, keepdim):
    fn, ref, dtypes, tuples, needs_elements = REDUCTIONS[name]
    dtype = data.draw(st.sampled_from(dtypes))
    a = data.draw(arrays(dtype, shapes(max_dims=3, min_side=1 if needs_elements else 0), low=-3, high=3))
    lay = layout if a.ndim else "contiguous"
    tol = dict(atol=1e-4, rtol=1e-4)
    if a.ndim == 0 or a.size:
        check(lambda m, x: fn(m, x, None, False), lambda x: ref(x), [a], layout=lay, **tol)
    if a.ndim == 0:
        return
    dims = data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=1, max_size=a.ndim if tuples else 1,
                              unique_by=lambda d: d % a.ndim))
    dim = tuple(dims) if len(dims) > 1 else dims[0]
    if not needs_elements or all(a.shape[d] for d in dims):
        check(lambda m, x: fn(m, x, dim, keepdim), lambda x: ref(x, axis=dim, keepdims=keepdim), [a],
              layout=lay, **tol)


BOOLS, INTS = np.ones((2, 3), bool), np.ones((2, 3), np.int64)


@pytest.mark.parametrize("fn, a", [
    (lambda m, x: x.mean(), INTS), (lambda m, x: m.norm(x), INTS), (lambda m, x: x.var(), BOOLS),
    (lambda m, x: x.std(0), INTS), (lambda m, x: x.argmax(), BOOLS), (lambda m, x: x.softmax(0), INTS),
    (lambda m, x: x.log_softmax(0), BOOLS), (lambda m, x: x.amax(2), INTS), (lambda m, x: x.prod(2), INTS),
    (lambda m, x: x.logsumexp(-3), INTS), (lambda m, x: x.amax((0, 0)), INTS), (lambda m, x: x.cumsum(2), INTS),
    (lambda m, x: m.max(x, 2), INTS), (lambda m, x: x.argmin(-3), INTS), (lambda m, x: x.all("a"), INTS),
])
def test_reduction_bad_calls(fn, a):
    raises_like_torch(fn, a)


@pytest.mark.parametrize("fn", [lambda m, x: x.amax(0), lambda m, x: x.max(), lambda m, x: x.argmin(),
                                lambda m, x: m.max(x, 0), lambda m, x: x.min(dim=0)])
def test_extrema_of_nothing_raise(fn):
    raises_like_torch(fn, np.zeros((0, 3), np.float32))


def test_reductions_nan_and_inf():
    a = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0]], np.float32)
    nan_max = lambda x, axis=None: np.max(x, axis=axis)  # noqa: E731 - NumPy propagates NaN as PyTorch
    check(lambda m, x: x.amax(1), lambda x: nan_max(x, 1), [a], atol=0, rtol=0)
    check(lambda m, x: x.logsumexp(1), lambda x: _logsumexp(x, 1), [a], atol=1e-6)
    # as in PyTorch: a row holding NaN or +inf, or only -inf, is all NaN
    check(lambda m, x: x.softmax(1), lambda x: np.full((3, 3), np.nan), [a], atol=0, rtol=0)
    check(lambda m, x: m.max(x, 1).indices, lambda x: np.array([1, 0, 0]), [a])
    check(lambda m, x: x.argmin(1), lambda x: np.array([1, 0, 1]), [a])


# ---- max/min with indices, argmax/argmin: values and first index of the extreme along a dim ----

@pytest.mark.parametrize("dtype", ALL)
@given(data=st.data(), layout=layouts, keepdim=st.booleans())
def test_max_min_along_dim(dtype, data, layout, keepdim):
    a = data.draw(arrays(dtype, shapes(min_dims=1, max_dims=3, min_side=1), low=-3, high=3))
    lay = layout
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    for name, np_val, np_arg in (("max", np.max, np.argmax), ("min", np.min, np.argmin)):
        out = getattr(minitorch, name)(to_layout(a, lay), dim, keepdim)
        assert type(out).__name__ == name and out.n_fields == 2 and out.values is out[0] and out.indices is out[1]
        check(lambda m, x: getattr(m, name)(x, dim, keepdim).values,
              lambda x: np_val(x, axis=dim, keepdims=keepdim), [a], layout=lay)
        check(lambda m, x: getattr(x, name)(dim=dim, keepdim=keepdim).indices,
              lambda x: np.expand_dims(np_arg(x, axis=dim), dim) if keepdim else np_arg(x, axis=dim), [a],
              layout=lay)
        check(lambda m, x: getattr(m, name)(x), lambda x: np_val(x), [a], layout=lay)
        if dtype != "bool":
            check(lambda m, x: getattr(x, "arg" + name)(dim, keepdim),
                  lambda x: np.expand_dims(np_arg(x, axis=dim), dim) if keepdim else np_arg(x, axis=dim), [a],
                  layout=lay)
            check(lambda m, x: getattr(m, "arg" + name)(x), lambda x: np_arg(x), [a], layout=lay)
    # the ops behind the overloads, called directly
    v, i = minitorch._C.max_dim(to_layout(a, lay), dim)
    assert v.tolist() == minitorch.amax(to_layout(a, lay), dim).tolist()
    v, i = minitorch._C.min_dim(to_layout(a, lay), dim, keepdim)
    assert i.dtype == minitorch.int64


def test_max_min_overloads():
    x = minitorch.tensor([[1.0, 5.0], [4.0, 2.0]])
    assert x.max().item() == 5 and minitorch.min(x).item() == 1
    assert minitorch.max(x, minitorch.tensor([3.0, 3.0])).tolist() == [[3, 5], [4, 3]]
    assert x.min(other=minitorch.tensor(2.0)).tolist() == [[1, 2], [2, 2]]
    assert minitorch.max(x, dim=1, keepdim=True).indices.tolist() == [[1], [0]]
    values, indices = x.max(0)
    assert values.tolist() == [4, 5] and indices.tolist() == [1, 0]
    for bad in (lambda: x.max(1.5), lambda: minitorch.max(x, keepdim=True), lambda: minitorch.max(),
                lambda: x.min(dim=None)):
        with pytest.raises(TypeError):
            bad()


# ---- scans and softmax: results shaped like the input ----

def _softmax(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return e / np.sum(e, axis=axis, keepdims=True)


ROW_OPS = {
    "cumsum": (lambda m, x, d: x.cumsum(d), lambda x, d: np.cumsum(x, axis=d, dtype=np.float64 if x.dtype.kind == "f" else np.int64), ALL),
    "cumprod": (lambda m, x, d: m.cumprod(x, dim=d), lambda x, d: np.cumprod(x, axis=d, dtype=np.float64 if x.dtype.kind == "f" else np.int64), ALL),
    "softmax": (lambda m, x, d: m.softmax(x, d), _softmax, FLOATS),
    "log_softmax": (lambda m, x, d: x.log_softmax(dim=d), lambda x, d: np.log(_softmax(x, d)), FLOATS),
}


@pytest.mark.parametrize("name", ROW_OPS)
@given(data=st.data(), layout=layouts)
def test_row_ops(name, data, layout):
    fn, ref, dtypes = ROW_OPS[name]
    dtype = data.draw(st.sampled_from(dtypes))
    a = data.draw(arrays(dtype, shapes(max_dims=3), low=-3, high=3))
    dim = data.draw(st.integers(-max(a.ndim, 1), max(a.ndim, 1) - 1))
    check(lambda m, x: fn(m, x, dim), lambda x: ref(x, dim if a.ndim else None).reshape(a.shape), [a],
          layout=layout if a.ndim else "contiguous", atol=1e-5, rtol=1e-4)


def test_row_ops_dtype_argument():
    check(lambda m, x: x.softmax(0, m.float64), lambda x: _softmax(x, 0), [np.arange(4, dtype=np.float32)],
          dtype=minitorch.float64)
    check(lambda m, x: x.cumsum(0, dtype=m.float32), lambda x: np.cumsum(x), [np.arange(4)], dtype=minitorch.float32)
    check(lambda m, x: x.mean(dtype=m.float64), np.mean, [np.arange(4, dtype=np.float32)], dtype=minitorch.float64)


def test_softmax_is_stable():
    a = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, -1001.0, -1002.0]], np.float32)
    check(lambda m, x: x.softmax(1), lambda x: _softmax(x, 1), [a])
    check(lambda m, x: x.log_softmax(1), lambda x: np.log(_softmax(x, 1)), [a], atol=1e-4)
    check(lambda m, x: x.logsumexp(1), lambda x: _logsumexp(x, 1), [a], atol=1e-3)


def test_var_correction():
    a = np.random.default_rng(0).standard_normal((4, 5))
    check(lambda m, x: x.var(1, correction=2), lambda x: np.var(x, 1, ddof=2), [a])
    check(lambda m, x: m.std(x, (0, 1), keepdim=True, correction=0), lambda x: np.std(x, (0, 1), keepdims=True), [a])


@pytest.mark.parametrize("call, warns", [
    (lambda m: m.tensor([1.0]).std(), "std"), (lambda m: m.ones(2, 3).var(dim=1, correction=3), "var"),
    (lambda m: m.ones(0, 3).var(dim=1), "var"), (lambda m: m.var_mean(m.ones(1), correction=1), "var_mean"),
    (lambda m: m.std_mean(m.ones(3, 1), dim=1), "std_mean"), (lambda m: m.var(m.ones(1), out=m.empty(())), "var"),
    (lambda m: m.ones(2, 3).var(dim=1, correction=2.5), None), (lambda m: m.ones(1, 2).var(dim=0, unbiased=False), None),
    (lambda m: m.ones(3).var(), None),
])
def test_var_std_without_degrees_of_freedom_warn(call, warns):
    """PyTorch warns, naming the op, when the correction leaves no degrees of freedom (the result is
    inf or NaN), counting the elements each result reduces as input numel over output numel."""
    import warnings
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        call(minitorch)
    want = [] if warns is None else [f"{warns}(): degrees of freedom is <= 0. Correction should be strictly less than "
                                     "the reduction factor (input numel divided by output numel)."]
    assert [str(w.message) for w in got] == want
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings(record=True) as ref:
        warnings.simplefilter("always")
        call(torch)
    assert [str(w.message).split(" (Triggered")[0] for w in ref] == want
    with warnings.catch_warnings():  # a warning made an error raises, and nothing leaks
        warnings.simplefilter("error")
        if warns:
            with pytest.raises(UserWarning):
                call(minitorch)


@pytest.mark.parametrize("call", [
    lambda m, x: x.amax(-1), lambda m, x: x.amin(dim=(0, 1)), lambda m, x: x.amax(1), lambda m, x: x.amax(),
    lambda m, x: x.amin(()), lambda m, x: m.amax(x, dim=[-1, 0]),
])
def test_extremum_of_nothing_names_the_dim_as_given(call):
    """amax/amin over an empty dim name it as the caller wrote it (PyTorch's IndexError); with no dim
    they ask for one (its RuntimeError)."""
    from helpers import same_error
    same_error(call, np.zeros((3, 0), np.float64))
    same_error(lambda m, x: x.amax(-1), np.zeros((0,), np.float64))
