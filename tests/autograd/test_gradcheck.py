"""autograd.gradcheck and gradgradcheck with PyTorch's keywords (fast_mode, nondet_tol,
check_batched_grad, check_grad_dtypes, check_forward_ad, check_undefined_grad), complex inputs and
outputs, float32 inputs (a warning, not an error) and its errors: the same verdict, exception class,
first line of the message and warnings as PyTorch's for the same function and inputs."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import torch
from minitorch.autograd.gradcheck import GradcheckError

RNG = np.random.default_rng(1)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((4, 2))
Z = A + 1j * RNG.standard_normal((3, 4))


def squared(lib, scale=1.0, noise=False):
    """x * x with a backward scaled by `scale`, plus a random term when `noise` (not reentrant)."""
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            extra = lib.rand(()).item() * 1e-3 if noise else 0.0
            return g * 2 * x * scale + extra * g

    return Square.apply


CASES = {
    "matmul": (lambda m, x, y: x @ y, [A, B], {}),
    "matmul fast": (lambda m, x, y: x @ y, [A, B], dict(fast_mode=True)),
    "exp float32": (lambda m, x: x.exp(), [A.astype(np.float32)], dict(eps=1e-3, atol=1e-2)),
    "abs of complex": (lambda m, x: x.abs(), [Z], {}),
    "complex square": (lambda m, x: x * x, [Z], {}),
    "complex square fast": (lambda m, x: x * x, [Z], dict(fast_mode=True)),
    "real to complex": (lambda m, x: m.polar(x.abs() + 1, x), [A], {}),
    "batched grad": (lambda m, x: x.sin() * x, [A], dict(check_batched_grad=True)),
    "forward mode": (lambda m, x: x.sin() * x, [A], dict(check_forward_ad=True)),
    "forward mode fast": (lambda m, x: x.sin() * x, [A], dict(check_forward_ad=True, fast_mode=True)),
    "forward mode complex": (lambda m, x: x * x, [Z], dict(check_forward_ad=True)),
    "grad dtypes": (lambda m, x: x.sin(), [A], dict(check_grad_dtypes=True)),
    "no differentiable output": (lambda m, x: x.detach() * 2, [A], {}),
    "constant output": (lambda m, x: (x.detach() > 0).double(), [A], {}),
    "wrong backward": (lambda m, x: squared(m, 1.1)(x), [A], {}),
    "wrong backward fast": (lambda m, x: squared(m, 1.1)(x), [A], dict(fast_mode=True)),
    "wrong backward no raise": (lambda m, x: squared(m, 1.1)(x), [A], dict(raise_exception=False)),
    "not reentrant": (lambda m, x: squared(m, noise=True)(x), [A], {}),
    "no backward nor forward": (lambda m, x: x, [A], dict(check_backward_ad=False)),
    "batched without backward": (lambda m, x: x, [A], dict(check_batched_grad=True, check_backward_ad=False,
                                                          check_forward_ad=True)),
}


def outcome(lib, name):
    f, arrays, kw = CASES[name]
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = lib.autograd.gradcheck(lambda *t: f(lib, *t), xs, **kw)
        except Exception as e:  # noqa: BLE001 - compared with PyTorch's
            r = (type(e).__name__, str(e).split("\n")[0])
    return r, sorted({str(w.message).split(".")[0] for w in caught if "gradient" in str(w.message)})


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck_as_pytorch(name):
    got = outcome(minitorch, name)
    if torch is not None:
        assert got == outcome(torch, name)
    if name.endswith("no raise"):
        assert got[0] is False
    elif name.startswith(("wrong", "not ", "no ", "batched without")):
        assert isinstance(got[0], tuple), got  # (exception class, message)
    else:
        assert got[0] is True, got


def test_wrong_gradient_raises_gradcheck_error_with_both_jacobians():
    x = minitorch.tensor(A, requires_grad=True)
    with pytest.raises(GradcheckError, match=r"Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"):
        minitorch.autograd.gradcheck(squared(minitorch, 1.1), (x,))
    with pytest.raises(GradcheckError, match="computed \nin fast mode"):
        minitorch.autograd.gradcheck(squared(minitorch, 1.1), (x,), fast_mode=True)
    assert issubclass(GradcheckError, RuntimeError)


def test_nondet_tol_accepts_a_small_nondeterminism():
    x = minitorch.tensor(A, requires_grad=True)
    f = squared(minitorch, noise=True)
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        minitorch.autograd.gradcheck(f, (x,), atol=1e-2)
    assert minitorch.autograd.gradcheck(f, (x,), atol=1e-2, nondet_tol=1e-2)


def test_input_errors():
    x = minitorch.tensor(A)
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        minitorch.autograd.gradcheck(lambda t: t * 2, (x,))
    y = minitorch.tensor(A[0], requires_grad=True)
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        minitorch.autograd.gradcheck(lambda t: t * 2, (y.expand(3, 4),))


def test_gradgradcheck_takes_pytorchs_keywords():
    x = minitorch.tensor(A, requires_grad=True)
    assert minitorch.autograd.gradgradcheck(lambda t: t.sin() * t, (x,), fast_mode=True, nondet_tol=0.0,
                                            check_batched_grad=True, check_grad_dtypes=True)
    with pytest.raises(AssertionError, match="check_fwd_over_rev or check_rev_over_rev"):
        minitorch.autograd.gradgradcheck(lambda t: t, (x,), check_rev_over_rev=False)
