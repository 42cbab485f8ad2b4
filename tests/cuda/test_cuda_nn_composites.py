"""rms_norm, bilinear, conv3d (composites over device ops), grid_sample (its sampler through the
host round trip) and affine_grid on the CUDA device against the CPU: values and the gradients
of every input."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same, on_device

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = minitorch.nn.functional
RNG = np.random.default_rng(25)


def run(fn, arrays, device):
    xs = [on_device(minitorch.tensor(a), device).requires_grad_(True) for a in arrays]
    out = fn(*xs)
    weight = on_device(minitorch.tensor(RNG.standard_normal(tuple(out.shape))), device)
    (out * weight.to(out.dtype)).sum().backward()
    return out.detach(), tuple(x.grad for x in xs)


def same_on_cuda(fn, *arrays, atol=1e-10):
    state = np.random.default_rng(0).bit_generator.state
    RNG.bit_generator.state = state
    want, want_g = run(fn, arrays, "cpu")
    RNG.bit_generator.state = state
    got, got_g = run(fn, arrays, "cuda")
    assert_same(got, want, atol=atol, rtol=atol)
    for g, w in zip(got_g, want_g):
        assert_same(g, w, atol=atol, rtol=atol)


def data(*shape):
    return RNG.standard_normal(shape)


def test_rms_norm_and_bilinear():
    same_on_cuda(lambda x, w: F.rms_norm(x, [3, 4], w, eps=1e-3), data(2, 3, 4), data(3, 4))
    same_on_cuda(lambda a, b, w, bias: F.bilinear(a, b, w, bias), data(5, 3), data(5, 2), data(4, 3, 2), data(4))


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_and_affine_grid(mode, padding):
    same_on_cuda(lambda x, theta: F.grid_sample(x, F.affine_grid(theta, [2, 3, 4, 5], align_corners=False), mode=mode,
                                                padding_mode=padding, align_corners=False),
                 data(2, 3, 5, 6), data(2, 2, 3) * 1.5)


def test_conv3d():
    same_on_cuda(lambda x, w, b: F.conv3d(x, w, b, stride=(2, 1, 1), padding=1), data(2, 2, 5, 4, 4), data(3, 2, 3, 3, 2),
                 data(3), atol=1e-9)
    x = minitorch.ones(1, 2, 3, 3, 3, device="cuda", requires_grad=True)
    node = F.conv3d(x, minitorch.ones(2, 1, 2, 2, 2, device="cuda"), groups=2).grad_fn
    assert type(node).__name__ == "ConvolutionBackward0"  # one node there too (the composite's)
    x.grad = None
    F.conv3d(x, minitorch.ones(2, 1, 2, 2, 2, device="cuda"), groups=2).sum().backward()
    assert x.grad.device.type == "cuda" and float(x.grad.sum()) == 2 * 8 * 8  # each output reads 8 inputs


@pytest.mark.parametrize("fmt, shape", [("channels_last", (2, 3, 4, 5)), ("channels_last_3d", (2, 3, 2, 4, 5))])
def test_moves_keep_the_memory_format(fmt, shape):
    """to(device) and to(device, dtype) copy in the source's layout (preserve_format), both ways,
    a strided source included, with the values in place."""
    x = minitorch.tensor(data(*shape)).to(memory_format=getattr(minitorch, fmt))
    for src in (x, x[:, :, ::2]):
        on = src.to("cuda")
        back = on.to("cpu", minitorch.float32)
        assert on.stride() == back.stride() == src.contiguous(memory_format=getattr(minitorch, fmt)).stride()
        assert on.is_contiguous(memory_format=getattr(minitorch, fmt))
        np.testing.assert_array_equal(on.cpu().numpy(), src.numpy())
        np.testing.assert_allclose(back.numpy(), src.numpy(), rtol=1e-6)
