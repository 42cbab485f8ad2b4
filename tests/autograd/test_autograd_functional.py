"""autograd.functional against torch.autograd.functional: values (outputs and products), their
structure (tensor or tuples), create_graph (the result differentiable again), strict-mode and
argument errors."""
import numpy as np
import pytest

import minitorch
from helpers import torch

rng = np.random.default_rng(0)
A = rng.standard_normal((3,))
B = rng.standard_normal((2, 3))
V3 = rng.standard_normal((3,))
V2 = rng.standard_normal((2,))
V23 = rng.standard_normal((2, 3))


def f_vec(lib, x):  # R^3 -> R^2
    return lib.stack([(x * x).sum(), lib.sin(x).prod()])


def f_pair(lib, x, y):  # (R^3, R^{2x3}) -> (R^2, R^{2x3})
    return (y @ lib.exp(x), y * x.tanh())


def f_scalar(lib, x):
    return (x.pow(3) + x.sin() * x.sum()).sum()


def f_scalar2(lib, x, y):
    return (y @ x.pow(2)).sum() * x.cos().sum() + (y * y).sum()


def _lib_args(lib, arrays):
    return tuple(lib.tensor(a) for a in arrays)


# name -> (call(lib, F) returning a tensor or nested tuples of tensors)
CALLS = {
    "vjp": lambda lib, F: F.vjp(lambda x: f_vec(lib, x), lib.tensor(A), lib.tensor(V2)),
    "vjp_tuple": lambda lib, F: F.vjp(lambda x, y: f_pair(lib, x, y), _lib_args(lib, [A, B]), _lib_args(lib, [V2, V23])),
    "vjp_scalar": lambda lib, F: F.vjp(lambda x: f_scalar(lib, x), lib.tensor(A)),
    "jvp": lambda lib, F: F.jvp(lambda x: f_vec(lib, x), lib.tensor(A), lib.tensor(V3)),
    "jvp_tuple": lambda lib, F: F.jvp(lambda x, y: f_pair(lib, x, y), _lib_args(lib, [A, B]), _lib_args(lib, [V3, V23])),
    "jacobian": lambda lib, F: F.jacobian(lambda x: f_vec(lib, x), lib.tensor(A)),
    "jacobian_tuple": lambda lib, F: F.jacobian(lambda x, y: f_pair(lib, x, y), _lib_args(lib, [A, B])),
    "jacobian_vectorize": lambda lib, F: F.jacobian(lambda x: f_vec(lib, x), lib.tensor(A), vectorize=True),
    "jacobian_unused": lambda lib, F: F.jacobian(lambda x, y: x * 2, _lib_args(lib, [A, B])),
    "hessian": lambda lib, F: F.hessian(lambda x: f_scalar(lib, x), lib.tensor(A)),
    "hessian_tuple": lambda lib, F: F.hessian(lambda x, y: f_scalar2(lib, x, y), _lib_args(lib, [A, B])),
    "vhp": lambda lib, F: F.vhp(lambda x: f_scalar(lib, x), lib.tensor(A), lib.tensor(V3)),
    "vhp_tuple": lambda lib, F: F.vhp(lambda x, y: f_scalar2(lib, x, y), _lib_args(lib, [A, B]), _lib_args(lib, [V3, V23])),
    "hvp": lambda lib, F: F.hvp(lambda x: f_scalar(lib, x), lib.tensor(A), lib.tensor(V3)),
    "hvp_tuple": lambda lib, F: F.hvp(lambda x, y: f_scalar2(lib, x, y), _lib_args(lib, [A, B]), _lib_args(lib, [V3, V23])),
}


def _flatten(res, lib):
    """The structure (nesting of tuples) and the arrays, depth first."""
    if isinstance(res, lib.Tensor):
        return "T", [res.detach().numpy()]
    parts = [_flatten(r, lib) for r in res]
    return tuple(p[0] for p in parts), [a for p in parts for a in p[1]]


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_as_torch(name):
    got = CALLS[name](minitorch, minitorch.autograd.functional)
    shape_got, arrays_got = _flatten(got, minitorch)
    for a in arrays_got:
        assert np.isfinite(a).all()
    if torch is None:
        return
    want = CALLS[name](torch, torch.autograd.functional)
    shape_want, arrays_want = _flatten(want, torch)
    assert shape_got == shape_want
    for g, w in zip(arrays_got, arrays_want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-9)


def test_results_detached_unless_create_graph():
    F = minitorch.autograd.functional
    x = minitorch.tensor(A, requires_grad=True)
    out, prod = F.vjp(lambda t: f_scalar(minitorch, t), x)
    assert not out.requires_grad and not prod.requires_grad
    out, prod = F.vjp(lambda t: f_scalar(minitorch, t), x, create_graph=True)
    assert prod.requires_grad
    prod.sum().backward()  # d/dx of sum(grad f) = row sums of the Hessian
    H = F.hessian(lambda t: f_scalar(minitorch, t), minitorch.tensor(A))
    np.testing.assert_allclose(x.grad.numpy(), H.sum(0).numpy(), rtol=1e-6)
    h = F.hessian(lambda t: f_scalar(minitorch, t), x, create_graph=True)
    assert h.requires_grad


def test_create_graph_gradients_as_torch():
    if torch is None:
        pytest.skip("PyTorch not installed")
    grads = []
    for lib in (minitorch, torch):
        x = lib.tensor(A, requires_grad=True)
        v = lib.tensor(V3)
        _, jv = lib.autograd.functional.jvp(lambda t: f_vec(lib, t), x, v, create_graph=True)
        _, hv = lib.autograd.functional.hvp(lambda t: f_scalar(lib, t), x, v, create_graph=True)
        (jv.sum() + hv.pow(2).sum()).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


ERRORS = {
    "not_tensor": lambda lib, F: F.vjp(lambda x: x, [lib.ones(2)]),
    "tuple_not_tensor": lambda lib, F: F.jacobian(lambda x, y: x, (lib.ones(2), 3)),
    "v_none": lambda lib, F: F.vjp(lambda x: x * 2, lib.ones(2)),
    "v_size": lambda lib, F: F.jvp(lambda x: x * 2, lib.ones(2), lib.ones(3)),
    "v_tuple_len": lambda lib, F: F.vhp(lambda x, y: (x * y).sum(), (lib.ones(2), lib.ones(2)), (lib.ones(2),)),
    "hessian_not_scalar": lambda lib, F: F.hessian(lambda x: x * 2, lib.ones(2)),
    "hvp_tuple_out": lambda lib, F: F.hvp(lambda x: (x.sum(), x.sum()), lib.ones(2), lib.ones(2)),
    "strict_unused": lambda lib, F: F.jacobian(lambda x, y: x * 2, (lib.ones(2), lib.ones(2)), strict=True),
    "strict_vjp_unused": lambda lib, F: F.vjp(lambda x, y: (x * 2).sum(), (lib.ones(2), lib.ones(2)), strict=True),
    "strict_linear_hessian": lambda lib, F: F.hessian(lambda x: (x * 2).sum(), lib.ones(2), strict=True),
    "strict_no_grad_out": lambda lib, F: F.vjp(lambda x: lib.ones(()), lib.ones(2), strict=True),
    "strict_vectorize": lambda lib, F: F.jacobian(lambda x: x, lib.ones(2), strict=True, vectorize=True),
    "strategy": lambda lib, F: F.jacobian(lambda x: x, lib.ones(2), strategy="sideways"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    msgs = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with pytest.raises(Exception) as e:
            ERRORS[name](lib, lib.autograd.functional)
        msgs.append((type(e.value), str(e.value).replace("minitorch.", "torch.").replace("<class 'torch._tensor.Tensor'>", "X").replace("<class 'torch.Tensor'>", "X")))
    assert len(set(msgs)) == 1, msgs
