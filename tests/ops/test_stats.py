"""The statistics functions against NumPy and PyTorch: histograms and counts, binary
search, running extrema, order statistics, quantiles, moments, differences, renorm and unique
along a dim; values, dtypes, shapes, gradients and errors (PyTorch's classes and messages)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitorch
from helpers import LAYOUTS, arrays, check, check_grad, same_as_torch, shapes, torch_alike

torch = pytest.importorskip("torch")

nan = float("nan")
rng = np.random.default_rng(0)


def distinct(shape, dtype="float64"):
    """Values without ties (order statistics' indices are then unambiguous)."""
    n = int(np.prod(shape))
    step = 0.5 if dtype.startswith("float") else 1
    return (rng.permutation(n).reshape(shape) * step - n // 4).astype(dtype)


def same_error(fn, *arrays, scalars=(), message=True):
    """fn raises in minitorch and PyTorch: the same class (LinAlgError counts as RuntimeError)
    and (unless not message) the same message."""
    errs = []
    for lib in (minitorch, torch):
        try:
            fn(lib, *[lib.tensor(a) for a in arrays], *scalars)
        except Exception as e:  # noqa: BLE001 - compared below
            errs.append(e)
        else:
            raise AssertionError(f"{lib.__name__} did not raise")
    mine, theirs = errs
    assert isinstance(mine, type(theirs)) or isinstance(theirs, type(mine)), f"{mine!r} vs {theirs!r}"
    assert not message or str(mine) == str(theirs), f"{mine} != {theirs}"


def both(fn, *arrays, layout="contiguous", atol=1e-6, rtol=1e-5):
    """fn gives the same results in minitorch and PyTorch (helpers.torch_alike)."""
    return torch_alike(fn, *arrays, layout=layout, atol=atol, rtol=rtol)


# ---- histc, histogram, bincount ----

@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("bins, lo, hi", [(4, 0, 0), (7, -2.5, 3), (1, 0, 0), (10, 1, 1.5)])
@given(data=st.data(), layout=st.sampled_from(LAYOUTS))
@settings(max_examples=15)
def test_histc(dtype, bins, lo, hi, data, layout):
    a = data.draw(arrays(dtype, shapes(min_dims=1, max_dims=3, min_side=1), low=-3, high=3))
    ref = lambda x: torch.histc(torch.tensor(x, dtype=getattr(torch, dtype)), bins, lo, hi).double().numpy()
    check(lambda m, x: m.histc(x, bins, lo, hi), ref, [a], layout=layout)
    check(lambda m, x: x.histc(bins=bins, min=lo, max=hi), ref, [a], layout=layout)


def test_histc_edges_and_errors():
    both(lambda m, x: m.histc(x, 4), np.array([1.0, 2.0, 1.0, 4.0]))
    both(lambda m, x: m.histc(x, 3, min=1, max=3), np.array([1.0, 2.0, 3.0]))
    both(lambda m, x: m.histc(x, 4), np.array([1.0, 1.0]))  # one value: [v - 1, v + 1]
    both(lambda m, x: m.histc(x, 4), np.zeros(0))
    same_error(lambda m, x: m.histc(x, 4), np.array([1.0, nan]), message=False)  # PyTorch's may print -nan
    same_error(lambda m, x: m.histc(x, 4, min=nan, max=3), np.array([1.0]))
    same_error(lambda m, x: m.histc(x, 4), np.array([1.0, np.inf]))
    same_error(lambda m, x: m.histc(x, 4, min=2, max=1), np.array([1.0]))
    same_error(lambda m, x: m.histc(x, -1), np.array([1.0]))
    same_error(lambda m, x: m.histc(x, 4), np.array([1, 2]))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_histogram(dtype):
    x = rng.uniform(-2, 3, (5, 7)).astype(dtype)
    w = rng.uniform(0, 1, (5, 7)).astype(dtype)
    edges = np.array([-2.0, -0.5, 0.0, 1.0, 3.0], dtype)
    for layout in LAYOUTS:
        both(lambda m, a: m.histogram(a, 6), x, layout=layout)
        both(lambda m, a: m.histogram(a, 5, range=(-1.0, 2.0), density=True), x, layout=layout)
        both(lambda m, a, b: m.histogram(a, b), x, edges, layout=layout)
        both(lambda m, a, b, c: a.histogram(b, weight=c, density=True), x, edges, w, layout=layout)
        both(lambda m, a, c: m.histogram(a, 4, weight=c.flatten()), x, w, layout=layout)
    for bins in (1, 2, 9):
        np.testing.assert_allclose(np.asarray(minitorch.histogram(minitorch.tensor(x), bins).hist),
                                   np.histogram(x.astype(np.float64), bins)[0], atol=0)
    both(lambda m, a: m.histogram(a, 3), np.zeros(0, dtype))        # [0, 1]
    both(lambda m, a: m.histogram(a, 3), np.full(2, 2.0, dtype))    # widened by 0.5
    both(lambda m, a, b: m.histogram(a, b), x, edges[::-1].copy())  # not ascending: nothing falls in
    r = minitorch._C.histogram(minitorch.tensor(x), 6, None, None)
    assert r.bin_edges.shape == (7,) and r.hist.sum().item() == x.size
    r = minitorch._C.histogram_bins(minitorch.tensor(x), minitorch.tensor(edges))
    assert r.hist.shape == (4,)


def test_histogram_errors():
    x = np.array([1.0, 2.0, 1.0], np.float32)
    same_error(lambda m, a: m.histogram(a, -1), x)
    same_error(lambda m, a: m.histogram(a, 2, range=(3.0, 1.0)), x)
    same_error(lambda m, a: m.histogram(a, 2, range=(1.0, np.inf)), x)
    same_error(lambda m, a: m.histogram(a, 2), np.array([1.0, nan, 1.0], np.float32))
    same_error(lambda m, a: m.histogram(a, 3), np.array([1, 2, 1]))
    same_error(lambda m, a, b: m.histogram(a, b), x, np.array([0.0, 1.5, 3.0]))
    same_error(lambda m, a, b: m.histogram(a, b), x, np.array([[0.0, 1.5, 3.0]], np.float32))
    same_error(lambda m, a, b: m.histogram(a, b), x, np.array([1.0], np.float32))
    same_error(lambda m, a, b: m.histogram(a, b), x, np.zeros(0, np.float32))
    same_error(lambda m, a, w: m.histogram(a, 2, weight=w), x, np.ones(2, np.float32))
    same_error(lambda m, a, w: m.histogram(a, 2, weight=w), x, np.ones(3))


@pytest.mark.parametrize("dtype", ("int64", "int32"))
def test_bincount(dtype):
    x = rng.integers(0, 7, 30).astype(dtype)
    both(lambda m, a: m.bincount(a), x)
    both(lambda m, a: a.bincount(minlength=12), x)
    for wdt in ("float32", "float64", "int64", "bool"):
        w = (rng.uniform(0, 1, 30) > 0.5) if wdt == "bool" else rng.uniform(-1, 1, 30).astype(wdt)
        both(lambda m, a, b: m.bincount(a, weights=b), x, w, atol=1e-5)
    both(lambda m, a: m.bincount(a), np.zeros(0, dtype))
    both(lambda m, a: m.bincount(a, minlength=3), np.zeros(0, dtype))
    both(lambda m, a: m.bincount(a[::3]), x)
    np.testing.assert_array_equal(np.asarray(minitorch.bincount(minitorch.tensor(x))), np.bincount(x))


def test_bincount_errors():
    same_error(lambda m, a: m.bincount(a), np.array([1, -2, 1]))
    same_error(lambda m, a: m.bincount(a), np.array([[1, 2]]))
    same_error(lambda m, a: m.bincount(a), np.array([1.0, 2.0]))
    same_error(lambda m, a: m.bincount(a), np.array([True, False]))
    same_error(lambda m, a: m.bincount(a, minlength=-1), np.array([1, 2]))
    same_error(lambda m, a, w: m.bincount(a, weights=w), np.array([1, 2]), np.array([1.0]))


# ---- searchsorted, bucketize ----

@pytest.mark.parametrize("right", (False, True))
@pytest.mark.parametrize("seq_dtype, val_dtype", [("float32", "float32"), ("float64", "float32"),
                                                  ("int64", "int64"), ("int32", "float64"), ("int64", "int32")])
def test_searchsorted(right, seq_dtype, val_dtype):
    seq = np.sort(rng.integers(-5, 6, (3, 8)), axis=-1).astype(seq_dtype)
    vals = (rng.integers(-7, 8, (3, 5)) + (0.5 if val_dtype.startswith("float") else 0)).astype(val_dtype)
    vals[0, :2] = seq[0, 3]  # ties with the boundaries
    for layout in LAYOUTS:
        both(lambda m, s, v: m.searchsorted(s, v, right=right), seq, vals, layout=layout)
        both(lambda m, s, v: m.searchsorted(s[0], v, right=right, out_int32=True), seq, vals, layout=layout)
    both(lambda m, s: m.searchsorted(s[1], 2, side="right" if right else "left"), seq)
    both(lambda m, s, v: m.bucketize(v, s[2], right=right), seq, vals)
    both(lambda m, s: m.bucketize(3, s[2], right=right, out_int32=True), seq)
    ref = np.searchsorted(seq[0].astype(np.float64), vals.ravel().astype(np.float64), "right" if right else "left")
    np.testing.assert_array_equal(np.asarray(minitorch.searchsorted(minitorch.tensor(seq[0]), minitorch.tensor(vals.ravel()),
                                                                    right=right)), ref)


def test_searchsorted_nan_sorter_and_empty():
    seq = np.array([1.0, 2.0, 2.0, 3.0, nan])
    both(lambda m, s, v: m.searchsorted(s, v), seq, np.array([2.0, nan, 0.0, 5.0]))
    both(lambda m, s, v: m.searchsorted(s, v, right=True), seq, np.array([2.0, nan, 0.0, 5.0]))
    both(lambda m, s, v, o: m.searchsorted(s, v, sorter=o), np.array([3, 1, 2]), np.array([2, 0, 4]), np.array([1, 2, 0]))
    both(lambda m, s, v: m.searchsorted(s, v), np.zeros(0), np.array([1.0]))
    both(lambda m, s, v: m.searchsorted(s, v), np.array([1.0]), np.zeros((2, 0)))


def test_searchsorted_errors():
    s, v = np.array([1.0, 2.0, 3.0]), np.array([2.0])
    same_error(lambda m, a, b: m.searchsorted(a, b, side="left", right=True), s, v)
    same_error(lambda m, a, b: m.searchsorted(a, b, side="foo"), s, v)
    same_error(lambda m, a, b: m.searchsorted(a, b), np.array([[1, 3], [2, 4]]), np.array([2, 3]))
    same_error(lambda m, a, b: m.searchsorted(a, b), np.array(1.0), v)
    same_error(lambda m, a, b: m.searchsorted(a, b), np.array([[1.0, 2.0]]), np.array(1.0))
    same_error(lambda m, a, b, o: m.searchsorted(a, b, sorter=o), s, v, np.array([1, 2]))
    same_error(lambda m, a, b, o: m.searchsorted(a, b, sorter=o), s, v, np.array([1, 5, 0]))
    same_error(lambda m, a, b, o: m.searchsorted(a, b, sorter=o), s, v, np.array([1, 2, 0], np.int32))
    same_error(lambda m, a, b: m.searchsorted(a, b), np.array([True, False]), np.array([True]))
    same_error(lambda m, a, b: m.bucketize(a, b), v, np.array([[1.0, 2.0]]))


# ---- running extrema ----

@pytest.mark.parametrize("op", ("cummax", "cummin"))
@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "int32", "bool"))
def test_cummax_cummin(op, dtype):
    a = rng.integers(-3, 4, (4, 6)).astype(dtype)  # ties: the later index wins
    for layout in LAYOUTS:
        for dim in (0, 1, -1):
            both(lambda m, x: getattr(m, op)(x, dim), a, layout=layout)
    both(lambda m, x: getattr(x, op)(0), np.array(2.5 if dtype.startswith("float") else 2, dtype))
    both(lambda m, x: getattr(m, op)(x, 1), np.zeros((2, 0), dtype))
    if dtype.startswith("float"):
        both(lambda m, x: getattr(m, op)(x, 0), np.array([1.0, 3.0, 0.0, 3.0, nan, 1.0, 5.0, nan, 2.0], dtype))
        check_grad(lambda m, x: getattr(m, op)(x, 1)[0], [distinct((3, 5))])
        same_as_torch(lambda m, x: getattr(m, op)(x, 0).values, [a], layout="transposed")
    same_error(lambda m, x: getattr(m, op)(x, 2), a)


# ---- order statistics ----

@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "int32"))
def test_kthvalue_median_mode(dtype):
    a = distinct((4, 5, 6), dtype)
    for layout in LAYOUTS:
        for dim in (0, 1, -1):
            for keepdim in (False, True):
                both(lambda m, x: m.kthvalue(x, 2, dim, keepdim), a, layout=layout)
                both(lambda m, x: x.median(dim, keepdim=keepdim), a, layout=layout)
                both(lambda m, x: m.mode(x, dim, keepdim), a, layout=layout)
        both(lambda m, x: m.median(x), a, layout=layout)
        both(lambda m, x: x.kthvalue(a.shape[-1]), a, layout=layout)
    ties = rng.integers(0, 3, (5, 7)).astype(dtype)  # mode: the smallest most frequent, its last index
    both(lambda m, x: m.mode(x, 1), ties)
    both(lambda m, x: m.mode(x, 0, keepdim=True), ties)
    np.testing.assert_allclose(np.asarray(minitorch.median(minitorch.tensor(a), 2).values),
                               np.sort(a, 2)[..., (a.shape[2] - 1) // 2])


def test_order_statistics_nan_and_edge_cases():
    x = np.array([[3.0, 1.0, 2.0, 1.0], [nan, 0.0, 5.0, nan]])
    # a row of NaNs only: nanmedian's value is NaN, its index PyTorch's partial sort's choice
    assert np.isnan(minitorch.nanmedian(minitorch.tensor(np.full((2, 3), nan)), 1).values.tolist()).all()
    for fn in (lambda m, t: m.median(t, 1), lambda m, t: m.nanmedian(t, 1), lambda m, t: m.median(t),
               lambda m, t: m.nanmedian(t), lambda m, t: t.nanmedian(), lambda m, t: m.kthvalue(t, 4),
               lambda m, t: m.kthvalue(t[0], 2), lambda m, t: m.median(t[0]), lambda m, t: m.nanmedian(t[1:2], 0)):
        both(fn, x)
    both(lambda m, t: m.median(t), np.zeros(0))
    both(lambda m, t: m.median(t, 0), np.zeros((1, 0)))
    both(lambda m, t: m.median(t, 1), np.zeros((0, 3)))
    both(lambda m, t: m.mode(t, 1), np.zeros((0, 3)))
    both(lambda m, t: m.median(t, 0), np.array(3.0))
    both(lambda m, t: m.kthvalue(t, 1), np.array(3.0))
    both(lambda m, t: m.mode(t), np.array(2.0))
    both(lambda m, t: m.mode(t), np.array([True, False, True]))
    same_error(lambda m, t: m.kthvalue(t, 5), x)
    same_error(lambda m, t: m.kthvalue(t, 0), x)
    same_error(lambda m, t: m.kthvalue(t, 1), np.zeros((1, 0)))
    same_error(lambda m, t: m.kthvalue(t, 1), np.array([True, False]))
    same_error(lambda m, t: m.median(t, 1), np.zeros((1, 0)))
    same_error(lambda m, t: m.mode(t), np.zeros(0))
    same_error(lambda m, t: m.median(t), np.array([True, False]))
    same_error(lambda m, t: m.median(t, 2), x)


def test_order_statistics_gradients():
    a = distinct((4, 5))
    for fn in (lambda m, x: m.kthvalue(x, 3, 1)[0], lambda m, x: m.median(x, 0, True)[0],
               lambda m, x: m.nanmedian(x, 1).values, lambda m, x: m.mode(x, 0)[0], lambda m, x: m.median(x),
               lambda m, x: m.nanmedian(x)):
        check_grad(fn, [a])
        same_as_torch(fn, [a], layout="transposed")
    ties = np.array([[1.0, 2.0, 2.0], [3.0, 1.0, 3.0]])  # median(): shared by the tied elements
    same_as_torch(lambda m, x: m.median(x), [ties])
    same_as_torch(lambda m, x: m.median(x), [np.array([1.0, nan, 2.0])])
    for name, fn in (("KthvalueBackward0", lambda x: minitorch.kthvalue(x, 1)[0]),
                     ("MedianBackward0", minitorch.median), ("MedianBackward1", lambda x: x.median(0)[0]),
                     ("NanmedianBackward0", minitorch.nanmedian), ("ModeBackward0", lambda x: minitorch.mode(x)[0]),
                     ("NanmedianBackward1", lambda x: minitorch._C.nanmedian_dim(x, 0)[0]),
                     ("CummaxBackward0", lambda x: minitorch.cummax(x, 0)[0])):
        assert fn(minitorch.tensor(a, requires_grad=True)).grad_fn.name() == name
    x = minitorch.tensor(a)
    assert minitorch._C.median(x).item() == minitorch.median(x).item()
    assert minitorch._C.median_dim(x, 1)[1].tolist() == minitorch.median(x, 1)[1].tolist()
    assert minitorch._C.nanmedian(x).item() == x.nanmedian().item()


@pytest.mark.parametrize("interpolation", ("linear", "lower", "higher", "midpoint", "nearest"))
@pytest.mark.parametrize("dtype", ("float32", "float64"))
def test_quantile(interpolation, dtype):
    a = rng.standard_normal((4, 5, 6)).astype(dtype)
    a[1, 2, 3] = nan
    q = np.array([0.0, 0.25, 0.5, 0.7, 1.0], dtype)
    for fname in ("quantile", "nanquantile"):
        f = lambda m, x, *rest, **kw: getattr(m, fname)(x, *rest, interpolation=interpolation, **kw)  # noqa: E731
        for layout in LAYOUTS:
            both(lambda m, x: f(m, x, 0.3), a, layout=layout)
            both(lambda m, x, qq: f(m, x, qq, dim=1), a, q, layout=layout)
            both(lambda m, x, qq: f(m, x, qq, dim=-1, keepdim=True), a, q, layout=layout)
            both(lambda m, x: f(m, x, 0.5, dim=0, keepdim=True), a, layout=layout)
            both(lambda m, x, qq: f(m, x, qq[2], keepdim=True), a, q, layout=layout)
            both(lambda m, x, qq: f(m, x, qq), a, q, layout=layout)
        both(lambda m, x: f(m, x, 0.5, dim=0), np.array(2.0, dtype))
        both(lambda m, x, qq: f(m, x, qq, keepdim=True), np.array(2.0, dtype), q)
        both(lambda m, x: getattr(x, fname)(0.4, 1), np.full((2, 3), nan, dtype))
    if interpolation == "nearest":
        return  # NumPy's float64 ranks round ties otherwise than float32's
    np.testing.assert_allclose(np.asarray(minitorch.quantile(minitorch.tensor(a[0]), minitorch.tensor(q), dim=1,
                                                             interpolation=interpolation)),
                               np.quantile(a[0].astype(np.float64), q.astype(np.float64), axis=1, method=interpolation),
                               rtol=1e-5, atol=1e-6)


def test_quantile_gradients_and_errors():
    a = distinct((4, 6))
    q = np.array([0.1, 0.5, 0.75])
    check_grad(lambda m, x, qq: m.quantile(x, qq, dim=1), [a, q])
    same_as_torch(lambda m, x: m.nanquantile(x, 0.3, dim=0, interpolation="midpoint"), [a], layout="transposed")
    x = np.array([1.0, 2.0, 3.0], np.float32)
    same_error(lambda m, t: m.quantile(t, 0.3, interpolation="foo"), x)
    same_error(lambda m, t: m.quantile(t, 1.5), x)
    same_error(lambda m, t, qq: m.quantile(t, qq), x, np.array([1.5], np.float32))
    same_error(lambda m, t, qq: m.quantile(t, qq), x, np.array([0.5]))
    same_error(lambda m, t, qq: m.quantile(t, qq), x, np.array([[0.5]], np.float32))
    same_error(lambda m, t: m.quantile(t, 0.5), np.array([1, 2]))
    same_error(lambda m, t: m.nanquantile(t, 0.5), np.zeros(0, np.float32))
    same_error(lambda m, t: m.quantile(t, 0.5, dim=1), x)


# ---- moments, extrema, differences, renorm ----

def test_std_var_mean():
    a = rng.standard_normal((3, 4, 5))
    for layout in LAYOUTS:
        both(lambda m, x: m.std_mean(x), a, layout=layout)
        both(lambda m, x: m.var_mean(x, 1), a, layout=layout)
        both(lambda m, x: m.std_mean(x, (0, 2), False, True), a, layout=layout)
        both(lambda m, x: m.var_mean(x, dim=-1, correction=0, keepdim=True), a, layout=layout)
    same_as_torch(lambda m, x: m.std_mean(x, 1)[0] * 2 + m.std_mean(x, 1)[1], [a], layout="sliced")
    same_as_torch(lambda m, x: m.var_mean(x, 0)[0], [a])
    same_error(lambda m, x: m.std_mean(x), np.array([1, 2]))


def test_aminmax():
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    for layout in LAYOUTS:
        both(lambda m, x: m.aminmax(x), a, layout=layout)
        both(lambda m, x: x.aminmax(dim=1), a, layout=layout)
        both(lambda m, x: m.aminmax(x, dim=-1, keepdim=True), a, layout=layout)
    both(lambda m, x: m.aminmax(x), np.array([3, 1, 2]))
    both(lambda m, x: m.aminmax(x), np.array([True, False]))
    both(lambda m, x: m.aminmax(x, dim=0), np.array(3.0))
    both(lambda m, x: m.aminmax(x, dim=0), np.zeros((1, 0)))
    r = minitorch.aminmax(minitorch.tensor(a))
    assert (r.min.item(), r.max.item()) == (r[0].item(), r[1].item())
    same_as_torch(lambda m, x: m.aminmax(x, dim=1).max, [distinct((3, 4))])
    same_error(lambda m, x: m.aminmax(x), np.zeros(0))
    same_error(lambda m, x: m.aminmax(x, dim=1), np.zeros((2, 0)))


@pytest.mark.parametrize("dtype", ("float32", "int64", "bool"))
def test_diff(dtype):
    a = (rng.integers(-5, 6, (4, 5)) > 0 if dtype == "bool" else rng.integers(-5, 6, (4, 5))).astype(dtype)
    for layout in LAYOUTS:
        for n in (0, 1, 2, 7):
            both(lambda m, x: m.diff(x, n=n), a, layout=layout)
            both(lambda m, x: x.diff(n, 0), a, layout=layout)
    both(lambda m, x, p, q: m.diff(x, dim=0, prepend=p, append=q), a, a[:2], a[1:])
    both(lambda m, x, p: m.diff(x, prepend=p), a, a[:, :1])
    np.testing.assert_array_equal(np.asarray(minitorch.diff(minitorch.tensor(a), 2)), np.diff(a, 2))
    if dtype == "float32":
        check_grad(lambda m, x, p: m.diff(x, n=2, dim=0, append=p), [a.astype(np.float64), a[:1].astype(np.float64)])
    same_error(lambda m, x: m.diff(x), np.array(1.0))
    same_error(lambda m, x: m.diff(x, n=-1), a)
    same_error(lambda m, x, p: m.diff(x, prepend=p), a, a[0])
    same_error(lambda m, x, p: m.diff(x, dim=0, prepend=p), a, a[:, :2])


def test_renorm():
    a = rng.standard_normal((4, 5, 3))
    for layout in LAYOUTS:
        for p, dim, maxnorm in ((2, 0, 1.5), (1, 1, 0.5), (3.5, -1, 2.0), (np.inf, 0, 1.0)):
            both(lambda m, x: m.renorm(x, p, dim, maxnorm), a, layout=layout)
            both(lambda m, x: x.renorm(p, dim, maxnorm).float(), a, layout=layout)
    check_grad(lambda m, x: m.renorm(x, 2, 1, 1.0), [a])
    same_as_torch(lambda m, x: m.renorm(x, 3, 0, 0.8), [a], layout="transposed")
    same_error(lambda m, x: m.renorm(x, -1, 0, 3), a)
    same_error(lambda m, x: m.renorm(x, 2, 0, -3), a)
    same_error(lambda m, x: m.renorm(x, 2, 0, 3), a[0, 0])
    same_error(lambda m, x: m.renorm(x, 2, 3, 3), a)
    same_error(lambda m, x: m.renorm(x, 2, 0, 3), np.ones((2, 2), np.int64))


# ---- unique along a dim, unique_consecutive ----

@pytest.mark.parametrize("dtype", ("float32", "int64", "bool"))
def test_unique_dim(dtype):
    a = rng.integers(0, 2, (6, 3, 2)).astype(dtype)
    a[3] = a[1]
    for layout in LAYOUTS:
        for dim in (0, 1, -1):
            both(lambda m, x: m.unique(x, dim=dim, return_inverse=True, return_counts=True), a, layout=layout)
            both(lambda m, x: x.unique(dim=dim), a, layout=layout)
            both(lambda m, x: m.unique(x, sorted=False, return_counts=True, dim=dim), a, layout=layout)
    both(lambda m, x: m.unique(x, dim=0, return_inverse=True, return_counts=True), np.zeros((0, 3), dtype))
    out, inv, cnt = minitorch._C.unique_dim(minitorch.tensor(a), 0)
    ref, ref_inv, ref_cnt = np.unique(a.reshape(6, -1), axis=0, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(np.asarray(out).reshape(len(ref), -1), ref)
    np.testing.assert_array_equal(np.asarray(inv), ref_inv.ravel())
    np.testing.assert_array_equal(np.asarray(cnt), ref_cnt)
    same_error(lambda m, x: m.unique(x, dim=3), a)
    same_error(lambda m, x: m.unique(x, dim=0), np.array(3.0))
    same_error(lambda m, x: m.unique(x, dim=0), np.zeros((2, 0)))


@pytest.mark.parametrize("dtype", ("float32", "int64", "bool"))
def test_unique_consecutive(dtype):
    a = rng.integers(0, 2, (8, 2, 3)).astype(dtype)
    # runs of 1, 2 and 3 rows first, each unlike the next (random rows met by chance 1 in 64)
    a[0] = a[3] = (a[1] == 0).astype(dtype)
    a[2] = a[6] = a[1]
    a[5] = a[4] = a[3]
    for layout in LAYOUTS:
        both(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True), a, layout=layout)
        both(lambda m, x: x.unique_consecutive(return_counts=True), a, layout=layout)
        for dim in (0, 1, -1):
            both(lambda m, x: m.unique_consecutive(x, True, True, dim), a, layout=layout)
            both(lambda m, x: m.unique_consecutive(x, dim=dim), a, layout=layout)
    both(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True), np.array(3, dtype))
    both(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True), np.zeros(0, dtype))
    both(lambda m, x: m.unique_consecutive(x, return_inverse=True, return_counts=True, dim=1), np.zeros((2, 0), dtype))
    both(lambda m, x: m.unique_consecutive(x, return_inverse=True), np.array([nan, nan, 1.0]))
    out, inv, cnt = minitorch._C.unique_consecutive(minitorch.tensor(a), True, True, 0)
    assert cnt.tolist()[:3] == [1, 2, 3]
    same_error(lambda m, x: m.unique_consecutive(x, dim=0), np.array(3.0))
    same_error(lambda m, x: m.unique_consecutive(x, dim=3), a)
