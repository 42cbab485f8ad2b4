"""fake_quantize_per_tensor_affine and fake_quantize_per_channel_affine: a float tensor rounded to
the values a quantized tensor could hold, and kept in float (quantization-aware training).

As PyTorch's CPU kernels: q = zero_point + round_half_even(x * (1/scale)) with the product in the
input's float type, clamped to [quant_min, quant_max], and out = (q - zero_point) * scale. The
gradient is the straight-through estimator: the incoming gradient where x * (1/scale) +
zero_point rounded within [quant_min, quant_max] (PyTorch's cached mask), zero elsewhere. Each
is a few calls of minitorch ops inside an autograd.Function whose backward multiplies by that mask.
"""
from __future__ import annotations

from typing import Any

from . import autograd


def _check_range(quant_min: int, quant_max: int) -> None:
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")


def _fake(x: Any, inv: Any, scale: Any, zero_point: Any, quant_min: int, quant_max: int) -> tuple:
    """(fake-quantized x, mask of the elements within range); inv, scale, zero_point broadcast."""
    q = (x * inv).round() + zero_point
    mask = (q >= quant_min) & (q <= quant_max)
    return (q.clamp(quant_min, quant_max) - zero_point) * scale, mask


class FakeQuantizePerTensorAffineCachemask(autograd.Function):
    """The op and its straight-through gradient, as PyTorch's (cachemask) kernel."""

    @staticmethod
    def forward(ctx: Any, x: Any, scale: Any, zero_point: Any, quant_min: int, quant_max: int) -> Any:
        out, mask = _fake(x, 1.0 / scale, scale, zero_point, quant_min, quant_max)
        ctx.save_for_backward(mask)
        return out

    @staticmethod
    def backward(ctx: Any, grad: Any) -> tuple:
        (mask,) = ctx.saved_tensors
        return grad * mask, None, None, None, None


class FakeQuantizePerChannelAffineCachemask(FakeQuantizePerTensorAffineCachemask):
    """The per-channel op: scale and zero_point already shaped to broadcast along the axis."""


def fake_quantize_per_tensor_affine(input: Any, scale: Any, zero_point: Any, quant_min: int, quant_max: int) -> Any:
    """input rounded to the grid scale * (q - zero_point), q in [quant_min, quant_max]; scale and
    zero_point are numbers or one-element tensors (float32 and int32)."""
    from . import tensor

    _check_range(quant_min, quant_max)
    zp = int(zero_point.item() if hasattr(zero_point, "item") else zero_point)
    if not quant_min <= zp <= quant_max:
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    s = float(scale.item() if hasattr(scale, "item") else scale)
    scale_t = tensor(s, dtype=input.dtype)  # the scale as the input's float type, as the kernel's
    return FakeQuantizePerTensorAffineCachemask.apply(input, scale_t, float(zp), quant_min, quant_max)


def fake_quantize_per_channel_affine(input: Any, scale: Any, zero_point: Any, axis: int, quant_min: int,
                                     quant_max: int) -> Any:
    """As fake_quantize_per_tensor_affine with a scale and zero point for each index along axis;
    zero_point is an int32 (or float) tensor."""
    from . import int32, int64

    _check_range(quant_min, quant_max)
    if zero_point.dtype == int64:
        raise RuntimeError("Zero-point must be Int32, Float or Half, found Long")
    if not 0 <= axis < input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    if scale.dim() != 1 or zero_point.dim() != 1 or scale.numel() != zero_point.numel() or \
            scale.numel() != input.shape[axis]:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input tensor")
    if zero_point.dtype == int32 and bool(((zero_point < quant_min) | (zero_point > quant_max)).any()):
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")
    shape = [1] * input.dim()
    shape[axis] = scale.numel()
    s = scale.to(input.dtype).view(shape)
    zp = zero_point.to(input.dtype).view(shape)
    return FakeQuantizePerChannelAffineCachemask.apply(input, s, zp, quant_min, quant_max)
