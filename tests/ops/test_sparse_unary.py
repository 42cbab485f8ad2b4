"""Unary elementwise ops on sparse COO and CSR tensors (minitorch/sparse/_unary.py) against NumPy
and PyTorch: the zero-preserving ones (abs, sqrt, sin, relu, sign, floor, pow with a number, ...)
keep the layout and the entries, as functions (minitorch.sin(s)), methods (s.sin()) and in place
(s.sin_()); a COO tensor is coalesced first but for the linear ones (neg, positive); the others
(exp, cos, ...) raise PyTorch's error; gradients reach the values through the ops on them."""
import math
import warnings

import numpy as np
import pytest

import minitorch
from helpers import check

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse")  # PyTorch's beta and invariant-check warnings

from test_sparse import IDX, VALS, dense_ref  # noqa: E402  (a 3x4 matrix, a repeated entry, an explicit 0)
from test_sparse import sparse as coo  # noqa: E402

# op -> NumPy's function on the dense matrix (each maps 0 to 0, so that is the reference); None:
# compared with PyTorch only
NUMPY = {
    "abs": np.abs, "sqrt": np.sqrt, "sin": np.sin, "tanh": np.tanh, "relu": lambda x: np.maximum(x, 0),
    "sign": lambda x: np.where(np.isnan(x), 0, np.sign(x)),  # PyTorch's sign(NaN) is 0 "floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
    "frac": lambda x: x - np.trunc(x), "expm1": np.expm1, "log1p": np.log1p, "asin": np.arcsin, "atan": np.arctan,
    "sinh": np.sinh, "asinh": np.arcsinh, "atanh": np.arctanh, "tan": np.tan,
    "sgn": lambda x: np.where(np.isnan(x), 0, np.sign(x)),
    "signbit": np.signbit, "erf": np.vectorize(math.erf), "erfinv": None, "rad2deg": np.rad2deg,
    "deg2rad": np.deg2rad, "isnan": np.isnan, "isinf": np.isinf, "isposinf": np.isposinf,
    "isneginf": np.isneginf, "square": np.square, "nan_to_num": np.nan_to_num, "neg": np.negative,
    "positive": lambda x: x,
}
COMPRESSED = sorted(set(NUMPY) - {"nan_to_num", "square"})
# values with a NaN, infinities, and magnitudes past asin's and atanh's domain
SPECIAL = np.array([np.nan, -np.inf, 0.75, np.inf, -0.0])


def exact_ref(values):
    """dense_ref, its specified entries summed from -0.0 as coalesce sums them (a lone -0.0
    stays -0.0, as in PyTorch, which adds nothing to it)."""
    out = np.zeros((3, 4))
    out[tuple(np.array(IDX))] = -0.0
    np.add.at(out, tuple(np.array(IDX)), values)
    return out


def csr(m, v):
    return coo(m, v).coalesce().to_sparse_csr()


def layout_of(t):
    return str(t.layout).split(".")[-1]


@pytest.mark.parametrize("values", [VALS / 4, VALS, SPECIAL], ids=["small", "vals", "special"])
@pytest.mark.parametrize("name", sorted(NUMPY))
def test_coo_unary(name, values):
    ref = NUMPY[name]
    fn = lambda m, v: getattr(m, name)(coo(m, v)).to_dense()  # noqa: E731
    if ref is None:
        np.testing.assert_allclose(fn(minitorch, minitorch.tensor(values)).numpy(),
                                   fn(torch, torch.tensor(values)).numpy(), rtol=1e-6)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            check(fn, lambda v: ref(exact_ref(v)), [values])
    got, want = getattr(coo(minitorch, minitorch.tensor(values)), name)(), getattr(torch, name)(
        coo(torch, torch.tensor(values)))
    assert layout_of(got) == layout_of(want) == "sparse_coo"
    assert got.is_coalesced() == want.is_coalesced() and got._nnz() == want._nnz()
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]


@pytest.mark.parametrize("name", COMPRESSED)
def test_csr_unary(name):
    got = getattr(minitorch, name)(csr(minitorch, minitorch.tensor(VALS)))
    want = getattr(torch, name)(csr(torch, torch.tensor(VALS)))
    assert layout_of(got) == layout_of(want) == "sparse_csr"
    np.testing.assert_array_equal(got.crow_indices().numpy(), want.crow_indices().numpy())
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(got.to_dense().numpy().astype(float), want.to_dense().numpy().astype(float),
                                   rtol=1e-6)


@pytest.mark.parametrize("name", ["abs", "sin", "sqrt", "floor", "neg"])
def test_in_place(name):
    for make in (lambda m, v: coo(m, v).coalesce(), csr):
        s, t = make(minitorch, minitorch.tensor(VALS)), make(torch, torch.tensor(VALS))
        assert getattr(s, name + "_")() is s
        getattr(t, name + "_")()
        np.testing.assert_allclose(s.to_dense().numpy(), t.to_dense().numpy(), rtol=1e-6)
    if name != "neg":  # the linear ones need no coalescing
        for lib in (minitorch, torch):
            with pytest.raises(RuntimeError, match=f"{name}_ requires coalesced input"):
                getattr(coo(lib, lib.tensor(VALS)), name + "_")()


@pytest.mark.parametrize("exponent", [2, 0.5, -1, 3.0])
def test_pow_and_scalar_mul(exponent):
    with np.errstate(invalid="ignore", divide="ignore"):
        check(lambda m, v: (coo(m, v) ** exponent).to_dense(),
              lambda v: np.where(dense_ref(np.ones(5)) > 0, dense_ref(v) ** exponent, 0), [VALS])
    check(lambda m, v: m.pow(coo(m, v), exponent).to_dense(),
          lambda v: np.where(dense_ref(np.ones(5)) > 0, dense_ref(v) ** exponent, 0), [np.abs(VALS) + 1])
    check(lambda m, v: coo(m, v).mul(exponent).to_dense(), lambda v: dense_ref(v) * exponent, [VALS])
    check(lambda m, v: (exponent * csr(m, v)).to_dense(), lambda v: dense_ref(v) * exponent, [VALS])
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match="cannot raise to zeroth power on sparse tensor"):
            coo(lib, lib.tensor(VALS)).pow(0)
        with pytest.raises(RuntimeError, match="unsupported tensor layout: SparseCsr"):
            csr(lib, lib.tensor(VALS)).pow(2)


@pytest.mark.parametrize("name", ["exp", "cos", "sigmoid"])
def test_ops_that_would_make_it_dense_raise(name):
    for lib in (minitorch, torch):
        with pytest.raises(NotImplementedError, match=f"Could not run 'aten::{name}' with arguments from the "
                                                      "'SparseCPU' backend"):
            getattr(lib, name)(coo(lib, lib.tensor(VALS)))
    with pytest.raises(NotImplementedError, match="'SparseCPU' backend"):
        getattr(coo(minitorch, minitorch.tensor(VALS)), name)()


@pytest.mark.parametrize("name", ["sin", "abs", "tanh", "sqrt", "square", "neg", "relu"])
def test_gradients_reach_the_values(name):
    """Through coalesce (index_add) and the op on the values: central differences in float64,
    and PyTorch's gradient where PyTorch's sparse op has one."""
    values = np.abs(VALS) + 0.5 if name == "sqrt" else np.where(VALS == 0, 0.25, VALS)  # differentiable points
    fn = lambda m, v: getattr(m, name)(coo(m, v)).to_dense()  # noqa: E731
    v = minitorch.tensor(values, requires_grad=True)
    assert minitorch.autograd.gradcheck(lambda v: fn(minitorch, v), [v])
    weight = np.arange(12.0).reshape(3, 4)
    (fn(minitorch, v) * minitorch.tensor(weight)).sum().backward()
    t = torch.tensor(values, requires_grad=True)
    try:
        (fn(torch, t) * torch.tensor(weight)).sum().backward()
    except (NotImplementedError, RuntimeError):  # PyTorch 2.13 has no sparse backward for it
        return
    np.testing.assert_allclose(v.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_dense_with_sparse_operands():
    """dense.add(sparse), add_, sub and the reflected operators go to the sparse tensor."""
    a = np.random.default_rng(0).standard_normal((3, 4))
    check(lambda m, d, v: d.add(coo(m, v), alpha=2), lambda d, v: d + 2 * dense_ref(v), [a, VALS])
    check(lambda m, d, v: m.sub(d, coo(m, v)), lambda d, v: d - dense_ref(v), [a, VALS])
    check(lambda m, d, v: d.clone().add_(coo(m, v), alpha=-0.5), lambda d, v: d - 0.5 * dense_ref(v), [a, VALS])
    check(lambda m, d, v: d.clone().sub_(coo(m, v)), lambda d, v: d - dense_ref(v), [a, VALS])


def test_sparse_tensors_are_tensors():
    """isinstance(s, Tensor) holds for COO and CSR tensors, as in PyTorch; not for Tensor's
    subclasses (Parameter), and a dense tensor's checks are unchanged."""
    for lib in (minitorch, torch):
        s = coo(lib, lib.tensor(VALS))
        for t in (s, csr(lib, lib.tensor(VALS))):
            assert isinstance(t, lib.Tensor) and lib.is_tensor(t) and isinstance(t, (int, lib.Tensor))
            assert not isinstance(t, lib.nn.Parameter)
        assert isinstance(lib.nn.Parameter(lib.ones(2)), lib.Tensor) and not isinstance(2.0, lib.Tensor)
