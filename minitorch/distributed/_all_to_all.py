"""all_to_all and all_to_all_single of minitorch.distributed (which re-exports them): MPI's
MPI_Ialltoallv on the tensors' bytes, or NCCL's grouped sends and recvs for CUDA tensors of a
"nccl" group (_nccl.py); before either, one small all-gather of the element counts checks that
what each rank sends another is what that one expects, so that a mismatch raises on every rank
(nonblocking before MPI's: an async all_to_all raises it at wait())."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from minitorch.distributed import (_assign_bytes, _bytes, _Check, _check_tensor, _group, _host, _issue, _mpi,
                                   _nccl_for, _pair_group, _staged)


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


def _check_pairs(pg, what: str, send_counts: List[int], recv_counts: List[int]) -> _Check:
    """The cross-rank check that what each rank sends to q is what q expects from it: every rank's
    counts gathered (nonblocking), so that all raise, or none."""
    n = pg.size()

    def agree(table):
        # table[p] = rank p's (send counts to each q, receive counts from each q)
        if all(table[p][q] == table[q][n + p] for p in range(n) for q in range(n)):
            return None
        me = pg.rank()
        return ("the ranks' split sizes do not match (what a rank sends to another is not what that one "
                f"expects; this rank receives {recv_counts} elements, its peers send "
                f"{[int(table[p][me]) for p in range(n)]})")

    return _Check(pg, what, list(send_counts) + list(recv_counts), agree)


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
    check = _check_pairs(pg, "all_to_all_single", [s * row_in for s in ins], [s * row_out for s in outs])
    if _nccl_for(pg, output, input):
        check.wait()
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
                  async_op, check, send.size)


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
    check = _check_pairs(pg, "all_to_all", [t.numel() for t in input_tensor_list],
                         [t.numel() for t in output_tensor_list])
    if _nccl_for(pg, *output_tensor_list, *input_tensor_list):
        check.wait()
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
                  async_op, check, send.size)
