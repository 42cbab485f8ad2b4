"""finfo and iinfo, as torch.finfo/torch.iinfo: the numerical limits of minitorch's dtypes
(NumPy's numbers for the same IEEE and two's complement types), with PyTorch's repr and errors."""
from __future__ import annotations

import builtins

import numpy as np

from . import _C

__all__ = ["finfo", "iinfo"]

_FLOATS = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
_INTS = {"uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
         "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}


class _BFloat16Info:
    """bfloat16's limits (NumPy has no such dtype): float32's exponent with 8 significand bits."""

    bits = 16
    eps = 2.0 ** -7
    max = float((2 - 2.0 ** -7) * 2.0 ** 127)
    min = -max
    smallest_normal = 2.0 ** -126
    precision = 2


class _Float8Info:
    """A float8 format's limits (NumPy has none): 8 bits, one significant decimal digit."""

    bits = 8
    precision = 0

    def __init__(self, max: float, eps: float, smallest_normal: float):  # noqa: A002
        self.max, self.min, self.eps, self.smallest_normal = max, -max, eps, smallest_normal


# max, eps and smallest normal of each format, as PyTorch's finfo gives them (c10's
# numeric_limits: e5m2fnuz's epsilon is 2^-3, one step below its 2 stored mantissa bits' 2^-2)
_FLOAT8 = {
    "float8_e4m3fn": _Float8Info(448.0, 2.0 ** -3, 2.0 ** -6),
    "float8_e5m2": _Float8Info(57344.0, 2.0 ** -2, 2.0 ** -14),
    "float8_e4m3fnuz": _Float8Info(240.0, 2.0 ** -3, 2.0 ** -7),
    "float8_e5m2fnuz": _Float8Info(57344.0, 2.0 ** -3, 2.0 ** -15),
}


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


class finfo:
    """Floating point limits of a dtype (the default dtype when none is given)."""

    def __init__(self, type=None):  # noqa: A002 (PyTorch's name)
        if type is None:
            from . import get_default_dtype

            type = get_default_dtype()
        if not isinstance(type, _C.dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not {builtins.type(type).__name__}")
        if _name(type) not in _FLOATS and _name(type) != "bfloat16" and _name(type) not in _FLOAT8:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        info = (_BFloat16Info if _name(type) == "bfloat16" else _FLOAT8[_name(type)] if _name(type) in _FLOAT8
                else np.finfo(_FLOATS[_name(type)]))
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = _name(type)

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})"
        )

    def __eq__(self, other) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None


class iinfo:
    """Integer limits of an integer dtype."""

    def __init__(self, type):  # noqa: A002 (PyTorch's name)
        if not isinstance(type, _C.dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be torch.dtype, not {builtins.type(type).__name__}")
        if _name(type) == "bool":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if _name(type) not in _INTS:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(_INTS[_name(type)])
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype = _name(type)

    def __repr__(self) -> str:
        return f"iinfo(min={float(self.min):g}, max={float(self.max):g}, dtype={self.dtype})"

    def __eq__(self, other) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None



finfo.__module__ = iinfo.__module__ = "minitorch"  # as torch.finfo's and torch.iinfo's
