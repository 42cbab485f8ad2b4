"""The random functions whose overloads Python binds: randint and randint_like (randint(high,
size) and randint(low, high, size)) and normal (tensor means and deviations, or numbers and a
size). Only the binding of arguments is here; the values come from one C op each:
_C.randint(low, high, size) (empty, then random_ in place), _C.normal(mean, std) or normal_."""
from __future__ import annotations

from typing import Any, Sequence, Tuple

from . import _C
from ._checks import _to_out


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


def randint(*args: Any, generator: Any = None, out: Any = None, dtype: Any = None, device: Any = None,
            requires_grad: bool = False, layout: Any = None, pin_memory: bool = False,
            **kwargs: Any) -> "_C.TensorBase":
    """Uniform integers in [low, high) of shape size; low defaults to 0; dtype int64 unless given."""
    b = _bind("randint", args, kwargs, ("low", "high", "size"))
    return _to_out(_C.randint(b["low"], b["high"], b["size"], generator=generator, dtype=dtype, device=device,
                              requires_grad=requires_grad, layout=layout, pin_memory=pin_memory), out)


def randint_like(input: "_C.TensorBase", *args: Any, generator: Any = None, dtype: Any = None,
                 device: Any = None, requires_grad: bool = False, layout: Any = None, pin_memory: bool = False,
                 memory_format: Any = None, **kwargs: Any) -> "_C.TensorBase":
    """randint(low, high, input.shape) with input's dtype and device unless given, laid out as
    memory_format says (preserve_format by default: input's strides where it is dense)."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"randint_like(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    from . import _memory_format

    fmt = _memory_format.preserve_format if memory_format is None else memory_format
    _memory_format._check("randint_like", fmt)
    b = _bind("randint_like", args, kwargs, ("low", "high"))
    strides = _memory_format._dense_strides(input, fmt)
    options = dict(generator=generator, dtype=dtype if dtype is not None else input.dtype,
                   device=device if device is not None else input.device, layout=layout, pin_memory=pin_memory)
    if strides is None:
        return _C.randint(b["low"], b["high"], input.shape, requires_grad=requires_grad, **options)
    flat = _C.randint(b["low"], b["high"], (input.numel(),), **options)
    return flat.as_strided(input.shape, strides).requires_grad_(requires_grad)


def normal(mean: Any, std: Any = 1.0, size: Any = None, *, generator: Any = None, out: Any = None, dtype: Any = None,
           device: Any = None, requires_grad: bool = False, layout: Any = None,
           pin_memory: bool = False) -> "_C.TensorBase":
    """Draws from N(mean, std**2), as torch.normal's overloads: normal(Tensor mean, Tensor std),
    normal(Tensor mean, float std=1), normal(float mean, Tensor std) (the tensors broadcast;
    the result has mean's dtype, std's for a float mean), and normal(float mean, float std,
    size) with the factory arguments."""
    numbers = not isinstance(mean, _C.TensorBase) and not isinstance(std, _C.TensorBase)
    if numbers:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected one of: "
                            "(Tensor mean, Tensor std), (Tensor mean, float std), (float mean, Tensor std), "
                            "(float mean, float std, tuple of ints size)")
        drawn = _C.empty(size, dtype=dtype, device=device, layout=layout, pin_memory=pin_memory)
        drawn.normal_(mean, std, generator=generator)
        return _to_out(drawn.requires_grad_(requires_grad), out)
    if size is not None or dtype is not None or device is not None or requires_grad:
        raise TypeError("normal() received an invalid combination of arguments: a tensor mean or std "
                        "takes no size, dtype, device or requires_grad")
    return _to_out(_C.normal(mean, std, generator=generator), out)


__all__: Sequence[str] = ["normal", "randint", "randint_like"]
