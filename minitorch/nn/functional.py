"""nn.functional: the stateless functions that the layers in nn.modules call.

Each function is one call into `_C`, where the dispatcher decomposes it (`linear -> addmm`,
`relu -> clamp_min`); nothing here touches tensor values.
"""
from __future__ import annotations

import warnings
from typing import List, Optional, Tuple, Union

from minitorch.nn.modules.utils import _list_with_default, _pair

from minitorch import _C, Tensor

__all__ = ["linear", "relu", "gelu", "silu", "tanh", "sigmoid"]
__all__ += ["conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """y = input @ weight.T + bias; input (*, in_features), weight (out_features, in_features)."""
    return _C.linear(input, weight, bias)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise; with inplace=True, written into input and input returned."""
    if inplace:
        return _C.relu_(input)
    return _C.relu(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF (the exact, erf form)."""
    if approximate != "none":
        raise NotImplementedError(f"gelu(approximate={approximate!r}): only the exact form exists yet")
    return _C.gelu(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    if inplace:
        return input.copy_(_C.silu(input))
    return _C.silu(input)


def tanh(input: Tensor) -> Tensor:
    return _C.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return _C.sigmoid(input)


# ---- convolution and pooling ----

_size_2_t = Union[int, Tuple[int, int], List[int]]


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: _size_2_t = 1,
    padding: Union[str, _size_2_t] = 0,
    dilation: _size_2_t = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation; input (N, C, H, W) or (C, H, W), weight (OC, C/groups, KH, KW).

    padding is ints, or 'valid' (none) or 'same' (the output as large as the input; stride 1).
    """
    if not isinstance(padding, str):
        return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)
    if padding == "valid":
        return _C.conv2d(input, weight, bias, stride, 0, dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in _pair(stride)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    if weight.dim() != 4:  # let the op report the bad weight
        return _C.conv2d(input, weight, bias, stride, 0, dilation, groups)
    # Total padding d*(k-1) per dim, split left = total // 2, right = the rest (PyTorch's split).
    total = [d * (k - 1) for d, k in zip(_pair(dilation), weight.shape[2:])]
    left = [t // 2 for t in total]
    right = [t - t // 2 for t in total]
    if left == right:
        return _C.conv2d(input, weight, bias, stride, left, dilation, groups)
    warnings.warn(
        "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
        "copy of the input be created",
        stacklevel=2,
    )
    # Pad `right` on both sides and drop the one extra leading row/column that gives.
    out = _C.conv2d(input, weight, bias, stride, right, dilation, groups)
    return out[..., right[0] - left[0] :, right[1] - left[1] :].contiguous()


def max_pool2d(
    input: Tensor,
    kernel_size: _size_2_t,
    stride: Optional[_size_2_t] = None,
    padding: _size_2_t = 0,
    dilation: _size_2_t = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Max over kernel_size windows; with return_indices, also each max's h*W+w in its plane."""
    if return_indices:
        out, indices = _C.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
        return out, indices
    return _C.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(
    input: Tensor,
    kernel_size: _size_2_t,
    stride: Optional[_size_2_t] = None,
    padding: _size_2_t = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Tensor:
    """Mean over kernel_size windows (stride defaults to kernel_size)."""
    return _C.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Mean over output_size windows that tile (H, W); None in output_size keeps that size."""
    size = _list_with_default(output_size, input.size())
    if size == 1 or (not isinstance(size, int) and list(size) == [1, 1]):
        # As PyTorch: a 1x1 output is the mean over H and W.
        return input.mean((-1, -2), keepdim=True)
    return _C.adaptive_avg_pool2d(input, size)
