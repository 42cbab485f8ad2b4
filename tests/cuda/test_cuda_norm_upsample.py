"""group_norm, instance_norm and embedding_bag (composites, csrc/ops/norm_group.c,
embedding_bag.c) and the upsample ops under F.interpolate (cuda/upsample.cu) on the CUDA device against the CPU: the
same values, and the same gradients of the input and the parameters."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, check_device

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = minitorch.nn.functional
RNG = np.random.default_rng(5)


def grads_alike(fn, *arrays, atol=1e-10):
    """fn's output and the gradients of every float input, on the CPU and on the device."""
    results = []
    for device in ("cpu", "cuda"):
        xs = [minitorch.tensor(a).to(device) for a in arrays]
        for x in xs:
            if x.is_floating_point():
                x.requires_grad_(True)
        y = fn(*xs)
        (y * minitorch.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape))).to(device)).sum().backward()
        results.append([y.detach()] + [x.grad for x in xs if x.is_floating_point()])
    for got, want in zip(results[1], results[0]):
        assert_same(got, want, atol=atol, rtol=atol)


def test_group_norm():
    grads_alike(lambda x, w, b: F.group_norm(x, 2, w, b), RNG.standard_normal((2, 4, 3, 3)),
                RNG.standard_normal(4), RNG.standard_normal(4))


def test_instance_norm_with_running_statistics():
    x = minitorch.tensor(RNG.standard_normal((3, 2, 5)))
    stats = [(minitorch.zeros(2, dtype=minitorch.float64).to(d), minitorch.ones(2, dtype=minitorch.float64).to(d))
             for d in ("cpu", "cuda")]
    outs = [F.instance_norm(x.to(d), *s) for d, s in zip(("cpu", "cuda"), stats)]
    assert_same(outs[1], outs[0], atol=1e-10)
    assert_same(stats[1][0], stats[0][0], atol=1e-12)
    assert_same(stats[1][1], stats[0][1], atol=1e-12)
    grads_alike(lambda x, w: F.instance_norm(x, weight=w), RNG.standard_normal((2, 3, 4, 2)), RNG.standard_normal(3))


@pytest.mark.parametrize("mode,shape", [("nearest", (1, 2, 5, 4)), ("nearest-exact", (1, 2, 7)), ("linear", (2, 1, 6)),
                                        ("bilinear", (1, 2, 3, 5)), ("bicubic", (1, 1, 4, 4)),
                                        ("trilinear", (1, 1, 2, 3, 2))])
def test_interpolate(mode, shape):
    align = None if mode.startswith("nearest") else True
    grads_alike(lambda x: F.interpolate(x, scale_factor=1.7, mode=mode, align_corners=align),
                RNG.standard_normal(shape))


def test_embedding_bag():
    idx, offsets = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 3, 3])
    for mode in ("sum", "mean", "max"):
        grads_alike(lambda w, i, o: F.embedding_bag(i, w, o, mode=mode, padding_idx=4),
                    RNG.standard_normal((10, 3)), idx, offsets)
    check_device(lambda w: F.embedding_bag(minitorch.tensor(idx).to(w.device), w,
                                           minitorch.tensor(offsets).to(w.device)),
                 minitorch.tensor(RNG.standard_normal((10, 3))))


@pytest.mark.parametrize("mode,shape", [("nearest", (2, 3, 9, 7)), ("bilinear", (2, 3, 9, 7)),
                                        ("bicubic", (1, 2, 6, 5)), ("trilinear", (1, 2, 3, 4, 5))])
def test_upsample_ops_one_node_float32_and_double_backward(mode, shape):
    """the fused upsample kernels (cuda/upsample.cu) in float32 against the CPU's, one node each
    way on the device, and their second derivative (the backward op's own gradient)"""
    grads_alike(lambda x: F.interpolate(x, scale_factor=1.6, mode=mode), RNG.standard_normal(shape).astype("float32"),
                atol=1e-5)
    x0 = RNG.standard_normal(shape)
    w = RNG.standard_normal(shape)
    second = []
    for device in ("cpu", "cuda"):
        x = minitorch.tensor(x0).to(device).requires_grad_()
        y = F.interpolate(x, size=[5] * (len(shape) - 2), mode=mode)
        gy = minitorch.ones_like(y, requires_grad=True)
        (g,) = minitorch.autograd.grad(y, x, gy, create_graph=True)
        assert g.grad_fn.name().endswith("BackwardBackward0") and g.device.type == device
        (ggy,) = minitorch.autograd.grad((g * minitorch.tensor(w).to(device)).sum(), gy)
        second.append(ggy)
    assert_same(second[1], second[0], atol=1e-10, rtol=1e-10)
