"""Tensor.backward(inputs=...) / autograd.backward(inputs=...): gradients accumulated into the
given tensors' .grad only, as PyTorch's; compared with torch on the same graphs."""
import warnings

import numpy as np
import pytest

import minitorch


def _scenario(L, case):
    """Runs one graph under library L; returns the .grad of every tensor of interest (None kept)."""
    x = L.tensor([1.0, -2.0, 3.0], requires_grad=True)
    w = L.tensor([0.5, 0.25, -1.0], requires_grad=True)
    b = L.tensor(0.3, requires_grad=True)
    y = x * 2 + b
    seen = []
    if case == "leaves":
        ((y * w).sum() ** 2).backward(inputs=[x, b])
    elif case == "one_tensor":
        (y * w).sum().backward(inputs=w)
    elif case == "twice_accumulates":
        z = (y * w).sum()
        z.backward(inputs=[w], retain_graph=True)
        z.backward(inputs=[w, x])
    elif case == "non_leaf_retained":
        y.retain_grad()
        z = (y.tanh() * w).sum()
        z.backward(inputs=[x, y], retain_graph=True)
        z.backward(inputs=x)
    elif case == "non_leaf":
        (y.sigmoid() * w).sum().backward(inputs=[y])
    elif case == "hooks":
        x.register_hook(lambda g: seen.append(1) or g * 10)
        x.register_post_accumulate_grad_hook(lambda t: seen.append(2))
        w.register_post_accumulate_grad_hook(lambda t: seen.append(3))
        (y * w).sum().backward(inputs=[x])
    elif case == "create_graph":
        z = (y ** 3 * w).sum()
        z.backward(inputs=[x], create_graph=True)
        x.grad.sum().backward(inputs=[w])
    elif case == "unused_input":
        (x * 3).sum().backward(inputs=[x, w])
    elif case == "gan_split":  # the discriminator's step leaves the generator's parameters alone
        d_loss = (L.sigmoid(y.detach() * w) + L.sigmoid(x * w)).mean()
        d_loss.backward(inputs=[w])
        g_loss = -L.sigmoid(y * w).mean()
        g_loss.backward(inputs=[x, b])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf
        grads = {"x": x.grad, "w": w.grad, "b": b.grad, "y": y.grad}
    return {k: None if v is None else v.detach().numpy().copy() for k, v in grads.items()}, seen


CASES = ["leaves", "one_tensor", "twice_accumulates", "non_leaf_retained", "non_leaf", "hooks", "create_graph",
         "unused_input", "gan_split"]


@pytest.mark.parametrize("case", CASES)
def test_backward_inputs_as_torch(case):
    torch = pytest.importorskip("torch")
    ours, ours_seen = _scenario(minitorch, case)
    theirs, theirs_seen = _scenario(torch, case)
    assert ours_seen == theirs_seen
    for k in ours:
        assert (ours[k] is None) == (theirs[k] is None), (k, ours[k], theirs[k])
        if ours[k] is not None:
            np.testing.assert_allclose(ours[k], theirs[k], rtol=2e-5, atol=1e-7, err_msg=k)


def test_backward_inputs_values_without_torch():
    got, _ = _scenario(minitorch, "one_tensor")
    np.testing.assert_allclose(got["w"], np.array([1.0, -2.0, 3.0]) * 2 + 0.3, rtol=1e-6)
    assert got["x"] is None and got["b"] is None


def test_backward_inputs_empty_raises():
    x = minitorch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be empty."):
        (x * 2).sum().backward(inputs=[])
