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
    'nearest-exact', 'linear' (3-D), 'bilinear', 'bicubic' (4-D), 'trilinear' (5-D), 'area';
    with antialias=True (4-D) 'bilinear', 'bicubic' or 'lanczos' filter over every input a
    shrinking output pixel covers."""
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
    if mode == "lanczos" and input.dim() == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if output_size is None:  # ATen's compute_output_size: input size * scale, truncated
        output_size = [int(input.size(i + 2) * scale_factors[i]) for i in range(dim)]
    scales = [None] * dim if scale_factors is None else [float(s) for s in scale_factors]
    if antialias:
        return _resize_antialiased(input, output_size, align_corners, scales, mode)
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


# The antialiased modes' filters (ATen's UpSampleKernel.cpp aa_filter): taps, and the filter of |x|.
_AA_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}
_KEYS_A = -0.5  # the antialiased bicubic filter is Keys' cubic with a = -0.5 (PIL's), not -0.75


def _aa_filter(mode: str, x: Tensor) -> Tensor:
    import minitorch

    x = x.abs()
    if mode == "bilinear":
        return (1.0 - x).clamp(min=0.0)
    if mode == "bicubic":
        a = _KEYS_A
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return minitorch.where(x < 1.0, near, minitorch.where(x < 2.0, far, 0.0))
    return minitorch.where(x < 3.0, minitorch.sinc(x) * minitorch.sinc(x / 3.0), 0.0)  # Lanczos-3


def _aa_weights(in_size: int, out_size: int, align_corners: bool, scale: Optional[float], mode: str,
                like: Tensor) -> Tensor:
    """The (out_size, in_size) matrix of one axis of an antialiased resize, ATen's
    _compute_indices_min_size_weights_aa: output i averages the inputs within `support` of its
    centre scale * (i + 0.5), weighted by the mode's filter stretched by the scale when it shrinks
    (so every input contributes), the weights of each row normalised to sum to 1."""
    import minitorch

    if align_corners:  # area_pixel_compute_scale
        ratio = (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else in_size / out_size
    taps = _AA_TAPS[mode]
    support = taps * 0.5 * ratio if ratio >= 1.0 else taps * 0.5
    invscale = 1.0 / ratio if ratio >= 1.0 else 1.0
    widest = math.ceil(support) * 2 + 1
    f64 = dict(dtype=minitorch.float64, device=like.device)
    # align_corners changes the ratio only: the centres stay those of pixel areas, as in ATen
    center = ratio * (minitorch.arange(out_size, **f64) + 0.5)
    xmin = (center - support + 0.5).trunc().clamp(min=0.0)
    xsize = ((center + support + 0.5).trunc().clamp(max=float(in_size)) - xmin).clamp(0.0, float(widest))
    j = minitorch.arange(in_size, **f64)
    inside = (j >= xmin.unsqueeze(1)) & (j < (xmin + xsize).unsqueeze(1))
    w = minitorch.where(inside, _aa_filter(mode, (j - center.unsqueeze(1) + 0.5) * invscale), 0.0)
    total = w.sum(1, keepdim=True)
    w = minitorch.where(total != 0, w / minitorch.where(total != 0, total, 1.0), w)
    return w.to(like.dtype)


def _resize_antialiased(input: Tensor, output_size: List[int], align_corners: bool, scales: list,
                        mode: str) -> Tensor:
    """interpolate(..., antialias=True) of a 4-D input (PyTorch's _upsample_{bilinear,bicubic,
    lanczos}2d_aa): separable, so one matrix product per spatial axis, (out_h, H) @ x @ (out_w, W)^T;
    its gradient is the products'."""
    if not input.is_floating_point():  # PyTorch's CPU kernel has a uint8 path too; minitorch does not
        from minitorch._aliases import _NAMES

        raise NotImplementedError(f"\"compute_index_ranges_weights\" not implemented for '{_NAMES[input.dtype]}'")
    rows = _aa_weights(input.size(2), output_size[0], align_corners, scales[0], mode, input)
    cols = _aa_weights(input.size(3), output_size[1], align_corners, scales[1], mode, input)
    return rows.matmul(input).matmul(cols.t())


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
