"""autograd.grad (and backward(inputs=)) runs only the nodes through which an input asked for is
reached, as PyTorch's engine does (its exec_info): a formula computes no gradient for an edge that
leads nowhere asked for, hooks past those edges do not fire, and the gradients asked for are
unchanged. Checked against PyTorch where installed."""
import numpy as np
import pytest

import minitorch
from helpers import torch
from minitorch._journey import record


def kernels(fn):
    _, events = record(fn)
    return [e.label for e in events if e.layer == "Kernel"]


def test_input_gradient_alone_skips_the_weight_gradient():
    x = minitorch.randn(2, 3, 8, 8, requires_grad=True)
    w = minitorch.randn(4, 3, 3, 3, requires_grad=True)
    b = minitorch.randn(4, requires_grad=True)
    y = minitorch.nn.functional.conv2d(x, w, b, padding=1).square().sum()
    ran = kernels(lambda: minitorch.autograd.grad(y, x, retain_graph=True))
    assert "Kernel::mt_cpu_convolution_backward_input" in ran
    assert "Kernel::mt_cpu_convolution_backward_weight" not in ran
    ran = kernels(lambda: minitorch.autograd.grad(y, w, retain_graph=True))
    assert "Kernel::mt_cpu_convolution_backward_weight" in ran
    assert "Kernel::mt_cpu_convolution_backward_input" not in ran
    (gx,) = minitorch.autograd.grad(y, x, retain_graph=True)
    gx_all, _, _ = minitorch.autograd.grad(y, (x, w, b))
    np.testing.assert_array_equal(gx.numpy(), gx_all.numpy())


def test_an_interior_input_stops_the_walk():
    x = minitorch.randn(5, requires_grad=True)
    h = x.exp()
    y = (h * 3).sum()
    ran = kernels(lambda: minitorch.autograd.grad(y, h, retain_graph=True))
    assert ran.count("Kernel::mt_cpu_mul") == 1  # MulBackward's; not ExpBackward's past h
    (gh,) = minitorch.autograd.grad(y, h)
    np.testing.assert_array_equal(gh.numpy(), np.full(5, 3, np.float32))


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_hooks_fire_only_on_the_paths_asked_for():
    def run(lib):
        fired = []
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, -1.0], requires_grad=True)
        a, c = x * w, w.exp()
        a.register_hook(lambda g: fired.append("a"))
        c.register_hook(lambda g: fired.append("c"))
        w.register_hook(lambda g: fired.append("w"))
        y = (a + c).sum()
        (gx,) = lib.autograd.grad(y, x, retain_graph=True)
        first = sorted(fired)
        fired.clear()
        gx2, gw = lib.autograd.grad(y, (x, w))
        return first, sorted(fired), gx.tolist(), gw.tolist(), x.grad, w.grad

    m, t = run(minitorch), run(torch)
    assert m[:4] == t[:4] and m[4] is None and m[5] is None
    assert m[0] == ["a"] and m[1] == ["a", "c", "w", "w"][: len(t[1])]


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
def test_backward_inputs_and_unused_inputs_as_torch():
    def run(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, -1.0], requires_grad=True)
        u = lib.tensor([5.0], requires_grad=True)
        y = (x * w).sum()
        y.backward(inputs=[x], retain_graph=True)
        grads = lib.autograd.grad(y, (x, u), allow_unused=True, retain_graph=True)
        try:
            lib.autograd.grad(y, u)
            err = None
        except RuntimeError as e:
            err = str(e)
        return x.grad.tolist(), w.grad, grads[0].tolist(), grads[1], err

    assert run(minitorch) == run(torch)
