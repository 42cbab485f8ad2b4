"""PyTorch's legacy tensor constructors and types, still common in published code:
`Tensor(2, 3)`, `Tensor([1, 2])`, `FloatTensor`/`LongTensor`/... (constructors, and classes
for `isinstance` and `t.type(...)`), and `autograd.Variable`. They make tensors through the
factories; nothing here computes."""
from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np

from . import _C

# name -> dtype, PyTorch's legacy type names
_DTYPES = {"Float": _C.float32, "Double": _C.float64, "Long": _C.int64, "Int": _C.int32, "Bool": _C.bool,
           "Half": _C.float16, "BFloat16": _C.bfloat16, "Byte": _C.uint8, "Char": _C.int8, "Short": _C.int16}
_NAMES = {repr(dt): name for name, dt in _DTYPES.items()}


def type_name(t: Any) -> str:
    """t.type(): 'minitorch.FloatTensor', 'minitorch.cuda.LongTensor', ..."""
    from ._aliases import _NAMES as scalar_names  # the shell dtypes have a name and no class

    where = "minitorch.cuda." if t.device.type == "cuda" else "minitorch."
    return f"{where}{_NAMES.get(repr(t.dtype)) or scalar_names[t.dtype]}Tensor"


def _sizes(args: tuple) -> Optional[tuple]:
    """args as a size (ints, or one Size), or None when they are data."""
    if len(args) == 1 and isinstance(args[0], _C.Size):
        return tuple(args[0])
    if all(isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in args):
        return tuple(int(a) for a in args)
    return None


def new(dtype: Optional[Any], device_type: str, args: tuple, device: Any = None) -> Any:
    """The legacy constructor of type (dtype, device_type); dtype None is Tensor's own, which
    takes a tensor of any dtype as it is and makes everything else in the default dtype."""
    from ._tensor import Tensor

    if device is None:
        device = device_type if dtype is not None else _default_type_device
    make = dtype if dtype is not None else _C._get_default_dtype()
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if dtype is not None and other.dtype != dtype:
            raise TypeError(f"expected {make} on {device_type} (got {other.dtype} on {other.device.type})")
        return _C.alias(other)  # shares other's memory, as PyTorch's legacy constructor
    size = _sizes(args) if args else (0,)
    if size is not None:
        bad = [s for s in size if s < 0]
        if bad:
            raise RuntimeError(f"Trying to create tensor with negative dimension {bad[0]}: {list(size)}")
        return _C.empty(size, dtype=make, device=device)
    if len(args) == 1:
        data = args[0]
        if isinstance(data, (numbers.Number, str)) or data is None:
            raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
        if isinstance(data, np.ndarray):
            # PyTorch's legacy constructors do not copy a NumPy array: the tensor shares its memory
            # where dtype and device already agree (a write on one side shows on the other), and
            # a read-only array gets from_numpy's warning
            return _C.from_numpy(data).to(device=device, dtype=make)
        return _C.tensor(data, dtype=make, device=device)
    got = ", ".join(type(a).__name__ for a in args)
    raise TypeError(f"new() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                    " * (*, minitorch.device device = None)\n * (Tensor other)\n"
                    " * (tuple of ints size, *, minitorch.device device = None)\n"
                    " * (object data, *, minitorch.device device = None)")


class _TensorType(type):
    """The class of FloatTensor and its kin: calling one makes a tensor of its dtype and device;
    isinstance(t, FloatTensor) asks t's dtype and device, as PyTorch's torch.tensortype does."""

    def __call__(cls, *args: Any, device: Any = None) -> Any:
        return new(cls.dtype, cls.device_type, args, device)

    def __instancecheck__(cls, obj: Any) -> bool:
        from ._tensor import Tensor

        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == cls.device_type

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _types(device_type: str, module: str) -> dict:
    out = {}
    for name, dt in _DTYPES.items():
        cls = _TensorType(f"{name}Tensor", (), {"dtype": dt, "device_type": device_type, "is_cuda": device_type == "cuda",
                                                "__module__": module})
        out[cls.__name__] = cls
    return out


CPU_TYPES = _types("cpu", "minitorch")
CUDA_TYPES = _types("cuda", "minitorch.cuda")


def parse_type(spec: Any) -> Optional[_TensorType]:
    """A legacy type given to t.type(): the class, or its name ('torch.' or 'minitorch.' prefix)."""
    if isinstance(spec, _TensorType):
        return spec
    if isinstance(spec, str):
        for prefix, types in (("minitorch.cuda.", CUDA_TYPES), ("torch.cuda.", CUDA_TYPES),
                              ("minitorch.", CPU_TYPES), ("torch.", CPU_TYPES)):
            if spec.startswith(prefix):
                found = types.get(spec[len(prefix):])
                if found is None:
                    break
                return found
        raise ValueError(f"invalid type: '{spec}'")
    return None


_default_type_device = "cpu"  # where Tensor(...) makes tensors: set_default_tensor_type's


def set_default_type(t: Any) -> None:
    """set_default_tensor_type(t): the default dtype from a float legacy type (or its name), and
    its device for Tensor(...) and, for a CUDA type, for the factories."""
    global _default_type_device
    if isinstance(t, str):
        if t.startswith("torch.") or t.startswith("minitorch."):
            t = parse_type(t)
        else:
            raise ModuleNotFoundError(f"No module named '{t.split('.')[0]}'")
    if not isinstance(t, _TensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C._set_default_dtype(t.dtype)
    if t.device_type == "cuda" or _default_type_device == "cuda":
        from ._device import set_default_device

        set_default_device("cuda" if t.device_type == "cuda" else None)
    _default_type_device = t.device_type


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        from ._tensor import Tensor

        return isinstance(obj, Tensor)


class Variable(metaclass=_VariableMeta):
    """autograd.Variable(data, requires_grad=False): since PyTorch 0.4 a Variable is a Tensor;
    this returns a tensor sharing data's memory with requires_grad set."""

    def __new__(cls, data: Any, requires_grad: bool = False, volatile: bool = False) -> Any:
        from ._tensor import Tensor

        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)
