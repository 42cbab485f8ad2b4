"""Complex tensors on the CUDA device through the device's own kernels, the ops the host still
served: the ops that only move elements (gather, scatter, scatter_add, the index ops, flip,
tril/triu, masked_select, and the composites over them: take, roll, index_add, ...) by the
kernels' element width (a complex64 moves as 8 bytes, a complex128 as 16), prod and cumprod by
their kernels' complex product, and the matrix products as cuBLAS's cublasCgemm and cublasZgemm
(csrc/dispatch/complex.c says which), with their gradients, and gemv and dot. Values equal the CPU's
(moved elements exactly, complex128 products to 1e-12 relative), gradients too, and none copies
anything between host and device (the profiler's Memcpy events count them)."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, complex_sample

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

rng = np.random.default_rng(2211)
DTYPES = ["complex64", "complex128"]
TOL = {"complex64": dict(rtol=2e-5, atol=2e-6), "complex128": dict(rtol=1e-12, atol=1e-14)}
ACTS = [minitorch.profiler.ProfilerActivity.CPU, minitorch.profiler.ProfilerActivity.CUDA]


def recorded(fn):
    """fn() under the profiler, synchronised: (its result, the names of the events recorded)"""
    out = []
    with minitorch.profiler.profile(activities=ACTS) as prof:
        out.append(fn())
        minitorch.cuda.synchronize()
    return out[0], [e.name for e in prof.events()]


def host_copies(names):
    return [n for n in names if n.startswith(("Memcpy HtoD", "Memcpy DtoH"))]


# name: (fn(minitorch, z, *indices), the indices); the index tensors are made before the
# recording, so that only the op's copies count
MOVES = {
    "gather": (lambda L, z, i: z.gather(1, i), [[[2, 0, 2, 1], [1, 1, 0, 3], [3, 2, 1, 0]]]),
    "gather_dim0": (lambda L, z, i: L.gather(z, 0, i), [[[2, 0, 1, 1]]]),
    "scatter": (lambda L, z, i: z.scatter(1, i, z[:, :2] * 1j), [[[3, 0], [1, 2], [0, 3]]]),
    "scatter_value": (lambda L, z, i: z.scatter(0, i, 2 - 0.5j), [[[1, 0, 2, 1]]]),
    "scatter_add": (lambda L, z, i: z.scatter_add(1, i, z[:, 1:3]), [[[1, 1], [0, 0], [2, 2]]]),
    "scatter_add_": (lambda L, z, i: z.clone().scatter_add_(0, i, z[:2]), [[[0, 0, 0, 0], [0, 1, 0, 1]]]),
    "scatter_reduce_add": (lambda L, z, i: z.scatter(1, i, z[:, :2], reduce="add"), [[[1, 1], [0, 0], [2, 2]]]),
    "index_select": (lambda L, z, i: z.index_select(-1, i), [[3, 0, 0]]),
    "index": (lambda L, z, i: z[i, 1:], [[2, 0, 2]]),
    "index_two": (lambda L, z, i, j: z[i, j], [[2, 0], [3, 1]]),
    "index_put_": (lambda L, z, i: z.clone().index_put_((i,), z[1] * 1j), [[0, 2]]),
    "index_put_accumulate": (lambda L, z, i: z.clone().index_put_((i,), z[:3], accumulate=True), [[0, 0, 2]]),
    "flip": (lambda L, z: z.flip(0, 1), []),
    "flip_strided": (lambda L, z: z.t().flip(-1), []),
    "tril": (lambda L, z: z.tril(), []),
    "triu_k": (lambda L, z: L.triu(z, 1), []),
    "tril_": (lambda L, z: z.clone().tril_(-1), []),
    "triu_strided": (lambda L, z: z.t().triu(), []),
    "masked_select": (lambda L, z: z.masked_select(z.real > 0), []),
    "take": (lambda L, z, i: z.take(i), [[11, 0, 5]]),
    "take_along_dim": (lambda L, z, i: L.take_along_dim(z, i, 1), [[[1], [0], [3]]]),
    "roll": (lambda L, z: z.roll(1, 0), []),
    "index_add": (lambda L, z, i: z.index_add(0, i, z[:2] * 2j), [[2, 0]]),
    "index_copy": (lambda L, z, i: z.index_copy(1, i, z[:, :2]), [[3, 0]]),
    "index_fill": (lambda L, z, i: z.index_fill(1, i, 1j), [[1, 2]]),
    "masked_scatter": (lambda L, z: z.masked_scatter(z.real > 0, z * -1j), []),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(MOVES))
def test_moves_stay_on_the_device(name, dtype):
    fn, indices = MOVES[name]
    z = complex_sample(rng, (3, 4), dtype)
    want = as_numpy(fn(minitorch, minitorch.tensor(z), *(minitorch.tensor(i) for i in indices)))
    c = minitorch.tensor(z, device="cuda")
    ix = [minitorch.tensor(i, device="cuda") for i in indices]
    got, names = recorded(lambda: fn(minitorch, c, *ix))
    assert got.device.type == "cuda"
    got = as_numpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    if "add" in name:  # sums: the device adds in another order
        np.testing.assert_allclose(got, want, **TOL[dtype])
    else:
        np.testing.assert_array_equal(got, want)
    # a Python number scattered is filled in on the device (no copy there: test below)
    assert host_copies(names) == []


def _setitem(z, key, value):
    z[key] = value
    return z


# name: fn(z, i, m), z a clone of a device tensor, i a device index, m a device mask; a Python
# number or a CPU 0-dim tensor among the arguments
NUMBERS = {
    "scatter_value": lambda z, i, m: z.scatter(0, i[None], 2),
    "scatter_reduce_value": lambda z, i, m: z.scatter(0, i[None], 2, reduce="add"),
    "index_fill": lambda z, i, m: z.index_fill(1, i, -1),
    "index_fill_cpu_tensor": lambda z, i, m: z.index_fill(1, i, minitorch.tensor(3)),
    "masked_fill": lambda z, i, m: z.masked_fill(m, 2),
    "setitem_index": lambda z, i, m: _setitem(z, i, 2),
    "setitem_index_two": lambda z, i, m: _setitem(z, (i, 1), 5),
    "setitem_slice": lambda z, i, m: _setitem(z, slice(1, 3), 4),
    "setitem_mask": lambda z, i, m: _setitem(z, m, 6),
    "index_put_cpu_tensor": lambda z, i, m: z.index_put_((i,), minitorch.tensor(7, dtype=z.dtype)),
    "mul_cpu_tensor": lambda z, i, m: z * minitorch.tensor(2),
}


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("name", sorted(NUMBERS))
def test_python_numbers_make_no_host_copy(name, dtype):
    """a Python number (or a 0-dim CPU tensor) joining a device op is handed to the device's fill_
    kernel as its argument (ops/index_plan.c, dispatch.c's scalar_on), as PyTorch hands one to
    its kernels: no host-to-device copy, which from pageable memory waits for the host"""
    a = (complex_sample(rng, (3, 4), dtype) if dtype == "complex64"
         else rng.standard_normal((3, 4)).astype(dtype))
    i_host, m_host = [2, 0], a.real > 0
    want = as_numpy(NUMBERS[name](minitorch.tensor(a), minitorch.tensor(i_host), minitorch.tensor(m_host)))
    z, i, m = (minitorch.tensor(x, device="cuda") for x in (a, i_host, m_host))
    got, names = recorded(lambda: NUMBERS[name](z.clone(), i, m))
    assert got.device.type == "cuda"
    np.testing.assert_array_equal(as_numpy(got), want)
    assert host_copies(names) == []


def test_a_cpu_scalar_that_requires_grad_still_gets_its_gradient():
    s = minitorch.tensor(2.0, requires_grad=True)
    x = minitorch.tensor([1.0, -3.0], device="cuda")
    (x * s).sum().backward()
    assert s.grad.device.type == "cpu" and s.grad.item() == -2.0


# (dim, index, source shape): repeated positions along the dim, a broadcast-free source larger
# than the index, a dim other than the last
MULTIPLY = {
    "dim1_repeats": (1, [[1, 1], [0, 2], [3, 3]], (3, 2)),
    "dim1_one_destination": (1, [[2, 2, 2, 2], [0, 0, 0, 0], [1, 3, 1, 3]], (3, 5)),
    "dim0": (0, [[0, 2, 2, 1], [0, 0, 2, 1], [1, 1, 1, 1]], (4, 4)),
}


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(MULTIPLY))
def test_scatter_multiply_of_complex_on_the_device(name, dtype, inplace):
    """scatter's reduce="multiply" of complex tensors: no atomic complex product exists, so each
    destination is multiplied by one thread, by its sources in index order (cuda/index.cu's
    multiply_lines_kernel): deterministic, the CPU's values, nothing copied to the host"""
    dim, index, src_shape = MULTIPLY[name]
    z, s = complex_sample(rng, (3, 4), dtype), complex_sample(rng, src_shape, dtype)
    want = as_numpy(minitorch.tensor(z).scatter(dim, minitorch.tensor(index), minitorch.tensor(s),
                                                reduce="multiply"))
    c, i, t = (minitorch.tensor(x, device="cuda") for x in (z, index, s))
    fn = (lambda: c.clone().scatter_(dim, i, t, reduce="multiply")) if inplace else (
        lambda: c.scatter(dim, i, t, reduce="multiply"))
    got, names = recorded(fn)
    assert got.device.type == "cuda"
    np.testing.assert_allclose(as_numpy(got), want, **TOL[dtype])
    assert host_copies(names) == []
    again = as_numpy(fn())
    np.testing.assert_array_equal(again, as_numpy(got))  # the same bits on every run


REDUCTIONS = {
    "prod": lambda L, z: z.prod(),
    "prod_dim": lambda L, z: z.prod(1),
    "prod_dim0_keepdim": lambda L, z: L.prod(z, 0, keepdim=True),
    "prod_strided": lambda L, z: z.t().prod(1),
    "cumprod": lambda L, z: z.cumprod(1),
    "cumprod_dim0": lambda L, z: L.cumprod(z, 0),
    "cumprod_strided": lambda L, z: z.t().cumprod(0),
    "cumsum": lambda L, z: z.cumsum(1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_products_along_dims_as_on_the_cpu(name, dtype):
    z = complex_sample(rng, (5, 6), dtype) * 0.8
    want = as_numpy(REDUCTIONS[name](minitorch, minitorch.tensor(z)))
    c = minitorch.tensor(z, device="cuda")
    got, names = recorded(lambda: REDUCTIONS[name](minitorch, c))
    assert got.device.type == "cuda"
    got = as_numpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])
    assert host_copies(names) == []


@pytest.mark.parametrize("n", [1, 300, 5000])
def test_long_rows_fold_across_blocks(n):
    """Rows longer than a block (cumprod's tiles, prod's several blocks per result), unit moduli
    so that the products stay finite: as NumPy's."""
    z = np.exp(1j * rng.uniform(-np.pi, np.pi, (2, n)))
    c = minitorch.tensor(z, device="cuda")
    np.testing.assert_allclose(as_numpy(c.cumprod(1)), np.cumprod(z, 1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(as_numpy(c.prod(1)), np.prod(z, 1), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(as_numpy(c.reshape(-1).prod()), np.prod(z), rtol=1e-10, atol=1e-10)


GRADS = {
    "gather": lambda L, z: z.gather(0, L.tensor([[1, 0, 2, 2]], device=z.device)),
    "scatter_add": lambda L, z: L.zeros(2, 4, dtype=z.dtype, device=z.device).scatter_add(
        0, L.tensor([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 1]], device=z.device), z),
    "scatter": lambda L, z: z.scatter(1, L.tensor([[0], [3], [1]], device=z.device), z[:, 2:3] * 2),
    "flip_tril": lambda L, z: z.flip(1).tril(1),
    "triu": lambda L, z: z.triu(-1),
    "masked_select": lambda L, z: z.masked_select(z.imag > 0),
    "prod": lambda L, z: z.prod(1),
    "prod_all": lambda L, z: z.prod(),
    "cumprod": lambda L, z: z.cumprod(1),
    "take_roll": lambda L, z: z.roll(1, 1).take(L.tensor([0, 5, 5], device=z.device)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_as_on_the_cpu(name):
    zs = complex_sample(rng, (3, 4), "complex128")
    results = {}
    for device in ("cpu", "cuda"):
        z = minitorch.tensor(zs, requires_grad=True)
        out = GRADS[name](minitorch, z.to(device))
        assert out.device.type == device
        real = minitorch.view_as_real(out)
        weight = minitorch.tensor(np.linspace(-1, 1, real.numel()).reshape(tuple(real.shape)), device=device)
        (real * weight).sum().backward()
        results[device] = [as_numpy(out), as_numpy(z.grad)]
    for got, want in zip(results["cuda"], results["cpu"]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# ---- the matrix products: cublasCgemm, cublasZgemm -------------------------------------------

needs_cublas = pytest.mark.skipif(not minitorch.cuda._C_cuda.has_cublas, reason="built without cuBLAS")


def layout(a, how):
    """a as a CUDA tensor: contiguous, a transposed view of its transpose, or a column slice"""
    if how == "transposed":
        return minitorch.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device="cuda").transpose(-1, -2)
    if how == "sliced":
        wide = np.concatenate([a, a], axis=-1)
        return minitorch.tensor(wide, device="cuda")[..., : a.shape[-1]]
    return minitorch.tensor(a, device="cuda")


PRODUCTS = {
    "mm": (lambda L, x, y, s: L.mm(x, y), [(4, 3), (3, 5)], "gemm_v2"),
    "mm_one_row": (lambda L, x, y, s: x @ y, [(1, 3), (3, 5)], "gemm_v2"),
    "matmul_batched": (lambda L, x, y, s: L.matmul(x, y), [(2, 4, 3), (2, 3, 5)], "gemmStridedBatched"),
    "matmul_folded": (lambda L, x, y, s: x @ y, [(2, 4, 3), (3, 5)], "gemm_v2"),
    "bmm": (lambda L, x, y, s: L.bmm(x, y), [(3, 2, 4), (3, 4, 2)], "gemmStridedBatched"),
    # complex alpha and beta as 0-dim tensors (Python numbers: further down)
    "addmm": (lambda L, x, y, s: L.addmm(s, x, y, beta=L.tensor(0.5 - 1j), alpha=L.tensor(2j)),
              [(4, 3), (3, 5), (4, 5)], "gemm_v2"),
    "addmm_bias": (lambda L, x, y, s: L.addmm(s, x, y), [(4, 3), (3, 5), (5,)], "gemm_v2"),
    "addmm_beta0": (lambda L, x, y, s: L.addmm(s * float("nan"), x, y, beta=0), [(4, 3), (3, 5), (4, 5)],
                    "gemm_v2"),
    "baddbmm": (lambda L, x, y, s: L.baddbmm(s, x, y, beta=-1, alpha=L.tensor(0.5 + 0.5j)), [(2, 3, 4), (2, 4, 2), (2, 3, 2)],
                "gemmStridedBatched"),
}


@needs_cublas
@pytest.mark.parametrize("how", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products_are_one_complex_gemm(name, dtype, how):
    fn, shapes, call = PRODUCTS[name]
    arrays = [complex_sample(rng, s, dtype) for s in shapes] + [None] * (3 - len(shapes))
    want = as_numpy(fn(minitorch, *[None if a is None else minitorch.tensor(a) for a in arrays]))
    ts = [None if a is None else (layout(a, how) if a.ndim > 1 else minitorch.tensor(a, device="cuda"))
          for a in arrays]
    got, names = recorded(lambda: fn(minitorch, *ts))
    assert got.device.type == "cuda"
    got = as_numpy(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **TOL[dtype])
    gemms = [n for n in names if n.startswith("Library::cublas")]
    letter = "C" if dtype == "complex64" else "Z"
    assert gemms == [f"Library::cublas{letter}{call}"]
    assert host_copies(names) == []


@needs_cublas
def test_an_empty_inner_dimension_scales_by_a_complex_beta():
    s = complex_sample(rng, (3, 2), "complex128")
    x, y = np.zeros((3, 0), np.complex128), np.zeros((0, 2), np.complex128)
    beta = minitorch.tensor(2 - 1j)
    want = as_numpy(minitorch.addmm(minitorch.tensor(s), minitorch.tensor(x), minitorch.tensor(y), beta=beta))
    got = minitorch.addmm(*(minitorch.tensor(a, device="cuda") for a in (s, x, y)), beta=beta)
    np.testing.assert_allclose(as_numpy(got), want, **TOL["complex128"])
    np.testing.assert_allclose(want, s * (2 - 1j), **TOL["complex128"])


# ---- with gradients, and gemv and dot: one complex cuBLAS call each, forward and backward -----
# (dispatch/complex.c's blas_takes; the gradients take the conjugate transposes PyTorch's do,
# grad_a = g @ b^H and grad_b = a^H @ g, so no product of the real parts runs). Complex Python
# numbers as alpha and beta, as PyTorch takes them. Values against NumPy complex128, gradients
# against PyTorch's CPU complex ones.

TOL_BLAS = {"complex64": dict(rtol=2e-5, atol=2e-5), "complex128": dict(rtol=1e-11, atol=1e-12)}


def library_calls(names):
    return [n[len("Library::"):] for n in names if n.startswith("Library::")]


# name: (fn(lib, *operands), operand shapes, NumPy's value, the cuBLAS call forward)
BLAS_CASES = {
    "mm": (lambda L, a, b: L.mm(a, b), [(4, 3), (3, 5)], lambda a, b: a @ b, "gemm_v2"),
    "mm_one_row": (lambda L, a, b: L.mm(a, b), [(1, 3), (3, 5)], lambda a, b: a @ b, "gemm_v2"),
    "bmm": (lambda L, a, b: L.bmm(a, b), [(2, 4, 3), (2, 3, 2)], lambda a, b: a @ b, "gemmStridedBatched"),
    "addmm": (lambda L, s, a, b: L.addmm(s, a, b, beta=0.5 - 1j, alpha=2j), [(4, 5), (4, 3), (3, 5)],
              lambda s, a, b: (0.5 - 1j) * s + 2j * (a @ b), "gemm_v2"),
    "baddbmm": (lambda L, s, a, b: L.baddbmm(s, a, b, beta=1j, alpha=-1 + 0.5j), [(2, 4, 2), (2, 4, 3), (2, 3, 2)],
                lambda s, a, b: 1j * s + (-1 + 0.5j) * (a @ b), "gemmStridedBatched"),
    "mv": (lambda L, a, v: L.mv(a, v), [(4, 3), (3,)], lambda a, v: a @ v, "gemv_v2"),
    "addmv": (lambda L, s, a, v: L.addmv(s, a, v, beta=2 - 1j, alpha=1j), [(4,), (4, 3), (3,)],
              lambda s, a, v: (2 - 1j) * s + 1j * (a @ v), "gemv_v2"),
    "addmv_beta0": (lambda L, s, a, v: L.addmv(s * float("nan"), a, v, beta=0, alpha=0.5j), [(4,), (4, 3), (3,)],
                    lambda s, a, v: 0.5j * (a @ v), "gemv_v2"),
    "dot": (lambda L, x, y: L.dot(x, y), [(6,), (6,)], lambda x, y: x @ y, "dotu_v2"),
    "vdot": (lambda L, x, y: L.vdot(x, y), [(6,), (6,)], np.vdot, "dotu_v2"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(BLAS_CASES))
@needs_cublas
def test_values_are_one_complex_cublas_call(name, dtype):
    fn, shapes, ref, call = BLAS_CASES[name]
    arrays = [complex_sample(rng, s, dtype) for s in shapes]
    ts = [minitorch.tensor(a, device="cuda") for a in arrays]
    ts = [t.t() if t.ndim == 2 and k == len(ts) - 1 and name == "mv" else t for k, t in enumerate(ts)]
    if name == "mv":  # the matrix as a transposed view: cuBLAS takes it with op N
        ts[0] = minitorch.tensor(np.ascontiguousarray(arrays[0].T), device="cuda").t()
    got, names = recorded(lambda: fn(minitorch, *ts))
    assert got.device.type == "cuda" and str(got.dtype) == f"minitorch.{dtype}"
    want = ref(*(a.astype(np.complex128) for a in arrays))
    np.testing.assert_allclose(as_numpy(got), want, **TOL_BLAS[dtype])
    letter = "C" if dtype == "complex64" else "Z"
    calls = library_calls(names)
    assert calls == [f"cublas{letter}{call}"]
    assert host_copies(names) == []


PRODUCT_GRADS = {
    **{k: BLAS_CASES[k][:2] for k in ("mm", "bmm", "addmm", "baddbmm", "mv", "addmv", "dot", "vdot")},
    "matmul_folded": (lambda L, a, b: a @ b, [(2, 4, 3), (3, 5)]),
    "matmul_vector": (lambda L, a, b: L.matmul(a, b), [(2, 4, 3), (3,)]),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), [(4, 3), (5, 3), (5,)]),
    "chain": (lambda L, a, b: (a @ b) @ b.transpose(0, 1), [(4, 3), (3, 3)]),
}


@pytest.mark.parametrize("name", sorted(PRODUCT_GRADS))
@needs_cublas
def test_gradients_are_pytorchs_and_complex_products(name):
    torch = pytest.importorskip("torch")
    fn, shapes = PRODUCT_GRADS[name]
    arrays = [complex_sample(rng, s, "complex128") for s in shapes]
    results = []
    for lib, device in ((minitorch, "cuda"), (torch, "cpu")):
        leaves = [lib.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = fn(lib, *leaves)
        real = lib.view_as_real(out)
        weight = lib.tensor(np.linspace(-1, 1, real.numel()).reshape(tuple(real.shape)), device=device)
        loss = (real * weight).sum()
        if lib is minitorch:
            _, names = recorded(loss.backward)
            calls = library_calls(names)
            # every product of the backward a complex one (C or Z), none of the real parts (dot's
            # and vdot's gradients are elementwise: no product at all)
            assert all(c.startswith(("cublasZ", "cublasC")) for c in calls), calls
            assert len(calls) >= (0 if "dot" in name else 1)
            assert host_copies(names) == []
        else:
            loss.backward()
        results.append([np.asarray(out.detach().cpu())] + [np.asarray(x.grad.cpu()) for x in leaves])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, **TOL_BLAS["complex128"])


@needs_cublas
def test_mm_gradient_is_two_complex_gemms():
    """g @ b^H and a^H @ g: one cublasZgemm each (the conjugate an elementwise kernel before it)"""
    a = minitorch.tensor(complex_sample(rng, (3, 4)), device="cuda", requires_grad=True)
    b = minitorch.tensor(complex_sample(rng, (4, 2)), device="cuda", requires_grad=True)
    out = a @ b
    assert type(out.grad_fn).__name__ == "MmBackward0" or out.grad_fn.name() == "MmBackward0"
    _, names = recorded(lambda: out.backward(minitorch.ones_like(out)))
    assert library_calls(names) == ["cublasZgemm_v2", "cublasZgemm_v2"]


@needs_cublas
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_complex_python_numbers_as_alpha_and_beta(device):
    """PyTorch takes a complex Python number for a product's alpha and beta: complex products
    compute with it, real ones refuse it as PyTorch's ("value cannot be converted to type float
    without overflow"); a 0-dim complex tensor reads the same"""
    s, a, b = (complex_sample(rng, sh) for sh in [(3, 2), (3, 4), (4, 2)])
    z = [minitorch.tensor(x, device=device) for x in (s, a, b)]
    got = minitorch.addmm(*z, beta=0.5 - 1j, alpha=1j)
    np.testing.assert_allclose(as_numpy(got), (0.5 - 1j) * s + 1j * (a @ b), **TOL_BLAS["complex128"])
    same = minitorch.addmm(*z, beta=minitorch.tensor(0.5 - 1j), alpha=minitorch.tensor(1j))
    np.testing.assert_allclose(as_numpy(same), as_numpy(got), **TOL_BLAS["complex128"])
    x = minitorch.randn(2, 2, device=device)
    for call in (lambda: minitorch.addmm(x, x, x, beta=0.5 - 1j), lambda: x[0].addmv(x, x[1], alpha=2j),
                 lambda: minitorch.baddbmm(x[None], x[None], x[None], alpha=1j)):
        with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
            call()
