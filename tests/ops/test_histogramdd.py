"""torch.histogramdd (a composite: per-dimension bin edges, searchsorted, one index_add_):
counts, weights, density, given ranges and given edges against NumPy's histogramdd (float64) and
PyTorch, in several layouts and dimensions; empty inputs, single values, points outside the
grid and on its right edge; PyTorch's refusals."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, same_error, to_layout, torch

RNG = np.random.default_rng(1921)


def _both(points, bins, **kw):
    """minitorch's and NumPy's (hist, edges) for the same call (bins/range in NumPy's form)"""
    np_bins = [as_numpy(b) for b in bins] if isinstance(bins, list) and isinstance(bins[0], minitorch.Tensor) else bins
    rng = kw.pop("range", None)
    np_range = None if rng is None else [rng[i:i + 2] for i in range(0, len(rng), 2)]
    weight = kw.get("weight")
    got = minitorch.histogramdd(minitorch.tensor(points) if not isinstance(points, minitorch.Tensor) else points, bins,
                                range=rng, **kw)
    flat = as_numpy(points).reshape(-1, as_numpy(points).shape[-1]) if isinstance(points, minitorch.Tensor) else \
        points.reshape(-1, points.shape[-1])
    want = np.histogramdd(flat.astype(np.float64), bins=np_bins, range=np_range,
                          weights=None if weight is None else as_numpy(weight).reshape(-1), density=kw.get("density", False))
    return got, want


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_counts_against_numpy(d, layout):
    """(M, D) points and (2, M/2, D) batches, integer bins per dimension or one for all, in
    several layouts; the values, shapes, dtype (the input's) and edges."""
    pts = RNG.standard_normal((40, d))
    x = to_layout(pts, layout)
    bins = [3, 4, 5][:d]
    got, (hist, edges) = _both(x, bins)
    assert got.hist.dtype == minitorch.float64 and tuple(got.hist.shape) == tuple(bins)
    np.testing.assert_array_equal(as_numpy(got.hist), hist)
    for e, w in zip(got.bin_edges, edges):
        np.testing.assert_allclose(as_numpy(e), w, rtol=1e-12, atol=1e-15)
    got, (hist, _) = _both(minitorch.tensor(pts.reshape(2, 20, d)), 4)
    np.testing.assert_array_equal(as_numpy(got.hist), hist)


def test_weights_density_range_and_edges_against_numpy():
    pts = RNG.uniform(-1, 2, (50, 2))
    w = RNG.uniform(0, 3, 50)
    got, (hist, _) = _both(pts, [3, 2], weight=minitorch.tensor(w), range=[0.0, 1.0, -1.0, 1.0])
    np.testing.assert_allclose(as_numpy(got.hist), hist, rtol=1e-12)
    got, (hist, _) = _both(pts, [4, 3], density=True)
    np.testing.assert_allclose(as_numpy(got.hist), hist, rtol=1e-12)
    edges = [minitorch.tensor([-1.0, 0.0, 0.5, 2.0], dtype=minitorch.float64),
             minitorch.tensor([0.0, 1.0], dtype=minitorch.float64)]
    got, (hist, _) = _both(pts, edges, weight=minitorch.tensor(w), density=True)
    np.testing.assert_allclose(as_numpy(got.hist), hist, rtol=1e-12)
    # the last edge is inside the last bin, points past it and NaN outside every bin
    got = minitorch.histogramdd(minitorch.tensor([[1.0, 0.0], [1.0001, 0.5], [float("nan"), 0.5], [0.0, 1.0]]),
                                bins=2, range=[0.0, 1.0, 0.0, 1.0])
    assert as_numpy(got.hist).tolist() == [[0.0, 1.0], [1.0, 0.0]]


@pytest.mark.skipif(torch is None, reason="needs PyTorch")
@pytest.mark.parametrize("case", ["plain", "batch", "weight", "density", "range", "edges", "empty", "single",
                                  "float32"])
def test_same_as_torch(case):
    pts = RNG.standard_normal((30, 2))
    kw, bins, dtype = {}, [3, 5], "float64"
    if case == "batch":
        pts = pts.reshape(3, 10, 2)
    if case == "weight":
        kw["weight"] = RNG.uniform(0, 2, 30)
    if case == "density":
        kw["density"] = True
    if case == "range":
        kw["range"] = [-1.0, 1.0, 0.0, 2.0]
    if case == "edges":
        bins = [np.array([-2.0, -0.5, 0.0, 3.0]), np.array([-1.0, 1.0])]
    if case == "empty":
        pts = pts[:0]
    if case == "single":
        pts = np.ones((4, 2))
    if case == "float32":
        dtype = "float32"

    def call(lib):
        def t(a):
            return lib.tensor(np.asarray(a, dtype=dtype))
        b = [t(e) for e in bins] if case == "edges" else bins
        args = {k: (t(v) if k == "weight" else v) for k, v in kw.items()}
        return lib.histogramdd(t(pts), b, **args)
    got, want = call(minitorch), call(torch)
    assert type(got).__name__ == type(want).__name__ == "histogramdd"
    assert str(got.hist.dtype).split(".")[-1] == str(want.hist.dtype).split(".")[-1]
    np.testing.assert_allclose(as_numpy(got.hist), want.hist.numpy(), rtol=1e-6, atol=1e-7)
    assert len(got.bin_edges) == len(want.bin_edges)
    for e, w in zip(got.bin_edges, want.bin_edges):
        np.testing.assert_allclose(as_numpy(e), w.numpy(), rtol=1e-6, atol=1e-7)


BAD = [
    lambda m: m.histogramdd(m.randn(5), bins=3),
    lambda m: m.histogramdd(m.randn(10, 2), bins=[2, 3, 4]),
    lambda m: m.histogramdd(m.randn(10, 2), bins=3, range=[0.0, 1.0]),
    lambda m: m.histogramdd(m.randn(10, 2).double(), bins=[m.tensor([0.0, 1.0]), m.tensor([0.0, 1.0])]),
    lambda m: m.histogramdd(m.ones(10, 2, dtype=m.int32), bins=3),
    lambda m: m.histogramdd(m.randn(10, 2), bins=3, weight=m.ones(9)),
    lambda m: m.histogramdd(m.randn(10, 2), bins=3, range=[1.0, 0.0, 0.0, 1.0]),
    lambda m: m.histogramdd(m.tensor([[float("nan"), 0.0]]), bins=2),
    lambda m: m.histogramdd(m.tensor([[float("inf"), 0.0]]), bins=2),
]


@pytest.mark.parametrize("fn", BAD)
def test_bad_calls_raise_as_torch(fn):
    same_error(fn)


def test_input_requiring_grad_warns_nothing():
    # the bins' range is read from the points: no "Converting a tensor with requires_grad=True
    # to a scalar" warning of minitorch's own making (PyTorch gives none)
    import warnings

    points = minitorch.tensor(RNG.random((10, 2)), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hist, _ = minitorch.histogramdd(points, bins=3)
    np.testing.assert_array_equal(as_numpy(hist), np.histogramdd(as_numpy(points.detach()), bins=3)[0])
