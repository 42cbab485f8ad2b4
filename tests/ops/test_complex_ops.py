"""Complex tensors that real programs use, against PyTorch and NumPy (complex128 reference):
construction and conversion, printing, the elementwise ops with complex loops (and Python complex
numbers as operands), sum/mean and the matrix products, and their gradients (PyTorch's conjugate
Wirtinger convention), on broadcast, non-contiguous, empty and NaN/inf inputs."""
import math
import warnings

import numpy as np
import pytest

import minitorch
from helpers import complex_sample, same_as_torch_complex, same_error, torch

rng = np.random.default_rng(19)
Z = complex_sample(rng, (3, 4))
W = complex_sample(rng, (4,))
R = rng.standard_normal((3, 4))
LAYOUTS = ["contiguous", "transposed", "sliced"]


# ---- construction and conversion ----

def test_tensor_from_python_complex():
    t = minitorch.tensor([1 + 2j, 3.5 - 1j])
    assert t.dtype == minitorch.complex64
    assert t.tolist() == [1 + 2j, 3.5 - 1j]
    assert minitorch.tensor(1 + 2j).item() == 1 + 2j
    assert isinstance(minitorch.tensor([2j]).sum().item(), complex)
    mixed = minitorch.tensor([1, 2.5, 3j])  # numbers of every kind promote to complex
    assert mixed.dtype == minitorch.complex64 and mixed.tolist() == [1, 2.5, 3j]
    assert minitorch.tensor([1, 2], dtype=minitorch.cdouble).tolist() == [1 + 0j, 2 + 0j]


def test_tensor_complex_follows_default_dtype():
    old = minitorch.get_default_dtype()
    minitorch.set_default_dtype(minitorch.float64)
    try:
        assert minitorch.tensor([1j]).dtype == minitorch.complex128
    finally:
        minitorch.set_default_dtype(old)


def test_tensor_complex_into_real_dtype_refused():
    with pytest.raises(TypeError, match="must be real number, not complex"):
        minitorch.tensor([1 + 2j], dtype=minitorch.float32)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_numpy_round_trip(dtype):
    a = complex_sample(rng, (2, 3), dtype)
    for t in (minitorch.tensor(a), minitorch.as_tensor(a), minitorch.from_numpy(a)):
        assert str(t.dtype) == f"minitorch.{dtype}"
        np.testing.assert_array_equal(t.numpy(), a)
    assert minitorch.tensor([np.complex64(1 + 1j)]).dtype == minitorch.complex64


def test_factories_and_casts():
    z = minitorch.zeros(2, 3, dtype=minitorch.cfloat)
    assert z.dtype == minitorch.complex64 and z.tolist() == [[0j] * 3] * 2
    assert minitorch.full((2,), 3.0, dtype=minitorch.cdouble).tolist() == [3 + 0j, 3 + 0j]
    r = minitorch.tensor([1.5, -2.0])
    assert r.to(minitorch.cfloat).tolist() == [1.5 + 0j, -2 + 0j]
    assert r.to(minitorch.cdouble).dtype == minitorch.complex128
    with pytest.warns(UserWarning, match="Casting complex values to real discards the imaginary part"):
        back = minitorch.tensor([1 + 2j]).to(minitorch.float32)
    assert back.tolist() == [1.0]


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1 + 2j, 3.5 - 1j]),
    lambda lib: lib.tensor([[1 + 2j, 3.5 - 1j], [0, 1e-5j]], dtype=lib.cdouble),
    lambda lib: lib.tensor(1 + 2j),
    lambda lib: lib.tensor([complex("nan"), complex(float("inf"), -1)]),
    lambda lib: lib.zeros(0, dtype=lib.cfloat),
    lambda lib: lib.tensor([1e10 + 1j, 1]),
    lambda lib: lib.tensor([1 + 2j], requires_grad=True) * 2,
    lambda lib: lib.arange(12.0).reshape(3, 4) * (0.5 - 0.25j),
    # elements of unequal width: only the real parts are padded, as PyTorch's _vector_str does
    lambda lib: lib.tensor([[1.3373 + 0.6745j, 0.0819 - 1.8363j], [-4.4226 - 10.8451j, 1 + 0.1j]]),
    # a row that wraps: the imaginary column counts its sign in the element width
    lambda lib: (lib.arange(40.0) - 20) * (1 - 3j) - 7j,
    lambda lib: lib.tensor([complex(1.0, -math.nan), complex(-0.0, -0.0), 2 + 3j]),
])
def test_repr_as_torch(make):
    if torch is None:
        pytest.skip("needs PyTorch")
    assert repr(make(minitorch)) == repr(make(torch)).replace("torch.", "minitorch.")


# ---- elementwise ----

BINARY = {
    "mul": lambda lib, x, y: x * y,
    "div": lambda lib, x, y: x / y,
    "add": lambda lib, x, y: x + y,
    "sub": lambda lib, x, y: x - y,
    "add_alpha": lambda lib, x, y: lib.add(x, y, alpha=2),
    "pow": lambda lib, x, y: lib.pow(x, y),
    "eq": lambda lib, x, y: x == y,
    "ne": lambda lib, x, y: x != y,
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_complex_complex(name, layout):
    same_as_torch_complex(BINARY[name], [Z, complex_sample(rng, (3, 4))], layout=layout)


@pytest.mark.parametrize("name", ["mul", "div", "add", "sub"])
def test_binary_broadcast_and_real_operand(name):
    fn = BINARY[name]
    same_as_torch_complex(fn, [Z, W])  # (3, 4) with (4,)
    same_as_torch_complex(fn, [W, Z])
    same_as_torch_complex(fn, [Z, R])  # complex with real: complex result, real gradient
    same_as_torch_complex(fn, [R, Z])
    same_as_torch_complex(fn, [Z.astype(np.complex64), R.astype(np.float64)])  # complex128 result


@pytest.mark.parametrize("name", ["mul", "div", "add", "sub"])
@pytest.mark.parametrize("number", [1j, 2 - 0.5j, 3.0, 2])
def test_python_complex_numbers(name, number):
    fn = BINARY[name]
    same_as_torch_complex(lambda lib, x: fn(lib, x, number), [Z.astype(np.complex64)])
    same_as_torch_complex(lambda lib, x: fn(lib, number, x) if name in ("mul", "add") else fn(lib, x, number),
                          [R.astype(np.float32)])


def test_python_complex_promotion():
    assert (minitorch.ones(2) * 1j).dtype == minitorch.complex64
    assert (minitorch.ones(2, dtype=minitorch.float64) * 1j).dtype == minitorch.complex128
    assert (minitorch.arange(3) + 1j).dtype == minitorch.complex64
    assert (1j * minitorch.ones(2)).tolist() == [1j, 1j]


UNARY = {
    "neg": lambda lib, x: -x,
    "exp": lambda lib, x: lib.exp(x),
    "log": lambda lib, x: lib.log(x),
    "sqrt": lambda lib, x: lib.sqrt(x),
    "reciprocal": lambda lib, x: lib.reciprocal(x),
    "abs": lambda lib, x: x.abs(),
    "angle": lambda lib, x: lib.angle(x),
    "conj": lambda lib, x: x.conj() * 1,
    "conj_physical": lambda lib, x: lib.conj_physical(x),
    "real": lambda lib, x: x.real * 1,
    "imag": lambda lib, x: x.imag * 1,
    "isnan": lambda lib, x: lib.isnan(x),
    "isinf": lambda lib, x: lib.isinf(x),
    "isfinite": lambda lib, x: lib.isfinite(x),
    "pow2": lambda lib, x: x ** 2,
    "pow_half": lambda lib, x: x ** 0.5,
    "sgn": lambda lib, x: x.sgn(),
    "sgn_fn": lambda lib, x: lib.sgn(x),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, layout):
    same_as_torch_complex(UNARY[name], [Z], layout=layout, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_empty_and_complex64(name):
    same_as_torch_complex(UNARY[name], [np.zeros((0, 3), np.complex128)])
    same_as_torch_complex(UNARY[name], [Z.astype(np.complex64)], atol=1e-5, rtol=1e-4)


SPECIAL = np.array([complex("nan"), complex(float("inf"), 1), complex(1, float("-inf")), 0j, -0.0 + 0j,
                    complex(float("nan"), 2), -1 + 0j, 1e300 + 1e300j])


def test_sgn_at_zero_and_real():
    same_as_torch_complex(lambda lib, x: x.sgn(), [np.array([0j, 3 - 4j, -2 + 0j])])
    same_as_torch_complex(lambda lib, x: lib.sgn(x), [np.array([0.0, -2.5, 3.0])])
    same_as_torch_complex(lambda lib, x: x.abs(), [np.array([0j, 3 - 4j, -2 + 0j])])  # gradient 0 at 0


@pytest.mark.parametrize("name", ["neg", "exp", "log", "sqrt", "isnan", "isinf", "isfinite", "abs"])
def test_unary_nan_inf_as_torch(name):
    with np.errstate(all="ignore"):
        same_as_torch_complex(UNARY[name], [SPECIAL], grad=False)


@pytest.mark.parametrize("name", ["mul", "div", "add", "eq"])
def test_binary_nan_inf_as_torch(name):
    same_as_torch_complex(BINARY[name], [SPECIAL, SPECIAL[::-1].copy()], grad=False)
    same_as_torch_complex(BINARY[name], [SPECIAL, np.full(SPECIAL.shape, 0j)], grad=False)  # x / 0


def test_against_numpy_complex128():
    x, y = Z, complex_sample(rng, (3, 4))
    tx, ty = minitorch.tensor(x), minitorch.tensor(y)
    for got, want in [(tx * ty, x * y), (tx / ty, x / y), (minitorch.exp(tx), np.exp(x)),
                      (minitorch.log(tx), np.log(x)), (minitorch.sqrt(tx), np.sqrt(x)),
                      (tx ** ty, x ** y), (tx.sum(1), x.sum(1)), (tx @ ty.T, x @ y.T)]:
        assert got.dtype == minitorch.complex128
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


# ---- reductions and products ----

REDUCE = {
    "sum": lambda lib, x: x.sum(),
    "sum0": lambda lib, x: x.sum(0),
    "sum_neg": lambda lib, x: lib.sum(x, dim=-1, keepdim=True),
    "sum_dims": lambda lib, x: x.sum((0, 1)),
    "mean": lambda lib, x: x.mean(),
    "mean1": lambda lib, x: x.mean(1),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reductions(name, layout):
    same_as_torch_complex(REDUCE[name], [Z], layout=layout)


def test_reductions_empty_and_errors():
    same_as_torch_complex(lambda lib, x: x.sum(0), [np.zeros((0, 3), np.complex64)])
    same_as_torch_complex(lambda lib, x: x.sum(2), [Z])  # dim out of range, IndexError alike


PRODUCTS = {
    "matmul": lambda lib, x, y: x @ y,
    "mm": lambda lib, x, y: lib.mm(x, y),
    "einsum": lambda lib, x, y: lib.einsum("ij,jk->ik", x, y),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_products(name, layout):
    same_as_torch_complex(PRODUCTS[name], [Z, complex_sample(rng, (4, 2))], layout=layout)


def test_bmm_matmul_batched_and_vectors():
    a, b = complex_sample(rng, (2, 3, 4)), complex_sample(rng, (2, 4, 5))
    same_as_torch_complex(lambda lib, x, y: lib.bmm(x, y), [a, b])
    same_as_torch_complex(lambda lib, x, y: x @ y, [a, complex_sample(rng, (4,))])
    same_as_torch_complex(lambda lib, x, y: x @ y, [complex_sample(rng, (4,)), complex_sample(rng, (4,))])
    same_as_torch_complex(lambda lib, x, y: x @ y, [a, R.T.copy()])  # real with complex: refused alike


# ---- autograd: programs ----

def _rotary(lib, xq, freqs):
    """LLaMA's rotary embedding: pairs of xq's last dim as complex numbers, turned by freqs_cis."""
    freqs_cis = lib.polar(lib.ones_like(freqs), freqs)  # (T, D/2) complex64
    xq_ = lib.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))  # (B, T, H, D/2)
    xq_out = lib.view_as_real(xq_ * freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])).flatten(3)
    return xq_out.type_as(xq)


def test_rotary_embedding_as_torch():
    if torch is None:
        pytest.skip("needs PyTorch")
    xq = rng.standard_normal((2, 5, 3, 8)).astype(np.float32)
    freqs = np.outer(np.arange(5), 1.0 / 10000 ** (np.arange(0, 8, 2) / 8)).astype(np.float32)
    outs = []
    for lib in (minitorch, torch):
        x = lib.tensor(xq, requires_grad=True)
        f = lib.tensor(freqs, requires_grad=True)
        out = _rotary(lib, x, f)
        (out * lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape))).sum().backward()
        outs.append((out.detach().numpy(), x.grad.numpy(), f.grad.numpy()))
    for got, want in zip(*outs):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_spectral_weights_trained_by_adam_as_torch():
    """A spectral layer: rfft(x) * w with w a complex Parameter, irfft back, trained by Adam."""
    if torch is None:
        pytest.skip("needs PyTorch")
    x = rng.standard_normal((4, 16)).astype(np.float32)
    target = rng.standard_normal((4, 16)).astype(np.float32)
    w0 = complex_sample(rng, (9,), "complex64")
    runs = []
    for lib in (minitorch, torch):
        w = lib.nn.Parameter(lib.tensor(w0))
        opt = lib.optim.Adam([w], lr=0.05)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            y = lib.fft.irfft(lib.fft.rfft(lib.tensor(x)) * w, n=16)
            loss = ((y - lib.tensor(target)) ** 2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((np.array(losses), w.detach().numpy(), w.grad.numpy()))
    for got, want in zip(*runs):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_sgd_takes_complex_params():
    w = minitorch.nn.Parameter(minitorch.tensor([1 + 1j, 2 - 1j]))
    opt = minitorch.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w.conj()).real.sum().backward()  # |w|^2: gradient 2w
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), np.array([1 + 1j, 2 - 1j]) * 0.8, rtol=1e-6)


def test_allclose_and_assert_close():
    a = minitorch.tensor([1 + 1j, complex("nan")])
    assert minitorch.allclose(a, a + 1e-9, equal_nan=True)
    assert not minitorch.allclose(a, a + 1e-3j, equal_nan=True)
    minitorch.testing.assert_close(a, a.clone(), equal_nan=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no complex value is cast to a real one on the way
        with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
            minitorch.testing.assert_close(a, a + 1j, equal_nan=True)
        minitorch.testing.assert_close(a, a * (1 + 1e-7), equal_nan=True)  # complex64's tolerance
    with pytest.raises(AssertionError):
        minitorch.testing.assert_close(a.to(minitorch.cdouble), a.to(minitorch.cdouble) * (1 + 1e-5),
                                       equal_nan=True)


@pytest.mark.parametrize("call", [lambda L, x: L.sign(x), lambda L, x: x.sign(), lambda L, x: x.sign_(),
                                  lambda L, x: L.sign(x, out=L.empty(2, dtype=x.dtype)),
                                  lambda L, x: L.sign(x, out=L.empty(2))])
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sign_refuses_complex_as_torch(call, dtype):
    """torch.sign is real only: NotImplementedError pointing at sgn, on every path."""
    same_error(call, np.array([1 + 1j, -2j], dtype))
    np.testing.assert_array_equal(minitorch.sign(minitorch.tensor([-2.0, 0.0, 3.0])).numpy(), [-1, 0, 1])


def test_complex_refused_cleanly_elsewhere():
    with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
        minitorch.tensor([1j]).erf()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert minitorch.tensor([1j]).is_complex()
