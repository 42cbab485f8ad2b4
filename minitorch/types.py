"""torch.types: the type aliases annotations in PyTorch programs use (Number, Device, _size, ...)."""
from __future__ import annotations

import os
from typing import IO, Any, List, Sequence, Tuple, Union

import builtins

from . import Size, Tensor
from . import device as _device_cls
from . import dtype as _dtype_cls
from .storage import TypedStorage, UntypedStorage

__all__ = ["Number", "Device", "FileLike", "Storage"]

_bool = builtins.bool
_int = builtins.int
_float = builtins.float
_complex = builtins.complex
_str = builtins.str
_bytes = builtins.bytes
_dtype = _dtype_cls
_device = _device_cls
_size = Union[Size, List[_int], Tuple[_int, ...]]
_symsize = _size  # minitorch has no symbolic sizes

_TensorOrTensors = Union[Tensor, Sequence[Tensor]]
_TensorOrOptionalTensors = Union[Tensor, Sequence[Union[Tensor, None]]]

IntLikeType = _int
FloatLikeType = _float
BoolLikeType = _bool
Number = Union[_int, _float, _bool]
_Number = (_int, _float, _bool)  # for isinstance, as PyTorch's
Device = Union[_device, _str, _int, None]
Storage = Union[TypedStorage, UntypedStorage]
FileLike = Union[_str, os.PathLike, IO[_bytes]]
py_sym_types: Tuple[Any, ...] = ()
