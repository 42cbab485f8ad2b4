"""torch's low-level entry points that some programs call directly: native_layer_norm,
native_batch_norm and native_group_norm (the normalized output with the saved mean and inverse
standard deviation), native_dropout (output and keep mask), convolution (every conv and transposed
conv in one signature), conv_tbc (the time, batch, channel layout), max_pool1d_with_indices,
grid_sampler (modes as PyTorch's integer codes) and is_distributed. Each is a composite of the
nn.functional ops, so values, gradients and devices are theirs."""
from __future__ import annotations

from typing import Optional, Sequence

from . import _C
from ._tensor import Tensor

_INTERPOLATION = ("bilinear", "nearest", "bicubic")  # grid_sampler's codes 0, 1, 2
_PADDING = ("zeros", "border", "reflection")


def _stats(x: Tensor, dims: list, eps: float):
    """The mean and 1 / sqrt(biased variance + eps) of x over dims, kept as size-1 dims. (PyTorch
    differentiates group_norm's, not layer_norm's or batch_norm's: those callers pass x detached.)"""
    mean = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, correction=0, keepdim=True) + eps).rsqrt()
    return mean, rstd


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Optional[Tensor],
                      bias: Optional[Tensor], eps: float):
    """(layer_norm(input), mean, rstd), the statistics shaped input.shape[:-k] + (1,) * k."""
    from .nn.functional import layer_norm

    k = len(normalized_shape)
    mean, rstd = _stats(input.detach(), list(range(input.dim() - k, input.dim())), eps)
    return layer_norm(input, list(normalized_shape), weight, bias, eps), mean, rstd


def native_batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor],
                      running_mean: Optional[Tensor], running_var: Optional[Tensor], training: bool,
                      momentum: float, eps: float):
    """(batch_norm(input), save_mean, save_invstd): the batch's per-channel statistics when
    training (running statistics updated), else empty tensors."""
    from .nn.functional import batch_norm

    if training:
        dims = [0] + list(range(2, input.dim()))
        mean, rstd = (s.reshape(-1) for s in _stats(input.detach(), dims, eps))
    else:
        mean = rstd = _C.empty((0,), dtype=input.dtype, device=input.device)
    out = batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    return out, mean, rstd


def native_group_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], N: int, C: int,
                      HxW: int, group: int, eps: float):
    """(group_norm(input), mean, rstd), the statistics of each sample's groups as (N, group)."""
    from .nn.functional import group_norm

    mean, rstd = (s.reshape(N, group) for s in _stats(input.reshape(N, group, -1), [2], eps))
    return group_norm(input, group, weight, bias, eps), mean, rstd


def native_dropout(input: Tensor, p: float, train: Optional[bool]):
    """(output, mask): each element kept (mask True) with probability 1 - p and scaled by
    1 / (1 - p) when train is True or None; else a copy of input and an all-True mask."""
    if train is False:
        return input.clone(), _C.ones(input.shape, dtype=_C.bool, device=input.device)
    mask = _C.rand(input.shape, device=input.device) >= p
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return input * mask * scale, mask


def convolution(input: Tensor, weight: Tensor, bias: Optional[Tensor], stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    """The 1-, 2- or 3-d convolution (or transposed convolution) weight's dims call for."""
    from .nn import functional as F

    n = weight.dim() - 2
    if n not in (1, 2, 3):
        raise RuntimeError(f"Expected {n + 2}D (unbatched) or {n + 3}D (batched) input to conv{n}d, "
                           f"but got input of size: {list(input.shape)}")
    if transposed:
        fn = getattr(F, f"conv_transpose{n}d")
        return fn(input, weight, bias, list(stride), list(padding), list(output_padding), groups, list(dilation))
    return getattr(F, f"conv{n}d")(input, weight, bias, list(stride), list(padding), list(dilation), groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution over time of input (time, batch, in_channels) with weight (kernel_width,
    in_channels, out_channels) and bias (out_channels), padded by pad on both ends of time; the
    result (time', batch, out_channels): conv1d in the time-last layout it takes."""
    from .nn.functional import conv1d

    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.dim() != 1 or bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    return conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad).permute(2, 0, 1)


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=(), padding=0, dilation=1, ceil_mode: bool = False):
    """(max_pool1d(input), the flat positions of the maxima); an empty stride is kernel_size."""
    from .nn.functional import max_pool1d

    stride = None if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else stride
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode=ceil_mode, return_indices=True)


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """grid_sample with PyTorch's integer codes for its modes."""
    from .nn.functional import grid_sample

    return grid_sample(input, grid, _INTERPOLATION[interpolation_mode], _PADDING[padding_mode], align_corners)


def is_distributed(input: Tensor) -> bool:
    """False: no tensor is spread over processes (as PyTorch's answer for every tensor)."""
    return False


__all__ = ["native_layer_norm", "native_batch_norm", "native_group_norm", "native_dropout", "convolution",
           "conv_tbc", "max_pool1d_with_indices", "grid_sampler", "is_distributed"]
