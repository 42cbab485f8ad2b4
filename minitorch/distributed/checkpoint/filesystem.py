"""distributed.checkpoint's storage on a filesystem: a checkpoint is a folder holding `.metadata`
(a pickled Metadata: for each flattened key, where its bytes lie and, for a tensor, its dtype and
shape) and the data files `__<rank>_0.distcp`, the keys' raw bytes one after another (a tensor's
elements in row-major order, any other value pickled). The layout is minitorch's own: PyTorch's
checkpoints are not readable here, nor ours there."""
from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

import minitorch

__all__ = ["BytesStorageMetadata", "FileSystemReader", "FileSystemWriter", "Metadata", "TensorStorageMetadata"]

_METADATA = ".metadata"


@dataclass
class TensorStorageMetadata:
    file: str
    offset: int
    nbytes: int
    dtype: str  # minitorch's name of it ("float32")
    size: Tuple[int, ...]


@dataclass
class BytesStorageMetadata:
    file: str
    offset: int
    nbytes: int


@dataclass
class Metadata:
    """What a checkpoint holds: its flattened keys and where each one's bytes are."""

    state_dict_metadata: Dict[str, Union[TensorStorageMetadata, BytesStorageMetadata]] = field(default_factory=dict)
    storage_data: Any = None


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

    def write(self, flat: Dict[str, Any], rank: int) -> Metadata:
        """Writes the flattened state (key -> tensor or other value) and the metadata."""
        os.makedirs(self.path, exist_ok=True)
        name = f"__{rank}_0.distcp"
        target = os.path.join(self.path, name)
        if not self.overwrite and os.path.exists(os.path.join(self.path, _METADATA)):
            raise RuntimeError(f"Checkpoint already exists and overwrite=False: {self.path}")
        md = Metadata()
        offset = 0
        with open(target + ".tmp", "wb") as f:
            for key, value in flat.items():
                if isinstance(value, minitorch.Tensor):
                    host = value.detach().cpu().contiguous()
                    raw = _raw(host)
                    md.state_dict_metadata[key] = TensorStorageMetadata(name, offset, raw.size,
                                                                        str(host.dtype).rsplit(".", 1)[-1],
                                                                        tuple(host.shape))
                else:
                    raw = np.frombuffer(pickle.dumps(value), dtype=np.uint8)
                    md.state_dict_metadata[key] = BytesStorageMetadata(name, offset, raw.size)
                f.write(raw.tobytes())
                offset += raw.size
            if self.sync_files:
                f.flush()
                os.fsync(f.fileno())
        os.replace(target + ".tmp", target)
        with open(os.path.join(self.path, _METADATA + ".tmp"), "wb") as f:
            pickle.dump(md, f)
        os.replace(os.path.join(self.path, _METADATA + ".tmp"), os.path.join(self.path, _METADATA))
        return md


class FileSystemReader(_Folder):
    """Reads a checkpoint that FileSystemWriter wrote into the folder path."""

    def read_metadata(self) -> Metadata:
        path = os.path.join(self.path, _METADATA)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
        with open(path, "rb") as f:
            return pickle.load(f)

    def read(self, entry) -> Any:
        """The value an entry of the metadata describes (a tensor on the CPU, or the object)."""
        raw = np.fromfile(os.path.join(self.path, entry.file), dtype=np.uint8, count=entry.nbytes,
                          offset=entry.offset)
        if isinstance(entry, BytesStorageMetadata):
            return pickle.loads(raw.tobytes())
        t = minitorch.empty(entry.size, dtype=getattr(minitorch, entry.dtype))
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
