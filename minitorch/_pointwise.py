"""The everyday functions whose result is a Python value or whose arguments PyTorch binds
before any op runs: equal and allclose (a bool from the ops eq and isclose), as_tensor (a
tensor that shares what it can), and the Tensor methods of ops whose schema puts self later
(polygamma) or that pick an overload (view(dtype), type_as). Each is one or two calls into _C.
"""
from __future__ import annotations

import numpy as np

from . import _C, _python_ops


def _expect_tensor(fname, name, position, value):
    if not isinstance(value, _C.TensorBase):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def equal(input, other) -> bool:
    """True if input and other have the same size and elements (compared in their promoted
    dtype; NaN is unequal to itself); aten.equal for __torch_dispatch__."""
    from . import overrides

    if overrides.has_torch_function_variadic(input, other):  # a quantized tensor compares its own way
        return overrides.handle_torch_function(equal, (input, other), input, other)
    if _python_ops.wanted(input, other):
        return _python_ops.dispatch("equal", _equal, (input, other), {})
    return _equal(input, other)


def _equal(input, other) -> bool:
    _expect_tensor("equal", "input", 1, input)
    _expect_tensor("equal", "other", 2, other)
    if input.device != other.device:
        raise RuntimeError(f"Cannot compare two tensors on different devices. Got: {input.device} "
                           f"and {other.device}")
    if input.shape != other.shape:
        return False
    if input.dtype.is_floating_point and input.dtype.itemsize == 1:  # PyTorch's kernel has no float8 loop
        from ._aliases import _NAMES

        raise NotImplementedError(f'"equal_notnan_cpu" not implemented for \'{_NAMES[input.dtype]}\'')
    return bool(_C.eq(input, other).all())


def allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    """isclose(input, other, rtol, atol, equal_nan).all() as a bool; aten.allclose for
    __torch_dispatch__."""
    if _python_ops.wanted(input, other):
        args = _python_ops.trimmed((input, other, rtol, atol, equal_nan), (1e-05, 1e-08, False))
        return _python_ops.dispatch("allclose", _allclose, args, {})
    return _allclose(input, other, rtol, atol, equal_nan)


def _allclose(input, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return bool(_C.isclose(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan).all())


def as_tensor(data, dtype=None, device=None):
    """data as a tensor without a copy where it can: a tensor of that dtype and device is
    returned itself, a NumPy array on the CPU shares its memory (as from_numpy); anything else
    is copied (as tensor)."""
    if isinstance(data, _C.TensorBase):
        return data.to(dtype=dtype, device=device)
    if isinstance(data, np.ndarray):
        return _C.from_numpy(data).to(dtype=dtype, device=device)
    return _C.tensor(data, dtype=dtype, device=device)


# ---- Tensor methods ----

_view = _C.TensorBase.view


def view(self, *args, **kwargs):
    """view(*shape), or view(dtype): the same bytes read as another dtype."""
    try:
        return _view(self, *args, **kwargs)
    except TypeError:
        if (len(args) == 1 and isinstance(args[0], _C.dtype) and not kwargs) or (not args and "dtype" in kwargs):
            return _C.view_dtype(self, *args, **kwargs)
        raise


def type_as(self, other):
    """self in other's dtype and on its device (self itself if it already is)."""
    _expect_tensor("type_as", "other", 1, other)
    return self.to(dtype=other.dtype, device=other.device)


def polygamma(self, n):
    return _C.polygamma(n, self)


def tensor_equal(self, other) -> bool:
    return equal(self, other)


def tensor_allclose(self, other, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
    return allclose(self, other, rtol, atol, equal_nan)
