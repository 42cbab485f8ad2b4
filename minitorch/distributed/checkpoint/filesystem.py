"""distributed.checkpoint's storage on a filesystem: a checkpoint is a folder holding `.metadata`
(a pickled Metadata: for each flattened key, its dtype, global shape and the chunks it was saved
in, and where each chunk's bytes lie) and the data files `__<rank>_0.distcp`, each rank's chunks'
raw bytes one after another (a chunk's elements in row-major order, any other value pickled).
The classes are named as PyTorch's; the files are minitorch's own: PyTorch's checkpoints are not
readable here, nor ours there."""
from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

import minitorch

__all__ = ["BytesStorageMetadata", "ChunkStorageMetadata", "FileSystemReader", "FileSystemWriter", "Metadata",
           "MetadataIndex", "TensorProperties", "TensorStorageMetadata"]

_METADATA = ".metadata"


@dataclass(frozen=True)
class MetadataIndex:
    """A chunk of a key: its fully qualified name and where the chunk starts in the tensor."""

    fqn: str
    offset: Optional[Tuple[int, ...]] = None
    index: Optional[int] = None


@dataclass
class ChunkStorageMetadata:
    offsets: Tuple[int, ...]
    sizes: Tuple[int, ...]


@dataclass
class TensorProperties:
    dtype: str  # minitorch's name of it ("float32")


@dataclass
class TensorStorageMetadata:
    properties: TensorProperties
    size: Tuple[int, ...]
    chunks: List[ChunkStorageMetadata] = field(default_factory=list)


@dataclass
class BytesStorageMetadata:
    pass


@dataclass
class _StorageInfo:
    relative_path: str
    offset: int
    length: int


@dataclass
class Metadata:
    """What a checkpoint holds: its flattened keys (state_dict_metadata) and where each chunk's
    bytes are (storage_data, by MetadataIndex)."""

    state_dict_metadata: Dict[str, Union[TensorStorageMetadata, BytesStorageMetadata]] = field(default_factory=dict)
    planner_data: Any = None
    storage_data: Dict[MetadataIndex, _StorageInfo] = field(default_factory=dict)


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
    when overwrite)."""

    def __init__(self, path: Union[str, os.PathLike], single_file_per_rank: bool = True, sync_files: bool = True,
                 thread_count: int = 1, per_thread_copy_ahead: int = 10_000_000,
                 cache_staged_state_dict: bool = False, overwrite: bool = True) -> None:
        super().__init__(path)
        self.sync_files = sync_files
        self.overwrite = overwrite

    def check(self) -> None:
        if not self.overwrite and os.path.exists(os.path.join(self.path, _METADATA)):
            raise RuntimeError(f"Checkpoint already exists and overwrite=False: {self.path}")

    def write_data(self, items: List[Tuple[MetadataIndex, Any]], rank: int) -> Dict[MetadataIndex, _StorageInfo]:
        """Writes this rank's chunks (a tensor's chunk, or any other value) into its data file;
        returns where each one went."""
        os.makedirs(self.path, exist_ok=True)
        name = f"__{rank}_0.distcp"
        target = os.path.join(self.path, name)
        where: Dict[MetadataIndex, _StorageInfo] = {}
        offset = 0
        with open(target + ".tmp", "wb") as f:
            for index, value in items:
                if isinstance(value, minitorch.Tensor):
                    raw = _raw(value.detach().cpu().contiguous())
                else:
                    raw = np.frombuffer(pickle.dumps(value), dtype=np.uint8)
                f.write(raw.tobytes())
                where[index] = _StorageInfo(name, offset, raw.size)
                offset += raw.size
            if self.sync_files:
                f.flush()
                os.fsync(f.fileno())
        os.replace(target + ".tmp", target)
        return where

    def finish(self, md: Metadata) -> None:
        tmp = os.path.join(self.path, _METADATA + ".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(md, f)
        os.replace(tmp, os.path.join(self.path, _METADATA))


class FileSystemReader(_Folder):
    """Reads a checkpoint that FileSystemWriter wrote into the folder path."""

    def read_metadata(self) -> Metadata:
        path = os.path.join(self.path, _METADATA)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
        with open(path, "rb") as f:
            return pickle.load(f)

    def read(self, info: _StorageInfo, entry=None, sizes: Optional[Tuple[int, ...]] = None) -> Any:
        """The value stored at info: a CPU tensor of entry's dtype and shape sizes (a chunk), or
        the object."""
        raw = np.fromfile(os.path.join(self.path, info.relative_path), dtype=np.uint8, count=info.length,
                          offset=info.offset)
        if not isinstance(entry, TensorStorageMetadata):
            return pickle.loads(raw.tobytes())
        t = minitorch.empty(sizes, dtype=getattr(minitorch, entry.properties.dtype))
        if t.numel():
            _raw(t)[:] = raw
        return t


def _raw(t) -> np.ndarray:
    """A contiguous CPU tensor's bytes (of any dtype, bfloat16 included), sharing its memory."""
    if t.numel() == 0:
        return np.empty(0, dtype=np.uint8)
    return np.asarray(memoryview(t.reshape(-1).view(minitorch.uint8)))


def _storage(checkpoint_id: Optional[Union[str, os.PathLike]], storage, cls):
    if storage is not None:
        if checkpoint_id is not None:
            storage.reset(checkpoint_id)
        return storage
    if not checkpoint_id:
        raise RuntimeError("`checkpoint_id` must be specified if storage_reader/storage_writer is None.")
    return cls(checkpoint_id)
