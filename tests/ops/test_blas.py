"""Matrix products (addmm, _addmm_activation, mm, bmm, mv, dot, matmul, linear) against NumPy
float64 and PyTorch, on strided and transposed operands, and the gemv path of one-row and
one-column products."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitorch
from helpers import arrays, check, layouts, raises_like_torch, torch

dims = st.integers(0, 6)
FLOAT_TOL = dict(atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("dtype", ("float32", "float64", "int64", "int32"))
@given(data=st.data(), m=dims, k=dims, n=dims, layout=layouts)
def test_mm_addmm(dtype, data, m, k, n, layout):
    a = data.draw(arrays(dtype, (m, k)))
    b = data.draw(arrays(dtype, (k, n)))
    c = data.draw(arrays(dtype, (n,)))
    lay = layout if m and k and n else "contiguous"
    check(lambda t, x, y: t.mm(x, y), np.matmul, [a, b], layout=lay, **FLOAT_TOL)
    check(lambda t, x, y: x @ y, np.matmul, [a, b], layout=lay, **FLOAT_TOL)
    check(lambda t, z, x, y: t.addmm(z, x, y), lambda z, x, y: z + x @ y, [c, a, b], layout=lay, **FLOAT_TOL)
    check(lambda t, z, x, y: t.addmm(z, x, y, beta=2, alpha=3), lambda z, x, y: 2 * z + 3 * (x @ y),
          [c, a, b], layout=lay, **FLOAT_TOL)


def gelu(x):
    """The exact GELU, x Phi(x), in float64."""
    return 0.5 * x * (1 + np.vectorize(math.erf, otypes=[np.float64])(x / math.sqrt(2)))


@pytest.mark.parametrize("dtype", ("float32", "float64"))
@given(data=st.data(), m=dims, k=dims, n=dims, layout=layouts)
def test_addmm_activation(dtype, data, m, k, n, layout):
    """torch._addmm_activation on the CPU: addmm, then relu or the exact gelu (CUDA's is
    tanh-approximated: tests/cuda/test_cuda_libs.py)."""
    a = data.draw(arrays(dtype, (m, k)))
    b = data.draw(arrays(dtype, (k, n)))
    c = data.draw(arrays(dtype, (n,)))
    c2 = data.draw(arrays(dtype, (m, n)))
    lay = layout if m and k and n else "contiguous"
    check(lambda t, z, x, y: t._addmm_activation(z, x, y), lambda z, x, y: np.maximum(z + x @ y, 0),
          [c, a, b], layout=lay, **FLOAT_TOL)
    check(lambda t, z, x, y: t._addmm_activation(z, x, y, use_gelu=True), lambda z, x, y: gelu(z + x @ y),
          [c, a, b], layout=lay, **FLOAT_TOL)
    check(lambda t, z, x, y: z._addmm_activation(x, y, beta=0.5, alpha=-2, use_gelu=True),
          lambda z, x, y: gelu(0.5 * z - 2 * (x @ y)), [c2, a, b], layout=lay, **FLOAT_TOL)


def test_addmm_activation_nan_result_version_and_no_derivative():
    z = minitorch.tensor([float("nan"), -1.0, 2.0])
    x, y = minitorch.ones(2, 3), minitorch.ones(3, 3)
    out = minitorch._addmm_activation(z, x, y)
    assert np.isnan(out[:, 0].numpy()).all() and out[:, 1:].tolist() == [[2.0, 5.0], [2.0, 5.0]]
    assert out._version == 0
    y.requires_grad_(True)
    r = minitorch._addmm_activation(z, x, y, use_gelu=True)
    assert type(r.grad_fn).__name__ == "NotImplemented"
    with pytest.raises(RuntimeError, match="^derivative for aten::_addmm_activation is not implemented$"):
        r.sum().backward()
    if torch is not None:  # PyTorch's node and message
        ty = torch.ones(3, 3, requires_grad=True)
        with pytest.raises(RuntimeError, match="^derivative for aten::_addmm_activation is not implemented$"):
            torch._addmm_activation(torch.zeros(3), torch.ones(2, 3), ty).sum().backward()


@pytest.mark.parametrize("m, k, n", [(1, 4, 8), (8, 4, 1), (1, 1, 1), (1, 7, 1), (5, 3, 1)])
def test_vector_shaped_products_use_gemv(m, k, n):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    minitorch._C._trace_start()
    check(lambda t, x, y: t.mm(x, y), np.matmul, [a, b], **FLOAT_TOL)
    names = [e[2] for e in minitorch._C._trace_stop()]
    assert "cblas_sgemv" in names and "cblas_sgemm" not in names


def test_square_product_uses_gemm():
    minitorch._C._trace_start()
    minitorch.ones(3, 3) @ minitorch.ones(3, 3).t()
    names = [e[2] for e in minitorch._C._trace_stop()]
    assert "cblas_sgemm" in names


@given(data=st.data(), b=st.integers(0, 3), m=dims, k=dims, n=dims, layout=layouts)
def test_bmm(data, b, m, k, n, layout):
    x = data.draw(arrays("float32", (b, m, k)))
    y = data.draw(arrays("float32", (b, k, n)))
    lay = layout if b and m and k and n else "contiguous"
    check(lambda t, p, q: t.bmm(p, q), np.matmul, [x, y], layout=lay, **FLOAT_TOL)


@given(data=st.data(), m=dims, k=dims, layout=layouts)
def test_mv_dot(data, m, k, layout):
    a = data.draw(arrays("float64", (m, k)))
    v = data.draw(arrays("float64", (k,)))
    lay = layout if m and k else "contiguous"
    check(lambda t, x, y: t.mv(x, y), np.matmul, [a, v], layout=lay)
    check(lambda t, x, y: t.dot(x, y), np.dot, [v, v], layout=lay if k else "contiguous")


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
    ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((5, 1, 2, 3), (4, 3, 2)), ((1, 2, 3), (6, 3, 4)), ((2, 1, 2, 3), (1, 3, 3, 1)),
    ((0, 2, 3), (3, 4)), ((2, 0), (0, 3)),
]


@pytest.mark.parametrize("sa, sb", MATMUL_SHAPES)
@pytest.mark.parametrize("layout", ("contiguous", "transposed"))
def test_matmul_broadcasting(sa, sb, layout):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa).astype(np.float32), rng.standard_normal(sb).astype(np.float32)
    check(lambda t, x, y: t.matmul(x, y), np.matmul, [a, b], layout=layout, **FLOAT_TOL)


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_linear(batched, bias):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 4) if batched else (3, 4)).astype(np.float32)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    if bias:
        check(lambda t, p, q, r: t.nn.functional.linear(p, q, r), lambda p, q, r: p @ q.T + r, [x, w, b],
              **FLOAT_TOL)
    else:
        check(lambda t, p, q: t.nn.functional.linear(p, q), lambda p, q: p @ q.T, [x, w], **FLOAT_TOL)


def test_addmm_beta_zero_ignores_nan_in_self():
    out = minitorch.addmm(minitorch.full((2, 2), float("nan")), minitorch.ones(2, 3), minitorch.ones(3, 2), beta=0)
    assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]


INT_PRODUCTS = [
    (lambda t, z, x, y, **kw: t.addmm(z, x, y, **kw), ((2, 2), (2, 3), (3, 2))),
    (lambda t, z, x, y, **kw: t.addmv(z, x, y, **kw), ((2,), (2, 3), (3,))),
    (lambda t, z, x, y, **kw: t.baddbmm(z, x, y, **kw), ((2, 2, 2), (2, 2, 3), (2, 3, 2))),
]


@pytest.mark.parametrize("dtype", ("int64", "int32"))
@pytest.mark.parametrize("fn, shapes_", INT_PRODUCTS)
@pytest.mark.parametrize("beta, alpha", [(0.5, 2), (1.5, 2.7), (-1.5, -0.5), (2.9, 1), (True, False)])
def test_integer_products_truncate_fractional_alpha_beta(dtype, fn, shapes_, beta, alpha):
    # PyTorch converts alpha and beta to the integer dtype first (0.5 -> 0, -1.5 -> -1); minitorch
    # scaled by the float values and rounded the sum (beta=0.5, alpha=2 gave 2*x@y + 1).
    rng = np.random.default_rng(0)
    z, x, y = (rng.integers(-5, 6, s).astype(dtype) for s in shapes_)
    bi, ai = int(beta), int(alpha)
    ref = {2: lambda z, x, y: bi * z + ai * (x @ y), 1: lambda z, x, y: bi * z + ai * (x @ y),
           3: lambda z, x, y: bi * z + ai * np.matmul(x, y)}[len(shapes_[0])]
    check(lambda t, z, x, y: fn(t, z, x, y, beta=beta, alpha=alpha), ref, [z, x, y])
    # An empty inner dimension gives beta * self with the same integer beta (PyTorch's addmm and
    # baddbmm raise there for a float beta, as their k == 0 path multiplies by the float).
    empty = fn(minitorch, *[minitorch.tensor(a) for a in (z, x[..., :0], y[..., :0, :] if y.ndim > 1 else y[:0])],
               beta=beta, alpha=alpha)
    np.testing.assert_array_equal(empty.numpy(), bi * z)


@pytest.mark.parametrize("fn, shapes_", INT_PRODUCTS)
@pytest.mark.parametrize("dtype, kw", [("int64", dict(beta=float("nan"))), ("int64", dict(alpha=1e30)),
                                       ("int32", dict(alpha=2**33)), ("int32", dict(beta=2.0**31))])
def test_integer_products_refuse_alpha_beta_out_of_range(fn, shapes_, dtype, kw):
    arrays = [np.ones(s, dtype) for s in shapes_]
    assert raises_like_torch(lambda t, z, x, y: fn(t, z, x, y, **kw), *arrays) is RuntimeError
    with pytest.raises(RuntimeError, match="value cannot be converted to type int(64_t)? without overflow"):
        fn(minitorch, *[minitorch.tensor(a) for a in arrays], **kw)


def test_int64_product_wraps_in_integers():
    # alpha * sum in float64 lost the low bits of int64 results past 2**53
    x, y, z = (minitorch.tensor([[v]]) for v in (2**40 + 1, 2**30 + 3, 2**40 + 7))
    assert minitorch.addmm(z, x, y, beta=3, alpha=5).tolist() == [[(3 * (2**40 + 7) + 5 * (2**40 + 1) * (2**30 + 3) + 2**63) % 2**64 - 2**63]]


@pytest.mark.parametrize(
    "fn, shapes_",
    [
        (lambda t, x, y: t.mm(x, y), ((2, 3), (4, 5))),
        (lambda t, x, y: t.mm(x, y), ((2, 3), (3,))),
        (lambda t, x, y: t.mm(x.double(), y), ((2, 3), (3, 2))),
        (lambda t, x, y: t.addmm(y, x, y), ((2, 3), (4, 5))),
        (lambda t, x, y: t._addmm_activation(y, x, y), ((2, 3), (4, 5))),
        (lambda t, x, y: t._addmm_activation(x, x, y, use_gelu=True), ((2, 3), (3, 5))),
        (lambda t, x, y: t.bmm(x, y), ((2, 3, 4), (5, 6))),
        (lambda t, x, y: t.bmm(x, y), ((2, 3, 4), (3, 4, 5))),
        (lambda t, x, y: t.mv(x, y), ((2, 3), (4,))),
        (lambda t, x, y: t.dot(x, y), ((3,), (4,))),
        (lambda t, x, y: t.matmul(x, y), ((2, 3, 4), (5, 6))),
        (lambda t, x, y: t.matmul(x, y), ((2, 3, 4), (3, 4, 6))),
        (lambda t, x, y: x.bool() @ y.bool(), ((2, 3), (3, 2))),
        (lambda t, x, y: t.nn.functional.linear(x, y), ((2, 3), (4, 5))),
    ],
)
def test_bad_products_raise_like_torch(fn, shapes_):
    raises_like_torch(fn, *[np.ones(s, np.float32) for s in shapes_])


def test_shape_error_message_is_pytorchs():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        minitorch.ones(2, 3) @ minitorch.ones(4, 5)
