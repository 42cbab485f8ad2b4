"""autograd.Function in its other forms: forward without ctx plus setup_context (PyTorch 2's
style), vjp defined in place of backward, jvp with save_for_forward under forward_ad, and
gradcheck(check_forward_ad=True) through them; compared with PyTorch."""
import numpy as np
import pytest

import minitorch


def make_functions(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(x, k):
            return k * x ** 3, 3 * k * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.save_for_backward(x, output[1])
            ctx.k = k

        @staticmethod
        def backward(ctx, g, g_dx):
            x, dx = ctx.saved_tensors
            return g * dx + g_dx * 6 * ctx.k * x, None

    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def vjp(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * t

    class AddMul(lib.autograd.Function):
        """(a + b, a * b); its jvp gets a tangent for each input (zeros for one without)."""

        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_forward(a, b)
            return a + b, a * b

        @staticmethod
        def jvp(ctx, ta, tb):
            a, b = ctx.saved_tensors
            return ta + tb, ta * b + a * tb

    return Cube, Square, AddMul


def run(lib):
    Cube, Square, AddMul = make_functions(lib)
    fwAD = lib.autograd.forward_ad
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal(5), dtype=lib.float64, requires_grad=True)
    y = lib.tensor(rng.standard_normal(5), dtype=lib.float64)
    t = lib.tensor(rng.standard_normal(5), dtype=lib.float64)
    out, dx = Cube.apply(x, 2.0)
    (g,) = lib.autograd.grad(out.sum() + dx.sum(), x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x)
    s = Square.apply(x)
    s.backward(lib.ones_like(s))
    res = {"out": out, "g": g, "gg": gg, "square_grad": x.grad}
    with fwAD.dual_level():
        d = fwAD.make_dual(x.detach(), t)
        res["square_tangent"] = fwAD.unpack_dual(Square.apply(d)).tangent
        total, prod = AddMul.apply(d, y)
        res["sum_tangent"] = fwAD.unpack_dual(total).tangent
        res["prod_tangent"] = fwAD.unpack_dual(prod).tangent
        res["chained"] = fwAD.unpack_dual(Square.apply(Square.apply(d)).sin()).tangent
    res = {k: np.array(v.detach().numpy()) for k, v in res.items()}
    res["gradcheck"] = lib.autograd.gradcheck(lambda v: Cube.apply(v, 2.0)[0], (x,))
    res["gradcheck_fwd"] = lib.autograd.gradcheck(Square.apply, (x,), check_forward_ad=True)
    return res


def test_setup_context_vjp_and_jvp_match_pytorch():
    torch = pytest.importorskip("torch")
    ref, got = run(torch), run(minitorch)
    assert set(got) == set(ref)
    for k in ref:
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-12, atol=1e-12, err_msg=k)
    assert got["gradcheck"] and got["gradcheck_fwd"]


def test_jvp_values_without_pytorch():
    res = run(minitorch)
    x = res["square_grad"] / 2  # d(x*x)/dx = 2x
    np.testing.assert_allclose(res["chained"] / (np.cos(x ** 4) * 4 * x ** 3), res["square_tangent"] / (2 * x),
                               rtol=1e-10)
    np.testing.assert_allclose(res["gg"], 12 * x + 12, rtol=1e-12)  # d2/dx2 of 2x^3 + 6x^2


def test_forward_gradcheck_catches_a_wrong_jvp():
    class Wrong(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp()

        @staticmethod
        def jvp(ctx, t):
            return t  # the tangent of exp is t * exp(x)

    x = minitorch.tensor([0.5, -1.0], dtype=minitorch.float64, requires_grad=True)
    assert minitorch.autograd.gradcheck(Wrong.apply, (x,))
    with pytest.raises(RuntimeError, match="Jacobian computed with forward mode mismatch"):
        minitorch.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True)
    assert not minitorch.autograd.gradcheck(Wrong.apply, (x,), check_forward_ad=True, raise_exception=False)


def test_function_without_jvp_under_forward_ad_is_not_turned_into_a_dual():
    class Double(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    fwAD = minitorch.autograd.forward_ad
    with fwAD.dual_level():
        d = fwAD.make_dual(minitorch.ones(3), minitorch.full((3,), 0.5))
        tangent = fwAD.unpack_dual(Double.apply(d)).tangent  # through backward, by double vjp
    np.testing.assert_allclose(tangent.numpy(), 1.0)


def test_backward_may_return_extra_trailing_nones():
    class Scale(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None, None, None  # more than the two inputs: the rest must be None

    class TooMany(Scale):
        @staticmethod
        def backward(ctx, g):
            return g, None, g

    x = minitorch.ones(3, requires_grad=True)
    Scale.apply(x, 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 3.0)
    with pytest.raises(RuntimeError, match=r"returned an incorrect number of gradients \(expected 2, got 3\)"):
        TooMany.apply(x, 3.0).sum().backward()


def test_once_differentiable():
    from minitorch.autograd.function import once_differentiable

    class Square(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not minitorch.is_grad_enabled()  # runs without recording
            return 2 * x * g

    x = minitorch.tensor([1.0, -2.0], requires_grad=True)
    Square.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0])
    (g,) = minitorch.autograd.grad(Square.apply(x).sum(), x, create_graph=True)  # ones: need no grad
    assert not g.requires_grad
    v = minitorch.ones(2, requires_grad=True)
    (g,) = minitorch.autograd.grad(Square.apply(x), x, v, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), [2.0, -4.0])
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        g.sum().backward()
