"""torch.nn.grad's conv{1,2,3}d_input and conv{1,2,3}d_weight against PyTorch's, with strides,
padding, dilation and groups given as ints and as tuples, an output size that the stride does not
divide, and their own gradients (a fused layer's backward may be differentiated again)."""
import numpy as np
import pytest

import minitorch

CASES = [  # (dims, stride, padding, dilation, groups)
    (1, 1, 0, 1, 1),
    (1, 2, 1, 2, 2),
    (2, 1, 0, 1, 1),
    (2, (2, 1), (1, 0), (1, 2), 2),
    (2, 3, 2, 1, 1),
    (3, 1, 0, 1, 1),
    (3, (1, 2, 2), 1, 1, 2),
]


def grads(lib, dims, stride, padding, dilation, groups, rng):
    x = rng.standard_normal((2, 4) + (9,) * dims).astype(np.float32)
    w = rng.standard_normal((6, 4 // groups) + (3,) * dims).astype(np.float32)
    conv = getattr(lib.nn.functional, f"conv{dims}d")
    out = conv(lib.tensor(x), lib.tensor(w), None, stride, padding, dilation, groups)
    g = lib.tensor(rng.standard_normal(tuple(out.shape)).astype(np.float32))
    weight = lib.tensor(w, requires_grad=True)
    gi = getattr(lib.nn.grad, f"conv{dims}d_input")(x.shape, weight, g, stride, padding, dilation, groups)
    gw = getattr(lib.nn.grad, f"conv{dims}d_weight")(lib.tensor(x), w.shape, g, stride=stride, padding=padding,
                                                      dilation=dilation, groups=groups)
    (gg,) = lib.autograd.grad(gi.pow(2).sum(), weight)
    return [np.array(t.detach().numpy()) for t in (gi, gw, gg)]


@pytest.mark.parametrize("dims,stride,padding,dilation,groups", CASES)
def test_conv_grads_match_pytorch(dims, stride, padding, dilation, groups):
    torch = pytest.importorskip("torch")
    ref = grads(torch, dims, stride, padding, dilation, groups, np.random.default_rng(dims))
    got = grads(minitorch, dims, stride, padding, dilation, groups, np.random.default_rng(dims))
    for name, g, r in zip(("input", "weight", "double"), got, ref):
        assert g.shape == r.shape, name
        # float32 sums of thousands of products: an element near zero is off by the scale times eps
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-4 + 1e-6 * np.abs(r).max(), err_msg=name)


def test_conv2d_input_is_conv2d_backward():
    rng = np.random.default_rng(0)
    x = minitorch.tensor(rng.standard_normal((1, 2, 5, 5)).astype(np.float32), requires_grad=True)
    w = minitorch.tensor(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), requires_grad=True)
    out = minitorch.nn.functional.conv2d(x, w, padding=1)
    g = minitorch.ones_like(out)
    out.backward(g)
    np.testing.assert_allclose(minitorch.nn.grad.conv2d_input(x.shape, w, g, padding=1).detach().numpy(),
                               x.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(minitorch.nn.grad.conv2d_weight(x, w.shape, g, padding=1).detach().numpy(),
                               w.grad.numpy(), rtol=1e-5)


def test_bad_sizes():
    w = minitorch.ones(3, 2, 3, 3)
    with pytest.raises(ValueError):
        minitorch.nn.grad.conv2d_input((2, 5, 5), w, minitorch.ones(1, 3, 3, 3))
    with pytest.raises(RuntimeError, match="expected stride to be a single integer value or a list of 2 values"):
        minitorch.nn.grad.conv2d_input((1, 2, 5, 5), w, minitorch.ones(1, 3, 3, 3), stride=(1, 1, 1))
