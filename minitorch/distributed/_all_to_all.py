"""all_to_all and all_to_all_single of minitorch.distributed (which re-exports them): MPI's
MPI_Ialltoallv on the tensors' bytes, or NCCL's grouped sends and recvs for CUDA tensors of a
"nccl" group (_nccl.py); before either, one small all-to-all of the element counts checks that
what each rank sends another is what that one expects, so that a mismatch raises on every rank."""
from __future__ import annotations

import time
from typing import List, Optional

import numpy as np

from minitorch.distributed import (_assign_bytes, _bytes, _check_tensor, _comm_event, _fail, _group, _host,
                                   _issue, _mpi, _nccl_for, _pair_group, _staged, _wait_requests)


def _split_sizes(splits, t, n: int, what: str) -> List[int]:
    """The rows (along dim 0) of t going to (or coming from) each rank: splits, or equal parts."""
    rows = t.shape[0] if t.dim() else 1
    if splits is None or len(splits) == 0:
        if rows % n:
            raise ValueError(f"Tensor's dim 0 does not divide equally across group size {n}")
        return [rows // n] * n
    splits = [int(s) for s in splits]
    if len(splits) != n:
        raise ValueError(f"{what} must have {n} entries (the group's size), got {len(splits)}")
    if any(s < 0 for s in splits) or sum(splits) != rows:
        raise ValueError(f"Split sizes doesn't match total dim 0 size: {what} {splits}, dim 0 {rows}")
    return splits


def _check_pairs(pg, what: str, send_counts: List[int], recv_counts: List[int]) -> None:
    """What each rank sends to q is what q expects from it: one all-to-all of the counts, then an
    all-reduce of whether every rank found them equal (so that all raise, or none)."""
    if pg.size() == 1:
        if send_counts != recv_counts:
            raise _fail(pg, what, f"this rank sends itself {send_counts} elements but expects {recv_counts}",
                        broken=False)
        return
    MPI = _mpi()
    sent = np.asarray(send_counts, dtype=np.int64)
    expected = np.empty_like(sent)
    deadline = time.monotonic() + pg._timeout.total_seconds()
    _wait_requests(pg, what, [pg._comm.Ialltoall(sent, expected)], deadline)
    ok = np.array([int(np.array_equal(expected, np.asarray(recv_counts, dtype=np.int64)))], dtype=np.int64)
    every = np.empty_like(ok)
    _wait_requests(pg, what, [pg._comm.Iallreduce(ok, every, MPI.MIN)], deadline)
    if not every[0]:
        raise _fail(pg, what, "the ranks' split sizes do not match (what a rank sends to another is not what "
                              f"that one expects; this rank receives {recv_counts} elements, its peers send "
                              f"{expected.tolist()})", broken=False)


def all_to_all_single(output, input, output_split_sizes: Optional[List[int]] = None,
                      input_split_sizes: Optional[List[int]] = None, group=None, async_op: bool = False):
    """Splits input along dim 0 (input_split_sizes rows, else equal parts) and sends part q to
    rank q; output (along dim 0, output_split_sizes rows, else equal parts) <- the parts received,
    in rank order."""
    pg = _pair_group(output, "output", input, "input", group)
    if pg is None:
        return None
    n = pg.size()
    if output.dtype != input.dtype:
        raise RuntimeError("all_to_all_single: input and output tensors must have the same dtype")
    ins = _split_sizes(input_split_sizes, input, n, "input_split_sizes")
    outs = _split_sizes(output_split_sizes, output, n, "output_split_sizes")
    row_in = input.numel() // max(input.shape[0], 1) if input.dim() else input.numel()
    row_out = output.numel() // max(output.shape[0], 1) if output.dim() else output.numel()
    with _comm_event("all_to_all_single"):
        _check_pairs(pg, "all_to_all_single", [s * row_in for s in ins], [s * row_out for s in outs])
    if _nccl_for(pg, output, input):
        return _nccl_for(pg, input).all_to_all_single(pg, output, input, outs, ins, async_op)
    es = input.element_size()
    send = _bytes(_host(input))
    out, finish = _staged(output)
    recv = _bytes(out)
    sc = [s * row_in * es for s in ins]
    rc = [s * row_out * es for s in outs]
    sd = np.concatenate([[0], np.cumsum(sc)[:-1]]).astype(np.int64).tolist()
    rd = np.concatenate([[0], np.cumsum(rc)[:-1]]).astype(np.int64).tolist()
    MPI = _mpi()
    return _issue(pg, "all_to_all_single",
                  lambda: [pg._comm.Ialltoallv([send, (sc, sd), MPI.BYTE], [recv, (rc, rd), MPI.BYTE])], finish,
                  async_op)


def all_to_all(output_tensor_list: List, input_tensor_list: List, group=None, async_op: bool = False):
    """output_tensor_list[q] <- rank q's input_tensor_list[this rank], on every rank."""
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    for what, lst in (("output_tensor_list", output_tensor_list), ("input_tensor_list", input_tensor_list)):
        if len(lst) != n:
            raise RuntimeError(f"all_to_all: {what} must have {n} tensors (the group's size), got {len(lst)}")
        for t in lst:
            _check_tensor(t, what)
    dtypes = {t.dtype for t in [*output_tensor_list, *input_tensor_list]}
    if len(dtypes) != 1:
        raise RuntimeError("all_to_all: every tensor must have the same dtype")
    with _comm_event("all_to_all"):
        _check_pairs(pg, "all_to_all", [t.numel() for t in input_tensor_list],
                     [t.numel() for t in output_tensor_list])
    if _nccl_for(pg, *output_tensor_list, *input_tensor_list):
        return _nccl_for(pg, input_tensor_list[0]).all_to_all(pg, output_tensor_list, input_tensor_list, async_op)
    parts = [_bytes(_host(t)) for t in input_tensor_list]
    send = np.concatenate(parts) if parts else np.empty(0, np.uint8)
    es = input_tensor_list[0].element_size()
    rc = [t.numel() * es for t in output_tensor_list]
    recv = np.empty(sum(rc), dtype=np.uint8)
    sc = [p.size for p in parts]
    sd = np.concatenate([[0], np.cumsum(sc)[:-1]]).astype(np.int64).tolist()
    rd = np.concatenate([[0], np.cumsum(rc)[:-1]]).astype(np.int64).tolist()
    MPI = _mpi()

    def finish():
        for t, off, size in zip(output_tensor_list, rd, rc):
            _assign_bytes(t, recv[off:off + size])

    return _issue(pg, "all_to_all",
                  lambda: [pg._comm.Ialltoallv([send, (sc, sd), MPI.BYTE], [recv, (rc, rd), MPI.BYTE])], finish,
                  async_op)
