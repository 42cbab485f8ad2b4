"""How a DTensor's local tensor changes when its placements do (redistribute, full_tensor): one
collective per mesh dimension whose placement changes, over that dimension's process group.

Shard(d) -> Replicate: all_gather (the chunks padded to one size, torch.chunk's, then trimmed);
Partial -> Replicate: all_reduce; Replicate -> Shard(d): this rank's chunk (no communication);
Replicate -> Partial(sum): the value divided by the ranks (PyTorch's partition of a sum);
_StridedShard(d, f) -> Replicate: all_gather of the padded parts, then each element picked from
where its rank put it; Replicate -> _StridedShard: this rank's runs of the dimension.
Shard(d) -> Shard(d'), Partial -> Shard, anything to or from _StridedShard: through Replicate. Everything here works on plain
local tensors, outside autograd (_api.py's _Redistribute is the differentiable form)."""
from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np

import minitorch
from minitorch import distributed as dist
from minitorch.distributed.tensor.placement_types import (Partial, Placement, Replicate, Shard, _sharded_dim,
                                                          _StridedShard)

_REDUCE = {"sum": "SUM", "avg": "AVG", "max": "MAX", "min": "MIN"}


def local_shape(shape: Sequence[int], mesh, placements: Sequence[Placement], upto: int = None) -> Tuple[int, ...]:
    """This rank's local shape of a tensor of global shape laid out by placements (only the mesh
    dimensions before upto applied)."""
    coord = mesh.get_coordinate()
    out = list(shape)
    for i, p in enumerate(placements[:upto]):
        if isinstance(p, Shard):
            out[p.dim] = Shard._chunk(out[p.dim], mesh.size(i), coord[i])[1]
        elif isinstance(p, _StridedShard):
            out[p.dim] = sum(n for _, n in p._segments(out[p.dim], mesh.size(i), coord[i]))
    return tuple(out)


def local_offset(shape: Sequence[int], mesh, placements: Sequence[Placement]) -> Tuple[int, ...]:
    """Where this rank's local tensor starts in the global one (0 along unsharded dimensions; a
    _StridedShard's part is no block of the global tensor, and raises)."""
    if any(isinstance(p, _StridedShard) for p in placements):
        raise NotImplementedError(f"a _StridedShard part has no offset in the global tensor: {tuple(placements)}")
    coord = mesh.get_coordinate()
    size, offset = list(shape), [0] * len(shape)
    for i, p in enumerate(placements):
        if isinstance(p, Shard):
            start, length = Shard._chunk(size[p.dim], mesh.size(i), coord[i])
            offset[p.dim] += start
            size[p.dim] = length
    return tuple(offset)


def _gather_padded(local, dim: int, longest: int, mesh, i: int):
    """The parts along mesh dimension i, each padded along dim to longest elements, gathered and
    stacked in rank order along a leading dimension of w * longest rows (dim moved there)."""
    have = local.shape[dim]
    if longest > have:
        pad = list(local.shape)
        pad[dim] = longest - have
        local = minitorch.cat([local, minitorch.zeros(pad, dtype=local.dtype, device=local.device)], dim)
    moved = local.movedim(dim, 0).contiguous()
    out = minitorch.empty((mesh.size(i) * longest,) + tuple(moved.shape[1:]), dtype=local.dtype, device=local.device)
    dist.all_gather_into_tensor(out, moved, group=mesh.get_group(i))
    return out


def _gather(local, dim: int, parent: int, mesh, i: int):
    """The whole of dimension dim (parent elements) from the chunks along mesh dimension i."""
    out = _gather_padded(local, dim, -(-parent // mesh.size(i)), mesh, i)
    return out[:parent].movedim(0, dim).contiguous()


def _chunk(t, dim: int, mesh, i: int):
    start, length = Shard._chunk(t.shape[dim], mesh.size(i), mesh.get_coordinate()[i])
    return t.narrow(dim, start, length).clone()


def _positions(p: _StridedShard, size: int, w: int, rank: int) -> np.ndarray:
    """The indices along p.dim of the elements rank holds, in its order."""
    return np.concatenate([np.arange(s, s + n) for s, n in p._segments(size, w, rank)] + [np.zeros(0, np.int64)])


def _strided_chunk(t, p: _StridedShard, mesh, i: int):
    """This rank's part of t (whole along p.dim) under p on mesh dimension i."""
    idx = _positions(p, t.shape[p.dim], mesh.size(i), mesh.get_coordinate()[i])
    return t.index_select(p.dim, minitorch.tensor(idx, dtype=minitorch.int64, device=t.device))


def _strided_gather(local, p: _StridedShard, parent: int, mesh, i: int):
    """The whole of p.dim (parent elements) from the parts along mesh dimension i: the parts
    padded to the longest and gathered, then each element taken from where its rank holds it."""
    w = mesh.size(i)
    parts = [_positions(p, parent, w, r) for r in range(w)]
    longest = max(len(q) for q in parts)
    out = _gather_padded(local, p.dim, longest, mesh, i)
    where = np.empty(parent, dtype=np.int64)  # element e of the dimension is row where[e] of out
    for r, q in enumerate(parts):
        where[q] = r * longest + np.arange(len(q))
    rows = out.index_select(0, minitorch.tensor(where, dtype=minitorch.int64, device=out.device))
    return rows.movedim(0, p.dim).contiguous()


def shard_part(t, p: Placement, mesh, i: int):
    """This rank's part of t (whole along the dimension p splits) under p on mesh dimension i."""
    return _strided_chunk(t, p, mesh, i) if isinstance(p, _StridedShard) else _chunk(t, p.dim, mesh, i)


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
            d = _sharded_dim(src[i])
            if d is not None:
                undo.update(j for j in range(i + 1, len(src)) if _sharded_dim(src[j]) == d)
    for i in sorted(undo, reverse=True):
        p = cur[i]
        if isinstance(p, (Shard, _StridedShard)):
            parent = local_shape(shape, mesh, cur, upto=i)[p.dim]
            local = _gather(local, p.dim, parent, mesh, i) if isinstance(p, Shard) else \
                _strided_gather(local, p, parent, mesh, i)
        elif isinstance(p, Partial):
            if isinstance(dst[i], Partial) and dst[i].reduce_op != p.reduce_op:
                raise RuntimeError(f"redistribute from {p} to {dst[i]} is not supported")
            local = _reduce(local, p.reduce_op, mesh, i)
        cur[i] = Replicate()
    # then from Replicate to the target, outermost first
    for i in range(len(dst)):
        if cur[i] == dst[i]:
            continue
        if isinstance(dst[i], (Shard, _StridedShard)):
            local = shard_part(local, dst[i], mesh, i)
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
        if isinstance(p, (Shard, _StridedShard)):
            dim = p.dim + ndim if p.dim < 0 else p.dim
            if not 0 <= dim < max(ndim, 1) or ndim == 0:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                                 f"but got {p.dim})")
            p = Shard(dim) if isinstance(p, Shard) else _StridedShard(dim, split_factor=p.split_factor)
        out.append(p)
    return tuple(out)
