"""Complex matrix products on the CPU: one OpenBLAS call each (cblas_cgemm, cblas_zgemm: mm, bmm,
addmm, baddbmm, mv, addmv, dot and the composites through them), their gradients PyTorch's
conjugate transposes (grad_a = g @ b^H, grad_b = a^H @ g), again one complex gemm each, and
complex Python numbers as alpha and beta, as PyTorch takes them. Against PyTorch's CPU complex
products (same_as_torch_complex: values, dtypes, gradients) in every layout."""
import numpy as np
import pytest

import minitorch
from helpers import as_numpy, complex_sample, same_as_torch_complex

rng = np.random.default_rng(2213)
ACTS = [minitorch.profiler.ProfilerActivity.CPU]

CASES = {
    "addmm": (lambda L, s, a, b: L.addmm(s, a, b, beta=0.5 - 1j, alpha=2j), [(4, 5), (4, 3), (3, 5)]),
    "addmm_bias": (lambda L, s, a, b: L.addmm(s, a, b, alpha=-1j), [(5,), (4, 3), (3, 5)]),
    "addmm_beta_i": (lambda L, s, a, b: L.addmm(s, a, b, beta=1j), [(4, 5), (4, 3), (3, 5)]),
    "baddbmm": (lambda L, s, a, b: L.baddbmm(s, a, b, beta=1j, alpha=0.5 + 0.5j), [(2, 4, 2), (2, 4, 3), (2, 3, 2)]),
    "addmv": (lambda L, s, a, v: L.addmv(s, a, v, beta=2 - 1j, alpha=1j), [(4,), (4, 3), (3,)]),
    "mm_one_column": (lambda L, a, b: L.mm(a, b), [(4, 3), (3, 1)]),
    "matmul_vector_matrix": (lambda L, v, b: L.matmul(v, b), [(3,), (3, 4)]),
    "linear": (lambda L, x, w, b: L.nn.functional.linear(x, w, b), [(2, 4, 3), (5, 3), (5,)]),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch_with_gradients(name, dtype, layout):
    fn, shapes = CASES[name]
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == "complex64" else dict(atol=1e-12, rtol=1e-11)
    same_as_torch_complex(fn, [complex_sample(rng, s, dtype) for s in shapes], layout=layout, **tol)


def test_real_products_refuse_a_complex_alpha_or_beta_as_pytorch():
    x = rng.standard_normal((2, 2)).astype(np.float32)
    same_as_torch_complex(lambda L, s, a, b: L.addmm(s, a, b, beta=0.5 - 1j), [x, x, x], grad=False)
    same_as_torch_complex(lambda L, s, a, b: L.addmv(s, a, b, alpha=2j), [x[0], x, x[1]], grad=False)


def blas_calls(fn):
    with minitorch.profiler.profile(activities=ACTS) as prof:
        fn()
    return [e.name[len("Library::"):] for e in prof.events() if e.name.startswith("Library::")]


def test_one_complex_gemm_forward_and_one_per_gradient():
    a = minitorch.tensor(complex_sample(rng, (3, 4)), requires_grad=True)
    b = minitorch.tensor(complex_sample(rng, (4, 2)), requires_grad=True)
    out = []
    assert blas_calls(lambda: out.append(a @ b)) == ["cblas_zgemm"]
    assert blas_calls(lambda: out[0].backward(minitorch.ones_like(out[0]))) == ["cblas_zgemm"] * 2
    np.testing.assert_allclose(as_numpy(a.grad), np.ones((3, 2)) @ as_numpy(b).conj().T, rtol=1e-12)
    c = minitorch.tensor(complex_sample(rng, (2, 3, 4), "complex64"))
    assert blas_calls(lambda: minitorch.bmm(c, c.transpose(1, 2))) == ["cblas_cgemm"] * 2  # per matrix
