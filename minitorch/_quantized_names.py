"""torch's functions over quantized tensors that the API audit found missing: quantized_max_pool1d,
2d and 3d (F's max pooling of a QTensor, the quantizer kept), empty_quantized (a quantized tensor
of a size with another's quantizer) and quantized_batch_norm (batch norm of the dequantized values,
quantized with the output scale and zero point given), fused_moving_avg_obs_fake_quant (the
fused observer and fake quantization step of quantization-aware training) and
choose_qparams_optimized (the embedding packers' greedy range search). A strided input to the
first ones raises PyTorch's dispatcher error, as PyTorch's kernels exist for QuantizedCPU only."""
from __future__ import annotations

import numpy as np

from . import _C
from ._api_names import _not_for_strided
from ._tensor_methods import _no_grad
from ._qtensor import QTensor, _empty_affine_quantized, per_tensor_affine, per_tensor_symmetric, quantize_per_tensor


def _quantized_max_pool(rank: int):
    name = f"quantized_max_pool{rank}d"
    refuse = _not_for_strided(name)

    def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
        if not isinstance(input, QTensor):
            refuse(input)
        from .nn import functional as F

        stride = None if stride is None or (not isinstance(stride, int) and len(stride) == 0) else stride
        return getattr(F, f"max_pool{rank}d")(input, kernel_size, stride, padding, dilation, ceil_mode)

    pool.__name__ = pool.__qualname__ = name
    pool.__doc__ = f"F.max_pool{rank}d of a quantized tensor (an empty stride: the kernel's)."
    return pool


quantized_max_pool1d, quantized_max_pool2d, quantized_max_pool3d = (_quantized_max_pool(r) for r in (1, 2, 3))


def empty_quantized(size, qtensor, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """A quantized tensor of `size` with qtensor's dtype and quantizer (its integers zero)."""
    if not isinstance(qtensor, QTensor):
        _not_for_strided("empty_quantized")(qtensor)
    size = tuple(int(s) for s in size)
    if qtensor.qscheme() in (per_tensor_affine, per_tensor_symmetric):
        return _empty_affine_quantized(size, scale=qtensor.q_scale(), zero_point=qtensor.q_zero_point(),
                                       dtype=qtensor.dtype)
    ir = _C.zeros(size, dtype=qtensor.int_repr().dtype)
    return QTensor(ir, qtensor.dtype, qtensor.qscheme(), qtensor.q_per_channel_scales(),
                   qtensor.q_per_channel_zero_points(), qtensor.q_per_channel_axis())


def quantized_batch_norm(input, weight, bias, mean, var, eps: float, output_scale: float, output_zero_point: int):
    """Batch norm (inference: the running mean and var given) of a quantized input, quantized per
    tensor with output_scale and output_zero_point in input's dtype."""
    if not isinstance(input, QTensor):
        _not_for_strided("quantized_batch_norm")(input)
    from .nn import functional as F

    out = F.batch_norm(input.dequantize(), mean, var, weight, bias, False, 0.0, eps)
    return quantize_per_tensor(out, output_scale, output_zero_point, input.dtype)


def fused_moving_avg_obs_fake_quant(self, observer_on, fake_quant_on, running_min, running_max, scale, zero_point,
                                    averaging_const: float, quant_min: int, quant_max: int, ch_axis: int,
                                    per_row_fake_quant: bool = False, symmetric_quant: bool = False):
    """FusedMovingAvgObsFakeQuantize's step as one function: with observer_on, the running min and
    max (per channel along ch_axis with per_row_fake_quant) move towards self's by averaging_const
    (take them where they are still infinite), in place; then, with fake_quant_on, scale and
    zero_point recomputed from them in place and self fake-quantized with them; else a copy of self."""
    from ._qtensor import _choose_qparams

    if int(observer_on.reshape(-1)[0]) == 1:
        x = self.detach()
        if per_row_fake_quant:
            rows = x.movedim(ch_axis, 0).reshape(x.shape[ch_axis], -1)
            low, high = rows.amin(1), rows.amax(1)
        else:
            low, high = x.amin().reshape(1), x.amax().reshape(1)
        with _no_grad():
            fresh_min, fresh_max = running_min.isinf(), running_max.isinf()
            running_min.copy_(_C.where(fresh_min, low, running_min + averaging_const * (low - running_min)))
            running_max.copy_(_C.where(fresh_max, high, running_max + averaging_const * (high - running_max)))
    if int(fake_quant_on.reshape(-1)[0]) != 1:
        return self.clone()
    # one (scale, zero point) per channel (or one): PyTorch's ChooseQuantizationParams, a scalar formula
    params = [_choose_qparams(lo, hi, quant_min, quant_max, False, symmetric_quant)
              for lo, hi in zip(running_min.reshape(-1).tolist(), running_max.reshape(-1).tolist())]
    with _no_grad():
        scale.copy_(_C.tensor([p[0] for p in params], dtype=scale.dtype).reshape(scale.shape))
        zero_point.copy_(_C.tensor([p[1] for p in params], dtype=zero_point.dtype).reshape(zero_point.shape))
    from . import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine

    if per_row_fake_quant:
        return fake_quantize_per_channel_affine(self, scale, zero_point, ch_axis, quant_min, quant_max)
    return fake_quantize_per_tensor_affine(self, scale, zero_point, quant_min, quant_max)


def _quant_loss(x, xmin, xmax, bit_width: int) -> "np.float32":
    """The L2 error of x quantized to bit_width bits over [xmin, xmax] (xmin and the scale rounded
    through float16, as the embedding packers store them), in float32 as PyTorch's."""
    xmin = np.float32(np.float16(xmin))
    qmax = np.float32((1 << bit_width) - 1)
    span = np.float32(xmax - xmin)
    scale = np.float32(1.0) if span == 0 else np.float32(np.float16(span / qmax))
    inverse = np.float32(1.0) if scale == 0 else np.float32(1.0) / scale
    q = ((x - float(xmin)) * float(inverse)).round().clamp(0, float(qmax)) * float(scale) + float(xmin)
    return np.float32(((x - q) ** 2).sum().sqrt().item())


def choose_qparams_optimized(input, numel: int, n_bins: int, ratio: float, bit_width: int):
    """(xmax, xmin) for quantizing input's first numel values to bit_width bits: from the whole
    range, one bin (of n_bins) at a time is taken off the end whose removal loses less, down to
    (1 - ratio) of the range; the narrowest range where the L2 error was a local minimum, and the
    lowest such, wins (PyTorch's greedy search for the embedding packers)."""
    if numel < 0 or numel > input.numel():
        raise RuntimeError("numel is out of the bound of input tensor")
    if input.dtype != _C.float32:
        from ._api_names import _dtype_word

        raise RuntimeError(f"expected scalar type Float but found {_dtype_word(input)}")
    x = input.detach().reshape(-1)[:numel]
    xmin, xmax = np.float32(x.min().item()), np.float32(x.max().item())
    step = np.float32((xmax - xmin) / np.float32(n_bins))
    min_bins = int(n_bins * (1.0 - float(np.float32(ratio))))
    best = cur = _quant_loss(x, xmin, xmax, bit_width)
    low, high = xmin, xmax
    threshold = np.float32(min_bins * step)
    while low + threshold < high:
        loss_left = _quant_loss(x, low + step, high, bit_width)
        loss_right = _quant_loss(x, low, high - step, bit_width)
        if cur < loss_left and cur < loss_right and cur < best:
            best, xmin, xmax = cur, low, high
        if loss_left < loss_right:
            low, cur = np.float32(low + step), loss_left
        else:
            high, cur = np.float32(high - step), loss_right
    return _C.tensor([float(xmax)]), _C.tensor([float(xmin)])


def install(namespace: dict) -> None:
    namespace.update(quantized_max_pool1d=quantized_max_pool1d, quantized_max_pool2d=quantized_max_pool2d,
                     quantized_max_pool3d=quantized_max_pool3d, empty_quantized=empty_quantized,
                     quantized_batch_norm=quantized_batch_norm,
                     fused_moving_avg_obs_fake_quant=fused_moving_avg_obs_fake_quant,
                     choose_qparams_optimized=choose_qparams_optimized)
