"""torch.distributed.checkpoint (dcp): save a state_dict to a folder from every rank, and load it
back into a state_dict's tensors in place, after a restart and on any number of ranks.

A state_dict is flattened into dotted keys ("model.0.weight", "optim.state.0.weight.exp_avg");
values with state_dict()/load_state_dict() at its top level (Stateful: a module, an app state)
are saved through state_dict() and given the loaded one through load_state_dict(). Every rank
holds the same values (a model's full state, what get_state_dict gives for FSDP here): rank 0
writes them and the others wait for it, as PyTorch's planner writes a replicated value once.
Loading reads every key the given state_dict has; one missing from the checkpoint, or of another
shape, fails as PyTorch's do (CheckpointException)."""
from __future__ import annotations

import os
import traceback
from typing import Any, Dict, Optional, Union

import minitorch
from minitorch.distributed.checkpoint.api import CheckpointException
from minitorch.distributed.checkpoint.filesystem import (BytesStorageMetadata, FileSystemReader, FileSystemWriter,
                                                         Metadata, TensorStorageMetadata, _storage)
from minitorch.distributed.checkpoint.stateful import Stateful

__all__ = ["BytesStorageMetadata", "CheckpointException", "FileSystemReader", "FileSystemWriter", "Metadata",
           "Stateful", "TensorStorageMetadata", "async_save", "load", "save"]


def _nested(v: Any) -> bool:
    """Whether v is walked into (a dict, or a list holding tensors or dicts) rather than saved whole."""
    if isinstance(v, dict):
        return True
    return isinstance(v, list) and any(isinstance(x, (minitorch.Tensor, dict)) or _nested(x) for x in v)


def _items(obj: Any):
    return obj.items() if isinstance(obj, dict) else enumerate(obj)


def _flatten(obj: Any, prefix: str, out: Dict[str, Any]) -> Dict[str, Any]:
    for k, v in _items(obj):
        key = f"{prefix}{k}"
        if _nested(v):
            _flatten(v, key + ".", out)
        else:
            out[key] = v
    return out


def _rank(process_group, no_dist: bool):
    from minitorch import distributed as dist

    if no_dist or not dist.is_initialized():
        return 0, 1
    return dist.get_rank(process_group), dist.get_world_size(process_group)


def _barrier(process_group, world: int) -> None:
    if world > 1:
        from minitorch import distributed as dist

        dist.barrier(group=process_group)


def _failed(step: str, rank: int, e: BaseException) -> CheckpointException:
    return CheckpointException(step, {rank: (e, traceback.extract_tb(e.__traceback__))})


def _stated(state_dict: Dict[str, Any]) -> Dict[str, Any]:
    return {k: (v.state_dict() if isinstance(v, Stateful) else v) for k, v in state_dict.items()}


def save(state_dict: Dict[str, Any], *, checkpoint_id: Union[str, os.PathLike, None] = None,
         storage_writer: Optional[FileSystemWriter] = None, planner: Any = None, process_group: Any = None,
         no_dist: bool = False) -> Metadata:
    """Writes state_dict into the checkpoint (every rank of process_group calls it)."""
    writer = _storage(checkpoint_id, storage_writer, FileSystemWriter)
    rank, world = _rank(process_group, no_dist)
    flat = _flatten(_stated(state_dict), "", {})  # on every rank: an FSDP state_dict() gathers
    md = None
    if rank == 0:
        try:
            md = writer.write(flat, rank)
        except Exception as e:  # noqa: BLE001  (the other ranks wait at the barrier; this one raises)
            err = _failed("write", rank, e)
            _barrier(process_group, world)
            raise err from e
    _barrier(process_group, world)
    return md if md is not None else FileSystemReader(writer.path).read_metadata()


def async_save(state_dict: Dict[str, Any], *, checkpoint_id: Union[str, os.PathLike, None] = None,
               storage_writer: Optional[FileSystemWriter] = None, planner: Any = None, process_group: Any = None,
               **kwargs: Any):
    """save, done before it returns; the Future it gives is complete (minitorch saves synchronously)."""
    from minitorch.futures import Future

    fut = Future()
    fut.set_result(save(state_dict, checkpoint_id=checkpoint_id, storage_writer=storage_writer, planner=planner,
                        process_group=process_group))
    return fut


def _load_into(obj: Any, prefix: str, md: Metadata, reader: FileSystemReader) -> None:
    for k, v in list(_items(obj)):
        key = f"{prefix}{k}"
        if _nested(v):
            _load_into(v, key + ".", md, reader)
            continue
        entry = md.state_dict_metadata.get(key)
        if entry is None:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {key}.")
        if isinstance(v, minitorch.Tensor):
            if not isinstance(entry, TensorStorageMetadata):
                raise RuntimeError(f"Checkpoint holds a non-tensor value for the tensor {key}")
            if tuple(v.shape) != tuple(entry.size):
                raise ValueError(f"Size mismatch between saved {minitorch.Size(entry.size)} and current: "
                                 f"{v.size()} for {key}")
            with minitorch.no_grad():
                v.copy_(reader.read(entry))
        else:
            obj[k] = reader.read(entry)


def load(state_dict: Dict[str, Any], *, checkpoint_id: Union[str, os.PathLike, None] = None,
         storage_reader: Optional[FileSystemReader] = None, planner: Any = None, process_group: Any = None,
         no_dist: bool = False) -> None:
    """Loads the checkpoint into state_dict in place: its tensors are copied into, its other values
    replaced, its Stateful values given their state through load_state_dict (every rank calls it)."""
    reader = _storage(checkpoint_id, storage_reader, FileSystemReader)
    rank, _ = _rank(process_group, no_dist)
    try:
        md = reader.read_metadata()
        stated = _stated(state_dict)
        _load_into(stated, "", md, reader)
    except Exception as e:  # noqa: BLE001  (PyTorch's load reports a rank's failure so)
        raise _failed("load", rank, e) from e
    for k, v in state_dict.items():
        if isinstance(v, Stateful):
            v.load_state_dict(stated[k])
        else:
            state_dict[k] = stated[k]


from minitorch.distributed.checkpoint import state_dict  # noqa: E402,F401  (dcp.state_dict's helpers)
