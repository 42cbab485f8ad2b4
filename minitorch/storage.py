"""Storages, as torch.storage: UntypedStorage (a tensor's memory as bytes), TypedStorage (the same
memory as elements of one dtype; deprecated in PyTorch, as here) and the legacy FloatStorage,
LongStorage, ... classes.

A storage object holds a 1-d tensor over every byte of the memory (TensorBase._storage_bytes()):
uint8 for UntypedStorage, viewed as its dtype for TypedStorage. Reads and writes go through that
tensor, so a write through a storage is seen by every tensor on the same memory and the other way
round, as in PyTorch. Element access is one op call, as any indexing."""
from __future__ import annotations

import warnings
from typing import Any

from . import _C

_told_typed = False


def _warn_typed() -> None:
    global _told_typed
    if not _told_typed:
        _told_typed = True
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
                      "only storage class. To access UntypedStorage directly, use tensor.untyped_storage() instead "
                      "of tensor.storage()", UserWarning, stacklevel=3)


class _StorageBase:
    """What both kinds share: self._data is the 1-d tensor of the storage's elements."""

    _data: Any

    def size(self) -> int:
        return self._data.numel()

    def __len__(self) -> int:
        return self._data.numel()

    def nbytes(self) -> int:
        return self._data.numel() * self._data.element_size()

    def element_size(self) -> int:
        return self._data.element_size()

    def data_ptr(self) -> int:
        return self._data.data_ptr()

    @property
    def device(self):
        return self._data.device

    @property
    def is_cuda(self) -> bool:
        return self._data.device.type == "cuda"

    @property
    def is_sparse(self) -> bool:
        return False

    def tolist(self) -> list:
        return self._data.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def _index(self, idx: int) -> int:
        n = self._data.numel()
        if not -n <= idx < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return idx % n if n else idx

    def __setitem__(self, idx, value) -> None:
        if isinstance(idx, int):
            idx = self._index(idx)
        self._data[idx] = value

    def fill_(self, value):
        self._data.fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        src = source._data if isinstance(source, _StorageBase) else source
        self._data.copy_(src.reshape(-1).view(self._data.dtype) if src.dtype != self._data.dtype else src)
        return self

    def is_shared(self) -> bool:
        from .multiprocessing import reductions

        return self.is_cuda or reductions._region(self._data) is not None

    def share_memory_(self):
        """CUDA storages and those already shared are left as they are. Moving an existing CPU
        storage into shared memory under every tensor that views it is not possible here:
        Tensor.share_memory_() shares a tensor's memory (its new storage is then shared)."""
        if self.is_shared():
            return self
        raise RuntimeError("minitorch cannot move an existing storage into shared memory: call "
                           "Tensor.share_memory_() on the tensor, then take its storage")

    def __repr__(self) -> str:
        lines = [f" {v}" for v in self.tolist()]
        return "\n".join(lines + [f"[{self._describe()} of size {self.size()}]"])

    __str__ = __repr__


class UntypedStorage(_StorageBase):
    """The bytes of a tensor's memory: UntypedStorage(n, device=None) (n uninitialised bytes),
    UntypedStorage(sequence of ints) (those bytes), or tensor.untyped_storage()."""

    def __init__(self, *args, device=None) -> None:
        if len(args) > 1:
            raise TypeError(f"UntypedStorage() takes at most 1 positional argument ({len(args)} given)")
        arg = args[0] if args else 0
        if isinstance(arg, int):
            self._data = _C.empty((arg,), dtype=_C.uint8, device=device)
        else:
            self._data = _C.tensor(list(arg), dtype=_C.uint8, device=device)

    @classmethod
    def _over(cls, data) -> "UntypedStorage":
        obj = cls.__new__(cls)
        obj._data = data
        return obj

    def _describe(self) -> str:
        return f"minitorch.storage.UntypedStorage(device={self.device})"

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return UntypedStorage._over(self._data[idx])  # the same memory, as PyTorch's
        return int(self._data[self._index(idx)].item())

    def untyped(self) -> "UntypedStorage":
        return self

    def type(self, dtype=None, non_blocking: bool = False):
        return "minitorch.storage.UntypedStorage" if dtype is None else self

    def cpu(self) -> "UntypedStorage":
        return self if not self.is_cuda else UntypedStorage._over(self._data.cpu())

    def cuda(self, device=None) -> "UntypedStorage":
        return UntypedStorage._over(self._data.cuda(device))

    def clone(self) -> "UntypedStorage":
        return UntypedStorage._over(self._data.clone())


class TypedStorage(_StorageBase):
    """A storage's memory as elements of one dtype (deprecated: untyped_storage()):
    TypedStorage(n, dtype=, device=), TypedStorage(sequence, dtype=), or tensor.storage()."""

    _fixed_dtype = None  # the legacy classes' (FloatStorage: float32)

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal: bool = False) -> None:
        if not _internal:
            _warn_typed()
        dtype = self._fixed_dtype or dtype or _C._get_default_dtype()
        if wrap_storage is not None:
            self._data = wrap_storage._data.view(dtype)
            return
        if len(args) > 1:
            raise TypeError(f"TypedStorage() takes at most 1 positional argument ({len(args)} given)")
        arg = args[0] if args else 0
        if isinstance(arg, int):
            self._data = _C.empty((arg,), dtype=dtype, device=device)
        else:
            self._data = _C.tensor(list(arg), dtype=dtype, device=device)

    @classmethod
    def _over(cls, data) -> "TypedStorage":
        obj = TypedStorage.__new__(TypedStorage)
        obj._data = data
        return obj

    @property
    def dtype(self):
        return self._data.dtype

    def _describe(self) -> str:
        return f"minitorch.storage.TypedStorage(dtype={self.dtype}, device={self.device})"

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return self._data[self._index(idx)].item()

    def untyped(self) -> UntypedStorage:
        return UntypedStorage._over(self._data.view(_C.uint8))

    def type(self, dtype=None, non_blocking: bool = False):
        if dtype is None:
            from ._legacy import type_name

            return type_name(self._data).replace("Tensor", "Storage")
        return self

    def cpu(self) -> "TypedStorage":
        return self if not self.is_cuda else TypedStorage._over(self._data.cpu())

    def clone(self) -> "TypedStorage":
        return TypedStorage._over(self._data.clone())

    def _new_tensor(self):
        """A 1-d tensor of this storage's elements, on its memory."""
        return self._data.view(-1)


# the legacy classes: a TypedStorage of a fixed dtype each
_LEGACY = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
           "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32", "ShortStorage": "int16",
           "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool", "ComplexFloatStorage": "complex64",
           "ComplexDoubleStorage": "complex128"}
LEGACY_CLASSES = {name: type(name, (TypedStorage,), {"_fixed_dtype": getattr(_C, dtype),
                                                     "__module__": "minitorch"})
                  for name, dtype in _LEGACY.items()}


def is_storage(obj, /) -> bool:
    """Whether obj is a storage (untyped, typed or legacy)."""
    return isinstance(obj, _StorageBase)


def untyped_storage(self) -> UntypedStorage:
    """Tensor.untyped_storage(): the tensor's whole memory as bytes (not only the part it views)."""
    return UntypedStorage._over(self._storage_bytes())


def storage(self) -> TypedStorage:
    """Tensor.storage(): the tensor's whole memory as elements of its dtype (deprecated)."""
    _warn_typed()
    return TypedStorage._over(self._storage_bytes().view(self.dtype))


def storage_type(self):
    """Tensor.storage_type(): the legacy storage class of the tensor's dtype (FloatStorage, ...)."""
    for name, dtype in _LEGACY.items():
        if getattr(_C, dtype) == self.dtype:
            return LEGACY_CLASSES[name]
    return TypedStorage


def set_(self, source=None, storage_offset: int = 0, size=None, stride=None):
    """Tensor.set_: self (the same object) now views other memory: nothing (source None), another
    tensor's (with its geometry), or a storage's, from storage_offset with size and stride (default:
    every element from the offset, contiguous)."""
    if self.requires_grad and self.is_leaf and _C.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if source is None:
        target = _C.empty((0,), dtype=self.dtype, device=self.device)
    elif isinstance(source, _C.TensorBase):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor of type {self.dtype}")
        target = source
    elif isinstance(source, _StorageBase):
        data = source._data.view(self.dtype) if isinstance(source, UntypedStorage) else source._data
        if data.dtype != self.dtype:
            raise RuntimeError(f"Could not set tensor of type {data.dtype} to a tensor of type {self.dtype}")
        if size is None:
            size = (data.numel() - storage_offset,)
        size = tuple(size)
        if stride is None:
            stride, step = [], 1
            for n in reversed(size):
                stride.insert(0, step)
                step *= max(n, 1)
        target = data.as_strided(size, tuple(stride), storage_offset)
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not {type(source).__name__}")
    self._set_data(target.detach())
    return self
