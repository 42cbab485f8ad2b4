"""distributed.checkpoint's storage on a filesystem, in PyTorch's format: a checkpoint is a
folder holding `.metadata` (a pickled Metadata, written with PyTorch's class names: for each
flattened key, its dtype, global shape and the chunks it was saved in, and where each chunk's
bytes lie) and the data files `__<rank>_0.distcp`, each rank's items one after another, each as
torch.save writes it (a chunk's tensor, or any other value). So torch.distributed.checkpoint
loads what minitorch saves, and the other way round, without minitorch importing torch: the
metadata is written by name (serialization's pickler, which writes torch's globals so) and read by
an unpickler that maps PyTorch's classes onto these and refuses any other global."""
from __future__ import annotations

import io
import os
import pathlib
import pickle
from dataclasses import dataclass, field
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple, Union

import minitorch

__all__ = ["BytesStorageMetadata", "ChunkStorageMetadata", "FileSystemReader", "FileSystemWriter", "Metadata",
           "MetadataIndex", "StorageMeta", "TensorProperties", "TensorStorageMetadata"]

_METADATA = ".metadata"
_MD = "torch.distributed.checkpoint.metadata"  # where PyTorch's classes live, as the pickle names them


@dataclass(frozen=True)
class MetadataIndex:
    """A chunk of a key: its fully qualified name and where the chunk starts in the tensor."""

    fqn: str
    offset: Optional[Tuple[int, ...]] = None
    index: Optional[int] = field(hash=False, compare=False, default=None)


@dataclass
class ChunkStorageMetadata:
    offsets: Tuple[int, ...]
    sizes: Tuple[int, ...]


@dataclass
class TensorProperties:
    """A saved tensor's dtype (a minitorch dtype); the other fields are PyTorch's, deprecated there."""

    dtype: Any = None
    layout: str = "strided"
    requires_grad: bool = False
    memory_format: str = "contiguous_format"
    pin_memory: bool = False

    def __setstate__(self, state: tuple) -> None:  # PyTorch pickles it as a tuple
        self.dtype, self.layout, self.requires_grad, self.memory_format, self.pin_memory = state


@dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: Tuple[int, ...]
    chunks: List[ChunkStorageMetadata] = field(default_factory=list)


@dataclass
class BytesStorageMetadata:
    pass


@dataclass
class StorageMeta:
    checkpoint_id: Any = None
    save_id: Optional[str] = None
    load_id: Optional[str] = None
    modules: List[str] = field(default_factory=list)


@dataclass
class _StorageInfo:
    relative_path: str
    offset: int
    length: int
    transform_descriptors: Optional[Any] = None


@dataclass
class Metadata:
    """What a checkpoint holds: its flattened keys (state_dict_metadata), each key's path in the
    nested state_dict (planner_data) and where each chunk's bytes are (storage_data)."""

    state_dict_metadata: Dict[str, Union[TensorStorageMetadata, BytesStorageMetadata]] = field(default_factory=dict)
    planner_data: Any = None
    storage_data: Dict[MetadataIndex, _StorageInfo] = field(default_factory=dict)
    storage_meta: Optional[StorageMeta] = None
    version: Optional[str] = "1.0.0"


# ---- .metadata as PyTorch pickles it ----

_TORCH_NAMES = {Metadata: (_MD, "Metadata"), TensorStorageMetadata: (_MD, "TensorStorageMetadata"),
                TensorProperties: (_MD, "TensorProperties"), ChunkStorageMetadata: (_MD, "ChunkStorageMetadata"),
                BytesStorageMetadata: (_MD, "BytesStorageMetadata"), StorageMeta: (_MD, "StorageMeta"),
                MetadataIndex: (_MD, "MetadataIndex"),
                _StorageInfo: ("torch.distributed.checkpoint.filesystem", "_StorageInfo")}
_MEMORY_FORMATS = ("contiguous_format", "channels_last", "preserve_format")  # _MEM_FORMAT_ENCODING's values


def _write_dataclass(pickler: pickle._Pickler, obj: Any) -> None:
    """obj as pickle writes PyTorch's dataclass of that name: its class by name, NEWOBJ, BUILD
    with its state (TensorProperties: a tuple; _StorageInfo: its fields that are not None)."""
    from minitorch.serialization._torch_format import _Global

    pickler.save(_Global(*_TORCH_NAMES[type(obj)]))
    pickler.write(pickle.EMPTY_TUPLE + pickle.NEWOBJ)
    pickler.memoize(obj)
    if isinstance(obj, TensorProperties):
        layout = _Reduce(_Global("torch.serialization", "_get_layout"), (f"torch.{obj.layout}",))
        memory = _Reduce(_Global(_MD, "_MEM_FORMAT_ENCODING"), (_MEMORY_FORMATS.index(obj.memory_format),))
        state: Any = (obj.dtype, layout, obj.requires_grad, memory, obj.pin_memory)
    else:
        state = {k: v for k, v in obj.__dict__.items() if not (isinstance(obj, _StorageInfo) and v is None)}
    pickler.save(state)
    pickler.write(pickle.BUILD)


class _Reduce:
    """func(*args) in the pickle (func a _Global)."""

    def __init__(self, func: Any, args: tuple) -> None:
        self.func, self.args = func, args


def _write_reduce(pickler: pickle._Pickler, obj: _Reduce) -> None:
    pickler.save(obj.func)
    pickler.save(obj.args)
    pickler.write(pickle.REDUCE)
    pickler.memoize(obj)


def dump_metadata(md: Metadata, f) -> None:
    """md pickled as torch.distributed.checkpoint pickles its Metadata (protocol 4)."""
    from minitorch.serialization._common import StorageTable
    from minitorch.serialization._torch_format import _TorchPickler

    pickler = _TorchPickler(f, 4, StorageTable())
    for cls in _TORCH_NAMES:
        pickler.dispatch[cls] = _write_dataclass
    pickler.dispatch[_Reduce] = _write_reduce
    pickler.dump(md)


class _MetadataUnpickler(pickle.Unpickler):
    """Reads a `.metadata` (PyTorch's or minitorch's): PyTorch's checkpoint classes become these,
    torch.Size minitorch.Size, its dtypes minitorch's; any other global is refused."""

    def find_class(self, module: str, name: str) -> Any:
        ours = {v: k for k, v in _TORCH_NAMES.items()}
        if (module, name) in ours:
            return ours[(module, name)]
        if (module, name) == (_MD, "_MEM_FORMAT_ENCODING"):
            return _MEMORY_FORMATS.__getitem__
        if (module, name) == ("torch.serialization", "_get_layout"):
            return lambda text: text.rsplit(".", 1)[-1]
        if module == "torch" and name == "Size":
            return minitorch.Size
        if module == "torch" and isinstance(getattr(minitorch, name, None), minitorch.dtype):
            return getattr(minitorch, name)
        if module == "pathlib" and name in ("Path", "PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath"):
            return getattr(pathlib, name)
        if module in ("collections", "builtins") and name in ("OrderedDict", "set", "frozenset"):
            return getattr(__import__(module), name)
        raise pickle.UnpicklingError(f"a checkpoint's metadata may not name the global {module}.{name}")


class _Folder:
    """A checkpoint's folder, which checkpoint_id (save's, load's) may name anew."""

    def __init__(self, path: Union[str, os.PathLike]) -> None:
        self.path = os.fspath(path)

    def reset(self, checkpoint_id: Union[str, os.PathLike, None] = None) -> None:
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id: Union[str, os.PathLike]) -> bool:
        return isinstance(checkpoint_id, (str, os.PathLike))


class FileSystemWriter(_Folder):
    """Writes a checkpoint into the folder path (made if missing; files already there are replaced
    when overwrite); each item through the _extensions' transforms (ZStandard: compressed)."""

    def __init__(self, path: Union[str, os.PathLike], single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 cache_staged_state_dict: bool = False, overwrite: bool = True,
                 _extensions: Optional[Sequence[Any]] = None, serialization_format: Any = None) -> None:
        super().__init__(path)
        self.sync_files = sync_files
        self.overwrite = overwrite
        self.extensions = () if _extensions is None else tuple(_extensions)
        if serialization_format is not None and getattr(serialization_format, "value", serialization_format) \
                != "torch_save":
            raise NotImplementedError(f"minitorch writes checkpoints as torch.save does only, not "
                                      f"{serialization_format}")

    def _transformed(self, raw: memoryview) -> Tuple[bytes, Optional[List[str]]]:
        """raw through the extensions' transforms, and their descriptors (last applied first, as
        PyTorch records them); (raw, None) without extensions."""
        if not self.extensions:
            return raw, None
        out = io.BytesIO()
        stream = _NoClose(out)
        for ex in self.extensions:
            stream = ex.transform_to(stream)
        stream.write(raw)
        stream.close()
        return out.getbuffer(), [ex.get_descriptor() for ex in reversed(self.extensions)]

    def check(self) -> None:
        if not self.overwrite and os.path.exists(os.path.join(self.path, _METADATA)):
            raise RuntimeError(f"Checkpoint already exists and overwrite=False: {self.path}")

    def write_data(self, items: List[Tuple[MetadataIndex, Any]], rank: int) -> Dict[MetadataIndex, _StorageInfo]:
        """Writes this rank's items (a tensor's chunk, or any other value), each as torch.save
        writes it, one after another into its data file; returns where each one went."""
        os.makedirs(self.path, exist_ok=True)
        name = f"__{rank}_0.distcp"
        target = os.path.join(self.path, name)
        where: Dict[MetadataIndex, _StorageInfo] = {}
        offset = 0
        with open(target + ".tmp", "wb") as f:
            for index, value in items:
                if isinstance(value, minitorch.Tensor):  # its own storage, no more than the chunk
                    value = value.detach().cpu().contiguous().clone()
                buf = io.BytesIO()
                minitorch.save(value, buf)
                data, descriptors = self._transformed(buf.getbuffer())
                f.write(data)
                where[index] = _StorageInfo(name, offset, len(data), descriptors)
                offset += len(data)
            if self.sync_files:
                f.flush()
                os.fsync(f.fileno())
        os.replace(target + ".tmp", target)
        return where

    def finish(self, md: Metadata) -> None:
        tmp = os.path.join(self.path, _METADATA + ".tmp")
        with open(tmp, "wb") as f:
            dump_metadata(md, f)
        os.replace(tmp, os.path.join(self.path, _METADATA))


class _NoClose(io.RawIOBase):
    """A writer into raw that closing leaves open (a transform's close ends its stream only)."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__()
        self.raw = raw

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        return self.raw.write(b)


class FileSystemReader(_Folder):
    """Reads a checkpoint that FileSystemWriter (PyTorch's or minitorch's) wrote into the folder
    path; items written through transforms are read through the registry's extensions."""

    def __init__(self, path: Union[str, os.PathLike], _extension_registry: Any = None) -> None:
        super().__init__(path)
        self.extension_registry = _extension_registry

    def read_metadata(self) -> Metadata:
        path = os.path.join(self.path, _METADATA)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
        with open(path, "rb") as f:
            md = _MetadataUnpickler(f).load()
        if not isinstance(md, Metadata):
            raise RuntimeError(f"{path} holds no checkpoint Metadata")
        return md

    def read(self, info: _StorageInfo, entry=None, sizes: Optional[Tuple[int, ...]] = None) -> Any:
        """The value stored at info: a CPU tensor (a chunk), or the object (loaded as torch.load
        does with weights_only: tensors, containers and plain values)."""
        with open(os.path.join(self.path, info.relative_path), "rb") as f:
            f.seek(info.offset)
            raw = f.read(info.length)
        if info.transform_descriptors:
            from minitorch.distributed.checkpoint._extension import ExtensionRegistry

            registry = self.extension_registry or ExtensionRegistry()
            stream: IO[bytes] = io.BytesIO(raw)
            for ex in registry.from_descriptor_list(info.transform_descriptors):
                stream = ex.transform_from(stream)
            raw = stream.read()
        value = minitorch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        if isinstance(entry, TensorStorageMetadata) and sizes is not None and tuple(value.shape) != tuple(sizes):
            raise RuntimeError(f"a checkpoint chunk holds {tuple(value.shape)} elements where its metadata says "
                               f"{tuple(sizes)}")
        return value


def _storage(checkpoint_id: Optional[Union[str, os.PathLike]], storage, cls):
    if storage is not None:
        if checkpoint_id is not None:
            storage.reset(checkpoint_id)
        return storage
    if not checkpoint_id:
        raise RuntimeError("`checkpoint_id` must be specified if storage_reader/storage_writer is None.")
    return cls(checkpoint_id)
