"""The CUDA sort family (sort, argsort, topk, _unique2 via unique, randperm) against the CPU
kernels: values exactly, indices exactly (both sorts are stable; for stable=False the gather of
the indices must give the values), over empty, one-element, 1-D rows of 1..5000, 3-d tensors
along each dim, non-contiguous inputs, float32/float64/int32/int64/bool with ties, NaN, +-inf
and -0.0. randperm: a permutation of the asked dtype, new on each call, repeated by a seed."""
import numpy as np
import pytest

import minitorch
from minitorch import _C
from helpers import assert_same

DEVICE = "cuda"
if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(0)
DTYPES = [minitorch.float32, minitorch.float64, minitorch.int32, minitorch.int64, minitorch.bool]
NP = {minitorch.float32: np.float32, minitorch.float64: np.float64, minitorch.int32: np.int32,
      minitorch.int64: np.int64, minitorch.bool: np.bool_}
SHAPES = [((0,), 0), ((1,), 0), ((2,), 0), ((3,), -1), ((17,), 0), ((100,), 0), ((1000,), 0),
          ((5000,), 0), ((0, 3), 0), ((0, 3), 1), ((3, 0), 1), ((4, 5, 6), 0), ((4, 5, 6), 1),
          ((4, 5, 6), 2), ((4, 5, 6), -1), ((300, 7), 1), ((7, 300), 0), ((2, 3, 1), 2)]


def values(shape, dtype):
    """Values with many ties; floats with NaN, +-inf, 0.0 and -0.0 among them."""
    n = int(np.prod(shape))
    if dtype == minitorch.bool:
        return RNG.integers(0, 2, n).astype(np.bool_).reshape(shape)
    if dtype in (minitorch.int32, minitorch.int64):
        lo, hi = np.iinfo(NP[dtype]).min, np.iinfo(NP[dtype]).max
        a = RNG.integers(-5, 6, n).astype(NP[dtype])
        a[RNG.random(n) < 0.05] = lo
        a[RNG.random(n) < 0.05] = hi
        return a.reshape(shape)
    a = RNG.integers(-6, 7, n).astype(NP[dtype]) / 2
    specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, -np.nan], NP[dtype])
    pick = RNG.random(n) < 0.2
    a[pick] = RNG.choice(specials, int(pick.sum()))
    a[RNG.random(n) < 0.3] += RNG.standard_normal(1).astype(NP[dtype])[0]
    return a.reshape(shape)


def layouts(shape, dtype):
    """(name, CPU tensor, CUDA tensor) of the same values and the same layout: contiguous,
    transposed (last two dims), sliced, and contiguous at a storage offset. The CUDA views are
    taken on the device (.cuda() of a CPU view would copy it contiguous)."""
    a = values(shape, dtype)
    yield "contiguous", minitorch.tensor(a), minitorch.tensor(a).cuda()
    if a.ndim >= 2:
        t = minitorch.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)))
        yield "transposed", t.transpose(-1, -2), t.cuda().transpose(-1, -2)
    if a.ndim:
        t = minitorch.tensor(np.stack([a, a], axis=1).reshape((shape[0] * 2,) + tuple(shape[1:])))
        yield "sliced", t[::2], t.cuda()[::2]
        t = minitorch.tensor(np.concatenate([values((1,) + tuple(shape[1:]), dtype), a]))
        yield "offset", t[1:], t.cuda()[1:]


EXACT = dict(atol=0, rtol=0, signed_zeros=True)  # values and indices exactly, -0.0 where it was


def gathers(x, idx, vals, dim, what):
    """Gathering x (CPU) along dim with the GPU's indices gives the values."""
    got = np.take_along_axis(x.numpy(), idx.cpu().numpy(), axis=dim) if x.ndim else x.numpy()
    np.testing.assert_array_equal(got, vals.numpy(), err_msg=what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_sort_and_argsort(dtype, shape, dim):
    for name, x, g in layouts(shape, dtype):
        for desc in (False, True):
            what = f"{name} {shape} dim={dim} descending={desc}"
            v, i = minitorch.sort(x, dim=dim, descending=desc, stable=True)
            gv, gi = minitorch.sort(g, dim=dim, descending=desc, stable=True)
            assert_same(gv, v, what=what, **EXACT)
            assert_same(gi, i, what=what, **EXACT)
            uv, ui = g.sort(dim, desc)  # stable=False: any order of ties
            assert_same(uv, v, what=what, **EXACT)
            gathers(x, ui, v, dim, what)
            assert_same(minitorch.argsort(g, dim=dim, descending=desc, stable=True), i, what=what, **EXACT)
            gathers(x, g.argsort(dim, desc), v, dim, what)


@pytest.mark.parametrize("dtype", DTYPES[:4])
@pytest.mark.parametrize("shape,dim", SHAPES)
def test_topk(dtype, shape, dim):
    n = shape[dim]
    for name, x, g in layouts(shape, dtype):
        for k in sorted({0, 1, n // 3, n // 2, n} & set(range(n + 1))):
            for largest in (True, False):
                what = f"{name} {shape} dim={dim} k={k} largest={largest}"
                v, i = minitorch.topk(x, k, dim=dim, largest=largest)
                gv, gi = minitorch.topk(g, k, dim=dim, largest=largest)
                assert_same(gv, v, what=what, **EXACT)
                gathers(x, gi, v, dim, what)
                assert_same(gi, i, what=what, **EXACT)
                uv, ui = g.topk(k, dim, largest, False)  # sorted=False: the same set
                sv = minitorch.sort(uv.cpu(), dim=dim, descending=largest, stable=True)[0]
                assert_same(sv.cuda(), minitorch.sort(v, dim=dim, descending=largest, stable=True)[0], what=what, **EXACT)
                gathers(x, ui, uv.cpu(), dim, what)


def test_zero_dim_and_errors():
    for dtype in DTYPES[:4]:
        x = minitorch.tensor(np.array(2.5).astype(NP[dtype]))
        g = x.cuda()
        for a, b in zip(minitorch.sort(g), minitorch.sort(x)):
            assert_same(a, b, **EXACT)
        assert_same(minitorch.argsort(g, descending=True), minitorch.argsort(x, descending=True), **EXACT)
        for k in (0, 1):
            for a, b in zip(minitorch.topk(g, k), minitorch.topk(x, k)):
                assert_same(a, b, **EXACT)
    g = minitorch.zeros(3, 4, device=DEVICE)
    with pytest.raises(IndexError):
        minitorch.sort(g, dim=2)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        minitorch.topk(g, 5)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        minitorch.topk(g, -1)
    with pytest.raises(NotImplementedError):
        minitorch.topk(g.to(minitorch.bool), 1)


@pytest.mark.parametrize("rows,n", [(1, 300000), (2, 70000), (3000, 5), (40, 4097)])
def test_large(rows, n):
    """Several blocks, one long row (a device-wide sort), many short rows."""
    for dtype in (minitorch.float32, minitorch.int64):
        x = minitorch.tensor(values((rows, n), dtype))
        g = x.cuda()
        for desc in (False, True):
            for a, b in zip(minitorch.sort(g, descending=desc, stable=True), minitorch.sort(x, descending=desc, stable=True)):
                assert_same(a, b, **EXACT)
            for a, b in zip(minitorch.topk(g, min(n, 7), largest=desc), minitorch.topk(x, min(n, 7), largest=desc)):
                assert_same(a, b, **EXACT)
        for a, b in zip(minitorch.sort(g.t(), dim=1, stable=True), minitorch.sort(x.t(), dim=1, stable=True)):
            assert_same(a, b, **EXACT)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (3, 0), (4, 5, 6), (2000,), (300, 41)])
def test_unique(dtype, shape):
    for name, x, g in layouts(shape, dtype):
        for sorted_ in (True, False):
            for inverse in (False, True):
                for counts in (False, True):
                    what = f"{name} {shape} sorted={sorted_} inverse={inverse} counts={counts}"
                    want = _C._unique2(x, sorted_, inverse, counts)
                    got = _C._unique2(g, sorted_, inverse, counts)
                    for a, b in zip(got, want):
                        assert_same(a, b, what=what, **EXACT)
        u, inv, cnt = minitorch.unique(g, return_inverse=True, return_counts=True)
        assert int(cnt.sum().item()) == x.numel()
        np.testing.assert_array_equal(u.cpu().numpy()[inv.cpu().numpy()], x.numpy())


def test_unique_results_are_sized_by_their_data():
    """The device's distinct values and counts are allocated once counted (their storage holds
    exactly their elements), the inverse stated with the input's shape, as on the CPU."""
    x = minitorch.tensor([4, 1, 4, 4, 2, 1, 9], dtype=minitorch.int32)
    for inverse in (False, True):
        for counts in (False, True):
            for got, want in zip(_C._unique2(x.cuda(), True, inverse, counts), _C._unique2(x, True, inverse, counts)):
                assert_same(got, want, **EXACT)
                assert got.untyped_storage().nbytes() == want.untyped_storage().nbytes() == \
                    got.numel() * got.element_size()
                assert got._version == 0
    u, inv, cnt = _C._unique2(x[:0].cuda(), True, True, True)
    assert [tuple(t.shape) for t in (u, inv, cnt)] == [(0,), (0,), (0,)]


def test_unique_large_and_nan():
    a = RNG.integers(0, 1000, 200001).astype(np.float64)
    a[::97] = np.nan
    x = minitorch.tensor(a)
    for got, want in zip(_C._unique2(x.cuda(), True, True, True), _C._unique2(x, True, True, True)):
        assert_same(got, want, **EXACT)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 100, 5000, 200000])
@pytest.mark.parametrize("dtype", [None, minitorch.int64, minitorch.int32, minitorch.float32, minitorch.float64])
def test_randperm(n, dtype):
    p = minitorch.randperm(n, device=DEVICE) if dtype is None else minitorch.randperm(n, dtype=dtype, device=DEVICE)
    assert p.device == minitorch.device("cuda:0")
    assert p.dtype == (dtype or minitorch.int64) and tuple(p.shape) == (n,)
    got = p.cpu().numpy()
    np.testing.assert_array_equal(np.sort(got), np.arange(n))
    if n >= 100:
        assert not np.array_equal(got, np.arange(n))
        assert not np.array_equal(got, minitorch.randperm(n, device=DEVICE).cpu().numpy())


def test_randperm_seed_and_options():
    minitorch.manual_seed(3)
    a = minitorch.randperm(1000, device=DEVICE).cpu().numpy()
    minitorch.manual_seed(3)
    np.testing.assert_array_equal(minitorch.randperm(1000, device=DEVICE).cpu().numpy(), a)
    p = minitorch.randperm(5, dtype=minitorch.float32, device=DEVICE, requires_grad=True)
    assert p.requires_grad and p.device == minitorch.device("cuda:0")
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        minitorch.randperm(3, dtype=minitorch.bool, device=DEVICE)
    # the position of 0 after many draws of randperm(4) is about uniform
    first = [int(np.argmin(minitorch.randperm(4, device=DEVICE).cpu().numpy())) for _ in range(400)]
    assert min(np.bincount(first, minlength=4)) > 50


@pytest.mark.parametrize("op", ["sort", "argsort", "topk", "_unique2", "randperm"])
def test_device_kernels(op):
    assert _C._dispatch_table(op).get("CUDA") == f"mt_cuda_{op}"


def test_on_a_side_stream():
    """On a non-default stream: the CUB sorts and scans, the launches and unique's count read
    back all go to the current stream."""
    a = RNG.integers(0, 5000, 400000).astype(np.float32)
    x = minitorch.tensor(a)
    g = x.cuda()
    s = minitorch.cuda.Stream()
    s.wait_stream(minitorch.cuda.current_stream())
    with minitorch.cuda.stream(s):
        got_sort = minitorch.sort(g.reshape(400, 1000), dim=1, stable=True)
        got_unique = _C._unique2(g * 2, True, True, True)
        perm = minitorch.randperm(100000, device=DEVICE)
    s.synchronize()
    for a_, b_ in zip(got_sort, minitorch.sort(x.reshape(400, 1000), dim=1, stable=True)):
        assert_same(a_, b_, **EXACT)
    for a_, b_ in zip(got_unique, _C._unique2(x * 2, True, True, True)):
        assert_same(a_, b_, **EXACT)
    np.testing.assert_array_equal(np.sort(perm.cpu().numpy()), np.arange(100000))
