"""make_tensor, as torch.testing.make_tensor: a tensor of random values of a shape and dtype,
uniform in [low, high) (PyTorch's default range [-9, 9] for numbers, {False, True} for bool)."""
from __future__ import annotations

import math

import minitorch

__all__ = ["make_tensor"]


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    if dtype == minitorch.bool:
        if requires_grad:
            raise ValueError("make_tensor: requires_grad must be False for integral dtype")
        result = minitorch.randint(0, 2, shape, device=device).to(minitorch.bool)
    else:
        low = -9 if low is None else low
        high = (9 if dtype.is_floating_point else 10) if high is None else high  # integers: high exclusive
        if low > high:
            raise ValueError(f"`low` must be less than or equal to `high`, but got {low} > {high}")
        if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
        if dtype.is_floating_point:
            result = minitorch.empty(shape, dtype=dtype, device=device).uniform_(low, high)
        else:
            if requires_grad:
                raise ValueError("make_tensor: requires_grad must be False for integral dtype")
            result = minitorch.randint(math.ceil(low), math.ceil(high), shape, dtype=dtype, device=device)
    if noncontiguous and result.numel() > 1:
        result = minitorch.repeat_interleave(result, 2, dim=-1)[..., ::2]
    if exclude_zero:
        replacement = 1 if not dtype.is_floating_point else minitorch.finfo(dtype).tiny
        result[result == 0] = replacement
    if dtype.is_floating_point and requires_grad:
        result.requires_grad_(True)
    return result
