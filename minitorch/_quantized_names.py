"""torch's functions over quantized tensors that the API audit found missing: quantized_max_pool1d,
2d and 3d (F's max pooling of a QTensor, the quantizer kept), empty_quantized (a quantized tensor
of a size with another's quantizer) and quantized_batch_norm (batch norm of the dequantized values,
quantized with the output scale and zero point given). A strided input raises PyTorch's dispatcher
error, as PyTorch's kernels exist for QuantizedCPU only."""
from __future__ import annotations

from . import _C
from ._api_names import _not_for_strided
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


def install(namespace: dict) -> None:
    namespace.update(quantized_max_pool1d=quantized_max_pool1d, quantized_max_pool2d=quantized_max_pool2d,
                     quantized_max_pool3d=quantized_max_pool3d, empty_quantized=empty_quantized,
                     quantized_batch_norm=quantized_batch_norm)
