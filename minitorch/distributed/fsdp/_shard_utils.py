"""FSDP1's SHARDED_STATE_DICT without gathering the full parameters: each parameter as a
DTensor chunked on dim 0 (torch.chunk's rows; a 0-dim one replicated), each rank's rows got from
the ranks whose flat shards hold them, by one all_to_all_single per FSDP unit.

A unit's flat parameter is split in equal contiguous shards, rank s holding the flat elements
[s * S, (s + 1) * S). Rank q needs, of parameter p (at flat offset o, rows of r elements), the
elements [o + r * row0_q, o + r * (row0_q + rows_q)): every rank sends each rank the part of
that range that lies in its own shard, parameters one after another; what a rank receives from
ranks 0, 1, ... concatenates to its rows of each parameter, in order."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import minitorch
from minitorch import distributed as dist
from minitorch.distributed.tensor.placement_types import Replicate, Shard


def _needed(info, world: int, q: int) -> Tuple[int, int]:
    """The flat range of info's parameter that rank q holds as a DTensor chunk of dim 0."""
    if not info.shape:  # 0-dim: replicated
        return info.offset, info.offset + info.numel
    rows = info.shape[0]
    row = info.numel // rows if rows else 0
    start, length = Shard._chunk(rows, world, q)
    return info.offset + start * row, info.offset + (start + length) * row


def _overlap(a: Tuple[int, int], b: Tuple[int, int]) -> Tuple[int, int]:
    lo = max(a[0], b[0])
    return lo, max(lo, min(a[1], b[1]))


def sharded_params(handle, mesh) -> List[Tuple[Any, Any]]:
    """(info, DTensor chunked on dim 0 over mesh) for each parameter of handle (a FlatParamHandle,
    whose process group is mesh's); every rank of the group calls it."""
    from minitorch.distributed.tensor._api import _leaf, _spec

    world = handle.pg.size() if handle.sharded else 1
    me = handle.pg.rank() if handle.sharded else 0
    size = handle.shard_numel
    with minitorch.no_grad():
        local = handle.local_shard().detach().reshape(-1)
        if world > 1:
            send, send_sizes, recv_sizes = [], [], []
            mine = (me * size, (me + 1) * size)
            for q in range(world):
                parts = [_overlap(_needed(i, world, q), mine) for i in handle.infos]
                send += [local[lo - mine[0]:hi - mine[0]] for lo, hi in parts]
                send_sizes.append(sum(hi - lo for lo, hi in parts))
            for s in range(world):
                held = (s * size, (s + 1) * size)
                recv_sizes.append(sum(hi - lo for lo, hi in (_overlap(_needed(i, world, me), held)
                                                             for i in handle.infos)))
            inp = minitorch.cat(send) if send else local[:0]
            got = minitorch.empty(sum(recv_sizes), dtype=local.dtype, device=local.device)
            dist.all_to_all_single(got, inp.contiguous(), recv_sizes, send_sizes, group=handle.pg)
            pieces: Dict[int, list] = {k: [] for k in range(len(handle.infos))}
            at = 0
            for s in range(world):
                held = (s * size, (s + 1) * size)
                for k, info in enumerate(handle.infos):
                    lo, hi = _overlap(_needed(info, world, me), held)
                    pieces[k].append(got[at:at + hi - lo])
                    at += hi - lo
            flats = [minitorch.cat(pieces[k]) for k in range(len(handle.infos))]
        else:
            flats = [local[slice(*_needed(i, 1, 0))] for i in handle.infos]
    out = []
    for info, flat in zip(handle.infos, flats):
        if info.shape:
            rows = Shard._chunk(info.shape[0], world, me)[1]
            value = flat.reshape((rows,) + info.shape[1:]).clone()
            placements = [Shard(0)]
        else:
            value = flat.reshape(()).clone()
            placements = [Replicate()]
        out.append((info, _leaf(value, _spec(mesh, placements, info.shape), False)))
    return out
