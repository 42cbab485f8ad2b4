"""LayerNorm: normalises over the trailing normalized_shape dims of each sample, then scales and
shifts by weight (ones at start) and bias (zeros at start); GroupNorm: over each group of
channels of each sample, then per channel; LocalResponseNorm: by the neighbouring channels;
RMSNorm: by the root mean square of the trailing dims, then scales by weight (ones at start)."""
from __future__ import annotations

import numbers
from typing import Any, Optional, Sequence, Union

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn.modules.module import Module
from minitorch.nn.parameter import Parameter

__all__ = ["CrossMapLRN2d", "LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm"]


def _affine_parameters(module: Module, shape, affine: bool, bias: bool, device: Any, dtype: Any) -> None:
    """module.weight and module.bias of the given shape (bias None unless `bias`), or both None
    unless `affine`: the per-feature scale and shift of the normalisation layers."""
    if affine:
        module.weight = Parameter(minitorch.empty(shape, device=device, dtype=dtype))
        if bias:
            module.bias = Parameter(minitorch.empty(shape, device=device, dtype=dtype))
        else:
            module.register_parameter("bias", None)
    else:
        module.register_parameter("weight", None)
        module.register_parameter("bias", None)


def _reset_affine(module: Module) -> None:
    """weight to ones and bias to zeros, where the module has them (PyTorch's start)."""
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last len(normalized_shape) dims."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape: Union[int, Sequence[int]],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
            "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None)
        )


class GroupNorm(Module):
    """y = (x - mean) / sqrt(var + eps) * weight + bias, the statistics of each of num_groups
    groups of channels of each sample of (N, C, *) input, weight and bias per channel (C)."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, num_channels, affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return "{num_groups}, {num_channels}, eps={eps}, affine={affine}, bias={use_bias}".format(
            **self.__dict__, use_bias=self.bias is not None
        )


class _ChannelWindowNorm(Module):
    """The arguments of the local response norms: a window of `size` channels, alpha, beta, k."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def extra_repr(self) -> str:
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class LocalResponseNorm(_ChannelWindowNorm):
    """F.local_response_norm(input, size, alpha, beta, k) over (N, C, *) input."""

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)


class RMSNorm(Module):
    """y = x / sqrt(mean(x**2) + eps) * weight over the last len(normalized_shape) dims (Zhang &
    Sennrich 2019); eps None is the machine epsilon of x's dtype."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(
        self,
        normalized_shape: Union[int, Sequence[int]],
        eps: Optional[float] = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else normalized_shape
        self.normalized_shape, self.eps, self.elementwise_affine = tuple(shape), eps, elementwise_affine
        weight = minitorch.empty(self.normalized_shape, device=device, dtype=dtype) if elementwise_affine else None
        self.register_parameter("weight", None if weight is None else Parameter(weight))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return "{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}".format(**self.__dict__)


class CrossMapLRN2d(_ChannelWindowNorm):
    """Legacy Torch7 local response normalisation across channels of (N, C, H, W) input:
    x / (k + alpha / size * S)**beta, S a sum of squares over neighbouring channels. The window is
    PyTorch's, kept with its quirks: with p = (size - 1) // 2 + 1, channel c sums channels
    c - p + 1 .. c + p - 1 (an even size gives a window of size - 1), and channel 0 stays in
    every channel's sum. The gradient is the exact one of that forward (PyTorch's backward
    instead applies the centred window's formula)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__(size, alpha, beta, k)

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        c = input.shape[1]
        reach = (self.size - 1) // 2 + 1
        chan = minitorch.arange(c, device=input.device)
        near = chan.unsqueeze(0) - chan.unsqueeze(1)  # [c, j] = j - c
        window = ((near > -reach) & (near < reach)) | (chan == 0).unsqueeze(0)
        # (N, C, H, W) -> (N, H, W, C) @ (C, C): each channel's windowed sum of squares
        squares = input.pow(2).permute(0, 2, 3, 1)
        sums = squares.matmul(window.t().to(input.dtype)).permute(0, 3, 1, 2)
        return input * (sums * (self.alpha / self.size) + self.k).pow(-self.beta)
