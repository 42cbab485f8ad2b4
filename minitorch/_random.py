"""randint and randint_like with PyTorch's overloads: randint(high, size) and
randint(low, high, size). Only the binding of arguments is here; the values come from the one C
op _C.randint(low, high, size) (empty, then random_ in place)."""
from __future__ import annotations

from typing import Any, Sequence, Tuple

from . import _C


def _bind(name: str, args: tuple, kwargs: dict, params: Tuple[str, ...]) -> dict:
    """Binds args/kwargs to params, or to params without "low" when one value is missing."""
    for key in kwargs:
        if key not in params:
            raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
    if len(args) + len(kwargs) == len(params) - 1 and "low" not in kwargs:
        params = params[1:]  # the (high, ...) overload: low=0
    if len(args) > len(params):
        raise TypeError(f"{name}() takes at most {len(params)} positional arguments but {len(args)} were given")
    bound = dict(zip(params, args))
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"{name}() got multiple values for argument '{key}'")
        bound[key] = value
    for p in params:
        if p not in bound:
            raise TypeError(f"{name}() missing 1 required positional arguments: \"{p}\"")
    bound.setdefault("low", 0)
    return bound


def randint(*args: Any, generator: Any = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, **kwargs: Any) -> "_C.TensorBase":
    """Uniform integers in [low, high) of shape size; low defaults to 0; dtype int64 unless given."""
    if generator is not None:
        raise NotImplementedError("randint(generator=...): minitorch has one default generator")
    b = _bind("randint", args, kwargs, ("low", "high", "size"))
    return _C.randint(b["low"], b["high"], b["size"], dtype=dtype, device=device, requires_grad=requires_grad)


def randint_like(input: "_C.TensorBase", *args: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False, **kwargs: Any) -> "_C.TensorBase":
    """randint(low, high, input.shape) with input's dtype and device unless given."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"randint_like(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    b = _bind("randint_like", args, kwargs, ("low", "high"))
    return _C.randint(
        b["low"], b["high"], input.shape,
        dtype=dtype if dtype is not None else input.dtype,
        device=device if device is not None else input.device,
        requires_grad=requires_grad,
    )


__all__: Sequence[str] = ["randint", "randint_like"]
