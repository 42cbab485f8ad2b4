"""Complex tensors on the CUDA device (csrc/dispatch/complex.c's cuda_complex): copies through the
real views, the elementwise ops, fills and cat by the device's complex kernels, indexing on the real
views, views and other composites on the device, the remaining ops on the host and their results
brought back (tests/cuda/test_cuda_complex_kernels.py checks which stay on the device). Each result is on the device and equals the CPU's, and so does the gradient of a real
loss (tests/ops/test_complex_everyday.py checks the CPU's against PyTorch); LLaMA's rotary embedding
(view_as_complex, a complex product, view_as_real) forward and backward as the programs of
tests/programs run it on a GPU."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, complex_sample

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

rng = np.random.default_rng(2020)
Z = complex_sample(rng, (3, 4), "complex64")
W = complex_sample(rng, (4,), "complex64")
IDX = np.array([2, 0, 2])

OPS = {
    "mul_broadcast": lambda L, z, w: z * w,
    "add_number": lambda L, z, w: z + (1 - 2j),
    "div": lambda L, z, w: z / (w + 3),
    "exp": lambda L, z, w: L.exp(z),
    "abs": lambda L, z, w: z.abs(),
    "sum": lambda L, z, w: z.sum(0),
    "mean": lambda L, z, w: z.mean(),
    "matmul": lambda L, z, w: z @ w,
    "conj_mul": lambda L, z, w: z.conj() * z,
    "index_tensor": lambda L, z, w: z[L.tensor(IDX, device=z.device)],
    "index_select": lambda L, z, w: L.index_select(z, 1, L.tensor(IDX, device=z.device)),
    "slice_step": lambda L, z, w: z[:, ::2] * 2,
    "cat": lambda L, z, w: L.cat([z, z * 2j]),
    "stack": lambda L, z, w: L.stack([z[0], w], 1),
    "transpose_contiguous": lambda L, z, w: z.t().contiguous(),
    "view_as_real": lambda L, z, w: L.view_as_real(z) * 3,
    "reshape_split": lambda L, z, w: z.reshape(2, 6).split(3, 1)[1],
    "where": lambda L, z, w: L.where(z.real > 0, z, w),
    "setitem": lambda L, z, w: _set(z, (slice(None), 1), w[:3]),
    "inplace_mul_view": lambda L, z, w: _mul_row(z),
    "to_complex128": lambda L, z, w: z.to(L.complex128) * 2,
    "pad_constant": lambda L, z, w: L.nn.functional.pad(z, (1, 2, 0, 1), value=0.5),
    "pad_reflect": lambda L, z, w: L.nn.functional.pad(z, (2, 1), mode="reflect"),
    "pad_circular": lambda L, z, w: L.nn.functional.pad(z[None], (1, 2), mode="circular"),
    "unfold": lambda L, z, w: L.nn.functional.unfold(z.reshape(1, 1, 3, 4), 2),
    "fold": lambda L, z, w: L.nn.functional.fold(z.reshape(1, 2, 6), (1, 7), (1, 2)),
}


def _set(z, key, value):
    y = z.clone()
    y[key] = value
    return y


def _mul_row(z):
    y = z * 1
    y[0] *= 2j
    return y


def _run(name, device):
    """OPS[name] on device, its inputs CPU leaves moved there; (result on the CPU, leaves' grads)."""
    z = minitorch.tensor(Z, requires_grad=True)
    w = minitorch.tensor(W, requires_grad=True)
    out = OPS[name](minitorch, z.to(device), w.to(device))
    assert out.device.type == device
    real = minitorch.view_as_real(out) if out.is_complex() else out
    weight = minitorch.tensor(np.linspace(-1, 1, real.numel()).reshape(tuple(real.shape)).astype(np.float32),
                              device=device)
    (real * weight).sum().backward()
    grads = [None if t.grad is None else as_numpy(t.grad) for t in (z, w)]
    return as_numpy(out), grads


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_on_the_device_as_on_the_cpu(name):
    got, got_grads = _run(name, "cuda")
    want, want_grads = _run(name, "cpu")
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_copies_to_from_and_on_the_device():
    z = minitorch.tensor(complex_sample(rng, (4, 3)))  # complex128
    c = z.t().to("cuda")  # a non-contiguous source: its strides kept (preserve_format)
    assert c.device.type == "cuda" and c.dtype == minitorch.complex128 and c.stride() == z.t().stride()
    np.testing.assert_array_equal(as_numpy(c), as_numpy(z).T)
    d = minitorch.empty(3, 4, dtype=minitorch.complex64, device="cuda")
    d.copy_(c)  # complex128 -> complex64, on the device
    np.testing.assert_allclose(as_numpy(d), as_numpy(z).T.astype(np.complex64))
    d.copy_(minitorch.ones(4, device="cuda"))  # a real source: real parts, broadcast; imaginary 0
    np.testing.assert_array_equal(as_numpy(d), np.ones((3, 4), np.complex64))
    d[1:, 2:] = minitorch.tensor([[1j, 2j]])  # into a view, from the host
    want = np.ones((3, 4), np.complex64)
    want[1:, 2:] = [1j, 2j]
    np.testing.assert_array_equal(as_numpy(d), want)
    np.testing.assert_array_equal(as_numpy(d.cpu()), want)
    np.testing.assert_array_equal(as_numpy(minitorch.zeros(2, 3, dtype=minitorch.complex64, device="cuda")),
                                  np.zeros((2, 3), np.complex64))
    full = minitorch.full((2,), 1 - 1j, device="cuda")
    assert full.device.type == "cuda" and as_numpy(full).tolist() == [1 - 1j, 1 - 1j]
    assert "device='cuda:0'" in repr(full) and (full == full).all().item()


def test_complex_to_real_copy_as_on_the_cpu():
    src = minitorch.tensor(Z)
    dst_cpu, dst_cuda = minitorch.zeros(3, 4), minitorch.zeros(3, 4, device="cuda")
    with warnings.catch_warnings(record=True) as cpu_warned:
        warnings.simplefilter("always")
        dst_cpu.copy_(src)
    with warnings.catch_warnings(record=True) as cuda_warned:
        warnings.simplefilter("always")
        dst_cuda.copy_(src.to("cuda"))
    np.testing.assert_array_equal(as_numpy(dst_cuda), as_numpy(dst_cpu))
    np.testing.assert_array_equal(as_numpy(dst_cpu), Z.real)
    assert len(cpu_warned) == len(cuda_warned)


def rotary(L, xq, freqs_cis):
    """llama's apply_rotary_emb: pairs of xq as complex numbers, turned by freqs_cis"""
    xq_ = L.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
    return L.view_as_real(xq_ * freqs_cis.view(*shape)).flatten(3).type_as(xq)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_rotary_embedding_on_the_device(dtype):
    x = rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    results = {}
    for device in ("cpu", "cuda"):
        freqs = 1.0 / (10000.0 ** (minitorch.arange(0, 8, 2)[:4].float() / 8))
        t = minitorch.arange(16, device=device)
        angles = minitorch.outer(t, freqs.to(device)).float()
        freqs_cis = minitorch.polar(minitorch.ones_like(angles), angles)
        assert freqs_cis.device.type == device and freqs_cis.dtype == minitorch.complex64
        xq = minitorch.tensor(x, requires_grad=True)
        out = rotary(minitorch, xq.to(device, getattr(minitorch, dtype)), freqs_cis[minitorch.arange(2, 7, device=device)])
        assert out.device.type == device and out.dtype == getattr(minitorch, dtype)
        (out.float() ** 2 * minitorch.linspace(0, 1, 8, device=device)).sum().backward()
        results[device] = (as_numpy(out.float()), as_numpy(xq.grad))
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(results["cuda"][1], results["cpu"][1], rtol=1e-5, atol=1e-6)
