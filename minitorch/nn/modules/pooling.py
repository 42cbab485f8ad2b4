"""Pooling layers (torch/nn/modules/pooling.py): MaxPool1d/2d/3d, AvgPool1d/2d/3d,
AdaptiveAvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d, MaxUnpool1d/2d/3d, LPPool1d/2d/3d,
FractionalMaxPool2d/3d.

Each stores its arguments as given (an int stays an int, so the repr is PyTorch's) and calls
the matching nn.functional op.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn.modules.module import Module
from minitorch.nn.modules.utils import _ntuple, _pair, _single

__all__ = ["MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]

_size_2_t = Union[int, Tuple[int, int]]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]

    def __init__(
        self,
        kernel_size: Any,
        stride: Optional[Any] = None,
        padding: Any = 0,
        dilation: Any = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input: Tensor):
        return getattr(F, self._pool)(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            ceil_mode=self.ceil_mode,
            return_indices=self.return_indices,
        )

    def extra_repr(self) -> str:
        return (
            "kernel_size={kernel_size}, stride={stride}, padding={padding}"
            ", dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__)
        )


class MaxPool2d(_MaxPoolNd):
    """Max over kernel_size windows of each plane: (N, C, H, W) -> (N, C, OH, OW)."""

    _pool = "max_pool2d"  # the F function, looked up when called (F imports this module)


class _AvgPoolNd(Module):
    """The 2-D and 3-D average pools' arguments, stored as given, and their call of F's _pool."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def __init__(
        self,
        kernel_size: Any,
        stride: Optional[Any] = None,
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: Optional[int] = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._pool)(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )


class AvgPool2d(_AvgPoolNd):
    """Mean over kernel_size windows of each plane: (N, C, H, W) -> (N, C, OH, OW)."""

    _pool = "avg_pool2d"  # the F function, looked up when called (F imports this module)


class _AdaptiveAvgPoolNd(Module):

    __constants__ = ["output_size"]

    def __init__(self, output_size: Any) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor) -> Tensor:
        return getattr(F, self._pool)(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Mean over output_size windows that tile each plane; None keeps that input size."""

    _pool = "adaptive_avg_pool2d"  # the F function, looked up when called (F imports this module)


class MaxPool1d(_MaxPoolNd):
    """Max over kernel_size windows along L: (N, C, L) -> (N, C, OL)."""

    _pool = "max_pool1d"  # the F function, looked up when called (F imports this module)


class AvgPool1d(Module):
    """Mean over kernel_size windows along L: (N, C, L) -> (N, C, OL)."""

    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor) -> Tensor:
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Mean over output_size windows that tile L."""

    _pool = "adaptive_avg_pool1d"  # the F function, looked up when called (F imports this module)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]

    def __init__(self, output_size: Any, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input: Tensor):
        return getattr(F, self._pool)(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Max over output_size windows that tile L; return_indices also gives their positions."""

    _pool = "adaptive_max_pool1d"  # the F function, looked up when called (F imports this module)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Max over output_size windows that tile (H, W); return_indices also gives h*W+w."""

    _pool = "adaptive_max_pool2d"  # the F function, looked up when called (F imports this module)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]

    def __init__(self, norm_type: float, kernel_size: Any, stride: Any = None, ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return "norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, ceil_mode={ceil_mode}".format(
            **self.__dict__
        )


class LPPool1d(_LPPoolNd):
    """Power-average pooling, (sum over each window of x**p)**(1/p), over (N, C, L) or (C, L)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool1d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool2d(_LPPoolNd):
    """Power-average pooling, (sum over each window of x**p)**(1/p), over (N, C, H, W) or (C, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool2d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


class LPPool3d(_LPPoolNd):
    """Power-average pooling, (sum over each window of x**p)**(1/p), over (N, C, D, H, W) or (C, D, H, W)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.lp_pool3d(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)


__all__ += ["LPPool1d", "LPPool2d", "LPPool3d"]


class _FractionalMaxPoolNd(Module):
    """kernel_size windows at random steps (F.fractional_max_pool2d/3d); _random_samples, when
    given, is a buffer that fixes the steps."""

    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _nd = 2

    def __init__(self, kernel_size: Any, output_size: Any = None, output_ratio: Any = None,
                 return_indices: bool = False, _random_samples: Optional[Tensor] = None) -> None:
        super().__init__()
        expand = _ntuple(self._nd)
        self.kernel_size = expand(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = expand(output_size) if output_size is not None else None
        self.output_ratio = expand(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input: Tensor):
        pool = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                    _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, H, W) or (C, H, W) to output_size (or input size * output_ratio)."""

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """Fractional max pooling of (N, C, T, H, W) or (C, T, H, W) to output_size (or input size * output_ratio)."""

    _nd = 3


__all__ += ["FractionalMaxPool2d", "FractionalMaxPool3d"]


class MaxPool3d(_MaxPoolNd):
    """Max over kernel_size windows of each volume: (N, C, D, H, W) -> (N, C, OD, OH, OW)."""

    _pool = "max_pool3d"  # the F function, looked up when called (F imports this module)


class AvgPool3d(_AvgPoolNd):
    """Mean over kernel_size windows of each volume: (N, C, D, H, W) -> (N, C, OD, OH, OW)."""

    _pool = "avg_pool3d"  # the F function, looked up when called (F imports this module)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Mean over output_size windows that tile each volume; None keeps that input size."""

    _pool = "adaptive_avg_pool3d"  # the F function, looked up when called (F imports this module)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Max over output_size windows that tile (D, H, W); return_indices also gives (d*H+h)*W+w."""

    _pool = "adaptive_max_pool3d"  # the F function, looked up when called (F imports this module)


class _MaxUnpoolNd(Module):
    """kernel_size, stride (default kernel_size) and padding as _expand gives them, as PyTorch's."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0) -> None:
        super().__init__()
        e = self._expand
        self.kernel_size = e(kernel_size)
        self.stride = e(stride if (stride is not None) else kernel_size)
        self.padding = e(padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input: Tensor, indices: Tensor, output_size: Optional[Any] = None) -> Tensor:
        return getattr(F, self._unpool)(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """MaxPool1d's partial inverse: each value to its index along L, zeros elsewhere."""

    _expand = staticmethod(_single)
    _unpool = "max_unpool1d"


class MaxUnpool2d(_MaxUnpoolNd):
    """MaxPool2d's partial inverse: each value to its index h*W+w, zeros elsewhere."""

    _expand = staticmethod(_pair)
    _unpool = "max_unpool2d"


class MaxUnpool3d(_MaxUnpoolNd):
    """MaxPool3d's partial inverse: each value to its index (d*H+h)*W+w, zeros elsewhere."""

    _expand = staticmethod(_ntuple(3, "_triple"))
    _unpool = "max_unpool3d"


__all__ += ["MaxPool3d", "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
            "MaxUnpool3d"]
