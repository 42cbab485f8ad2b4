"""How a DTensor's local tensor changes when its placements do (redistribute, full_tensor): one
collective per mesh dimension whose placement changes, over that dimension's process group.

Shard(d) -> Replicate: all_gather (the chunks padded to one size, torch.chunk's, then trimmed);
Partial -> Replicate: all_reduce; Replicate -> Shard(d): this rank's chunk (no communication);
Replicate -> Partial(sum): the value divided by the ranks (PyTorch's partition of a sum);
Shard(d) -> Shard(d'), Partial -> Shard: through Replicate. Everything here works on plain
local tensors, outside autograd (_api.py's _Redistribute is the differentiable form)."""
from __future__ import annotations

from typing import List, Sequence, Tuple

import minitorch
from minitorch import distributed as dist
from minitorch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard

_REDUCE = {"sum": "SUM", "avg": "AVG", "max": "MAX", "min": "MIN"}


def local_shape(shape: Sequence[int], mesh, placements: Sequence[Placement], upto: int = None) -> Tuple[int, ...]:
    """This rank's local shape of a tensor of global shape laid out by placements (only the mesh
    dimensions before upto applied)."""
    coord = mesh.get_coordinate()
    out = list(shape)
    for i, p in enumerate(placements[:upto]):
        if isinstance(p, Shard):
            out[p.dim] = Shard._chunk(out[p.dim], mesh.size(i), coord[i])[1]
    return tuple(out)


def local_offset(shape: Sequence[int], mesh, placements: Sequence[Placement]) -> Tuple[int, ...]:
    """Where this rank's local tensor starts in the global one (0 along unsharded dimensions)."""
    coord = mesh.get_coordinate()
    size, offset = list(shape), [0] * len(shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            start, length = Shard._chunk(size[p.dim], mesh.size(i), coord[i])
            offset[p.dim] += start
            size[p.dim] = length
    return tuple(offset)


def _gather(local, dim: int, parent: int, mesh, i: int):
    """The whole of dimension dim (parent elements) from the chunks along mesh dimension i."""
    w = mesh.size(i)
    chunk = -(-parent // w)
    have = local.shape[dim]
    if chunk > have:
        pad = list(local.shape)
        pad[dim] = chunk - have
        local = minitorch.cat([local, minitorch.zeros(pad, dtype=local.dtype, device=local.device)], dim)
    moved = local.movedim(dim, 0).contiguous()
    out = minitorch.empty((w * chunk,) + tuple(moved.shape[1:]), dtype=local.dtype, device=local.device)
    dist.all_gather_into_tensor(out, moved, group=mesh.get_group(i))
    return out[:parent].movedim(0, dim).contiguous()


def _chunk(t, dim: int, mesh, i: int):
    start, length = Shard._chunk(t.shape[dim], mesh.size(i), mesh.get_coordinate()[i])
    return t.narrow(dim, start, length).clone()


def _reduce(t, op: str, mesh, i: int):
    out = t.clone()
    dist.all_reduce(out, op=getattr(dist.ReduceOp, _REDUCE[op]), group=mesh.get_group(i))
    return out


def transform(local, shape: Sequence[int], mesh, src: Sequence[Placement], dst: Sequence[Placement]):
    """local (laid out by src) laid out by dst instead."""
    cur: List[Placement] = list(src)
    # first to Replicate, innermost mesh dimension first, every dimension that changes (and the
    # later ones sharding the same tensor dimension, which a gather of an outer one needs whole)
    undo = set()
    for i in range(len(src)):
        if src[i] != dst[i] and not (src[i].is_replicate() and not dst[i].is_partial()):
            undo.add(i)
            if isinstance(src[i], Shard):
                undo.update(j for j in range(i + 1, len(src)) if src[j] == src[i])
    for i in sorted(undo, reverse=True):
        p = cur[i]
        if isinstance(p, Shard):
            parent = local_shape(shape, mesh, cur, upto=i)[p.dim]
            local = _gather(local, p.dim, parent, mesh, i)
        elif isinstance(p, Partial):
            if isinstance(dst[i], Partial) and dst[i].reduce_op != p.reduce_op:
                raise RuntimeError(f"redistribute from {p} to {dst[i]} is not supported")
            local = _reduce(local, p.reduce_op, mesh, i)
        cur[i] = Replicate()
    # then from Replicate to the target, outermost first
    for i in range(len(dst)):
        if cur[i] == dst[i]:
            continue
        if isinstance(dst[i], Shard):
            local = _chunk(local, dst[i].dim, mesh, i)
        elif isinstance(dst[i], Partial):
            if dst[i].reduce_op == "sum":
                local = local / mesh.size(i)
            # avg, max and min of equal parts are the value itself
        cur[i] = dst[i]
    return local


def normalize(placements: Sequence[Placement], ndim: int, mesh_ndim: int) -> Tuple[Placement, ...]:
    """placements with negative Shard dims made positive, checked against the mesh and the tensor."""
    placements = tuple(placements)
    if len(placements) != mesh_ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! Found placements "
                         f"length: {len(placements)}, and device_mesh.ndim: {mesh_ndim}.")
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Placement instances (Shard, Replicate, Partial), got {p!r}")
        if isinstance(p, Shard):
            dim = p.dim + ndim if p.dim < 0 else p.dim
            if not 0 <= dim < max(ndim, 1) or ndim == 0:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                                 f"but got {p.dim})")
            p = Shard(dim)
        out.append(p)
    return tuple(out)
