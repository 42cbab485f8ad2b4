"""The rest of torch.distributed's collectives and queries, built on the core ones of
minitorch.distributed (which re-exports them): the object collectives (gather_object,
scatter_object_list, send_object_list, recv_object_list), batched point-to-point operations
(P2POp, batch_isend_irecv), reduce_scatter of a list, monitored_barrier, and the rank and
environment queries. Objects travel as their pickle's bytes in uint8 tensors, sizes first, as
PyTorch's do."""
from __future__ import annotations

import datetime
import os
import pickle
import time
from typing import Any, List, Optional

import numpy as np

import minitorch
from minitorch.distributed import (Backend, DistBackendError, GroupMember, ReduceOp, _comm_event, _fail, _group,
                                   _object_bytes, _require_init, _wait_requests, all_gather, broadcast, gather,
                                   irecv, isend, recv, reduce_scatter_tensor, scatter, send)


def _unpickle(t, size: int) -> Any:
    return pickle.loads(t.numpy()[:size].tobytes())


def _root(pg, root: Optional[int], group_root: Optional[int], what: str) -> int:
    """The root's rank in pg: group_root, else the global rank root (0 when None)."""
    if group_root is not None:
        if root is not None:
            raise ValueError(f"Can only specify one of {what} or group_{what}")
        return group_root
    return pg._group_rank(0 if root is None else root, f"{what} rank")


# ---- objects ----

def _root_list(lst, n: int, what: str, name: str, missing: Exception) -> None:
    """The root's list of a rooted object collective: given, one entry per rank."""
    if lst is None:
        raise missing
    if len(lst) != n:
        raise ValueError(f"{what}: {name} must have {n} entries (the group's size), got {len(lst)}")


def _padded(data, m: int):
    """data's bytes followed by zeros to m bytes (every rank's part of a collective is one size)."""
    p = minitorch.zeros(m, dtype=minitorch.uint8)
    p[: data.numel()] = data
    return p

def gather_object(obj: Any, object_gather_list: Optional[List[Any]] = None, dst: Optional[int] = None, group=None,
                  group_dst: Optional[int] = None) -> None:
    """On dst: object_gather_list[i] <- rank i's obj (any picklable object); the other ranks pass
    no list."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, dst, group_dst, "dst")
    me, n = pg.rank(), pg.size()
    if me == root:
        _root_list(object_gather_list, n, "gather_object", "object_gather_list",
                   AssertionError("Must provide object_gather_list on dst rank"))
    data = _object_bytes(obj)
    size = minitorch.tensor([data.numel()], dtype=minitorch.int64)
    sizes = [minitorch.zeros(1, dtype=minitorch.int64) for _ in range(n)]
    all_gather(sizes, size, group=pg)  # every rank pads to the longest, so every rank needs it
    longest = max(int(s.item()) for s in sizes)
    padded = _padded(data, longest)
    parts = [minitorch.empty(longest, dtype=minitorch.uint8) for _ in range(n)] if me == root else None
    gather(padded, parts, group=pg, group_dst=root)
    if me == root:
        for i in range(n):
            object_gather_list[i] = _unpickle(parts[i], int(sizes[i].item()))


def scatter_object_list(scatter_object_output_list: List[Any], scatter_object_input_list: Optional[List[Any]] = None,
                        src: Optional[int] = None, group=None, group_src: Optional[int] = None) -> None:
    """scatter_object_output_list[0] <- src's scatter_object_input_list[rank]."""
    pg = _group(group)
    if pg is None:
        return
    root = _root(pg, src, group_src, "src")
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at least 1.")
    me, n = pg.rank(), pg.size()
    if me == root:
        _root_list(scatter_object_input_list, n, "scatter_object_list", "scatter_object_input_list",
                   ValueError("source rank must provide non-None scatter_object_input_list"))
        datas = [_object_bytes(o) for o in scatter_object_input_list]
        longest = minitorch.tensor([max(d.numel() for d in datas)], dtype=minitorch.int64)
    else:
        longest = minitorch.zeros(1, dtype=minitorch.int64)
    broadcast(longest, group=pg, group_src=root)
    m = int(longest.item())
    parts = sizes = None
    if me == root:
        parts = [_padded(d, m) for d in datas]
        sizes = [minitorch.tensor([d.numel()], dtype=minitorch.int64) for d in datas]
    out = minitorch.empty(m, dtype=minitorch.uint8)
    scatter(out, parts, group=pg, group_src=root)
    size = minitorch.zeros(1, dtype=minitorch.int64)
    scatter(size, sizes, group=pg, group_src=root)
    scatter_object_output_list[0] = _unpickle(out, int(size.item()))


def _not_self(pg, peer: int, what: str) -> None:
    if peer == pg.rank():
        raise ValueError(f"Invalid {what} rank: {what} rank should not be the same as the rank of the current "
                         "process.")


def send_object_list(object_list: List[Any], dst: Optional[int] = None, group=None, device=None,
                     group_dst: Optional[int] = None, use_batch: bool = False) -> None:
    """Sends object_list's picklable objects to rank dst (which calls recv_object_list with a list
    of the same length): their sizes first, then their bytes."""
    pg = _group(group)
    if pg is None:
        return
    peer = _root(pg, dst, group_dst, "dst")
    _not_self(pg, peer, "destination")
    datas = [_object_bytes(o) for o in object_list]
    sizes = minitorch.tensor([d.numel() for d in datas], dtype=minitorch.int64)
    send(sizes, group=pg, group_dst=peer)
    send(minitorch.cat(datas) if datas else minitorch.empty(0, dtype=minitorch.uint8), group=pg, group_dst=peer)


def recv_object_list(object_list: List[Any], src: Optional[int] = None, group=None, device=None,
                     group_src: Optional[int] = None, use_batch: bool = False) -> int:
    """object_list <- the objects a rank sent with send_object_list (from src, or any rank when
    None); returns the sender's global rank."""
    pg = _group(group)
    if pg is None:
        return -1
    peer = {}  # any source
    if group_src is not None or src is not None:
        peer["group_src"] = _root(pg, src, group_src, "src")
        _not_self(pg, peer["group_src"], "source")
    sizes = minitorch.empty(len(object_list), dtype=minitorch.int64)
    sender = recv(sizes, group=pg, **peer)
    data = minitorch.empty(int(sizes.sum().item()), dtype=minitorch.uint8)
    # the bytes come from the rank whose sizes came (two senders to one any-source receiver
    # cannot interleave their two messages)
    if recv(data, group=pg, group_src=pg._ranks.index(sender)) != sender:
        raise AssertionError("Mismatch in return ranks for object sizes and objects.")
    off = 0
    for i, s in enumerate(sizes.tolist()):
        object_list[i] = _unpickle(data[off:off + s], s)
        off += s
    return sender


# ---- batched point-to-point ----

class P2POp:
    """One point-to-point operation for batch_isend_irecv: op is isend or irecv, peer a global
    rank (or group_peer a rank of group)."""

    def __init__(self, op, tensor, peer: Optional[int] = None, group=None, tag: int = 0,
                 group_peer: Optional[int] = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` or "
                             "``torch.distributed.irecv``.")
        if not isinstance(tensor, minitorch.Tensor):
            raise TypeError(f"Invalid function argument. Expected parameter `tensor` of type torch.Tensor\n"
                            f"             but got {type(tensor)} instead.")
        if peer is None and group_peer is None:
            raise ValueError("Must specify either peer or group_peer")
        if peer is not None and group_peer is not None:
            raise ValueError("Can only specify one of peer or group_peer")
        self.op = op
        self.tensor = tensor
        self.group = group
        self.tag = tag
        self.peer = peer
        self.group_peer = group_peer

    def __repr__(self) -> str:
        where = f"peer={self.peer}" if self.peer is not None else f"group_peer={self.group_peer}"
        return f"P2POp({self.op.__name__}, {where}, {tuple(self.tensor.shape)}, {self.tensor.dtype})"


def batch_isend_irecv(p2p_op_list: List[P2POp]) -> List:
    """Starts every operation of the list (all of one group) and returns their Works, in order."""
    if not isinstance(p2p_op_list, list) or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    if not p2p_op_list:
        return []
    if any(p.group is not p2p_op_list[0].group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    works = []
    for p in p2p_op_list:  # nonblocking each: the matching of sends and receives is MPI's
        side = "dst" if p.op is isend else "src"
        peer = {side: p.peer} if p.peer is not None else {f"group_{side}": p.group_peer}
        works.append(p.op(p.tensor, group=p.group, tag=p.tag, **peer))
    return works


# ---- reduce_scatter of a list ----

def reduce_scatter(output, input_list: List, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """output <- input_list[rank] reduced over the group's ranks (input_list: one tensor per rank,
    each of output's shape and dtype)."""
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    if len(input_list) != n:
        raise ValueError(f"reduce_scatter: input_list must have {n} tensors (the group's size), got "
                         f"{len(input_list)}")
    for i, t in enumerate(input_list):
        if not isinstance(t, minitorch.Tensor):
            raise TypeError(f"reduce_scatter: input_list[{i}] is not a Tensor")
        if t.dtype != output.dtype or tuple(t.shape) != tuple(output.shape):
            raise ValueError(f"reduce_scatter: input_list[{i}] has shape {tuple(t.shape)} and dtype {t.dtype}; "
                             f"every input must be like output ({tuple(output.shape)}, {output.dtype})")
    whole = minitorch.stack([t.detach() for t in input_list]) if n else None
    return reduce_scatter_tensor(output, whole, op, group=pg, async_op=async_op)


# ---- monitored_barrier ----

_MONITOR_TAG = 32767  # the largest tag MPI guarantees; user messages keep the tags below


def monitored_barrier(group=None, timeout: Optional[datetime.timedelta] = None, wait_all_ranks: bool = False) -> None:
    """A barrier that names who is missing: rank 0 of the group waits for each other rank in turn
    (or for all of them with wait_all_ranks) and raises naming the ranks that did not arrive within
    timeout; the others wait for rank 0's release."""
    pg = _group(group)
    if pg is None:
        return
    if pg.name() == Backend.NCCL:
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")
    timeout = pg._timeout if timeout is None else timeout
    seconds = timeout.total_seconds()
    deadline = time.monotonic() + seconds
    me, n = pg.rank(), pg.size()
    comm = pg._comm
    token = np.zeros(1, dtype=np.uint8)
    with _comm_event("monitored_barrier"):
        if me != 0:
            reqs = [comm.Isend(token, 0, _MONITOR_TAG), comm.Irecv(np.empty(1, dtype=np.uint8), 0, _MONITOR_TAG)]
            try:
                _wait_requests(pg, "monitored_barrier", reqs, deadline)
            except DistBackendError:
                raise _fail(pg, "monitored_barrier", f"Rank {me} successfully reached monitoredBarrier, but received "
                                                     f"errors while waiting for send/recv from rank 0") from None
            return
        pending = {r: comm.Irecv(np.empty(1, dtype=np.uint8), r, _MONITOR_TAG) for r in range(1, n)}
        missing = []
        for r in range(1, n):
            try:
                _wait_requests(pg, "monitored_barrier", [pending[r]], deadline)
            except DistBackendError:
                missing.append(r)
                if not wait_all_ranks:
                    break
        if missing:
            ms = int(seconds * 1000)
            ranks = ", ".join(str(pg._ranks[r]) for r in missing)
            detail = (f"Ranks {ranks} failed to pass monitoredBarrier in {ms} ms" if wait_all_ranks
                      else f"Rank {ranks} failed to pass monitoredBarrier in {ms} ms")
            raise _fail(pg, "monitored_barrier", detail)
        _wait_requests(pg, "monitored_barrier", [comm.Isend(token, r, _MONITOR_TAG) for r in range(1, n)],
                       time.monotonic() + seconds)


# ---- queries ----

def _explicit(group):
    if group is None or group is GroupMember.WORLD:
        return _require_init()
    if group is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("Invalid process group specified")
    return _group(group)


def get_process_group_ranks(group) -> List[int]:
    """The global ranks of the group's members, in group-rank order."""
    return list(_explicit(group)._ranks)


def get_global_rank(group, group_rank: int) -> int:
    """The global rank of the group's rank group_rank (on the default group: group_rank itself)."""
    pg = _explicit(group)
    if pg is _require_init():
        return group_rank
    if not 0 <= group_rank < len(pg._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg._ranks[group_rank]


def get_group_rank(group, global_rank: int) -> int:
    """The rank within the group of the global rank global_rank (on the default group: itself)."""
    pg = _explicit(group)
    if pg is _require_init():
        return global_rank
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


def get_pg_count() -> int:
    """The number of process groups made so far (the default one and new_group's)."""
    return minitorch.distributed._group_count


def is_backend_available(backend: str) -> bool:
    d = minitorch.distributed
    available = {"mpi": d.is_mpi_available, "gloo": d.is_gloo_available, "nccl": d.is_nccl_available}
    return available.get(str(backend).lower(), lambda: False)()


def is_torchelastic_launched() -> bool:
    """Whether the launcher (minitorch.distributed.run, as torchrun) started this process."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank: Optional[int] = None) -> int:
    """LOCAL_RANK as the launcher sets it, else fallback_rank."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context "
                       "and want the code to run locally instead.")


def supports_complex(reduceOp) -> bool:
    """Whether the reduction is defined for complex tensors (all but MAX, MIN, ...)."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR,
                            ReduceOp.BXOR)
