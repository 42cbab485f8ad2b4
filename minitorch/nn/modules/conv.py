"""Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
(torch/nn/modules/conv.py).

The weight (out_channels, in_channels // groups, *kernel_size), transposed
(in_channels, out_channels // groups, *kernel_size), and bias (out_channels,) start as PyTorch's
do: kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = weight.size(1)
* prod(kernel_size), and the same bound for the bias.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import minitorch
from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn import init
from minitorch.nn.modules.module import Module
from minitorch.nn.modules.utils import _ntuple, _pair, _reverse_repeat_tuple, _single
from minitorch.nn.parameter import Parameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_size_2_t = Union[int, Tuple[int, int]]


class _ConvNd(Module):
    """What every convolution layer shares: argument checks, parameters, init and repr."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding",
                     "in_channels", "out_channels", "kernel_size"]

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Tuple[int, ...],
        stride: Tuple[int, ...],
        padding: Union[str, Tuple[int, ...]],
        dilation: Tuple[int, ...],
        transposed: bool,
        output_padding: Tuple[int, ...],
        groups: int,
        bias: bool,
        padding_mode: str,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's argument for the non-zeros padding modes: the last dim's first
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(padding, 2)
        shape = (in_channels, out_channels // groups) if transposed else (out_channels, in_channels // groups)
        self.weight = Parameter(minitorch.empty(*shape, *kernel_size, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(minitorch.empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init._reset_weight_and_bias(self.weight, self.bias)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    """Conv1d's and Conv2d's constructor and forward: _expand makes an int one per spatial dim, and
    a non-zeros padding_mode pads with F.pad first (PyTorch's _conv_forward)."""

    _expand = staticmethod(_pair)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        e = self._expand
        super().__init__(
            in_channels,
            out_channels,
            e(kernel_size),
            e(stride),
            padding if isinstance(padding, str) else e(padding),
            e(dilation),
            False,
            e(0),
            groups,
            bias,
            padding_mode,
            device=device,
            dtype=dtype,
        )

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
        conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[len(self.kernel_size)]
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, self._expand(0), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """out (N, out_channels, OL) = cross-correlation of input (N, in_channels, L) with weight."""

    _expand = staticmethod(_single)


class Conv2d(_Conv):
    """out (N, out_channels, OH, OW) = cross-correlation of input (N, in_channels, H, W) with weight."""

    _expand = staticmethod(_pair)


class Conv3d(_Conv):
    """out (N, out_channels, OD, OH, OW) = cross-correlation of input (N, in_channels, D, H, W)
    with weight."""

    _expand = staticmethod(_ntuple(3, "_triple"))


class _ConvTransposeNd(_ConvNd):
    """The transposed layers' output_padding from forward's output_size (PyTorch's
    _output_padding) and their checks."""

    _expand = staticmethod(_pair)

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 output_padding: Any = 0, groups: int = 1, bias: bool = True, dilation: Any = 1,
                 padding_mode: str = "zeros", device: Any = None, dtype: Any = None) -> None:
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        e = self._expand
        super().__init__(in_channels, out_channels, e(kernel_size), e(stride), e(padding), e(dilation), True,
                         e(output_padding), groups, bias, padding_mode, device=device, dtype=dtype)

    def forward(self, input: Tensor, output_size: Optional[Any] = None) -> Tensor:
        nd = len(self.kernel_size)
        output_padding = self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size, nd,
                                              self.dilation)
        conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
        return conv(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                    self.dilation)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have {num_spatial_dims} "
                f"or {num_non_spatial_dims + num_spatial_dims} elements (got {len(output_size)})"
            )
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = (
                (input.size(d + num_non_spatial_dims) - 1) * stride[d]
                - 2 * padding[d]
                + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                + 1
            )
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i in range(len(output_size)):
            size, min_size, max_size = output_size[i], min_sizes[i], max_sizes[i]
            if size < min_size or size > max_size:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range "
                    f"from {min_sizes} to {max_sizes} (for an input of {input.size()[2:]})"
                )
        return tuple(output_size[d] - min_sizes[d] for d in range(num_spatial_dims))


class ConvTranspose1d(_ConvTransposeNd):
    """The transpose of Conv1d: input (N, in_channels, L), weight (in_channels, out_channels // groups, K)."""

    _expand = staticmethod(_single)


class ConvTranspose2d(_ConvTransposeNd):
    """The transpose of Conv2d: input (N, in_channels, H, W), weight (in_channels, out_channels // groups, KH, KW)."""

    _expand = staticmethod(_pair)


class ConvTranspose3d(_ConvTransposeNd):
    """The transpose of Conv3d: input (N, in_channels, D, H, W), weight (in_channels,
    out_channels // groups, KD, KH, KW)."""

    _expand = staticmethod(_ntuple(3, "_triple"))
