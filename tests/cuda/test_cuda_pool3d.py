"""3-D pooling (the pool kernels over volumes), the adaptive 3-D pools, max unpooling,
conv_transpose3d, rrelu, the margin losses and pdist on CUDA against the CPU: values, indices
and gradients, and the pools' double backward."""
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


W = rand(4, 2, 2, 3, 2)  # conv_transpose3d's weight


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool3d(x, 3, 2, 1, dilation=(1, 2, 1), ceil_mode=True),
    lambda x: F.max_pool3d(x, 2, return_indices=True)[1].float(),
    lambda x: F.avg_pool3d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.avg_pool3d(x, 2, 1, 1, divisor_override=3),
    lambda x: F.adaptive_avg_pool3d(x, (3, 2, 4)),
    lambda x: F.adaptive_max_pool3d(x, (2, 3, 2)),
    lambda x: F.max_unpool3d(*F.max_pool3d(x, 2, return_indices=True), 2, output_size=x.shape),
    lambda x: F.max_unpool2d(*F.max_pool2d(x[:, 0], 2, return_indices=True), 2, output_size=x.shape[-2:]),
    lambda x: F.conv_transpose3d(x, W.to(x.device), stride=(2, 1, 2), padding=1, output_padding=(1, 0, 1)),
    lambda x: F.rrelu(x),
    lambda x: F.pdist(x.flatten(1), 3),
    lambda x: F.multi_margin_loss(x.flatten(1), minitorch.tensor([1, 0, 3], device=x.device), p=2),
    lambda x: F.multilabel_margin_loss(x[:, 0, 0, :2, :5].flatten(1), minitorch.tensor(
        [[1, 4, -1] + [0] * 7, [9, 0, 2] + [-1] * 7, [-1] * 10], device=x.device)),
    lambda x: F.ctc_loss(x[:, :, 0, 0].permute(2, 0, 1).log_softmax(2), minitorch.tensor([[1, 2], [3, 3], [2, 0]]),
                         (7, 6, 5), (2, 2, 1)),
])
def test_values_and_gradients(fn):
    x = rand(3, 4, 5, 6, 7)
    cpu, dev = x.clone().requires_grad_(), x.cuda().requires_grad_()
    out, dout = fn(cpu), fn(dev)
    assert_same(dout, out, **TOL)
    if not out.requires_grad:
        return
    g = rand(*out.shape)
    (out * g).sum().backward()
    (dout * g.cuda()).sum().backward()
    assert_same(dev.grad, cpu.grad, **TOL)


def test_int_max_pool3d_and_pool_double_backward():
    x = minitorch.tensor(RNG.integers(-9, 9, (2, 3, 4, 4, 4)))
    assert_same(F.max_pool3d(x.cuda(), 2, padding=1), F.max_pool3d(x, 2, padding=1))

    def penalty(x):
        out = F.avg_pool3d(x, 3, 1, 1) + F.adaptive_avg_pool3d(x, (4, 5, 6)) + F.max_pool3d(x, 3, 1, 1)
        (gx,) = minitorch.autograd.grad((out * out).sum(), x, create_graph=True)
        return (gx * gx).sum()

    x = rand(1, 2, 4, 5, 6)
    cpu, dev = x.clone().requires_grad_(), x.cuda().requires_grad_()
    penalty(cpu).backward()
    penalty(dev).backward()
    assert_same(dev.grad, cpu.grad, **TOL)
