"""dot, addmv and baddbmm (cuBLAS, or the host round trip in a build without it), nonzero and
masked_select (flags, a device scan, a scatter) on CUDA against the CPU result: empty and
one-element shapes, transposed, sliced and expanded operands, alpha/beta incl. beta=0 over a NaN
input, broadcast masks, and sizes that take several blocks."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(5)
FLOATS = [minitorch.float32, minitorch.float64]
ALL = FLOATS + [minitorch.int32, minitorch.int64, minitorch.bool]
HAS_CUBLAS = minitorch.cuda._C_cuda.has_cublas


EXACT = dict(atol=0, rtol=0)  # integers, and floats a kernel only moves


def tol(dtype, k=1):
    return dict(atol=1e-4 * max(k, 1) ** 0.5, rtol=1e-4) if dtype == minitorch.float32 else dict(atol=1e-10, rtol=1e-10)


def rand(shape, dtype=minitorch.float32):
    a = RNG.standard_normal(shape)
    if dtype == minitorch.bool:
        return minitorch.tensor(a > 0.3)
    if dtype in (minitorch.int32, minitorch.int64):
        a = np.where(np.abs(a) < 0.4, 0, np.round(a * 3))
    return minitorch.tensor(a).to(dtype)


def views(shape, dtype, layout):
    """A CPU tensor of shape in the layout: contiguous, transposed (last two dims swapped in
    memory), sliced (every other row of the first dim) or expanded (a size-1 first dim)."""
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        t = rand(shape[:-2] + (shape[-1], shape[-2]), dtype)
        return t.transpose(-1, -2)
    if layout == "sliced" and len(shape) >= 1:
        return rand((shape[0] * 2,) + shape[1:], dtype)[::2]
    if layout == "expanded" and len(shape) >= 1:
        return rand((1,) + shape[1:], dtype).expand(*shape)
    return rand(shape, dtype)


def gpu(t):
    return t.cuda() if isinstance(t, minitorch.Tensor) else t


# ---- dot ----


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 70001])
def test_dot(dtype, n):
    for lx, ly in [("contiguous", "contiguous"), ("sliced", "contiguous"), ("contiguous", "expanded"),
                   ("sliced", "sliced")]:
        x, y = views((n,), dtype, lx), views((n,), dtype, ly)
        assert_same(minitorch.dot(x.cuda(), y.cuda()), minitorch.dot(x, y), **tol(dtype, n))
        assert_same(x.cuda().dot(y.cuda()), x.dot(y), **tol(dtype, n))


def test_dot_errors_and_ints():
    a = minitorch.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match="1D tensors expected"):
        minitorch.dot(a.reshape(1, 3), a)
    with pytest.raises(RuntimeError, match="inconsistent tensor size"):
        minitorch.dot(a, minitorch.ones(4, device="cuda"))
    with pytest.raises(RuntimeError, match="expected both vectors to have same dtype"):
        minitorch.dot(a, a.double())
    i = minitorch.arange(5)
    if HAS_CUBLAS:  # as PyTorch's CUDA kernel: floats only
        with pytest.raises(NotImplementedError, match="\"dot\" not implemented for 'Long'"):
            minitorch.dot(i.cuda(), i.cuda())
    else:
        assert_same(minitorch.dot(i.cuda(), i.cuda()), minitorch.dot(i, i), **EXACT)


# ---- addmv ----

ALPHA_BETA = [(1, 1), (2.0, 0.5), (-1.5, 0), (0.25, -3)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("m,k", [(0, 3), (3, 0), (0, 0), (1, 1), (1, 5), (7, 1), (33, 17), (300, 129)])
def test_addmv(dtype, m, k):
    for lm, lv in [("contiguous", "contiguous"), ("transposed", "sliced"), ("sliced", "expanded"),
                   ("transposed", "contiguous")]:
        mat, vec = views((m, k), dtype, lm), views((k,), dtype, lv)
        for sshape in [(m,), (1,), ()]:
            s = rand(sshape, dtype)
            for alpha, beta in ALPHA_BETA:
                assert_same(minitorch.addmv(s.cuda(), mat.cuda(), vec.cuda(), beta=beta, alpha=alpha),
                            minitorch.addmv(s, mat, vec, beta=beta, alpha=alpha), **tol(dtype, k))
        assert_same(s.cuda().addmv(mat.cuda(), vec.cuda()), s.addmv(mat, vec), **tol(dtype, k))
        assert_same(minitorch.mv(mat.cuda(), vec.cuda()), minitorch.mv(mat, vec), **tol(dtype, k))


@pytest.mark.parametrize("dtype", FLOATS)
def test_beta_zero_ignores_nan(dtype):
    nan = minitorch.full((4,), float("nan"), dtype=dtype)
    mat, vec = rand((4, 6), dtype), rand((6,), dtype)
    assert_same(minitorch.addmv(nan.cuda(), mat.cuda(), vec.cuda(), beta=0), minitorch.mv(mat, vec), **tol(dtype))
    assert_same(minitorch.addmv(nan.cuda(), rand((4, 0), dtype).cuda(), rand((0,), dtype).cuda(), beta=0),
                minitorch.zeros(4, dtype=dtype), **EXACT)
    b1, b2 = rand((2, 4, 3), dtype), rand((2, 3, 5), dtype)
    nan3 = minitorch.full((2, 4, 5), float("nan"), dtype=dtype)
    assert_same(minitorch.baddbmm(nan3.cuda(), b1.cuda(), b2.cuda(), beta=0, alpha=2), minitorch.bmm(b1, b2) * 2, **tol(dtype))
    assert_same(minitorch.baddbmm(nan3.cuda(), rand((2, 4, 0), dtype).cuda(), rand((2, 0, 5), dtype).cuda(), beta=0),
                minitorch.zeros(2, 4, 5, dtype=dtype), **EXACT)
    # beta != 0 keeps the NaN, also with an empty inner dimension
    out = minitorch.addmv(nan.cuda(), rand((4, 0), dtype).cuda(), rand((0,), dtype).cuda(), beta=2).cpu()
    assert np.isnan(out.numpy()).all()


def test_addmv_errors_and_ints():
    m, v = minitorch.ones(3, 4, device="cuda"), minitorch.ones(4, device="cuda")
    with pytest.raises(RuntimeError, match="size mismatch"):
        minitorch.addmv(minitorch.ones(2, device="cuda"), m, v)
    with pytest.raises(RuntimeError, match="vector \\+ matrix @ vector expected"):
        minitorch.addmv(minitorch.ones(3, device="cuda"), m, m)
    with pytest.raises(RuntimeError, match="addmv input tensors must have the same dtype"):
        minitorch.addmv(minitorch.ones(3, device="cuda"), m, v.double())
    i, im = minitorch.arange(4), minitorch.arange(12).reshape(3, 4)
    if HAS_CUBLAS:
        with pytest.raises(NotImplementedError, match="\"addmv_impl_cuda\" not implemented for 'Long'"):
            minitorch.addmv(i[:3].cuda(), im.cuda(), i.cuda())
    else:
        assert_same(minitorch.addmv(i[:3].cuda(), im.cuda(), i.cuda()), minitorch.addmv(i[:3], im, i), **EXACT)


# ---- baddbmm ----


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("b,m,k,n", [(0, 2, 3, 4), (2, 0, 3, 4), (2, 3, 0, 4), (2, 3, 4, 0), (1, 1, 1, 1),
                                     (3, 5, 7, 2), (4, 1, 9, 6), (2, 65, 33, 40)])
def test_baddbmm(dtype, b, m, k, n):
    for l1, l2 in [("contiguous", "contiguous"), ("transposed", "contiguous"), ("contiguous", "transposed"),
                   ("sliced", "transposed"), ("expanded", "sliced")]:
        b1, b2 = views((b, m, k), dtype, l1), views((b, k, n), dtype, l2)
        for sshape in [(b, m, n), (m, n), (n,), ()]:
            s = rand(sshape, dtype)
            for alpha, beta in ALPHA_BETA:
                assert_same(minitorch.baddbmm(s.cuda(), b1.cuda(), b2.cuda(), beta=beta, alpha=alpha),
                            minitorch.baddbmm(s, b1, b2, beta=beta, alpha=alpha), **tol(dtype, k))
        assert_same(minitorch.bmm(b1.cuda(), b2.cuda()), minitorch.bmm(b1, b2), **tol(dtype, k))
        assert_same(s.cuda().baddbmm(b1.cuda(), b2.cuda()), s.baddbmm(b1, b2), **tol(dtype, k))


def test_baddbmm_errors_and_ints():
    s, b1 = minitorch.ones(2, 3, 5, device="cuda"), minitorch.ones(2, 3, 4, device="cuda")
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        minitorch.baddbmm(s, b1, minitorch.ones(4, 5, device="cuda"))
    with pytest.raises(RuntimeError, match="Expected size for first two dimensions of batch2 tensor"):
        minitorch.baddbmm(s, b1, minitorch.ones(2, 5, 5, device="cuda"))
    with pytest.raises(RuntimeError, match="Input dtypes must be the same"):
        minitorch.baddbmm(s.double(), b1, minitorch.ones(2, 4, 5, device="cuda"))
    i1, i2, i0 = minitorch.arange(24).reshape(2, 3, 4), minitorch.arange(40).reshape(2, 4, 5), minitorch.zeros(2, 3, 5, dtype=minitorch.int64)
    if HAS_CUBLAS:
        with pytest.raises(NotImplementedError, match="\"baddbmm_cuda\" not implemented for 'Long'"):
            minitorch.baddbmm(i0.cuda(), i1.cuda(), i2.cuda())
    else:
        assert_same(minitorch.baddbmm(i0.cuda(), i1.cuda(), i2.cuda()), minitorch.baddbmm(i0, i1, i2), **EXACT)


@pytest.mark.parametrize("dtype", FLOATS)
def test_products_with_an_empty_inner_dimension(dtype):
    # k = 0: cuBLAS is not called (its quick return would leave the output unwritten)
    a, b, v = rand((3, 0), dtype), rand((0, 4), dtype), rand((0,), dtype)
    assert_same(minitorch.mm(a.cuda(), b.cuda()), minitorch.mm(a, b), **EXACT)
    assert_same(minitorch.mm(a[:1].cuda(), b.cuda()), minitorch.mm(a[:1], b), **EXACT)
    assert_same(minitorch.mv(a.cuda(), v.cuda()), minitorch.mv(a, v), **EXACT)
    c = rand((3, 4), dtype)
    assert_same(minitorch.addmm(c.cuda(), a.cuda(), b.cuda(), beta=0.5), minitorch.addmm(c, a, b, beta=0.5), **tol(dtype))
    assert_same(minitorch.bmm(rand((2, 3, 0), dtype).cuda(), rand((2, 0, 4), dtype).cuda()), minitorch.zeros(2, 3, 4, dtype=dtype), **EXACT)


# ---- nonzero ----


def view_pair(shape, dtype, layout):
    """views(shape, dtype, layout) and the same view taken of its base's CUDA copy: .cuda() of a
    CPU view copies it contiguous, so this is how a non-contiguous CUDA input is made."""
    cpu = views(shape, dtype, layout)
    last = sum((n - 1) * st for n, st in zip(cpu.shape, cpu.stride()))  # strides are >= 0 here
    base = cpu.as_strided((cpu.storage_offset() + last + 1 if cpu.numel() else 0,), (1,), 0)
    return cpu, base.cuda().as_strided(tuple(cpu.shape), cpu.stride(), cpu.storage_offset())


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(), (0,), (1,), (5, 0, 3), (1000,), (300, 257), (3, 4, 5, 6)])
def test_nonzero(dtype, shape):
    layouts = ["contiguous"] + (["transposed", "sliced", "expanded"] if len(shape) >= 2 else ["sliced", "expanded"] if shape else [])
    for layout in layouts:
        x, g = view_pair(shape, dtype, layout)
        got, want = minitorch.nonzero(g), minitorch.nonzero(x)
        assert got.dtype == minitorch.int64
        assert_same(got, want, **EXACT)


def test_nonzero_nan_zero_and_large():
    x = minitorch.tensor([0.0, float("nan"), -0.0, 1.0, float("inf")])
    assert_same(minitorch.nonzero(x.cuda()), minitorch.nonzero(x), **EXACT)
    big = rand((1 << 20,), minitorch.int32)  # several tiles of the scan
    assert_same(minitorch.nonzero(big.cuda()), minitorch.nonzero(big), **EXACT)
    for value in (0, 1):
        full = minitorch.full((3000, 7), value, dtype=minitorch.int64)
        assert_same(minitorch.nonzero(full.cuda()), minitorch.nonzero(full), **EXACT)
    assert_same(minitorch.nonzero(minitorch.tensor(0.0).cuda()), minitorch.nonzero(minitorch.tensor(0.0)), **EXACT)
    assert_same(minitorch.nonzero(minitorch.tensor(2).cuda()), minitorch.nonzero(minitorch.tensor(2)), **EXACT)


# ---- masked_select ----

MASK_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((2, 1, 5), (3, 1)), ((), (3,)), ((3,), ()),
               ((), ()), ((0, 4), (4,)), ((1,), (1,)), ((700, 300), (300,)), ((200, 300), (200, 300))]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("xs,ms", MASK_SHAPES)
def test_masked_select(dtype, xs, ms):
    for lx, lm in [("contiguous", "contiguous"), ("transposed", "sliced"), ("sliced", "transposed")]:
        (x, gx), (mask, gm) = view_pair(xs, dtype, lx), view_pair(ms, minitorch.bool, lm)
        assert_same(minitorch.masked_select(gx, gm), minitorch.masked_select(x, mask), **EXACT)
        assert_same(gx.masked_select(gm), x.masked_select(mask), **EXACT)


def test_masked_select_all_none_large_and_errors():
    x = rand((1 << 20,), minitorch.float64)
    for mask in (x > 0, x > 100, x > -100):
        assert_same(minitorch.masked_select(x.cuda(), mask.cuda()), minitorch.masked_select(x, mask), **EXACT)
    with pytest.raises(RuntimeError, match="masked_select: expected BoolTensor for mask"):
        minitorch.masked_select(x[:3].cuda(), minitorch.ones(3, dtype=minitorch.int64, device="cuda"))
    with pytest.raises(RuntimeError):
        minitorch.masked_select(minitorch.ones(3, device="cuda"), minitorch.ones(4, dtype=minitorch.bool, device="cuda"))


def test_nonzero_and_masked_select_on_a_side_stream():
    """On a non-default stream: the scan and the count read back follow the queued work the
    flags depend on."""
    x = rand((1 << 21,), minitorch.float32)
    g = x.cuda()
    s = minitorch.cuda.Stream()
    s.wait_stream(minitorch.cuda.current_stream())
    with minitorch.cuda.stream(s):
        h = g * 3 + 1  # queued work the flags depend on
        nz, sel = minitorch.nonzero(h > 1), minitorch.masked_select(h, h > 1)
    s.synchronize()
    assert_same(nz, minitorch.nonzero(x * 3 + 1 > 1), **EXACT)
    assert_same(sel, minitorch.masked_select(x * 3 + 1, x * 3 + 1 > 1), **EXACT)
