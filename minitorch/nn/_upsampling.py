"""torch.nn.functional.interpolate and the deprecated upsample functions: PyTorch writes the
argument handling (size or scale_factor, recompute_scale_factor, align_corners, the mode and
input dims) in Python and calls an upsample op of torch._C._nn per mode; so does this, over the
composites of csrc/ops/upsample.c. The output size from a scale factor is ATen's
(input size * scale, truncated), and the scale then also picks the source positions."""
from __future__ import annotations

import math
import numbers
import warnings
from typing import List, Optional, Union

from minitorch import _C, Tensor
from minitorch._checks import _tensors

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]

_NEAREST = {3: _C.upsample_nearest1d, 4: _C.upsample_nearest2d, 5: _C.upsample_nearest3d}
_NEAREST_EXACT = {3: _C._upsample_nearest_exact1d, 4: _C._upsample_nearest_exact2d, 5: _C._upsample_nearest_exact3d}
# mode -> (input dims, op) of the interpolating modes
_INTERPOLATING = {
    "linear": (3, _C.upsample_linear1d),
    "bilinear": (4, _C.upsample_bilinear2d),
    "trilinear": (5, _C.upsample_trilinear3d),
    "bicubic": (4, _C.upsample_bicubic2d),
}


def _is_integer(x) -> bool:
    if isinstance(x, numbers.Integral):
        return True
    return isinstance(x, Tensor) and not x.is_floating_point() and x.dim() == 0


def _wrong_dims(dim: int, mode: str) -> None:
    """PyTorch's NotImplementedError for an input whose dims no op of the mode takes."""
    want = {"linear": 3, "bilinear": 4, "trilinear": 5}.get(mode)
    if dim in (3, 4, 5) and want is not None:
        raise NotImplementedError(f"Got {dim}D input, but {mode} mode needs {want}D input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {dim}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
        f" (got {mode})"
    )


def interpolate(
    input: Tensor,
    size: Optional[Union[int, List[int]]] = None,
    scale_factor: Optional[Union[float, List[float]]] = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
    recompute_scale_factor: Optional[bool] = None,
    antialias: bool = False,
) -> Tensor:
    """input (N, C, *spatial) resized to size, or by scale_factor, per spatial dim: 'nearest',
    'nearest-exact', 'linear' (3-D), 'bilinear', 'bicubic' (4-D) or 'trilinear' (5-D)."""
    _tensors("interpolate", input=input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the "
                "interpolating modes: linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format."
                )
            if not all(_is_integer(x) for x in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}"
                )
            output_size = [int(x) for x in size]
        else:
            output_size = [size for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "scale_factor in (s1, s2, ...,sK) format."
                )
            scale_factors = list(scale_factor)
        else:
            scale_factors = [scale_factor for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2) * scale_factors[i])) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor as input"
        )
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not implemented yet")
    if output_size is None:  # ATen's compute_output_size: input size * scale, truncated
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
    scales = [None] * dim if scale_factors is None else [float(s) for s in scale_factors]
    if mode in ("nearest", "nearest-exact") and input.dim() in _NEAREST:
        op = (_NEAREST if mode == "nearest" else _NEAREST_EXACT)[input.dim()]
        return op(input, output_size, *scales)
    if mode in _INTERPOLATING and _INTERPOLATING[mode][0] == input.dim():
        return _INTERPOLATING[mode][1](input, output_size, align_corners, *scales)
    if mode == "area" and input.dim() == 3:
        return _C.adaptive_avg_pool2d(input.unsqueeze(-2), (1, output_size[0])).squeeze(-2)
    if mode == "area" and input.dim() == 4:
        return _C.adaptive_avg_pool2d(input, output_size)
    if mode == "area" and input.dim() == 5:
        return _C.adaptive_avg_pool3d(input, output_size)
    _wrong_dims(input.dim(), mode)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated: interpolate, with PyTorch's warning."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='nearest'), with PyTorch's warning."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: interpolate(mode='bilinear', align_corners=True), with PyTorch's warning."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)
