"""conv1d, conv_transpose1d/2d (compositions of the conv2d ops), the 1-D and adaptive max pools,
unfold/fold and pixel_shuffle on CUDA against the CPU: values, gradients and conv2d's double
backward."""
import numpy as np
import pytest

import minitorch
import minitorch.nn.functional as F
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(0)
TOL = dict(atol=1e-4, rtol=1e-4)


def rand(*shape):
    return minitorch.tensor(RNG.standard_normal(shape).astype(np.float32))


CASES = [
    (lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), (2, 4, 9), (6, 4, 3), 6),
    (lambda x, w, b: F.conv1d(x, w, b, padding="same", groups=2), (4, 9), (6, 2, 4), 6),
    (lambda x, w, b: F.conv_transpose1d(x, w, b, stride=3, output_padding=2), (2, 4, 5), (4, 3, 3), 3),
    (lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1), (2, 4, 5, 4), (4, 3, 3, 3), 3),
    (lambda x, w, b: F.conv_transpose2d(x, w, b, groups=2, dilation=2), (4, 3, 3), (4, 2, 2, 2), 4),
    (lambda x, w, b: F.conv2d(x, w, b, padding=1) + F.max_pool1d(x.flatten(-2), 2).sum(), (2, 3, 4, 4), (2, 3, 3, 3), 2),
]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case", CASES)
def test_convolutions_and_their_gradients(case):
    fn, xs, ws, nb = case
    x, w, b = rand(*xs), rand(*ws), rand(nb)
    leaves = [t.clone().requires_grad_() for t in (x, w, b)]
    dleaves = [t.cuda().requires_grad_() for t in (x, w, b)]
    out, dout = fn(*leaves), fn(*dleaves)
    assert_same(dout, out, **TOL)
    g = rand(*out.shape)
    (out * g).sum().backward()
    (dout * g.cuda()).sum().backward()
    for a, d in zip(leaves, dleaves):
        assert_same(d.grad, a.grad, **TOL)


def test_conv2d_double_backward():
    def penalty(x, w):
        out = F.conv2d(x, w, stride=2, padding=1)
        (gx,) = minitorch.autograd.grad(out.pow(2).sum(), x, create_graph=True)
        return gx.pow(2).sum()

    x, w = rand(2, 3, 6, 6), rand(4, 3, 3, 3)
    cpu = [x.clone().requires_grad_(), w.clone().requires_grad_()]
    dev = [x.cuda().requires_grad_(), w.cuda().requires_grad_()]
    penalty(*cpu).backward()
    penalty(*dev).backward()
    for a, d in zip(cpu, dev):
        assert_same(d.grad, a.grad, **TOL)


@pytest.mark.parametrize("fn", [
    lambda x: F.adaptive_max_pool2d(x, (2, 3)),
    lambda x: F.adaptive_max_pool2d(x, 3, return_indices=True)[1],
    lambda x: F.adaptive_max_pool1d(x.flatten(-2), 4),
    lambda x: F.avg_pool1d(x.flatten(-2), 3),
    lambda x: F.adaptive_avg_pool1d(x.flatten(-2), 5),
    lambda x: F.unfold(x, 2, padding=1),
    lambda x: F.fold(F.unfold(x, 3, stride=2), (5, 7), 3, stride=2),
    lambda x: F.pixel_unshuffle(F.pixel_shuffle(x[:, :4], 2), 2),
])
def test_pools_fold_and_shuffles(fn):
    x = rand(2, 4, 5, 7)
    assert_same(fn(x.cuda()), fn(x), **TOL)
