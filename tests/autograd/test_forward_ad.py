"""autograd.forward_ad (dual_level, make_dual, unpack_dual) against PyTorch: tangents of
elementwise, reduction, matmul and nn compositions, several duals, tensors no dual reaches,
outside a level, and PyTorch's errors. minitorch computes the tangents by the double-vjp trick
(the module's docstring), so duals require grad where PyTorch's do not."""
import numpy as np
import pytest

import minitorch
from helpers import torch

fwAD = minitorch.autograd.forward_ad
RNG = np.random.default_rng(59)

FUNCTIONS = [
    lambda m, x, w: (x.sin() * 2).sum(),
    lambda m, x, w: x.exp() * x.tanh(),
    lambda m, x, w: x @ w,
    lambda m, x, w: m.nn.functional.softmax(x @ w, dim=-1),
    lambda m, x, w: (m.sigmoid(x).pow(3) * w[:, :4].t()[:3]).mean(0),
    lambda m, x, w: (x.unsqueeze(-1) * w.unsqueeze(0)).logsumexp(1),
]


def tangents(lib, f, x, w, tx, tw, which):
    with lib.autograd.forward_ad.dual_level():
        xd = lib.autograd.forward_ad.make_dual(lib.tensor(x), lib.tensor(tx)) if "x" in which else lib.tensor(x)
        wd = lib.autograd.forward_ad.make_dual(lib.tensor(w), lib.tensor(tw)) if "w" in which else lib.tensor(w)
        primal, tangent = lib.autograd.forward_ad.unpack_dual(f(lib, xd, wd))
        return primal.detach().numpy(), None if tangent is None else tangent.numpy()


@pytest.mark.parametrize("which", ["x", "w", "xw"])
@pytest.mark.parametrize("k", range(len(FUNCTIONS)))
def test_tangents(k, which):
    x, w = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))
    tx, tw = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))
    p, t = tangents(minitorch, FUNCTIONS[k], x, w, tx, tw, which)
    if t is None:  # the output does not depend on the dual: no tangent, in PyTorch neither
        assert torch is None or tangents(torch, FUNCTIONS[k], x, w, tx, tw, which)[1] is None
        return
    # the tangent is the directional derivative: check by central differences
    f = FUNCTIONS[k]
    h = 1e-6
    plus = f(minitorch, minitorch.tensor(x + h * tx * ("x" in which)), minitorch.tensor(w + h * tw * ("w" in which)))
    minus = f(minitorch, minitorch.tensor(x - h * tx * ("x" in which)), minitorch.tensor(w - h * tw * ("w" in which)))
    np.testing.assert_allclose(t, (plus.numpy() - minus.numpy()) / (2 * h), rtol=1e-5, atol=1e-7)
    if torch is not None:
        tp, tt = tangents(torch, f, x, w, tx, tw, which)
        np.testing.assert_allclose(p, tp, rtol=1e-12)
        np.testing.assert_allclose(t, tt, rtol=1e-9, atol=1e-12)


def test_unreached_and_outside_levels():
    x = minitorch.randn(3, dtype=minitorch.float64)
    assert fwAD.unpack_dual(x) == (x, None)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, minitorch.ones(3, dtype=minitorch.float64))
        p, t = fwAD.unpack_dual(d)
        np.testing.assert_array_equal(p.numpy(), x.numpy())
        np.testing.assert_array_equal(t.numpy(), np.ones(3))
        other = minitorch.randn(2, dtype=minitorch.float64)
        assert fwAD.unpack_dual(other * 2).tangent is None
        y = d * 3
        assert isinstance(fwAD.unpack_dual(y), fwAD.UnpackedDualTensor)
        assert fwAD.unpack_dual(y)._fields == ("primal", "tangent")
    assert fwAD.unpack_dual(y).tangent is None  # the level is gone


def test_constant_outputs_of_a_dual_have_zero_tangent():
    with fwAD.dual_level():
        d = fwAD.make_dual(minitorch.tensor([1.0, 2.0], dtype=minitorch.float64),
                           minitorch.tensor([1.0, 1.0], dtype=minitorch.float64))
        p, t = fwAD.unpack_dual(d * 0 + (d - d))
        np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])


def libs():
    return (minitorch,) if torch is None else (minitorch, torch)


def test_errors_as_torch():
    for lib in libs():
        ad = lib.autograd.forward_ad
        x = lib.zeros(3)
        with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
            ad.make_dual(x, lib.ones(3))
        with ad.dual_level():
            with pytest.raises(RuntimeError, match=r"Tensor is of size \[3\] while the given forward gradient is of "
                                                   r"size \[2\]"):
                ad.make_dual(x, lib.ones(2))
            with pytest.raises(ValueError, match="Expected primal to be floating point or complex"):
                ad.make_dual(lib.zeros(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64))
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
                with ad.dual_level():
                    pass
        assert ad.enter_dual_level() == 0
        ad.exit_dual_level(level=0)
