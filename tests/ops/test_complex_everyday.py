"""Complex tensors through the everyday API (issue 19/20), against PyTorch (values, dtype, shape and
the gradients of a real loss, PyTorch's conjugate Wirtinger convention) and NumPy (complex128
reference): indexing and the other data movement, the unary math, the products and reductions;
on non-contiguous, broadcast, empty and NaN/inf inputs; and complex tensors on a CUDA device."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, as_numpy, complex_sample, same_as_torch_complex, torch

rng = np.random.default_rng(1919)
Z = complex_sample(rng, (3, 4))
MASK = np.array([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
IDX = np.array([2, 0, 2])


def _set(x, key, value):
    y = x.clone()
    y[key] = value
    return y


# ---- 1. data movement: values, gradients (and grad_fn) as PyTorch's ----

MOVES = {
    "int": lambda L, x: x[1],
    "slice": lambda L, x: x[:, 1:3],
    "mask": lambda L, x, m: x[m],
    "index_tensor": lambda L, x, i: x[i],
    "index_pair": lambda L, x, i: x[i, i + 1],
    "setitem_number": lambda L, x: _set(x, (slice(None), 1), 5 + 1j),
    "setitem_mask": lambda L, x, m: _set(x, m, 2j),
    "setitem_tensor": lambda L, x, i: _set(x, i[:2], x[1] * 2),
    "index_put_": lambda L, x, i: x.clone().index_put_((i,), x[0] * 1j),
    "index_put_accumulate": lambda L, x, i: x.clone().index_put_((i,), x[0] * 1j, accumulate=True),
    "index_select": lambda L, x, i: L.index_select(x, 1, i),
    "gather": lambda L, x: L.gather(x, 1, L.tensor([[0, 1], [2, 3], [1, 1]])),
    "scatter": lambda L, x: L.zeros(3, 4, dtype=x.dtype).scatter(1, L.tensor([[0, 1], [2, 3], [1, 0]]), x[:, :2]),
    "scatter_value": lambda L, x: x.scatter(1, L.tensor([[0], [2], [1]]), 1j),
    "scatter_add": lambda L, x: L.ones(3, 4, dtype=x.dtype).scatter_add(1, L.tensor([[0, 0], [2, 3], [1, 0]]),
                                                                        x[:, :2]),
    "masked_fill": lambda L, x, m: x.masked_fill(m, 1 + 1j),
    "masked_select": lambda L, x, m: L.masked_select(x, m),
    "where": lambda L, x, m: L.where(m, x, x * 2j),
    "where_number": lambda L, x, m: L.where(m, x, 0),
    "take": lambda L, x: L.take(x, L.tensor([0, 5, 11, 5])),
    "take_along_dim": lambda L, x: L.take_along_dim(x, L.tensor([[0], [3], [1]]), 1),
    "diag": lambda L, x: L.diag(x, 1),
    "diag_vector": lambda L, x: L.diag(x[0]),
    "diagonal": lambda L, x: L.diagonal(x, -1),
    "diag_embed": lambda L, x: L.diag_embed(x),
    "tril": lambda L, x: L.tril(x),
    "triu": lambda L, x: L.triu(x, 1),
    "repeat": lambda L, x: x.repeat(2, 1, 2),
    "repeat_interleave": lambda L, x: x.repeat_interleave(2, dim=0),
    "repeat_interleave_tensor": lambda L, x: L.repeat_interleave(x, L.tensor([1, 0, 2]), dim=0),
    "kron": lambda L, x: L.kron(x, x[:2, :2]),
    "flip": lambda L, x: L.flip(x, (0, 1)),
    "roll": lambda L, x: L.roll(x, 1, 1),
    "roll_flat": lambda L, x: L.roll(x, 3),
    "cat": lambda L, x: L.cat([x, x * 2]),
    "stack": lambda L, x: L.stack([x, x * 2], 1),
    "clone": lambda L, x: x.clone(),
    "contiguous": lambda L, x: x.t().contiguous(),
    "expand": lambda L, x: x[:1].expand(3, 4) * 1,
    "index_add": lambda L, x, i: L.zeros(4, 4, dtype=x.dtype).index_add(0, i, x),
    "index_copy": lambda L, x: L.zeros(4, 4, dtype=x.dtype).index_copy(0, L.tensor([3, 0, 1]), x),
    "index_fill": lambda L, x, i: x.index_fill(1, i, 2 - 1j),
}


def _inputs(name, z):
    code = MOVES[name].__code__.co_varnames[:MOVES[name].__code__.co_argcount]
    extra = {"m": MASK, "i": IDX}
    return [z] + [extra[v] for v in code[2:]]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(MOVES))
def test_data_movement(name, layout):
    same_as_torch_complex(MOVES[name], _inputs(name, Z), layout=layout)


@pytest.mark.parametrize("name", sorted(MOVES))
def test_data_movement_complex64_and_special_values(name):
    z = Z.astype(np.complex64).copy()
    z[0, 1], z[2, 3] = complex(np.nan, 1), complex(np.inf, -np.inf)
    same_as_torch_complex(MOVES[name], _inputs(name, z), grad=False)


def test_data_movement_against_numpy():
    x = minitorch.tensor(Z)
    for got, want in [(x[minitorch.tensor(MASK)], Z[MASK]), (x[minitorch.tensor(IDX)], Z[IDX]),
                      (x.index_select(1, minitorch.tensor([3, 0])), Z[:, [3, 0]]),
                      (minitorch.take(x, minitorch.tensor([0, 11])), Z.ravel()[[0, 11]]),
                      (minitorch.tril(x), np.tril(Z)), (minitorch.diagonal(x, 1), np.diagonal(Z, 1)),
                      (x.repeat(2, 1), np.tile(Z, (2, 1))),
                      (minitorch.masked_select(x, minitorch.tensor(MASK)), Z[MASK])]:
        assert got.dtype == minitorch.complex128
        np.testing.assert_array_equal(as_numpy(got), want)
    np.testing.assert_allclose(as_numpy(minitorch.kron(x, x)), np.kron(Z, Z), rtol=1e-15)  # products
    y = x.clone()
    y[minitorch.tensor(IDX)] = minitorch.tensor(Z[:1] * 1j)
    want = Z.copy()
    want[IDX] = Z[:1] * 1j
    np.testing.assert_array_equal(as_numpy(y), want)
    acc = minitorch.zeros(3, 4, dtype=minitorch.complex64).index_put_(
        (minitorch.tensor(IDX),), minitorch.tensor(Z.astype(np.complex64)), accumulate=True)
    want = np.zeros((3, 4), np.complex128)
    np.add.at(want, IDX, Z)
    np.testing.assert_allclose(as_numpy(acc), want, rtol=1e-6)


def test_indexing_grad_fn_and_gradient():
    x = minitorch.tensor(Z, requires_grad=True)
    y = x[minitorch.tensor(IDX)]
    assert type(y.grad_fn).__name__ == "IndexBackward0"
    (y.abs() ** 2).sum().backward()
    want = np.zeros_like(Z)
    np.add.at(want, IDX, 2 * Z[IDX])  # d|z|^2 = 2z in the conjugate Wirtinger convention
    np.testing.assert_allclose(as_numpy(x.grad), want, rtol=1e-12)
    x.grad = None
    x[minitorch.tensor(MASK)].real.sum().backward()
    np.testing.assert_array_equal(as_numpy(x.grad), MASK.astype(np.complex128))


def test_factories_with_complex_dtype_or_fill():
    for lib in (minitorch, torch) if torch is not None else (minitorch,):
        e = lib.eye(3, 2, dtype=lib.complex64)
        assert str(e.dtype).endswith("complex64")
        np.testing.assert_array_equal(as_numpy(e) if lib is minitorch else e.numpy(), np.eye(3, 2))
    z = minitorch.tensor(Z)
    assert minitorch.zeros_like(z).dtype == minitorch.complex128 and not as_numpy(minitorch.zeros_like(z)).any()
    f = minitorch.full((2, 2), 1 + 2j)
    assert f.dtype == minitorch.complex64 and f.tolist() == [[1 + 2j] * 2] * 2
    assert minitorch.full_like(z, 3j).tolist() == [[3j] * 4] * 3


# ---- 2. unary math ----

UNARY = ["exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sigmoid", "sgn", "angle",
         "square", "neg", "isfinite", "isnan", "isinf"]


def _unary(name):
    return lambda L, x: getattr(L, name)(x)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, layout):
    same_as_torch_complex(_unary(name), [Z], layout=layout, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", UNARY)
def test_unary_complex64_empty_and_near_zero(name):
    same_as_torch_complex(_unary(name), [Z.astype(np.complex64)], atol=1e-5, rtol=1e-4)
    same_as_torch_complex(_unary(name), [np.zeros((0, 2), np.complex128)])
    small = np.array([1e-9 + 2e-9j, -3e-12 + 1e-12j, 1e-5j, 1e-5 + 0j])
    same_as_torch_complex(_unary(name), [small], atol=1e-15, rtol=1e-9, grad=name not in ("angle", "sgn"))


SPECIAL = np.array([complex(np.nan, 0), complex(np.inf, 1), complex(1, -np.inf), 0j, complex(np.nan, 2),
                    -1 + 0j, 1 + 0j, 1e300 + 1e300j, complex(-np.inf, np.nan)])


@pytest.mark.parametrize("name", ["exp", "log", "log2", "log10", "sqrt", "sin", "cos", "tanh", "isfinite", "isnan",
                                  "isinf", "sgn", "neg"])
def test_unary_nan_inf_as_torch(name):
    with np.errstate(all="ignore"):
        same_as_torch_complex(_unary(name), [SPECIAL], grad=False)


@pytest.mark.parametrize("name", ["exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "sin", "cos", "tan",
                                  "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh",
                                  "arctanh", "square", "reciprocal"])
def test_unary_against_numpy(name):
    got = getattr(minitorch, name)(minitorch.tensor(Z))
    assert got.dtype == minitorch.complex128
    np.testing.assert_allclose(as_numpy(got), getattr(np, name)(Z), rtol=1e-12, atol=1e-14)


POW = {
    "tensor_tensor": lambda L, x: L.pow(x, x * 0.5),
    "complex_number": lambda L, x: x ** (1 + 1j),
    "imaginary_number": lambda L, x: x ** 2j,
    "int": lambda L, x: x ** 3,
    "float": lambda L, x: x ** -0.5,
    "number_base": lambda L, x: 2.0 ** x,
    "complex_base": lambda L, x: (1 - 2j) ** x,
    "real_base": lambda L, x: L.pow(x.real, x),
    "real_exponent": lambda L, x: L.pow(x, x.imag),
}


@pytest.mark.parametrize("name", sorted(POW))
def test_pow(name):
    same_as_torch_complex(POW[name], [Z], atol=1e-6, rtol=1e-5)


def test_pow_against_numpy():
    x = minitorch.tensor(Z)
    np.testing.assert_allclose(as_numpy(x ** (1 + 1j)), Z ** (1 + 1j), rtol=1e-12)
    np.testing.assert_allclose(as_numpy(minitorch.pow(x, x)), Z ** Z, rtol=1e-12)
    np.testing.assert_allclose(as_numpy((1 - 2j) ** x), (1 - 2j) ** Z, rtol=1e-12)


COMPARE = {
    "eq": lambda L, x, y: x == y,
    "ne": lambda L, x, y: x != y,
    "eq_number": lambda L, x, y: x == (1 + 2j),
    "isclose": lambda L, x, y: L.isclose(x, y),
    "isclose_nan": lambda L, x, y: L.isclose(x, y, equal_nan=True),
}


@pytest.mark.parametrize("name", sorted(COMPARE))
def test_comparisons(name):
    x = np.array([1 + 2j, 1 + 2j, complex(np.nan, 1), 3j, 1e-9 + 3j])
    y = np.array([1 + 2j, 1 + 2.1j, complex(np.nan, 1), 3j + 1e-9, 3j])
    same_as_torch_complex(COMPARE[name], [x, y], grad=False)
    assert minitorch.allclose(minitorch.tensor(x), minitorch.tensor(x), equal_nan=True)
    assert not minitorch.allclose(minitorch.tensor(x), minitorch.tensor(y), equal_nan=True)


# ---- 3. products and reductions ----

V, W = complex_sample(rng, (4,)), complex_sample(rng, (4,))
M = complex_sample(rng, (4, 4))
PRODUCTS = {
    "dot": (lambda L, x, y: L.dot(x, y), [V, W]),
    "vdot": (lambda L, x, y: L.vdot(x, y), [V, W]),
    "inner": (lambda L, x, y: L.inner(x, y), [Z, M]),
    "outer": (lambda L, x, y: L.outer(x, y), [V, W]),
    "mv": (lambda L, x, y: L.mv(x, y), [Z, V]),
    "mm": (lambda L, x, y: L.mm(x, y), [Z, M]),
    "matmul": (lambda L, x, y: x @ y, [Z, M]),
    "bmm": (lambda L, x, y: L.bmm(x, y), [complex_sample(rng, (2, 3, 4)), complex_sample(rng, (2, 4, 2))]),
    "einsum": (lambda L, x, y: L.einsum("ij,kj->ik", x, y), [Z, M]),
    "linear": (lambda L, x, y: L.nn.functional.linear(x, y), [Z, M]),
    "linear_bias": (lambda L, x, y, b: L.nn.functional.linear(x, y, b), [Z, M, V]),
    "linear_3d": (lambda L, x, y, b: L.nn.functional.linear(x, y, b), [complex_sample(rng, (2, 3, 4)), M, V]),
    "addmm": (lambda L, b, x, y: L.addmm(b, x, y, beta=0.5, alpha=2), [V, Z, M]),
    "trace": (lambda L, x: L.trace(x), [Z]),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products(name, layout):
    fn, arrays = PRODUCTS[name]
    same_as_torch_complex(fn, arrays, layout=layout, atol=1e-6)


def test_products_against_numpy_and_mismatched_dtypes():
    v, w, z, m = (minitorch.tensor(a) for a in (V, W, Z, M))
    for got, want in [(minitorch.dot(v, w), np.dot(V, W)), (minitorch.vdot(v, w), np.vdot(V, W)),
                      (minitorch.mv(z, v), Z @ V), (minitorch.outer(v, w), np.outer(V, W)),
                      (minitorch.inner(z, m), np.inner(Z, M)), (minitorch.trace(m), np.trace(M))]:
        assert got.dtype == minitorch.complex128
        np.testing.assert_allclose(as_numpy(got), want, rtol=1e-12)
    same_as_torch_complex(lambda L, x, y: L.dot(x, y), [V, W.real.copy()], grad=False)  # refused alike
    same_as_torch_complex(lambda L, x, y: L.mv(x, y), [Z.astype(np.complex64), V], grad=False)


REDUCTIONS = {
    "sum": lambda L, x: x.sum(1),
    "mean": lambda L, x: x.mean(0),
    "prod": lambda L, x: x.prod(1),
    "prod_all": lambda L, x: x.prod(),
    "prod_keepdim": lambda L, x: x.prod(0, keepdim=True),
    "cumprod": lambda L, x: x.cumprod(1),
    "cumprod0": lambda L, x: L.cumprod(x, 0),
    "var": lambda L, x: x.var(1),
    "var_all": lambda L, x: x.var(),
    "var_correction": lambda L, x: L.var(x, 0, correction=0, keepdim=True),
    "std": lambda L, x: x.std(),
    "std_dim": lambda L, x: x.std(0, unbiased=False),
    "vector_norm": lambda L, x: L.linalg.vector_norm(x),
    "vector_norm_1": lambda L, x: L.linalg.vector_norm(x, 1, dim=1),
    "vector_norm_inf": lambda L, x: L.linalg.vector_norm(x, float("inf")),
    "vector_norm_3": lambda L, x: L.linalg.vector_norm(x, 3, dim=0, keepdim=True),
    "linalg_norm": lambda L, x: L.linalg.norm(x, dim=1),
    "norm": lambda L, x: x.norm(),
    "norm_dim": lambda L, x: L.norm(x, dim=0),
    "norm_p1": lambda L, x: x.norm(1, 1),
    "norm_fro": lambda L, x: L.norm(x, p="fro"),
    "matrix_norm_fro": lambda L, x: L.linalg.matrix_norm(x),
    "matrix_norm_1": lambda L, x: L.linalg.matrix_norm(x, 1),
    "matrix_norm_inf": lambda L, x: L.linalg.matrix_norm(x, float("inf"), keepdim=True),
    "linalg_norm_fro": lambda L, x: L.linalg.norm(x, "fro"),
    "vector_norm_dtype": lambda L, x: L.linalg.vector_norm(x, dtype=L.complex128),
    "vector_norm_real_dtype": lambda L, x: L.linalg.vector_norm(x, dtype=L.float64),  # refused alike
    "var_mean_var": lambda L, x: L.var_mean(x, 1)[0],
    "var_mean_mean": lambda L, x: L.var_mean(x, 1)[1],
    "std_mean_std": lambda L, x: L.std_mean(x, 0, keepdim=True)[0],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions(name, layout):
    same_as_torch_complex(REDUCTIONS[name], [Z], layout=layout, atol=1e-6)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_complex64_and_empty(name):
    same_as_torch_complex(REDUCTIONS[name], [Z.astype(np.complex64)], atol=1e-5, rtol=1e-4)
    if name != "matrix_norm_inf":  # empty: amax over the empty dim refuses, real inputs alike (not PyTorch's 0)
        same_as_torch_complex(REDUCTIONS[name], [np.zeros((0, 3), np.complex128)], grad=False)


def test_prod_and_cumprod_with_zeros():
    z = Z.copy()
    z[1, 2] = 0
    z[2, 0] = z[2, 3] = 0
    for name in ("prod", "prod_all", "cumprod", "cumprod0"):
        same_as_torch_complex(REDUCTIONS[name], [z], atol=1e-6)


def test_reductions_against_numpy():
    x = minitorch.tensor(Z)
    for got, want in [(x.prod(1), Z.prod(1)), (x.cumprod(0), np.cumprod(Z, 0)), (x.var(1), Z.var(1, ddof=1)),
                      (x.std(), Z.std(ddof=1)), (minitorch.linalg.vector_norm(x), np.linalg.norm(Z.ravel())),
                      (minitorch.linalg.vector_norm(x, 1, dim=0), np.abs(Z).sum(0))]:
        assert got.dtype == (minitorch.complex128 if np.iscomplexobj(want) else minitorch.float64)
        np.testing.assert_allclose(as_numpy(got), want, rtol=1e-12)


# ---- CUDA: complex tensors held there (tests/cuda/test_cuda_complex.py has the ops) ----

@pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_holds_complex():
    """No CUDA kernel takes complex tensors, yet they are made, moved and computed there (through
    the real views and the host: csrc/dispatch/complex.c)."""
    assert as_numpy(minitorch.zeros(2, 2, dtype=minitorch.complex64, device="cuda")).tolist() == [[0j, 0j]] * 2
    z = minitorch.tensor(Z).to("cuda")
    assert z.device.type == "cuda"
    np.testing.assert_allclose(as_numpy(z * z), Z * Z, rtol=1e-12)
