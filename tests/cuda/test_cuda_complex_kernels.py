"""Complex tensors on the CUDA device through the device's own kernels, not the host: the complex64
and complex128 loops of every MT_EW_COMPLEX row of ops/elementwise.def, exp2, logaddexp, lerp,
addcmul, addcdiv, nan_to_num and the logical ops among them (cuda/kernels.cu, whose
math is core/math_complex_parts.h), the complex fills and casts, cat, and index, index_select and
index_put_ on the real views (csrc/dispatch/complex.c). Values equal the CPU's (complex128 to a
few ulps, complex64 to float32's), gradients too; and a rotary embedding's forward and backward
on the device copies nothing between host and device (the profiler's Memcpy events count them)."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, complex_sample

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

rng = np.random.default_rng(22)
TOL = {"complex64": dict(rtol=2e-5, atol=2e-6), "complex128": dict(rtol=1e-12, atol=1e-14)}
UNARY = ["neg", "exp", "log", "sqrt", "rsqrt", "reciprocal", "log2", "log10", "log1p", "expm1", "sin", "cos",
         "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sigmoid"]


def sample(shape, dtype):
    """standard normal parts, with small arguments first (log1p, expm1, asinh and atanh keep their
    digits there) and a large one (tanh's and the exponentials' far range)"""
    z = complex_sample(rng, shape, dtype)
    z.flat[:4] = [1e-4 + 2e-4j, -3e-5j, 0.25, 12 - 0.5j]
    return z


def on_both(fn, *arrays, dtype="complex64", strided=False):
    """fn of the arrays as CPU tensors and as CUDA tensors (transposed views when strided):
    (CUDA's result as an array, the CPU's)"""
    out = []
    for device in ("cpu", "cuda"):
        ts = [minitorch.tensor(a).to(device) for a in arrays]
        if strided:
            ts = [minitorch.tensor(np.ascontiguousarray(a.T)).to(device).t() for a in arrays]
        r = fn(*ts)
        assert r.device.type == device
        out.append(as_numpy(r))
    assert out[0].dtype == out[1].dtype and out[0].shape == out[1].shape
    return out


@pytest.mark.parametrize("strided", [False, True])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", UNARY)
def test_unary_loops_as_on_the_cpu(name, dtype, strided):
    got, want = on_both(getattr(minitorch, name), sample((5, 7), dtype), strided=strided)
    np.testing.assert_allclose(got, want, **TOL[dtype])


BINARY = {
    "add": lambda L, x, y: x + y,
    "add_alpha": lambda L, x, y: L.add(x, y, alpha=-3),
    "sub_alpha": lambda L, x, y: L.sub(x, y, alpha=0.5),
    "mul": lambda L, x, y: x * y,
    "div": lambda L, x, y: x / y,
    "pow": lambda L, x, y: x ** (y * 0.3),
    "mul_number": lambda L, x, y: x * (2 - 1.5j),
    "rsub_number": lambda L, x, y: (1 + 1j) - x,
    "div_by_real_tensor": lambda L, x, y: x / y.real,
    "mul_real_broadcast": lambda L, x, y: x * y.imag[0],
    "eq": lambda L, x, y: L.where(x.real > 0, x, y) == x,
    "ne": lambda L, x, y: L.where(x.real > 0, x, y) != x,
    "where_number": lambda L, x, y: L.where(x.real > 0, x, 3j),
    "masked_fill": lambda L, x, y: x.masked_fill(y.real > 0, 1 - 2j),
    "mixed_precision": lambda L, x, y: x * y.to(L.complex128),
    "exp2": lambda L, x, y: L.exp2(x),
    "logaddexp": lambda L, x, y: L.logaddexp(x, y),
    "logaddexp_infinities": lambda L, x, y: L.logaddexp(x / (y.real > 0), y / (x.real > 0)),
    "lerp_number": lambda L, x, y: L.lerp(x, y, 0.3),
    "lerp_tensor": lambda L, x, y: L.lerp(x, y, y * 0.1 + 0.6),
    "addcmul": lambda L, x, y: L.addcmul(x, y, x, value=2 - 1j),
    "addcdiv_": lambda L, x, y: x.clone().addcdiv_(y, x, value=0.5),
    "nan_to_num": lambda L, x, y: L.nan_to_num(x / (y.real > 0), posinf=7.0),
    "logical_and": lambda L, x, y: L.logical_and(x * (y.real > 0), y),
    "logical_or_": lambda L, x, y: (x * (y.real > 0)).logical_or_(y * 0),
    "logical_xor_bool_self": lambda L, x, y: (y.real > 0).logical_xor_(x * (x.real > 0)),
    "logical_not": lambda L, x, y: L.logical_not(x * (y.real > 0)),
}


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_loops_as_on_the_cpu(name, dtype):
    x, y = sample((4, 6), dtype), complex_sample(rng, (4, 6), dtype)
    got, want = on_both(lambda a, b: BINARY[name](minitorch, a, b), x, y)
    np.testing.assert_allclose(got, want, **TOL[dtype])


def test_in_place_and_predicates():
    z = sample((3, 5), "complex128")
    z.flat[5:8] = [complex(np.nan, 1), complex(1, np.inf), complex(-np.inf, np.nan)]
    for fn in (minitorch.isnan, minitorch.isinf, minitorch.isfinite):
        got, want = on_both(fn, z)
        np.testing.assert_array_equal(got, want)

    def in_place(t):
        t = t.clone()
        t.mul_(1j).add_(t, alpha=2).div_(2 + 1j).neg_().exp_()
        return t
    got, want = on_both(in_place, sample((3, 5), "complex64"))
    np.testing.assert_allclose(got, want, **TOL["complex64"])


def test_casts_fills_and_cat_on_the_device():
    z = sample((3, 4), "complex64")
    c = minitorch.tensor(z, device="cuda")
    np.testing.assert_array_equal(as_numpy(c.to(minitorch.complex128)), z.astype(np.complex128))
    np.testing.assert_array_equal(as_numpy(c.to(minitorch.complex128).to(minitorch.complex64)), z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's warning that the imaginary part is discarded
        np.testing.assert_array_equal(as_numpy(c.to(minitorch.float64)), z.real.astype(np.float64))
    r = minitorch.arange(6, device="cuda").reshape(2, 3)
    np.testing.assert_array_equal(as_numpy(r.to(minitorch.complex64)), np.arange(6).reshape(2, 3) + 0j)
    np.testing.assert_array_equal(as_numpy(minitorch.full((2, 2), 1.5 - 2j, device="cuda")),
                                  np.full((2, 2), 1.5 - 2j, np.complex64))
    np.testing.assert_array_equal(as_numpy(c.fill_(3j)), np.full((3, 4), 3j, np.complex64))
    got, want = on_both(lambda a, b: minitorch.cat([a, b.to(minitorch.complex128), a[:1] * 2]),
                        z, sample((2, 4), "complex64"))
    np.testing.assert_array_equal(got, want)


def test_indexing_on_the_real_views():
    z = sample((5, 4, 3), "complex128")
    idx = np.array([4, 0, 2, 2])
    cases = [
        lambda t: t[minitorch.tensor(idx, device=t.device)],
        lambda t: t[:, minitorch.tensor([3, 1], device=t.device)],
        lambda t: t[minitorch.tensor(idx, device=t.device), :, minitorch.tensor([0, 2, 1, 1], device=t.device)],
        lambda t: t.index_select(-1, minitorch.tensor([2, 0], device=t.device)),
        lambda t: t.index_select(1, minitorch.tensor([3, 3, 0], device=t.device)),
        lambda t: t[t.real > 0],
    ]
    for fn in cases:
        got, want = on_both(fn, z)
        np.testing.assert_array_equal(got, want)

    def put(t, accumulate):
        t = t.clone()
        i = minitorch.tensor(idx, device=t.device)
        return t.index_put_((i,), t[:4] * 1j, accumulate=accumulate)
    for accumulate in (False, True):
        got, want = on_both(lambda t: put(t, accumulate), z)
        np.testing.assert_allclose(got, want, **TOL["complex128"])


GRADS = {
    "exp_mul": lambda L, z, w: L.exp(z) * w,
    "div_sub": lambda L, z, w: (z - w) / (w + 2),
    "tanh_sqrt": lambda L, z, w: L.tanh(z) + L.sqrt(w),
    "log_pow": lambda L, z, w: L.log(z) * w ** 2,
    "sin_cos_sigmoid": lambda L, z, w: L.sin(z) * L.cos(w) + L.sigmoid(z),
    "conj_abs_angle": lambda L, z, w: z.conj() * w.abs() + z.angle(),
    "polar_complex": lambda L, z, w: L.polar(z.abs(), w.angle()) + L.complex(z.real, w.imag),
    "index_mean": lambda L, z, w: z[L.tensor([1, 0, 1], device=z.device)] * w.mean(),
    "mul_real_sum": lambda L, z, w: (z * w.real).sum(0),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_as_on_the_cpu(name):
    zs, ws = complex_sample(rng, (3, 4), "complex128"), complex_sample(rng, (3, 4), "complex128")
    results = {}
    for device in ("cpu", "cuda"):
        z = minitorch.tensor(zs, requires_grad=True)
        w = minitorch.tensor(ws, requires_grad=True)
        out = GRADS[name](minitorch, z.to(device), w.to(device))
        assert out.device.type == device
        real = minitorch.view_as_real(out) if out.is_complex() else out
        weight = minitorch.tensor(np.linspace(-1, 1, real.numel()).reshape(tuple(real.shape)), device=device)
        (real * weight).sum().backward()
        results[device] = [as_numpy(out), as_numpy(z.grad), as_numpy(w.grad)]
    for got, want in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def host_copies(fn):
    """the Memcpy events between host and device while fn runs"""
    acts = [minitorch.profiler.ProfilerActivity.CPU, minitorch.profiler.ProfilerActivity.CUDA]
    with minitorch.profiler.profile(activities=acts) as prof:
        fn()
    return [e.name for e in prof.events() if e.name.startswith(("Memcpy HtoD", "Memcpy DtoH"))]


def rotary_step(xq, seq):
    """llama's precompute_freqs_cis and apply_rotary_emb on xq (B, T, H, D), forward and backward"""
    dev = xq.device
    d = xq.shape[-1]
    freqs = 1.0 / (10000.0 ** (minitorch.arange(0, d, 2, device=dev)[: d // 2].float() / d))
    angles = minitorch.outer(minitorch.arange(seq, device=dev), freqs).float()
    freqs_cis = minitorch.polar(minitorch.ones_like(angles), angles)[minitorch.arange(1, 1 + xq.shape[1], device=dev)]
    xq_ = minitorch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    out = minitorch.view_as_real(xq_ * freqs_cis.view(1, xq.shape[1], 1, d // 2)).flatten(3).type_as(xq)
    (out ** 2 * minitorch.linspace(0, 1, d, device=dev)).sum().backward()
    return out


def test_rotary_embedding_makes_no_host_copy():
    x = rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    xq = minitorch.tensor(x, device="cuda", requires_grad=True)
    out = {}
    assert host_copies(lambda: out.update(cuda=rotary_step(xq, 16))) == []
    cpu = minitorch.tensor(x, requires_grad=True)
    want = rotary_step(cpu, 16)
    np.testing.assert_allclose(as_numpy(out["cuda"].detach()), as_numpy(want.detach()), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(as_numpy(xq.grad), as_numpy(cpu.grad), rtol=1e-5, atol=1e-6)


def test_elementwise_ops_make_no_host_copy():
    z = minitorch.tensor(sample((4, 4), "complex64"), device="cuda", requires_grad=True)
    w = minitorch.tensor(sample((4,), "complex64"), device="cuda")

    def step():
        y = (minitorch.exp(z) * w - z / (w + 1j)).neg().conj() + minitorch.sigmoid(z) * 2
        y = minitorch.where(y.real > 0, y, z.abs() + 0j)
        products = (z @ z).abs().sum() + minitorch.einsum("ij,kj->ik", z, w.expand(3, 4)).real.sum()
        (minitorch.view_as_real(y).sum() + y.mean().real + products).backward()
    assert host_copies(step) == []
    assert z.grad is not None and z.grad.device.type == "cuda"


def test_complex_to_bool_on_the_device_reads_both_parts():
    """A complex value is true when either part is nonzero, on the device as on the CPU (the
    device copy took the real part alone: 1j was False)."""
    v = [1j, 0j, 3e-5j, complex("nan"), -0.0j, 2 + 0j]
    want = [bool(z) for z in v]
    for dtype in (minitorch.complex64, minitorch.complex128):
        x = minitorch.tensor(v, dtype=dtype).cuda()
        into = minitorch.zeros(len(v), dtype=minitorch.bool).cuda()
        into.copy_(x)
        for got in (x.bool(), x.to(minitorch.bool), into, x.cpu().to("cuda", minitorch.bool),
                    minitorch.logical_not(minitorch.logical_not(x))):
            assert got.device.type == "cuda" and got.cpu().tolist() == want
        assert x.any().item() and not x.all().item()
