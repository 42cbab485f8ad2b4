"""The "nccl" backend's collectives on CUDA tensors: NCCL (loaded at run time by _C_cuda from the
nvidia-nccl-cu13 wheel; on the emulated device, the emulation of cuda/emu/nccl.c over shared
memory) called on each tensor's own device memory, on its device's current stream.

A process group of backend "nccl" keeps its MPI communicator for what is not a CUDA tensor
(CPU tensors, objects, the check that every rank passed the same sizes, once per group and
signature: _signature_check) and makes one NCCL communicator per device at its first CUDA collective
there, as PyTorch does: group rank 0's ncclGetUniqueId goes to the others through the group's
store (init_method tcp:// or file://, or store=), else over MPI, and each calls ncclCommInitRank.
A collective is enqueued on the stream and returns, as PyTorch's; what must follow it (a copy
back into a non-contiguous tensor, the parts of all_gather's list) is enqueued after it on the same stream.
Work.wait() waits for the stream's work (the host polls its event) at most the group's timeout,
and a failure aborts the communicator (ncclCommAbort) and raises DistBackendError.
"""
from __future__ import annotations

import glob
import os
import site
import sys
import time
from typing import List, Optional

import numpy as np

import minitorch
from minitorch import distributed as dist

# _C_cuda's kinds (cuda/nccl.h: mt_nccl_kind)
ALL_REDUCE, BROADCAST, REDUCE, ALL_GATHER, REDUCE_SCATTER, SEND, RECV = range(7)
# ncclRedOp_t
_SUM, _PROD, _MAX, _MIN, _AVG = range(5)
# ncclDataType_t of each dtype NCCL takes (bool as uint8, its reductions below)
_TYPES = {"int8": 0, "uint8": 1, "bool": 1, "int32": 2, "uint32": 3, "int64": 4, "uint64": 5, "float16": 6,
          "float32": 7, "float64": 8, "bfloat16": 9}
_TORCH_NAMES = {"int16": "Short", "uint16": "UInt16", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _cuda():
    return minitorch.cuda._C_cuda


def library_path() -> Optional[str]:
    """MINITORCH_NCCL_LIBRARY, else libnccl.so.2 of an installed nvidia-nccl wheel, else None
    (the dynamic linker's search path)."""
    env = os.environ.get("MINITORCH_NCCL_LIBRARY")
    if env:
        return env
    dirs = list(site.getsitepackages()) + [site.getusersitepackages()] + [p for p in sys.path if p]
    for d in dirs:
        for pattern in ("nvidia/nccl/lib/libnccl.so.2", "nvidia/cu13/lib/libnccl.so.2", "nvidia/*/lib/libnccl.so.2"):
            hits = sorted(glob.glob(os.path.join(d, pattern)))
            if hits:
                return hits[0]
    return None


_version: Optional[int] = None


def load() -> int:
    """NCCL's version code, loading it first; RuntimeError saying why when it cannot be loaded."""
    global _version
    if _version is None:
        if not minitorch.cuda.is_available():
            raise RuntimeError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")
        _version = int(_cuda().nccl_load(library_path()))
    return _version


def available() -> bool:
    try:
        load()
        return True
    except RuntimeError:
        return False


def version() -> tuple:
    v = load()
    return (v // 10000, v // 100 % 100, v % 100) if v >= 10000 else (v // 1000, v // 100 % 10, v % 100)


class Communicator:
    """One NCCL communicator of a process group on one device."""

    def __init__(self, pg, device: int) -> None:
        self.device = device
        self.handle = 0
        self.broken = False
        me = pg.rank()
        uid = _cuda().nccl_unique_id() if me == 0 else bytes(128)
        if pg._store is not None:  # through the rendezvous store, as PyTorch's: the n-th communicator's key
            n = pg.__dict__.get("_nccl_made", 0)
            pg._nccl_made = n + 1
            key = f"minitorch/nccl_unique_id/{n}"
            if me == 0:
                pg._store.set(key, uid)
            else:
                uid = pg._store.get(key)
        elif pg.size() > 1:  # a nonblocking broadcast, waited for at most the group's timeout
            buf = np.frombuffer(uid, dtype=np.uint8).copy()
            # on the checks' communicator, whose calls every rank makes in call order (dist.Work)
            req = pg._checks.Ibcast(buf, root=0)
            dist._wait_requests(pg, "ncclCommInitRank", [req], time.monotonic() + pg._timeout.total_seconds())
            uid = buf.tobytes()
        self.handle = _cuda().nccl_comm_init(device, pg.size(), uid, me, pg._timeout.total_seconds())

    def free(self, abort: bool = False) -> None:
        if self.handle:
            h, self.handle = self.handle, 0
            _cuda().nccl_comm_free(h, abort or self.broken)


def communicator(pg, device: int) -> Communicator:
    comms = pg.__dict__.setdefault("_nccl_comms", {})
    c = comms.get(device)
    if c is None:
        try:
            load()
            c = Communicator(pg, device)
        except dist.DistBackendError:
            raise
        except RuntimeError as e:
            raise dist._fail(pg, "ncclCommInitRank", str(e)) from None
        comms[device] = c
    return c


def free_all(pg, abort: bool = False) -> None:
    if not abort and pg.__dict__.get("_nccl_comms"):
        dist._flush(pg)  # the collectives still queued for their checks go out first
    for c in pg.__dict__.pop("_nccl_comms", {}).values():
        try:
            c.free(abort)
        except RuntimeError:
            pass


def uses_nccl(pg, *tensors) -> bool:
    """Whether the collective on these tensors goes to NCCL: a "nccl" group and CUDA tensors."""
    return pg.name() == "nccl" and any(t is not None and t.is_cuda for t in tensors)


def _nccl_type(t) -> int:
    name = dist._dtype_name(t)
    code = _TYPES.get(name)
    if code is None:
        raise TypeError(f"Input tensor data type is not supported for NCCL process group: "
                        f"{_TORCH_NAMES.get(name, name)}")
    return code


def _nccl_op(op, t) -> int:
    if not isinstance(op, dist.ReduceOp.RedOpType):
        raise TypeError(f"op must be a ReduceOp, got {op!r}")
    if op.value in (5, 6, 7):
        raise ValueError(f"Cannot use ReduceOp.{op.name} with NCCL")
    if t.dtype == minitorch.bool:  # as PyTorch: SUM and MAX are OR, PRODUCT and MIN are AND
        if op.value == 1:
            raise ValueError("Cannot use ReduceOp.AVG with boolean inputs")
        return _MAX if op.value in (0, 4) else _MIN
    return {0: _SUM, 1: _AVG, 2: _PROD, 3: _MIN, 4: _MAX}[op.value]


def _device(pg, *tensors) -> int:
    devs = {t.device.index or 0 for t in tensors if t is not None}
    if any(t is not None and not t.is_cuda for t in tensors):
        raise ValueError("Tensors must be CUDA and dense")
    if len(devs) != 1:
        raise ValueError("Tensors must be on the same device")
    return devs.pop()


def _contiguous(t):
    """t itself when contiguous, else a contiguous copy on its device (and the copy back)."""
    t = t.detach()
    if t.is_contiguous():
        return t, None
    c = t.contiguous()

    def back(dst=t, src=c) -> None:
        with minitorch.no_grad():
            dst.copy_(src)

    return c, back


class NcclWork(dist.Work):
    """A collective for NCCL: queued on its group in call order (dist._Queue, shared with the
    group's MPI collectives) until its cross-rank check, when it has one, came back equal on every
    rank; then launched on its device's current stream, with an event recorded after it. wait()
    starts what precedes it in the queue, then blocks the host until the event passed, at most the
    group's timeout (PyTorch's blocking wait)."""

    def __init__(self, pg, what: str, comm: Communicator, launch, check=None, key=None) -> None:
        self._pg = pg
        self._what = what
        self._comm = comm
        self._launch = launch  # runs the NCCL calls (and what follows them) on the stream
        self._check = check  # a dist._Check, maybe shared with the earlier calls of the same signature
        self._key = key  # the signature's key in the group's table (_signature_check)
        self._reqs = None
        self._done = False
        self._finish = None
        self._error = None
        self._event = None
        self._deadline = time.monotonic() + pg._timeout.total_seconds()

    def __del__(self) -> None:
        ev = getattr(self, "_event", None)
        if ev:
            try:
                _cuda().event_destroy(ev)
            except Exception:
                pass

    def _begin(self) -> None:
        """Launches the calls (its check passed on every rank), or keeps the check's error."""
        check, self._check = self._check, None
        if check is not None:
            self._error = check.verdict()
            table = self._pg.__dict__.get("_nccl_checked", {})
            if self._error is None and table.get(self._key) is check:
                table[self._key] = None  # known good from now on
        if self._error is not None:
            self._done = True
            return
        cuda = _cuda()
        with minitorch.cuda.device(self._comm.device):
            self._launch()
            self._event = cuda.event_create(self._comm.device, False, False)
            cuda.event_record(self._comm.device, self._event, cuda.current_stream(self._comm.device))

    def _raise_check_error(self) -> None:
        """Raises the check's error; the signature leaves the group's table here, where every rank
        raises it (the same point of the program), so that the tables stay alike."""
        table = self._pg.__dict__.get("_nccl_checked", {})
        if self._key in table and table[self._key] is not None:
            del table[self._key]
        raise self._error

    def _check_async(self) -> None:
        code, words = _cuda().nccl_async_error(self._comm.handle) if self._comm.handle else (0, "")
        if code:
            raise _broken(self._pg, self._comm, self._what, f"NCCL error {code}: {words}")

    def is_completed(self) -> bool:
        if not self._done:
            dist._queue(self._pg).advance()
            if self._event is None:
                return self._done  # still waiting for its check (or failed it: done)
            self._check_async()
            self._done = bool(_cuda().event_query(self._event))
        return self._done

    def wait(self, timeout=None) -> bool:
        deadline = self._deadline if timeout is None else min(self._deadline,
                                                              time.monotonic() + timeout.total_seconds())
        if not self._done:
            dist._queue(self._pg).advance(through=self, deadline=deadline)
        if self._error is not None:
            self._raise_check_error()
        while not self.is_completed():
            if time.monotonic() > deadline:
                self._pg._aborted = True  # every later call on the group raises at once
                raise _broken(self._pg, self._comm, self._what,
                              f"timed out after {self._pg._timeout.total_seconds():g} s (a peer process died, "
                              f"or did not call {self._what} with this group); the communicator was aborted")
            time.sleep(0.0002)
        return True


def _broken(pg, comm: Communicator, what: str, detail: str):
    comm.broken = True
    err = dist._fail(pg, what, detail)
    try:
        comm.free(abort=True)
    except RuntimeError:
        pass
    pg.__dict__.get("_nccl_comms", {}).pop(comm.device, None)
    return err


def _run(pg, comm: Communicator, what: str, calls, after=None):
    """calls: (kind, send, recv, count, type, op, root) tuples, as one NCCL group when several;
    then after() (stream-ordered work on the results)."""
    cuda = _cuda()
    try:
        if len(calls) > 1:
            cuda.nccl_group(True)
        try:
            for kind, send, recv, count, typ, op, root in calls:
                cuda.nccl_run(comm.handle, comm.device, kind, send, recv, count, typ, op, root)
        finally:
            if len(calls) > 1:
                cuda.nccl_group(False)
    except RuntimeError as e:
        raise _broken(pg, comm, what, str(e)) from None
    if after is not None:
        after()


def issue(pg, what: str, tensors: List, calls_fn, after=None, async_op: bool = False, check=None,
          nbytes: Optional[int] = None):
    """One NCCL collective over the CUDA tensors: queued behind the group's earlier collectives and
    the cross-rank check of its signature when new to the group (_signature_check), launched once
    that came back (at once when nothing waits: the usual case past a training loop's first step);
    calls_fn(comm) gives the calls, after what follows them on the stream. A NcclWork when async_op
    (nothing here waits for the check), else None once launched. One Comm::<what> range of nbytes
    (this rank's message; by default tensors[0]'s bytes)."""
    with dist._comm_event(what, dist._nbytes(tensors[0]) if nbytes is None else nbytes):
        dev = _device(pg, *tensors)
        if getattr(pg, "_aborted", False):  # a timeout aborted the group: fails at once, or at wait()
            if not async_op:
                dist._abort_check(pg, what)
            work = NcclWork(pg, what, None, None)
            work._error, work._done = dist._fail(pg, what, dist._CLOSED), True
            return work
        chk, key = _signature_check(pg, what, check) if check is not None else (None, None)
        comm = communicator(pg, dev)
        work = NcclWork(pg, what, comm, lambda: _run(pg, comm, what, calls_fn(comm), after), chk, key)
        dist._queue(pg).add(work)
        if not async_op:
            dist._queue(pg).advance(through=work, deadline=work._deadline)
            if work._error is not None:
                work._raise_check_error()
            work._check_async()
            return None
    return work


def _signature_check(pg, what: str, check: List[int]):
    """(the cross-rank check of a collective's sizes and dtypes, its key): once per group for each
    signature (the collective's name and its numbers), as a training loop repeats the same few and
    an MPI round trip before every NCCL launch would cost more than many of the calls themselves;
    PyTorch's ProcessGroupNCCL checks nothing across ranks. The group's table maps a signature to
    its check while that is pending (later calls of the signature share it, and fail with it), to
    None once it passed; a signature joins at the call and leaves where its failure is raised, both
    points of the program every rank reaches alike, so every rank decides alike whether a call
    checks (a rank passing a known signature while another passes a new one finds out by the
    timeout of the other's check or of its NCCL call). The table is emptied past 4096."""
    if pg.size() == 1:
        return None, None
    table = pg.__dict__.setdefault("_nccl_checked", {})
    key = (what, tuple(check))
    if key in table:
        return table[key], key
    if len(table) >= 4096:
        table.clear()
    chk = table[key] = dist._Check(pg, what, check)
    return chk, key


def _ptr(t) -> int:
    return t.data_ptr() if t.numel() else 0


# ---- the collectives ----

def all_reduce(pg, tensor, op, async_op):
    typ, nop = _nccl_type(tensor), _nccl_op(op, tensor)
    buf, back = _contiguous(tensor)
    return issue(pg, "all_reduce", [tensor],
                 lambda c: [(ALL_REDUCE, _ptr(buf), _ptr(buf), buf.numel(), typ, nop, 0)], back, async_op,
                 [tensor.numel(), dist._dtype_code(tensor)])


def broadcast(pg, tensor, root, async_op):
    typ = _nccl_type(tensor)
    buf, back = _contiguous(tensor)
    return issue(pg, "broadcast", [tensor],
                 lambda c: [(BROADCAST, _ptr(buf), _ptr(buf), buf.numel(), typ, 0, root)], back, async_op,
                 [tensor.numel(), dist._dtype_code(tensor), root])


def reduce(pg, tensor, root, op, async_op):
    typ, nop = _nccl_type(tensor), _nccl_op(op, tensor)
    buf, back = _contiguous(tensor)
    after = back if pg.rank() == root else None
    return issue(pg, "reduce", [tensor],
                 lambda c: [(REDUCE, _ptr(buf), _ptr(buf), buf.numel(), typ, nop, root)], after, async_op,
                 [tensor.numel(), dist._dtype_code(tensor), root])


def all_gather_into_tensor(pg, out, inp, async_op):
    typ = _nccl_type(inp)
    src, _ = _contiguous(inp)
    dst, back = _contiguous(out)
    return issue(pg, "all_gather_into_tensor", [out, inp],
                 lambda c: [(ALL_GATHER, _ptr(src), _ptr(dst), src.numel(), typ, 0, 0)], back, async_op,
                 [inp.numel(), dist._dtype_code(inp)], dist._nbytes(inp))


def all_gather(pg, tensor_list, tensor, async_op):
    typ = _nccl_type(tensor)
    src, _ = _contiguous(tensor)
    n = pg.size()
    flat = minitorch.empty((n,) + tuple(tensor.shape), dtype=tensor.dtype, device=tensor.device)

    def after():
        with minitorch.no_grad():
            for i, t in enumerate(tensor_list):
                t.copy_(flat[i])

    return issue(pg, "all_gather", [tensor, *tensor_list],
                 lambda c: [(ALL_GATHER, _ptr(src), _ptr(flat), src.numel(), typ, 0, 0)], after, async_op,
                 [tensor.numel(), dist._dtype_code(tensor)])


def reduce_scatter_tensor(pg, out, inp, op, async_op):
    typ, nop = _nccl_type(inp), _nccl_op(op, inp)
    src, _ = _contiguous(inp)
    dst, back = _contiguous(out)
    return issue(pg, "reduce_scatter_tensor", [out, inp],
                 lambda c: [(REDUCE_SCATTER, _ptr(src), _ptr(dst), dst.numel(), typ, nop, 0)], back, async_op,
                 [inp.numel(), dist._dtype_code(inp)], dist._nbytes(inp))


def gather(pg, tensor, gather_list, root, async_op):
    """NCCL has no gather: the root receives from each rank in one group (as PyTorch's NCCL)."""
    typ = _nccl_type(tensor)
    src, _ = _contiguous(tensor)
    me = pg.rank()
    parts = []
    if me == root:
        parts = [_contiguous(t) for t in gather_list]

    def calls(c):
        if me != root:
            return [(SEND, _ptr(src), 0, src.numel(), typ, 0, root)]
        return [(RECV, 0, _ptr(buf), buf.numel(), typ, 0, r) for r, (buf, _) in enumerate(parts) if r != me]

    def after():
        if me == root:
            with minitorch.no_grad():
                parts[me][0].copy_(src)
            for buf, back in parts:
                if back is not None:
                    back()

    return issue(pg, "gather", [tensor, *(gather_list or [])], calls, after, async_op,
                 [tensor.numel(), dist._dtype_code(tensor), root])


def scatter(pg, tensor, scatter_list, root, async_op):
    """NCCL has no scatter: the root sends to each rank in one group (as PyTorch's NCCL)."""
    typ = _nccl_type(tensor)
    dst, back = _contiguous(tensor)
    me = pg.rank()
    parts = [_contiguous(t)[0] for t in scatter_list] if me == root else []

    def calls(c):
        if me != root:
            return [(RECV, 0, _ptr(dst), dst.numel(), typ, 0, root)]
        return [(SEND, _ptr(buf), 0, buf.numel(), typ, 0, r) for r, buf in enumerate(parts) if r != me]

    def after():
        if me == root:
            with minitorch.no_grad():
                dst.copy_(parts[me])
        if back is not None:
            back()

    return issue(pg, "scatter", [tensor, *(scatter_list or [])], calls, after, async_op,
                 [tensor.numel(), dist._dtype_code(tensor), root])


def all_to_all_single(pg, output, input, out_splits: List[int], in_splits: List[int], async_op):
    """Rank r's in_splits[q] rows (along dim 0) to rank q, which puts them at its out_splits[r]
    place: one group of sends and recvs (as PyTorch's NCCL)."""
    typ = _nccl_type(input)
    src, _ = _contiguous(input)
    dst, back = _contiguous(output)
    me = pg.rank()
    row_in = src[0].numel() if src.dim() and src.shape[0] else 0
    row_out = dst[0].numel() if dst.dim() and dst.shape[0] else 0
    es = input.element_size()
    in_off = np.concatenate([[0], np.cumsum(in_splits)]).astype(np.int64)
    out_off = np.concatenate([[0], np.cumsum(out_splits)]).astype(np.int64)

    def calls(c):
        out = []
        for q in range(pg.size()):
            ni, no = int(in_splits[q]) * row_in, int(out_splits[q]) * row_out
            if q == me:
                continue
            if ni:
                out.append((SEND, _ptr(src) + int(in_off[q]) * row_in * es, 0, ni, typ, 0, q))
            if no:
                out.append((RECV, 0, _ptr(dst) + int(out_off[q]) * row_out * es, no, typ, 0, q))
        return out

    def after():
        if in_splits[me]:
            with minitorch.no_grad():
                dst[int(out_off[me]):int(out_off[me + 1])].copy_(src[int(in_off[me]):int(in_off[me + 1])])
        if back is not None:
            back()

    return issue(pg, "all_to_all_single", [output, input], calls, after, async_op, nbytes=dist._nbytes(input))


def all_to_all(pg, output_list, input_list, async_op):
    typ = _nccl_type(input_list[0])
    me = pg.rank()
    srcs = [_contiguous(t)[0] for t in input_list]
    dsts = [_contiguous(t) for t in output_list]

    def calls(c):
        out = []
        for q in range(pg.size()):
            if q == me:
                continue
            if srcs[q].numel():
                out.append((SEND, _ptr(srcs[q]), 0, srcs[q].numel(), typ, 0, q))
            if dsts[q][0].numel():
                out.append((RECV, 0, _ptr(dsts[q][0]), dsts[q][0].numel(), typ, 0, q))
        return out

    def after():
        with minitorch.no_grad():
            dsts[me][0].copy_(srcs[me])
        for buf, back in dsts:
            if back is not None:
                back()

    return issue(pg, "all_to_all", [*output_list, *input_list], calls, after, async_op,
                 nbytes=sum(dist._nbytes(t) for t in input_list))


def send(pg, tensor, peer: int, tag: int):
    typ = _nccl_type(tensor)
    src, _ = _contiguous(tensor)
    return issue(pg, "send", [tensor], lambda c: [(SEND, _ptr(src), 0, src.numel(), typ, 0, peer)], None, True)


def recv(pg, tensor, peer: int, tag: int):
    typ = _nccl_type(tensor)
    dst, back = _contiguous(tensor)
    work = issue(pg, "recv", [tensor], lambda c: [(RECV, 0, _ptr(dst), dst.numel(), typ, 0, peer)], back, True)
    work._peer = peer
    return work


def barrier(pg, async_op):
    """As PyTorch's NCCL barrier: an all_reduce of one element on the current device, waited for."""
    dev = minitorch.cuda.current_device()
    t = minitorch.zeros(1, device=f"cuda:{dev}")
    work = issue(pg, "barrier", [t], lambda c: [(ALL_REDUCE, _ptr(t), _ptr(t), 1, _TYPES["float32"], _SUM, 0)],
                 None, True)
    if async_op:
        return work
    work.wait()
    return None
