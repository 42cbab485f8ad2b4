"""The elementwise rows with complex loops added for issue 18 (ops/elementwise.def's
MT_EW_COMPLEX: exp2, logaddexp, lerp, addcmul, addcdiv, nan_to_num and the logical ops, in place
too), against PyTorch: values, dtype and shape over the layouts, the gradients of a real loss
(PyTorch's conjugate Wirtinger convention), the infinities and NaNs of logaddexp and nan_to_num,
and a complex operand of a logical op in place on either side."""
import numpy as np
import pytest

import minitorch
from helpers import LAYOUTS, complex_sample, same_as_torch_complex, torch

rng = np.random.default_rng(1818)

ROWS = {
    "exp2": lambda L, x, y, z: L.exp2(x),
    "exp2_": lambda L, x, y, z: x.clone().exp2_(),
    "logaddexp": lambda L, x, y, z: L.logaddexp(x, y),
    "logaddexp_real_other": lambda L, x, y, z: L.logaddexp(x, y.real),
    "logaddexp_method": lambda L, x, y, z: x.logaddexp(y[0]),
    "lerp_number": lambda L, x, y, z: L.lerp(x, y, 0.3),
    "lerp_number_far": lambda L, x, y, z: L.lerp(x, y, 0.8),
    "lerp_tensor": lambda L, x, y, z: L.lerp(x, y, z),
    "lerp_": lambda L, x, y, z: x.clone().lerp_(y, z),
    "addcmul": lambda L, x, y, z: L.addcmul(x, y, z),
    "addcmul_value": lambda L, x, y, z: L.addcmul(x, y, z, value=-0.5),
    "addcmul_complex_value": lambda L, x, y, z: L.addcmul(x, y, z, value=2 - 1j),
    "addcmul_": lambda L, x, y, z: x.clone().addcmul_(y, z[1], value=3),
    "addcdiv": lambda L, x, y, z: L.addcdiv(x, y, z),
    "addcdiv_complex_value": lambda L, x, y, z: L.addcdiv(x, y, z, value=0.5j),
    "addcdiv_": lambda L, x, y, z: x.clone().addcdiv_(y, z, value=2),
    "nan_to_num": lambda L, x, y, z: L.nan_to_num(x),
    "nan_to_num_": lambda L, x, y, z: x.clone().nan_to_num_(1.0, 2.0, -3.0),
    "logical_and": lambda L, x, y, z: L.logical_and(x, y),
    "logical_or": lambda L, x, y, z: L.logical_or(x, y * 0),
    "logical_xor": lambda L, x, y, z: L.logical_xor(x, y.real > 0),
    "logical_not": lambda L, x, y, z: L.logical_not(x * (y.real > 0)),
}


# rows whose gradients are not compared: PyTorch refuses a complex nan_to_num that requires grad
# ("does not support automatic differentiation for outputs with complex dtype"; minitorch gives
# g where x is finite), and its backward of logaddexp(complex, real) fails its own internal check
# ("Expected isFloatingType(grad.scalar_type()) || ...")
VALUES_ONLY = {"nan_to_num", "logaddexp_real_other"}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", sorted(ROWS))
def test_complex_row_as_torch(name, dtype, layout):
    x, y, z = (complex_sample(rng, (3, 4), dtype) for _ in range(3))
    tol = dict(atol=1e-5, rtol=1e-4) if dtype == "complex64" else dict(atol=1e-12, rtol=1e-10)
    same_as_torch_complex(lambda L, a, b, c: ROWS[name](L, a, b, c), [x, y, z], layout=layout,
                          grad=name not in VALUES_ONLY, **tol)


EDGES = np.array([0, 1, -1, np.inf, -np.inf, np.nan, 2.5])


def _edge_pairs(dtype):
    """every pair of parts from EDGES, as x, and each x's partner a permutation of them"""
    re, im = np.meshgrid(EDGES, EDGES)
    x = (re + 1j * im).ravel().astype(dtype)
    return x, np.random.default_rng(5).permutation(x)


@pytest.mark.skipif(torch is None, reason="compared with PyTorch")
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("op", ["logaddexp", "nan_to_num", "exp2", "logical_and", "logical_xor"])
def test_infinities_and_nans_as_torch(op, dtype):
    x, y = _edge_pairs(dtype)
    args = {"logaddexp": (y,), "logical_and": (y,), "logical_xor": (y,)}.get(op, ())
    got = getattr(minitorch, op)(minitorch.tensor(x), *[minitorch.tensor(a) for a in args])
    want = getattr(torch, op)(torch.tensor(x), *[torch.tensor(a) for a in args])
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(np.array(got.tolist()), want.numpy(), rtol=1e-6, equal_nan=True)


@pytest.mark.skipif(torch is None, reason="compared with PyTorch")
@pytest.mark.parametrize("op", ["logical_and_", "logical_or_", "logical_xor_"])
@pytest.mark.parametrize("self_dtype,other_dtype", [("complex64", "bool"), ("bool", "complex128"),
                                                    ("float32", "complex64"), ("complex128", "int64"),
                                                    ("complex64", "complex64")])
def test_logical_in_place_with_a_complex_operand(op, self_dtype, other_dtype):
    a, b = [1 + 1j, 0, 2j, 0, np.nan], [0, 0, 1, 1j, 1]
    out = []
    for L in (minitorch, torch):
        x = L.tensor(a).to(getattr(L, self_dtype)) if self_dtype.startswith("complex") else \
            L.tensor(np.array(a).real).to(getattr(L, self_dtype))
        y = L.tensor(b).to(getattr(L, other_dtype)) if other_dtype.startswith("complex") else \
            L.tensor(np.array(b).real).to(getattr(L, other_dtype))
        r = getattr(x, op)(y)
        assert r is x
        out.append((str(x.dtype).split(".")[-1], np.array(x.tolist())))
    assert out[0][0] == out[1][0]
    np.testing.assert_array_equal(out[0][1], out[1][1])


@pytest.mark.skipif(torch is None, reason="compared with PyTorch")
def test_lerp_dtype_errors_still_as_torch():
    z = complex_sample(rng, (3,), "complex64")
    for fn in (lambda L, a: L.lerp(a, a.real, 0.5), lambda L, a: L.lerp(a, a, a.to(L.complex128)),
               lambda L, a: L.lerp(a.real.long(), a.real.long(), 0.5)):
        errs = []
        for L in (minitorch, torch):
            with pytest.raises(Exception) as e:
                fn(L, L.tensor(z))
            errs.append(e.value)
        assert type(errs[0]) is type(errs[1]) and str(errs[0]) == str(errs[1]).split("\n")[0]


@pytest.mark.skipif(torch is None, reason="compared with PyTorch")
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("weight", [0.3, 0.7, 1 / 3])
def test_lerp_number_weight_gradient_in_double(dtype, weight):
    """self's gradient g * (1 - weight) takes 1 - weight in double, as PyTorch's
    (1 - weight.toComplexDouble()); between two numbers it was float32 (0.69999998807907104)"""
    grads = []
    for L in (minitorch, torch):
        x = L.tensor([1.0, -2.0]).to(getattr(L, dtype)).requires_grad_()
        L.lerp(x, L.tensor([3.0, 5.0]).to(getattr(L, dtype)), weight).sum().abs().backward()
        grads.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-15)
