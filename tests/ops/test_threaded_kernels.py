"""Kernels that split their work between threads (issue 21): the batch of bmm, the two passes of
masked_select and nonzero, the rows of sort and argmax, the column blocks of cumsum along an outer
dim. Each at 1 and 2 threads (the `threads` fixture), at sizes past the kernels' grain so that the
second thread gets work, against NumPy in float64 and PyTorch, values and gradients; the exact ops
give the same bits at any thread count."""
import numpy as np
import pytest

import helpers
import minitorch
from helpers import as_numpy, check, same_as_torch, torch_alike

FLOAT_TOL = dict(atol=1e-4, rtol=1e-4)
LAYOUTS = ("contiguous", "transposed", "sliced")


def rng():
    return np.random.default_rng(21)


def same_bits_at_one_thread(fn, *tensors):
    """fn(*tensors) gives the same bits now as at one thread (restoring the count)."""
    now = as_numpy(fn(*tensors))
    before = minitorch.get_num_threads()
    minitorch.set_num_threads(1)
    try:
        one = as_numpy(fn(*tensors))
    finally:
        minitorch.set_num_threads(before)
    assert now.shape == one.shape and now.dtype == one.dtype
    np.testing.assert_array_equal(now.view(np.uint8), one.view(np.uint8))


# ---- bmm: the batch split between threads, one gemm each ----

# (8, 1, 4096, 512) and (8, 512, 4096, 1): gemvs that OpenBLAS splits into jobs, run one after
# another on each thread of the batch's region
@pytest.mark.parametrize("b, m, k, n", [(16, 32, 32, 32), (7, 1, 40, 33), (9, 40, 20, 1), (5, 64, 64, 64),
                                        (8, 1, 4096, 512), (8, 512, 4096, 1)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_bmm_batches_on_threads(threads, b, m, k, n, layout):
    x = rng().standard_normal((b, m, k)).astype(np.float32)
    y = rng().standard_normal((b, k, n)).astype(np.float32)
    tol = {key: v * max(1, k // 256) for key, v in FLOAT_TOL.items()}  # float32 sums of k terms
    check(lambda t, p, q: t.bmm(p, q), np.matmul, [x, y], layout=layout, **tol)
    z = rng().standard_normal((b, m, n)).astype(np.float32)
    check(lambda t, c, p, q: t.baddbmm(c, p, q, beta=0.5, alpha=2), lambda c, p, q: 0.5 * c + 2 * (p @ q),
          [z, x, y], layout=layout, **tol)
    same_as_torch(lambda t, p, q: t.bmm(p, q), [x, y], layout=layout, **tol)


def test_bmm_float64_nan_and_4d_matmul(threads):
    x = rng().standard_normal((4, 8, 24, 24))
    x[1, 2, 3, 4] = np.nan
    x[2, 0, 0, 0] = np.inf
    check(lambda t, p: p @ p.transpose(-1, -2), lambda p: p @ np.swapaxes(p, -1, -2), [x], **FLOAT_TOL)
    f = x.astype(np.float32)
    same_as_torch(lambda t, p: t.einsum("bij,bjk->bik", p, p), [f[0]], **FLOAT_TOL)


def test_bmm_empty_and_integer_batches(threads):
    check(lambda t, p, q: t.bmm(p, q), np.matmul, [np.zeros((64, 0, 8), np.float32),
                                                   np.zeros((64, 8, 5), np.float32)])
    check(lambda t, p, q: t.bmm(p, q), np.matmul, [np.ones((64, 3, 0), np.float32),
                                                   np.ones((64, 0, 5), np.float32)])
    a = rng().integers(-9, 9, (40, 20, 20))
    check(lambda t, p, q: t.bmm(p, q), np.matmul, [a, a])


# ---- one small gemm split into blocks of columns (rows where taller than wide), one per thread ----

@pytest.mark.parametrize("m, k, n", [(32, 256, 1024), (32, 1024, 256), (1000, 64, 40), (37, 300, 999),
                                     (20, 700, 20), (300, 5, 333)])
@pytest.mark.parametrize("layout", ("contiguous", "transposed"))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_gemm_blocks_on_threads(threads, m, k, n, layout, dtype):
    x = rng().standard_normal((m, k)).astype(dtype)
    y = rng().standard_normal((k, n)).astype(dtype)
    check(lambda t, p, q: p @ q, np.matmul, [x, y], layout=layout, **FLOAT_TOL)
    c = rng().standard_normal((m, n)).astype(dtype)
    check(lambda t, z, p, q: t.addmm(z, p, q, beta=0.5, alpha=2), lambda z, p, q: 0.5 * z + 2 * (p @ q),
          [c, x, y], layout=layout, **FLOAT_TOL)


def test_small_gemm_blocks_into_out_slice(threads):
    """C's rows ldc apart (out= a column slice of a wider buffer): each block writes its own columns,
    the columns around them keep their values."""
    x = rng().standard_normal((32, 256)).astype(np.float32)
    y = rng().standard_normal((256, 600)).astype(np.float32)
    wide = minitorch.full((32, 700), 7.0)
    minitorch.mm(minitorch.tensor(x), minitorch.tensor(y), out=wide[:, 50:650])
    got = as_numpy(wide)
    np.testing.assert_allclose(got[:, 50:650], x.astype(np.float64) @ y, **FLOAT_TOL)
    assert (got[:, :50] == 7).all() and (got[:, 650:] == 7).all()


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_bmm_batches_on_threads(threads, dtype):
    """complex products inside the batch's region go as one job each (no wait on a second thread)"""
    r = rng()
    x = (r.standard_normal((16, 24, 40)) + 1j * r.standard_normal((16, 24, 40))).astype(dtype)
    y = (r.standard_normal((16, 40, 32)) + 1j * r.standard_normal((16, 40, 32))).astype(dtype)
    z = (r.standard_normal((16, 24, 32)) + 1j * r.standard_normal((16, 24, 32))).astype(dtype)
    mx, my, mz = minitorch.tensor(x), minitorch.tensor(y), minitorch.tensor(z)
    wx, wy, wz = x.astype(np.complex128), y.astype(np.complex128), z.astype(np.complex128)
    for got, want in ((minitorch.bmm(mx, my), wx @ wy),
                      (minitorch.bmm(mx.transpose(1, 2).contiguous().transpose(1, 2), my), wx @ wy),
                      (minitorch.baddbmm(mz, mx, my, beta=0.5 - 1j, alpha=2j), (0.5 - 1j) * wz + 2j * (wx @ wy))):
        assert got.dtype == mx.dtype and tuple(got.shape) == want.shape
        np.testing.assert_allclose(as_numpy(got), want, **FLOAT_TOL)


# ---- masked_select and nonzero: counts per part, a prefix, then each part writes its own ----

@pytest.mark.parametrize("shape", [(300000,), (700, 513), (3, 200, 171), (0,), (5, 0, 3), ()])
@pytest.mark.parametrize("density", [0.0, 0.1, 0.5, 1.0])
def test_nonzero_and_masked_select_on_threads(threads, shape, density):
    g = rng()
    a = ((g.random(shape) < density) * g.standard_normal(shape)).astype(np.float32)
    check(lambda t, x: x.nonzero(), lambda x: np.argwhere(x), [a])
    check(lambda t, x: t.masked_select(x, x != 0), lambda x: x[x != 0], [a])
    t = minitorch.tensor(a)
    same_bits_at_one_thread(lambda x: x.nonzero(), t)
    same_bits_at_one_thread(lambda x: x[x > 0], t)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_masked_select_broadcast_strided_and_grad(threads, layout):
    g = rng()
    a = g.standard_normal((300, 257)).astype(np.float32)
    a[::5, 3] = np.nan
    m = g.random((300, 257)) < 0.5
    check(lambda t, x, k: t.masked_select(x, k), lambda x, k: x[k], [a, m], layout=layout)
    row = a[:1]
    check(lambda t, x, k: t.masked_select(x, k), lambda x, k: np.broadcast_to(x, k.shape)[k], [row, m],
          layout=layout)
    same_as_torch(lambda t, x, k: t.masked_select(x, k), [a, m], layout=layout)
    same_as_torch(lambda t, x, k: x[k], [a, m], layout=layout)
    for dt in ("int8", "int64", "float64"):
        b = np.nan_to_num(a * 10).astype(dt)
        check(lambda t, x, k: t.masked_select(x, k), lambda x, k: x[k], [b, m])


def test_nonzero_of_nan_and_bool_layouts(threads):
    a = rng().standard_normal((400, 300))
    a[a < 0.5] = 0
    a[7, 11] = np.nan
    for layout in LAYOUTS:
        check(lambda t, x: x.nonzero(), np.argwhere, [a], layout=layout)
        check(lambda t, x: (x > 1).nonzero(), lambda x: np.argwhere(x > 1), [a], layout=layout)


# ---- rows of sort and argmax, columns of cumsum ----

SORT_SHAPES = [(300, 517), (3, 200, 171), (1, 70000), (70000, 1), (130, 3, 1), (0, 5), (5, 0)]


@pytest.mark.parametrize("shape", SORT_SHAPES)
def test_sort_and_argmax_rows_on_threads(threads, shape):
    a = rng().integers(-5, 5, shape).astype(np.float32)  # ties: the first index wins
    if a.size:
        a.flat[::7] = np.nan
    for d in range(a.ndim):
        check(lambda t, x: t.argsort(x, dim=d, stable=True), lambda x: np.argsort(x, d, kind="stable"), [a])
        check(lambda t, x: t.sort(x, dim=d, descending=True)[0], lambda x: np.flip(np.sort(x, d), d), [a])
        if shape[d]:
            check(lambda t, x: x.argmax(d), lambda x: np.nanargmax(np.where(np.isnan(x), np.inf, x), d), [a])
            check(lambda t, x: x.argmin(d), lambda x: np.argmin(np.where(np.isnan(x), -np.inf, x), d), [a])
            if helpers.torch is not None:
                torch_alike(lambda t, x: x.max(d), a, layout="transposed")
            same_as_torch(lambda t, x: x.max(d)[0], [a], layout="transposed")
        if shape[d] >= 3:
            distinct = rng().permutation(a.size).reshape(shape).astype(np.float32)
            if helpers.torch is not None:
                torch_alike(lambda t, x: t.topk(x, 3, dim=d), distinct)
            same_as_torch(lambda t, x: t.topk(x, 3, dim=d)[0], [distinct])
        t = minitorch.tensor(a)
        same_bits_at_one_thread(lambda x: minitorch.argsort(x, dim=d), t)


def stable_order(a, axis, descending):
    """NumPy's stable order of a's rows along axis with BEFORE's ties: -0.0 ties with 0.0, every
    NaN ties with every other and sorts above all numbers."""
    nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    key = np.where(nan, 0, a).astype(np.float64) + 0.0  # -0.0 + 0.0 is 0.0
    rows = lambda x: np.moveaxis(x, axis, -1).reshape(-1, a.shape[axis])  # noqa: E731
    position = np.arange(a.shape[axis])
    order = [np.lexsort((position, -k if descending else k, ~m if descending else m))
             for k, m in zip(rows(key), rows(nan))]
    return np.moveaxis(np.array(order).reshape(np.moveaxis(a, axis, -1).shape), -1, axis)


def radix_sample(dtype, shape, seed=0):
    """Values with many ties, the extremes, and for floats NaN, +-0.0 and +-inf mixed in."""
    r = np.random.default_rng(seed)
    if dtype in ("int32", "int64"):
        a = r.integers(-50, 50, shape).astype(dtype)
        a.flat[::97] = np.iinfo(dtype).min
        a.flat[5::89] = np.iinfo(dtype).max
        a.flat[6::83] = 1 << 20  # a third byte that differs
        return a
    a = (r.standard_normal(shape) * 1e3).astype(dtype)
    a.flat[::3] = np.round(a.flat[::3] / 500)  # ties
    a.flat[::17], a.flat[1::19], a.flat[2::23] = np.nan, -0.0, 0.0
    a.flat[5::29], a.flat[7::31], a.flat[11::37] = np.inf, -np.inf, -np.nan
    a.flat[13::41] = np.finfo(dtype).smallest_subnormal
    return a


# the long rows sorted by radix (2048 elements and more): one row split between the threads, rows
# of several lanes, rows along an outer dim (strided), odd sizes, and the length where it starts
@pytest.mark.parametrize("shape, dim", [((300001,), 0), ((3, 70001), 1), ((2049, 3), 0), ((2, 2048), 1),
                                        ((2047,), 0)])
@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64"])
@pytest.mark.parametrize("descending", [False, True])
def test_radix_sort_rows_on_threads(threads, shape, dim, dtype, descending):
    a = radix_sample(dtype, shape)
    order = stable_order(a, dim, descending)
    for layout in ("contiguous", "transposed"):
        x = helpers.to_layout(a, layout)
        values, indices = minitorch.sort(x, dim, descending=descending, stable=True)
        np.testing.assert_array_equal(as_numpy(indices), order)
        # the values bit for bit: -0.0 stays -0.0, a NaN keeps its sign
        bits = f"u{a.itemsize}"
        np.testing.assert_array_equal(as_numpy(values).view(bits), np.take_along_axis(a, order, dim).view(bits))
        np.testing.assert_array_equal(as_numpy(minitorch.argsort(x, dim, descending=descending, stable=True)),
                                      order)
        k = shape[dim] // 4 + 1  # k * 8 >= n: the sort's first k, not the heap
        top_v, top_i = minitorch.topk(x, k, dim, largest=descending)
        want = order.take(np.arange(k), axis=dim)
        np.testing.assert_array_equal(as_numpy(top_i), want)
        np.testing.assert_array_equal(as_numpy(top_v).view(bits), np.take_along_axis(a, want, dim).view(bits))
    if helpers.torch is not None and a.ndim == 1:
        t = helpers.torch.sort(helpers.torch.tensor(a), descending=descending, stable=True)
        np.testing.assert_array_equal(as_numpy(indices), t.indices.numpy())
    same_bits_at_one_thread(lambda x: minitorch.sort(x, dim, descending=descending)[1], minitorch.tensor(a))


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64"])
@pytest.mark.parametrize("shape", [(4096,), (70, 300), (150001,)])
def test_unique_of_radix_sorted_rows(threads, dtype, shape):
    a = radix_sample(dtype, shape, seed=3)
    x = helpers.to_layout(a, "transposed")
    out, inverse, counts = minitorch.unique(x, return_inverse=True, return_counts=True)
    u, inv, cnt = np.unique(a, return_inverse=True, return_counts=True, equal_nan=False)
    # NumPy orders -0.0 and 0.0 as one value as well; NaN != NaN: one group each, last
    np.testing.assert_array_equal(as_numpy(out), u)
    np.testing.assert_array_equal(as_numpy(counts), cnt)
    nan = np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)
    got = as_numpy(inverse)
    np.testing.assert_array_equal(got[~nan], inv.reshape(a.shape)[~nan])
    # NumPy's sort there is not stable: the NaNs' groups are the last ones, each its own, in any order
    assert sorted(got[nan]) == list(range(len(u) - nan.sum(), len(u)))
    if helpers.torch is not None:
        want = helpers.torch.unique(helpers.torch.tensor(a), return_inverse=True, return_counts=True)
        np.testing.assert_array_equal(as_numpy(out), want[0].numpy())
        np.testing.assert_array_equal(got[~nan], want[1].numpy()[~nan])  # PyTorch's NaNs: any order too
        np.testing.assert_array_equal(as_numpy(counts), want[2].numpy())


@pytest.mark.parametrize("shape", [(512, 512), (3, 300, 130), (1, 5000), (5000, 1), (64, 0)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_cumsum_cumprod_on_threads(threads, shape, layout):
    a = rng().standard_normal(shape)
    f = a.astype(np.float32)
    for d in range(a.ndim):
        # float32 sums in double, each column in the order of the dim: float64's cumsum, rounded
        check(lambda t, x: t.cumsum(x, d), lambda x: np.cumsum(x, d).astype(np.float32), [f], layout=layout,
              atol=0, rtol=0)
        check(lambda t, x: t.cumsum(x, d), lambda x: np.cumsum(x, d), [a], layout=layout, atol=1e-12)
        check(lambda t, x: t.cumprod(x, d), lambda x: np.cumprod(x, d), [a / 1.5 + 1], layout=layout, atol=1e-9)
        i = (a * 4).astype(np.int64)
        check(lambda t, x: t.cumsum(x, d), lambda x: np.cumsum(x, d), [i], layout=layout)
        same_as_torch(lambda t, x: t.cumsum(x, d), [f], layout=layout, **FLOAT_TOL)
        same_as_torch(lambda t, x: t.logcumsumexp(x, d), [f], layout=layout, **FLOAT_TOL)


@pytest.mark.parametrize("shape", [(512, 512), (3, 300, 130), (2000, 10), (64, 0)])
def test_softmax_blocks_on_threads(threads, shape):
    a = rng().standard_normal(shape).astype(np.float32) * 4
    for d in range(a.ndim):
        def ref(x, d=d):
            e = np.exp(x - (x.max(d, keepdims=True) if x.size else 0))
            return e / e.sum(d, keepdims=True)
        check(lambda t, x: t.softmax(x, d), ref, [a], layout="transposed", **FLOAT_TOL)
        check(lambda t, x: t.log_softmax(x, d), lambda x: np.log(ref(x)), [a], **FLOAT_TOL)
        same_as_torch(lambda t, x: t.log_softmax(x, d), [a], layout="sliced", **FLOAT_TOL)
        same_bits_at_one_thread(lambda x: minitorch.softmax(x, d), minitorch.tensor(a))


# ---- scaled_dot_product_attention: whole batch-and-heads per thread ----

@pytest.mark.parametrize("shape", [(4, 3, 40, 16), (3, 33, 8), (1, 1, 70, 8)])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_heads_on_threads(threads, shape, causal):
    g = rng()
    q, k, v = (g.standard_normal(shape).astype(np.float32) for _ in range(3))
    L = shape[-2]

    def ref(q, k, v):
        s = q @ np.swapaxes(k, -1, -2) / np.sqrt(shape[-1])
        if causal:
            s = np.where(np.tril(np.ones((L, L), bool)), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)) @ v

    sdpa = lambda t, q, k, v: t.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    check(sdpa, ref, [q, k, v], **FLOAT_TOL)
    same_as_torch(sdpa, [q, k, v], **FLOAT_TOL)
    mask = g.standard_normal(shape[:-1] + (L,)).astype(np.float32)
    same_as_torch(lambda t, q, k, v, m: t.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m),
                  [q, k, v, mask], **FLOAT_TOL)


# ---- integer max and min (the lanes of reduce.c's extremum loop), and bincount on them ----

@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_integer_extrema_and_bincount(threads, dtype, layout):
    g = rng()
    info = np.iinfo(dtype)
    a = g.integers(info.min, info.max, (300, 77), dtype=dtype, endpoint=True)
    a[5, 7], a[200, 3] = info.min, info.max
    for fn in ("amax", "amin"):
        check(lambda t, x: getattr(x, fn)(), lambda x: getattr(np, fn)(x), [a], layout=layout)
        for d in (0, 1):
            check(lambda t, x: getattr(x, fn)(d), lambda x: getattr(np, fn)(x, d), [a], layout=layout)
    for n in (1, 15, 16, 17, 4099):
        v = g.integers(-50, 50, n).astype(dtype)
        check(lambda t, x: x.max(), np.max, [v])
        check(lambda t, x: x.min(), np.min, [v])
    counts = g.integers(0, 700, 5000)
    check(lambda t, x: t.bincount(x), np.bincount, [counts])
    w = g.standard_normal(5000)
    check(lambda t, x, y: t.bincount(x, y, minlength=800), lambda x, y: np.bincount(x, y, minlength=800),
          [counts, w])
