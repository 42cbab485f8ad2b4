"""The nn functions on the CUDA device against the CPU: the activations and their
backward rows (kernels generated from ops/elementwise.def), the composite activations, padding,
losses and distances (composites of device ops), their gradients, and nn.utils's gradient
clipping; errors alike on both."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device, raises_alike

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

from test_cuda_ops import values  # noqa: E402  (tests/cuda is on sys.path under pytest)

F = minitorch.nn.functional
RNG = np.random.default_rng(20)

ACTIVATIONS = [
    lambda x: F.leaky_relu(x, 0.2), lambda x: F.elu(x, 0.7), F.selu, lambda x: F.celu(x, 0.6),
    lambda x: F.softplus(x, 2.0, 3.0), F.softsign, lambda x: F.hardtanh(x, -1.5, 0.5), F.relu6, F.mish,
    F.hardswish, F.hardsigmoid, F.logsigmoid, F.tanhshrink, lambda x: F.softshrink(x, 0.7),
    lambda x: F.hardshrink(x, 0.7), lambda x: F.threshold(x, 0.3, -2.0), F.glu, lambda x: F.glu(x, 0),
    lambda x: F.prelu(x, minitorch.tensor([0.3], dtype=x.dtype, device=x.device)),
    lambda x: F.prelu(x, minitorch.arange(1.0, x.shape[1] + 1.0, dtype=x.dtype, device=x.device) / 10),
]


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
@pytest.mark.parametrize("fn", ACTIVATIONS)
def test_activations(fn, dtype):
    x = values((6, 4), dtype, nan=True) * 2
    check_device(fn, x, atol=1e-5)
    check_device(fn, x.t(), atol=1e-5)  # strided
    # the gradient: the backward rows on the device (NaN where the input is)
    xc, xd = x.detach().requires_grad_(), x.detach().to("cuda").requires_grad_()
    fn(xc).pow(2).sum().backward()
    fn(xd).pow(2).sum().backward()
    assert_same(xd.grad, xc.grad, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("dtype", [minitorch.float32, minitorch.float64])
def test_inplace_activations_and_integer_rows(dtype):
    x = values((4, 7), dtype)
    for fn in (lambda t: F.leaky_relu(t.clone(), 0.1, inplace=True), lambda t: F.elu(t.clone(), inplace=True),
               lambda t: F.hardtanh(t.clone(), inplace=True), lambda t: F.mish(t.clone(), inplace=True),
               lambda t: F.hardswish(t.clone(), inplace=True), lambda t: F.threshold(t.clone(), 0.0, 1.0, True),
               lambda t: minitorch.selu_(t.clone()), lambda t: minitorch.celu_(t.clone(), 0.5)):
        check_device(fn, x, atol=1e-5)
    ints = (values((4, 7)) * 5).to(minitorch.int64)
    check_device(lambda t: F.hardtanh(t, -2, 3), ints)
    check_device(lambda t: F.threshold(t, 1, 9), ints.to(minitorch.int32))


def test_backward_ops_and_second_derivatives():
    g, x = values((5, 6), minitorch.float64), values((5, 6), minitorch.float64)
    C = minitorch._C
    for fn in (lambda a, b: C.leaky_relu_backward(a, b, 0.2, False), lambda a, b: C.elu_backward(a, 0.5, 1.2, 0.8, True, b),
               lambda a, b: C.elu_backward(a, 0.5, 1.2, 0.8, False, b), lambda a, b: C.softplus_backward(a, b, 2.0, 3.0),
               lambda a, b: C.hardtanh_backward(a, b, -1.0, 1.0), lambda a, b: C.mish_backward(a, b),
               lambda a, b: C.hardswish_backward(a, b), lambda a, b: C.hardsigmoid_backward(a, b),
               lambda a, b: C.log_sigmoid_backward(a, b), lambda a, b: C.softshrink_backward(a, b, 0.5),
               lambda a, b: C.hardshrink_backward(a, b, 0.5), lambda a, b: C.threshold_backward(a, b, 0.1),
               lambda a, b: C.sigmoid_backward(a, b), lambda a, b: C.sigmoid_backward(a.float(), b[:1])):
        check_device(fn, g, x, atol=1e-12)
    for act in (F.elu, F.softplus, F.logsigmoid, F.mish, F.hardswish, minitorch.sigmoid):
        grads = []
        for dev in ("cpu", "cuda"):
            t = x.to(dev).requires_grad_()
            (d,) = minitorch.autograd.grad(act(t).sum(), t, create_graph=True)
            (dd,) = minitorch.autograd.grad(d.pow(2).sum(), t)
            grads.append(dd)
        assert_same(grads[1], grads[0], atol=1e-10)


def test_activation_errors_alike():
    x = values((3, 4))
    with pytest.raises(NotImplementedError, match="\"leaky_relu_cuda\" not implemented for 'Long'"):
        F.leaky_relu(x.to(minitorch.int64).to("cuda"))  # the CPU's message names leaky_relu_cpu, as PyTorch's
    raises_alike(lambda t: F.softshrink(t, -1.0), x)
    raises_alike(lambda t: F.celu(t, 0.0), x)
    raises_alike(lambda t: F.glu(t), x[:, :3])
    raises_alike(lambda t: F.prelu(t, minitorch.ones(3, device=t.device)), x)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(mode):
    x4 = values((2, 3, 4, 5), minitorch.float64)
    for pad in ((1, 2), (2, 1, 1, 2), (1, 1, 2, 0, 1, 2), (-1, 2, 1, -1)):
        x = x4[0] if len(pad) == 2 else x4  # the 1-dim pads of a 3-dim input
        check_device(lambda t: F.pad(t, pad, mode=mode), x)
        xc, xd = x.detach().requires_grad_(), x.to("cuda").requires_grad_()
        w = values(tuple(F.pad(xc, pad, mode=mode).shape), minitorch.float64)
        (F.pad(xc, pad, mode=mode) * w).sum().backward()
        (F.pad(xd, pad, mode=mode) * w.to("cuda")).sum().backward()
        assert_same(xd.grad, xc.grad, atol=1e-12)
    if mode in ("reflect", "circular"):  # pads past the input's size
        raises_alike(lambda t: F.pad(t, (5, 6), mode=mode), x4[0])


def test_losses_and_distances():
    x, y, pos = values((4, 5), minitorch.float64), values((4, 5), minitorch.float64), values((4, 5), minitorch.float64).abs()
    t4 = minitorch.tensor(np.where(RNG.standard_normal(4) > 0, 1.0, -1.0))
    cases = [
        lambda a, b: F.smooth_l1_loss(a, b, beta=0.5), lambda a, b: F.huber_loss(a, b, reduction="sum", delta=0.3),
        lambda a, b: F.soft_margin_loss(a, b.sign()), lambda a, b: F.kl_div(a.log_softmax(1), b.softmax(1), reduction="batchmean"),
        lambda a, b: F.hinge_embedding_loss(a, b.sign(), reduction="none"), lambda a, b: F.poisson_nll_loss(a, b.abs(), full=True),
        lambda a, b: F.gaussian_nll_loss(a, b, b.abs() + 0.1), lambda a, b: F.triplet_margin_loss(a, b, b * 2, swap=True),
        lambda a, b: F.multilabel_soft_margin_loss(a, (b > 0).double()), lambda a, b: F.normalize(a, p=1),
        lambda a, b: F.cosine_similarity(a, b), lambda a, b: F.pairwise_distance(a, b, 3.0),
        lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid(), weight=b[0].abs()),
    ]
    for fn in cases:
        check_device(fn, x, y, atol=1e-12)
        xc, xd = x.detach().requires_grad_(), x.to("cuda").requires_grad_()
        fn(xc, y).sum().backward()
        fn(xd, y.to("cuda")).sum().backward()
        assert_same(xd.grad, xc.grad, atol=1e-10)
    check_device(lambda a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.1), x, y, t4, atol=1e-12)
    check_device(lambda a, b, t: F.margin_ranking_loss(a[:, 0], b[:, 0], t), x, y, t4, atol=1e-12)
    check_device(lambda a, b: F.poisson_nll_loss(a, b, log_input=False), pos + 0.1, pos, atol=1e-12)
    raises_alike(lambda a, b, t: F.cosine_embedding_loss(a, b, t), x, y, x)


def test_clip_grad_norm_and_value():
    grads = [RNG.standard_normal(s) * 3 for s in ((3, 4), (4,), (2, 3, 2))]
    res = {}
    for dev in ("cpu", "cuda"):
        ps = [minitorch.nn.Parameter(minitorch.zeros(g.shape, device=dev)) for g in grads]
        for p, g in zip(ps, grads):
            p.grad = minitorch.tensor(g, dtype=minitorch.float32, device=dev)
        norms = [minitorch.nn.utils.clip_grad_norm_(ps, 2.0, norm_type=nt) for nt in (2.0, float("inf"), 1.5)]
        minitorch.nn.utils.clip_grad_value_(ps, 0.05)
        res[dev] = (norms, [p.grad for p in ps], minitorch.nn.utils.parameters_to_vector(ps))
    for k, (nd, nc) in enumerate(zip(res["cuda"][0], res["cpu"][0])):
        assert_same(nd, nc, atol=1e-5)
    for gd, gc in zip(res["cuda"][1], res["cpu"][1]):
        assert_same(gd, gc, atol=1e-6)
    assert_same(res["cuda"][2], res["cpu"][2], atol=0, rtol=0)
