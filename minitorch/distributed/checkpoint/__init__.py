"""torch.distributed.checkpoint (dcp): save a state_dict to a folder from every rank, and load it
back into a state_dict's tensors in place, after a restart and on any number of ranks.

A state_dict is flattened into dotted keys ("model.0.weight", "optim.state.0.weight.exp_avg");
values with state_dict()/load_state_dict() at its top level (Stateful: a module, an app state)
are saved through state_dict() and given the loaded one through load_state_dict(). Each rank
writes its own chunks into its own file: a DTensor's local tensor (once per replica: by the
ranks at coordinate 0 along its replicated mesh dimensions; a Partial one is reduced first), and
rank 0 the plain tensors and other values, which every rank holds alike; rank 0 then writes the
metadata, every chunk's place in its tensor and in the files. Loading gives each target its
region of the saved tensor (a DTensor's local region, a plain tensor's whole) from the chunks
that overlap it, so the number of ranks and the layout may differ from the saving run's. A key
missing from the checkpoint, or of another shape, fails as PyTorch's do (CheckpointException).
The files are PyTorch's (filesystem.py): torch.distributed.checkpoint reads them, and this reads its."""
from __future__ import annotations

import os
import traceback
import uuid
from typing import Any, Dict, List, Optional, Tuple, Union

import minitorch
from minitorch.distributed.checkpoint.api import CheckpointException
from minitorch.distributed.checkpoint.filesystem import (BytesStorageMetadata, ChunkStorageMetadata, FileSystemReader,
                                                         FileSystemWriter, Metadata, MetadataIndex, StorageMeta,
                                                         TensorProperties, TensorStorageMetadata, _storage)
from minitorch.distributed.checkpoint.stateful import Stateful

__all__ = ["BytesStorageMetadata", "CheckpointException", "ChunkStorageMetadata", "FileSystemReader",
           "FileSystemWriter", "Metadata", "MetadataIndex", "Stateful", "TensorProperties", "TensorStorageMetadata",
           "async_save", "load", "save"]


def _nested(v: Any) -> bool:
    """Whether v is walked into (a dict, or a list holding tensors or dicts) rather than saved whole."""
    if isinstance(v, dict):
        return True
    return isinstance(v, list) and any(isinstance(x, (minitorch.Tensor, dict)) or _nested(x) for x in v)


def _items(obj: Any):
    return obj.items() if isinstance(obj, dict) else enumerate(obj)


def _flatten(obj: Any, prefix: str, out: Dict[str, Any], paths: Optional[Dict[str, tuple]] = None,
             path: tuple = ()) -> Dict[str, Any]:
    """obj's leaves under their dotted keys (into out); paths gets each key's path of keys in obj
    (the metadata's planner_data, as PyTorch's planner records it)."""
    for k, v in _items(obj):
        key = f"{prefix}{k}"
        if _nested(v):
            _flatten(v, key + ".", out, paths, path + (k,))
        else:
            out[key] = v
            if paths is not None:
                paths[key] = path + (k,)
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


def _plan(flat: Dict[str, Any], rank: int):
    """(this rank's chunks to write: (MetadataIndex, value), every key's metadata without chunks,
    this rank's chunks: key -> [ChunkStorageMetadata])."""
    from minitorch.distributed.tensor import DTensor, Replicate
    from minitorch.distributed.tensor._redistribute import local_offset

    items: List[Tuple[MetadataIndex, Any]] = []
    meta: Dict[str, Any] = {}
    chunks: Dict[str, List[ChunkStorageMetadata]] = {}
    for key, v in flat.items():
        if isinstance(v, DTensor):
            if any(p.is_partial() for p in v.placements):
                v = v.redistribute(placements=[Replicate() if p.is_partial() else p for p in v.placements])
            meta[key] = TensorStorageMetadata(TensorProperties(v.dtype), minitorch.Size(v.shape))
            coord = v.device_mesh.get_coordinate()
            if all(c == 0 for c, p in zip(coord, v.placements) if p.is_replicate()):
                local = v.to_local().detach()
                offsets = minitorch.Size(local_offset(tuple(v.shape), v.device_mesh, v.placements))
                if local.numel() or not v.numel():
                    items.append((MetadataIndex(key, offsets, 0), local))
                    chunks[key] = [ChunkStorageMetadata(offsets, minitorch.Size(local.shape))]
        elif isinstance(v, minitorch.Tensor):
            meta[key] = TensorStorageMetadata(TensorProperties(v.dtype), minitorch.Size(v.shape))
            if rank == 0:
                offsets = minitorch.Size((0,) * v.dim())
                items.append((MetadataIndex(key, offsets, 0), v))
                chunks[key] = [ChunkStorageMetadata(offsets, minitorch.Size(v.shape))]
        else:
            meta[key] = BytesStorageMetadata()
            if rank == 0:
                items.append((MetadataIndex(key), v))
    return items, meta, chunks


def save(state_dict: Dict[str, Any], *, checkpoint_id: Union[str, os.PathLike, None] = None,
         storage_writer: Optional[FileSystemWriter] = None, planner: Any = None, process_group: Any = None,
         no_dist: bool = False) -> Metadata:
    """Writes state_dict into the checkpoint (every rank of process_group calls it)."""
    from minitorch import distributed as dist

    writer = _storage(checkpoint_id, storage_writer, FileSystemWriter)
    rank, world = _rank(process_group, no_dist)
    error = None
    where, chunks, meta, paths = {}, {}, {}, {}
    try:
        writer.check()
        flat = _flatten(_stated(state_dict), "", {}, paths)  # on every rank: DTensors reduce, FSDP1 gathers
        items, meta, chunks = _plan(flat, rank)
        where = writer.write_data(items, rank)
    except Exception as e:  # noqa: BLE001  (reported by every rank, after the others are told)
        error = e
    gathered = [(error is not None, where, chunks)]
    if world > 1:
        gathered = [None] * world
        dist.all_gather_object(gathered, (error is not None, where, chunks), group=process_group)
    if error is not None:
        raise _failed("write", rank, error) from error
    failed = [r for r, (bad, _, _) in enumerate(gathered) if bad]
    if failed:
        raise CheckpointException("write", {r: (RuntimeError(f"rank {r} failed to write"), None) for r in failed})
    md = Metadata(meta, planner_data=paths,
                  storage_meta=StorageMeta(checkpoint_id=os.fspath(writer.path), save_id=str(uuid.uuid4())))
    for _, placed, own in gathered:
        md.storage_data.update(placed)
        for key, cs in own.items():
            md.state_dict_metadata[key].chunks.extend(cs)
    if rank == 0:
        writer.finish(md)
    _barrier(process_group, world)
    return md


def async_save(state_dict: Dict[str, Any], *, checkpoint_id: Union[str, os.PathLike, None] = None,
               storage_writer: Optional[FileSystemWriter] = None, planner: Any = None, process_group: Any = None,
               **kwargs: Any):
    """save, done before it returns; the Future it gives is complete (minitorch saves synchronously)."""
    from minitorch.futures import Future

    fut = Future()
    fut.set_result(save(state_dict, checkpoint_id=checkpoint_id, storage_writer=storage_writer, planner=planner,
                        process_group=process_group))
    return fut


def _fill(dst, region_offsets: Tuple[int, ...], key: str, entry: TensorStorageMetadata, md: Metadata,
          reader: FileSystemReader) -> None:
    """dst (a plain tensor: the region of key's tensor that starts at region_offsets) <- the saved
    chunks' overlap with it."""
    sizes = tuple(dst.shape)
    for chunk in entry.chunks:
        lo = [max(c, r) for c, r in zip(chunk.offsets, region_offsets)]
        hi = [min(c + n, r + m) for c, n, r, m in zip(chunk.offsets, chunk.sizes, region_offsets, sizes)]
        if any(h <= low for low, h in zip(lo, hi)) and dst.dim():
            continue
        data = reader.read(md.storage_data[MetadataIndex(key, tuple(chunk.offsets))], entry, tuple(chunk.sizes))
        into = tuple(slice(low - r, h - r) for low, h, r in zip(lo, hi, region_offsets))
        frm = tuple(slice(low - c, h - c) for low, h, c in zip(lo, hi, chunk.offsets))
        dst[into].copy_(data[frm])


def _load_into(obj: Any, prefix: str, md: Metadata, reader: FileSystemReader) -> None:
    from minitorch.distributed.tensor import DTensor
    from minitorch.distributed.tensor._redistribute import local_offset

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
                if isinstance(v, DTensor):
                    local = v.to_local()
                    region = minitorch.empty(local.shape, dtype=entry.properties.dtype)
                    _fill(region, local_offset(tuple(v.shape), v.device_mesh, v.placements), key, entry, md, reader)
                    local.copy_(region)
                else:
                    region = minitorch.empty(tuple(v.shape), dtype=entry.properties.dtype)
                    _fill(region, (0,) * v.dim(), key, entry, md, reader)
                    v.copy_(region)
        else:
            obj[k] = reader.read(md.storage_data[MetadataIndex(key)], entry)


def load(state_dict: Dict[str, Any], *, checkpoint_id: Union[str, os.PathLike, None] = None,
         storage_reader: Optional[FileSystemReader] = None, planner: Any = None, process_group: Any = None,
         no_dist: bool = False) -> None:
    """Loads the checkpoint into state_dict in place: its tensors are copied into (a DTensor's
    local tensor gets its region), its other values replaced, its Stateful values given their
    state through load_state_dict (every rank calls it)."""
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
