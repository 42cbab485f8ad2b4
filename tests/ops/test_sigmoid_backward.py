"""sigmoid_backward(grad_output, output) = grad_output * conj((1 - output) * output), PyTorch's aten
op (minitorch._C.sigmoid_backward, minitorch.ops.aten.sigmoid_backward): one row of
ops/elementwise.def. Its values against NumPy in float64 and PyTorch's, broadcast, in every layout,
empty, with NaN and inf; its gradients (SigmoidBackwardBackward0) against finite differences and
PyTorch's, to the second order; complex; the dtypes it refuses."""
import numpy as np
import pytest

import minitorch
from helpers import check, check_grad, complex_sample, same_as_torch_complex, same_error

torch = pytest.importorskip("torch")


def op(lib):
    return lib.ops.aten.sigmoid_backward


def ref(g, y):
    return g * (1 - y) * y


def sample(shape, seed, dtype="float64", low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


CASES = [  # (grad_output shape, output shape)
    ((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((), (2, 3)), ((0, 3), (0, 3)), ((0,), (1,)),
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("gs, ys", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_match_numpy_and_torch(gs, ys, dtype, layout):
    g, y = sample(gs, 1, dtype), sample(ys, 2, dtype, 0.0, 1.0)
    check(lambda L, a, b: op(L)(a, b), ref, [g, y], layout=layout, dtype=getattr(minitorch, dtype),
          atol=1e-6 if dtype == "float32" else 1e-12, rtol=1e-6 if dtype == "float32" else 1e-12)


def test_mixed_dtypes_promote_as_torch():
    g, y = sample((3, 4), 1, "float32"), sample((3, 4), 2, "float64", 0.0, 1.0)
    check(lambda L, a, b: op(L)(a, b), ref, [g, y], dtype=minitorch.float64, atol=1e-7)


def test_nan_and_inf_as_torch():
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 0.5, 1e308], np.float64)
    g, y = np.meshgrid(special, special)
    check(lambda L, a, b: op(L)(a, b), ref, [g.copy(), y.copy()], atol=0, rtol=1e-15)


@pytest.mark.parametrize("gs, ys", [((3, 4), (3, 4)), ((2, 3), (3,)), ((3, 1), (1, 4))])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_gradients_match_finite_differences_and_torch(gs, ys, layout):
    g, y = sample(gs, 3), sample(ys, 4, "float64", 0.0, 1.0)
    check_grad(lambda L, a, b: op(L)(a, b), [g, y], layout=layout, atol=1e-7, rtol=1e-6)


def test_second_order_gradients_match_torch():
    g, y = sample((3, 4), 5), sample((3, 4), 6, "float64", 0.0, 1.0)
    grads = []
    for L in (minitorch, torch):
        a, b = L.tensor(g, requires_grad=True), L.tensor(y, requires_grad=True)
        r = op(L)(a, b)
        assert r.grad_fn.name() == "SigmoidBackwardBackward0"
        da, db = L.autograd.grad((r ** 2).sum(), (a, b), create_graph=True)
        grads.append([t.detach().numpy() for t in L.autograd.grad((da * db).sum(), (a, b))])
    for m, t in zip(*grads):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


def test_the_gradient_of_sigmoid_is_its_backward_op():
    """SigmoidBackward0 calls sigmoid_backward, as PyTorch's: the same bits, and under
    create_graph the gradient's node is SigmoidBackwardBackward0."""
    x = minitorch.tensor(sample((5,), 7), requires_grad=True)
    y = minitorch.sigmoid(x)
    g = minitorch.tensor(sample((5,), 8))
    (d,) = minitorch.autograd.grad(y, x, g, create_graph=True)
    assert d.grad_fn.name() == "SigmoidBackwardBackward0"
    np.testing.assert_array_equal(op(minitorch)(g, y.detach()).numpy(), d.detach().numpy())


def test_complex_values_and_gradients_as_torch():
    rng = np.random.default_rng(8)
    g, y = complex_sample(rng, (3, 4)), complex_sample(rng, (3, 4))
    same_as_torch_complex(lambda L, a, b: op(L)(a, b), [g, y], atol=1e-12)
    # a real output with a complex grad_output: values only (PyTorch's backward refuses the real
    # gradient it would make)
    same_as_torch_complex(lambda L, a, b: op(L)(a, b), [g, y.real.copy()], atol=1e-12, grad=False)


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_integer_and_bool_operands_are_refused_as_torch(dtype):
    a = np.ones((2, 3), dtype)
    same_error(lambda L, x, z: op(L)(x, z), a, a)
    with pytest.raises(NotImplementedError, match='"sigmoid_backward_cpu" not implemented for'):
        op(minitorch)(minitorch.tensor(a), minitorch.tensor(a))


def test_shapes_that_do_not_broadcast_are_refused_as_torch():
    same_error(lambda L, x, z: op(L)(x, z), sample((3, 4), 1), sample((5,), 2))
