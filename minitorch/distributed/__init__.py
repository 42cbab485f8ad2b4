"""torch.distributed on MPI: process groups and collectives over CPU tensors (CUDA ones through
host memory).

The engine is MPI (MPICH from PyPI's `mpich` wheel, reached through mpi4py; the README's "More
than one process" says why): every collective is one nonblocking MPI call (MPI_Iallreduce,
MPI_Ibcast, ...) on the tensor's own memory, then polled against the group's timeout, so that a
peer that died or never calls makes this process raise DistBackendError instead of hanging.
Processes are started by `python -m minitorch.distributed.run --nproc-per-node N script.py`,
which runs them under MPICH's mpiexec and sets torchrun's environment variables, or by the script
itself (mp.spawn, multiprocessing.Process, a shell), each passing its rank: those meet through a
store (env:// with MASTER_ADDR/MASTER_PORT, tcp://, file://, store=), and the store starts their
MPI world (_start_world, _pmi.py).

minitorch imports without MPI: mpi4py is imported by init_process_group, not here.
"""
from __future__ import annotations

import atexit
import datetime
import importlib.util
import os
import pickle
import sys
import time
from typing import Any, List, Optional

import numpy as np

import minitorch
from minitorch.distributed import _session
from minitorch.distributed._store import (DistError, DistStoreError, FileStore, HashStore, PrefixStore, Store,
                                          TCPStore)

__all__ = ["Backend", "DistBackendError", "DistError", "DistStoreError", "FileStore", "GroupMember", "HashStore",
           "PrefixStore", "ProcessGroup", "ReduceOp", "Store", "TCPStore", "Work", "all_gather",
           "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single", "barrier",
           "broadcast", "broadcast_object_list", "destroy_process_group", "gather", "get_backend", "get_rank",
           "get_world_size", "group", "init_process_group", "irecv", "is_available", "is_gloo_available",
           "is_initialized", "is_mpi_available", "is_nccl_available", "isend", "new_group", "recv", "reduce",
           "reduce_op", "reduce_scatter_tensor", "scatter", "send", "P2POp", "batch_isend_irecv", "gather_object",
           "get_global_rank", "get_group_rank", "get_node_local_rank", "get_pg_count", "get_process_group_ranks",
           "is_backend_available", "is_torchelastic_launched", "monitored_barrier", "recv_object_list",
           "reduce_scatter", "scatter_object_list", "send_object_list", "supports_complex"]

default_pg_timeout = datetime.timedelta(minutes=30)


class DistBackendError(DistError):
    """Raised when the communication engine fails: a timeout, a dead peer, a mismatch across ranks."""


def is_mpi_available() -> bool:
    return importlib.util.find_spec("mpi4py") is not None


def is_available() -> bool:
    """True when the distributed package can run here (mpi4py and an MPI library are installed)."""
    return is_mpi_available()


def is_gloo_available() -> bool:
    return is_mpi_available()  # "gloo" names the CPU engine, which is MPI in minitorch


def is_nccl_available() -> bool:
    """Whether the "nccl" backend can run here: a CUDA device, and NCCL loads (the nvidia-nccl-cu13
    wheel's libnccl.so.2; built into the emulated device)."""
    if not is_mpi_available():
        return False
    from minitorch.distributed import _nccl

    return _nccl.available()


class Backend(str):
    """The names of the engines: "mpi", and "gloo" as its alias (minitorch's CPU engine is MPI)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: {type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


class ReduceOp:
    """The reductions of all_reduce and reduce_scatter: ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR,
    BXOR."""

    class RedOpType:
        def __init__(self, name: str, value: int) -> None:
            self.name = name
            self.value = value

        def __repr__(self) -> str:
            return f"<RedOpType.{self.name}: {self.value}>"

        def __eq__(self, other: object) -> bool:
            if isinstance(other, ReduceOp.RedOpType):
                return self.value == other.value
            return NotImplemented

        def __hash__(self) -> int:
            return self.value

    SUM = RedOpType("SUM", 0)
    AVG = RedOpType("AVG", 1)
    PRODUCT = RedOpType("PRODUCT", 2)
    MIN = RedOpType("MIN", 3)
    MAX = RedOpType("MAX", 4)
    BAND = RedOpType("BAND", 5)
    BOR = RedOpType("BOR", 6)
    BXOR = RedOpType("BXOR", 7)


class GroupMember:
    WORLD = None  # the default group, as torch.distributed.GroupMember.WORLD once initialized
    NON_GROUP_MEMBER = object()


group = GroupMember  # torch.distributed.group.WORLD


_MPI = None  # the mpi4py.MPI module once init_process_group imported it
_default_pg: Optional["ProcessGroup"] = None
_subgroups: List["ProcessGroup"] = []  # the live groups of new_group (destroyed with the default group)
_group_count = 0  # the groups made: the default one and every new_group call (members or not), as PyTorch's
_broken = False  # a collective failed: MPI_Finalize could wait forever on its requests, so exit skips it


def _mpi():
    global _MPI
    if _MPI is None:
        if not is_mpi_available():
            raise RuntimeError("minitorch.distributed needs MPI: pip install mpi4py mpich "
                               "(or `pip install 'minitorch[distributed]'`)")
        import mpi4py

        mpi4py.rc.initialize = True
        mpi4py.rc.finalize = True
        mpi4py.rc.errors = "exception"
        from mpi4py import MPI

        _MPI = MPI
        atexit.register(_exit_hook)  # registered after mpi4py's finalizer: runs before it
    return _MPI


def _exit_hook() -> None:
    if _broken:
        # a failed collective leaves requests that no peer will complete; MPI_Finalize would wait
        # on them forever. Leave without it, as PyTorch's process groups abort their communicators.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


class ProcessGroup:
    """A communicator over some ranks of the world: its MPI communicator, its ranks (global
    numbering), its backend name and timeout."""

    def __init__(self, comm, ranks: List[int], backend: str, timeout: datetime.timedelta, store=None) -> None:
        self._comm = comm
        self._ranks = list(ranks)
        self._backend = backend
        self._timeout = timeout
        self._store = store  # the rendezvous store (init_method tcp:// or file://, or store=), or None
        # the collectives' cross-rank checks (Work): on a communicator of their own, made here
        # while every member is in the call that makes the group
        self._checks = comm.Dup() if comm is not None else None
        # a collective of the group timed out: its requests stay pending on the peers, so every
        # later call raises at once (PyTorch's gloo closes the group's pairs)
        self._aborted = False

    def rank(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def name(self) -> str:
        return self._backend

    def _group_rank(self, global_rank: int, what: str) -> int:
        try:
            return self._ranks.index(global_rank)
        except ValueError:
            if self is _default_pg:  # PyTorch's words for each case
                raise RuntimeError(f"{what}: invalid root rank: {global_rank}") from None
            raise ValueError(f"Global rank {global_rank} is not part of group {self}") from None

    def __repr__(self) -> str:
        return f"ProcessGroup(backend={self._backend!r}, ranks={self._ranks})"


def _require_init() -> "ProcessGroup":
    if _default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to call "
                         "init_process_group.")
    return _default_pg


def _group(group) -> Optional["ProcessGroup"]:
    """The group to run on, or None when this rank is not a member of it."""
    pg = _require_init()
    if group is None or group is GroupMember.WORLD:
        return pg
    if group is GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def is_initialized() -> bool:
    return _default_pg is not None


def _env_int(name: str) -> int:
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                         f"variable {name} expected, but not set")
    return int(v)


def init_process_group(backend: Optional[str] = None, init_method: Optional[str] = None,
                       timeout: Optional[datetime.timedelta] = None, world_size: int = -1, rank: int = -1,
                       store: Any = None, group_name: str = "", pg_options: Any = None,
                       device_id: Any = None) -> None:
    """Joins the default process group. The processes are MPI's (started by
    `python -m minitorch.distributed.run`, or a single process on its own); rank and world_size,
    given or read from RANK and WORLD_SIZE (init_method "env://"), must be MPI's."""
    global _default_pg, _own_cpu_rank, _group_count
    if _default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend if backend is not None else "mpi")
    if name == Backend.NCCL:
        from minitorch.distributed import _nccl

        _nccl.load()  # RuntimeError when there is no GPU or NCCL does not load
    if name not in (Backend.MPI, Backend.GLOO, Backend.NCCL):
        raise ValueError(f"Invalid backend: '{backend}'")
    if init_method is not None and store is not None:
        raise ValueError("Cannot specify both init_method and store.")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got {timeout}")
    if store is not None:
        if world_size <= 0:
            raise ValueError("world_size must be positive if using store")
        if rank < 0:
            raise ValueError("rank must be non-negative if using store")
    elif init_method is not None and not init_method.startswith("env://"):
        store, rank, world_size = _rendezvous_store(init_method, rank, world_size, timeout)
    if rank < 0:
        rank = _env_int("RANK") if "RANK" in os.environ or world_size != 1 else 0
    if world_size < 0:
        world_size = _env_int("WORLD_SIZE") if "WORLD_SIZE" in os.environ or rank != 0 else 1
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {world_size - 1}]")
    if world_size > 1 and _MPI is None and not _under_mpiexec():
        # processes started on their own (mp.spawn, multiprocessing.Process, a shell): they meet
        # through the store, and the store starts their MPI world (_pmi.py)
        if store is None:
            store = _env_store(rank, world_size, timeout)
        _meet(store, rank, world_size, timeout)
        _session.enter_own_session()  # as mpiexec's ranks: a scheduler's share each (_session.py)
        _start_world(store, rank, world_size, timeout)
        store_met = True
    else:
        store_met = False
    MPI = _mpi()
    world = MPI.COMM_WORLD
    if world.Get_size() != world_size or world.Get_rank() != rank:
        raise RuntimeError(
            f"init_process_group(rank={rank}, world_size={world_size}) does not match the MPI world this "
            f"process is in (rank {world.Get_rank()} of {world.Get_size()}): start the processes with "
            f"`python -m minitorch.distributed.run --nproc-per-node {world_size} script.py`, or give them a "
            f"store to meet through (MASTER_ADDR and MASTER_PORT, tcp://, file://, store=) before MPI started")
    if store is not None and not store_met:
        _meet(store, rank, world_size, timeout)
    comm = world.Dup()
    _unlink_shared_segments()
    if world_size > 1:
        _own_cpu_rank = rank
        _start_on_own_cpu(rank)
    _default_pg = ProcessGroup(comm, list(range(world_size)), str(name), timeout, store)
    _group_count = 1
    GroupMember.WORLD = _default_pg


def _start_on_own_cpu(rank: int) -> None:
    """Moves this process to the rank-th CPU it may run on (modulo their number), then gives it
    back every CPU it had: a hint to the scheduler, not a binding. The ranks of a machine poll
    for each other (MPICH's progress is busy polling); two ranks on one CPU take turns of a
    time slice, and a loaded machine's scheduler seldom parts them: a 1 KB all_reduce then took
    4-10 ms instead of 20 us, in about a third of the runs of either mode on a loaded 2-core
    machine, and in none once each rank started on a CPU of its own. A process allowed one CPU
    only (the user's binding) stays where it is."""
    if not hasattr(os, "sched_setaffinity"):
        return
    try:
        allowed = os.sched_getaffinity(0)
        if len(allowed) > 1:
            os.sched_setaffinity(0, {sorted(allowed)[rank % len(allowed)]})
            os.sched_setaffinity(0, allowed)
    except OSError:
        pass  # not allowed here (a sandbox): the scheduler places the ranks alone


def _unlink_shared_segments() -> None:
    """Unlinks the name of the shared memory segment in which MPI_Init met the machine's other
    ranks (/dev/shm/mpich_shm_*, mapped by this process). MPICH unlinks it in MPI_Finalize, so a
    rank killed, or leaving without MPI_Finalize after a failed collective, would leave it in
    /dev/shm; once every rank is past MPI_Init (the world's Dup, a collective, returned here) no
    rank opens it by name again, and the mapping stays valid without the name."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split(None, 5)[5].strip() for line in f if "/dev/shm/mpich_shm_" in line}
    except (OSError, IndexError):
        return  # not Linux: nothing to do here
    for path in paths:
        if path.startswith("/dev/shm/mpich_shm_") and not path.endswith("(deleted)"):
            try:
                os.unlink(path)
            except OSError:
                pass  # another rank of the machine unlinked it first


def _rendezvous_store(init_method: str, rank: int, world_size: int, timeout: datetime.timedelta):
    """The store of a "tcp://host:port" or "file:///path" init_method (rank and world_size from
    the arguments, the URL's query ?rank=&world_size=, or RANK and WORLD_SIZE)."""
    from urllib.parse import parse_qs, urlparse

    url = urlparse(init_method)
    query = {k: v[-1] for k, v in parse_qs(url.query).items()}
    if rank < 0:
        rank = int(query.get("rank", os.environ.get("RANK", -1)))
    if world_size < 0:
        world_size = int(query.get("world_size", os.environ.get("WORLD_SIZE", -1)))
    if url.scheme not in ("tcp", "file"):
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    if rank < 0 or world_size <= 0:
        what = "rank" if rank < 0 else "world size"
        raise ValueError(f"Error initializing torch.distributed using {url.scheme}:// rendezvous: {what} "
                         f"parameter missing")
    if url.scheme == "tcp":
        if not url.hostname or url.port is None:
            raise ValueError(f"tcp:// rendezvous needs host:port, got {init_method!r}")
        store = TCPStore(url.hostname, url.port, world_size, rank == 0, timeout)
    else:
        path = url.path if not url.netloc else "/" + url.netloc + url.path
        if not path:
            raise ValueError(f"file:// rendezvous needs a path, got {init_method!r}")
        store = FileStore(path, world_size)
        store.set_timeout(timeout)
    return store, rank, world_size


def _meet(store, rank: int, world_size: int, timeout: datetime.timedelta) -> None:
    """Every rank checks in through the store (set rank/<r>, wait for all): the rendezvous PyTorch's
    init_process_group makes; a rank that never comes raises the store's timeout error."""
    store.set(f"minitorch/rank/{rank}", str(os.getpid()))
    store.wait([f"minitorch/rank/{r}" for r in range(world_size)], timeout)


# the environment of a process started by a process manager (mpiexec's proxy, srun, Open MPI's
# orted): its MPI world is the launcher's
_LAUNCHER_VARS = ("PMI_RANK", "PMI_FD", "PMI_PORT", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")


def _under_mpiexec() -> bool:
    return any(v in os.environ for v in _LAUNCHER_VARS)


def _env_store(rank: int, world_size: int, timeout: datetime.timedelta) -> "TCPStore":
    """init_method env:// without a launcher: the TCPStore at MASTER_ADDR:MASTER_PORT, served by
    rank 0 (PyTorch's env:// rendezvous)."""
    addr = os.environ.get("MASTER_ADDR")
    port = os.environ.get("MASTER_PORT")
    for name, value in (("MASTER_ADDR", addr), ("MASTER_PORT", port)):
        if value is None:
            raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment "
                             f"variable {name} expected, but not set")
    return TCPStore(addr, int(port), world_size, rank == 0, timeout)


def _start_world(store, rank: int, world_size: int, timeout: datetime.timedelta) -> None:
    """Starts MPI in this process as rank `rank` of a world of world_size processes that were not
    started by mpiexec: rank 0 runs the PMI server of _pmi.py (a process of its own) and publishes
    its port through the store; every rank connects to it and hands the socket to MPICH's MPI_Init
    (PMI_FD, PMI_RANK, PMI_SIZE), which forms the world through it. The processes must be on one
    machine (the server listens on loopback; the world is one node, ranks meeting over shared
    memory)."""
    import socket
    import subprocess

    store.set(f"minitorch/host/{rank}", socket.gethostname())
    hosts = [store.get(f"minitorch/host/{r}").decode() for r in range(world_size)]
    other = next((r for r, h in enumerate(hosts) if h != hosts[0]), None)
    if other is not None:
        raise RuntimeError(f"minitorch.distributed: processes that meet through a store must run on one "
                           f"machine; rank {other} is on {hosts[other]!r}, rank 0 on {hosts[0]!r}")
    key = "minitorch/pmi_port"
    if rank == 0:
        server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pmi.py")
        proc = subprocess.Popen([sys.executable, server, str(world_size), str(timeout.total_seconds())],
                                stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        line = proc.stdout.readline()
        proc.stdout.close()
        if not line.strip():
            raise RuntimeError("minitorch.distributed: the PMI server (distributed/_pmi.py) did not start")
        global _pmi_server
        _pmi_server = proc  # it ends when every rank left MPI
        store.set(key, line.strip())
    port = int(store.get(key))
    conn = socket.create_connection(("127.0.0.1", port), timeout=timeout.total_seconds())
    try:
        conn.sendall(f"cmd=minitorch_hello rank={rank} pid={os.getpid()}\n".encode())
        # MPI_Init holds Python's GIL until every rank joined, and so stops a TCPStore that this
        # process serves (rank 0's, for env://): that process starts it only once every rank is
        # done with the store; the others need it no more
        if store.add("minitorch/pmi_joined", 1) == world_size:
            store.set("minitorch/pmi_go", "1")
        if _serves(store):
            store.wait(["minitorch/pmi_go"], timeout)
    except BaseException:
        try:
            conn.sendall(b"cmd=minitorch_leave\n")  # the server ends the ranks already in MPI_Init
        finally:
            conn.close()
        raise
    conn.settimeout(None)
    fd = conn.detach()  # MPICH's from now on (it closes it in MPI_Finalize)
    ours = os.dup(fd)  # to say MPI_Init returned: a line between MPICH's requests and replies
    # mpiexec's proxy's variables (MPI_LOCAL*: every rank is on this machine)
    given = dict(PMI_FD=str(fd), PMI_RANK=str(rank), PMI_SIZE=str(world_size), MPI_LOCALNRANKS=str(world_size),
                 MPI_LOCALRANKID=str(rank))
    given.update(_topology_env())
    os.environ.update(given)
    try:
        _mpi()  # MPI_Init_thread: through the server, with the other ranks
        try:
            os.write(ours, b"cmd=minitorch_initialized\n")
        except OSError:
            pass  # the server is gone (a rank died): the collectives' timeouts will say so
    finally:
        os.close(ours)
        for name in given:  # not for this process's children (MPICH reads the others later too)
            if name.startswith(("PMI_", "MPI_LOCAL", "HWLOC_")):
                os.environ.pop(name, None)


def _topology_env() -> dict:
    """What MPI_Init needs so that it leaves this process on its CPU. Each rank started without
    mpiexec discovers the machine's topology in its MPI_Init (mpiexec does it once and hands the
    ranks the result, PMI_hwloc_xmlfile), and hwloc's x86 backend reads each CPU's CPUID by
    binding the process to every CPU in turn: the process ends its MPI_Init on the last CPU, so
    every rank of the machine starts on the same one. Two ranks polling for each other on one CPU
    take turns of a scheduler's time slice: a 1 KB all_reduce took 4-8 ms instead of 20 us in
    most runs on a loaded 2-core machine, and the scheduler seldom parts them. Without the x86
    backend, hwloc reads the same topology from Linux's /sys and /proc, binding nothing. A
    topology chosen by the user (HWLOC_COMPONENTS, HWLOC_XMLFILE) is left alone."""
    if "HWLOC_COMPONENTS" in os.environ or "HWLOC_XMLFILE" in os.environ:
        return {}
    return {"HWLOC_COMPONENTS": "-x86"}


_pmi_server = None


def _serves(store) -> bool:
    """Whether this process serves the store (a TCPStore made with is_master=True here)."""
    while isinstance(store, PrefixStore):
        store = store.underlying_store
    return getattr(store, "_server", None) is not None


def destroy_process_group(group=None) -> None:
    """Frees the group's communicator (the default group and all others when group is None)."""
    global _default_pg, _own_cpu_rank, _group_count
    pg = _require_init()
    target = pg if group is None or group is GroupMember.WORLD else group
    if target is GroupMember.NON_GROUP_MEMBER:
        return
    from minitorch.distributed import _nccl

    # the default group takes every group made by new_group with it (their NCCL communicators)
    for g in ([target] if target is not pg else [*_subgroups, pg]):
        _nccl.free_all(g, abort=_broken)
        if not _broken and g is not pg:
            _free(g)
    if target is not pg and target in _subgroups:
        _subgroups.remove(target)
    if not _broken and target is pg:
        _free(target)
    if target is pg:
        _subgroups.clear()
        _default_pg = None
        _group_count = 0
        _own_cpu_rank = -1
        GroupMember.WORLD = None


def _free(pg: "ProcessGroup") -> None:
    _flush(pg)
    if pg._checks is not None:
        pg._checks.Free()
    pg._comm.Free()


def get_rank(group=None) -> int:
    pg = _group(group)
    return -1 if pg is None else pg.rank()


def get_world_size(group=None) -> int:
    pg = _group(group)
    return -1 if pg is None else pg.size()


def get_backend(group=None) -> str:
    pg = _group(group)
    if pg is None:
        raise ValueError("Invalid process group specified")
    return pg.name()


def new_group(ranks: Optional[List[int]] = None, timeout: Optional[datetime.timedelta] = None, backend=None,
              pg_options=None, use_local_synchronization: bool = False, group_desc: Optional[str] = None):
    """A group of some ranks of the world; every rank of the world calls it (in the same order as the
    other new_group calls). Ranks outside it get GroupMember.NON_GROUP_MEMBER."""
    pg = _require_init()
    n = pg.size()
    ranks = sorted(range(n) if ranks is None else ranks)
    if len(set(ranks)) != len(ranks):
        raise ValueError("ranks passed to new_group must be unique")
    for r in ranks:
        if not 0 <= r < n:
            raise ValueError(f"The new group's rank should be within the world_size set by "
                             f"init_process_group, got {r}")
    MPI = _mpi()
    global _group_count
    _group_count += 1
    me = pg.rank()
    inside = me in ranks
    _flush(pg)
    comm = pg._comm.Split(0 if inside else MPI.UNDEFINED, ranks.index(me) if inside else 0)
    if not inside:
        return GroupMember.NON_GROUP_MEMBER
    prefixed = None if pg._store is None else PrefixStore("group_" + "_".join(map(str, ranks)), pg._store)
    group = ProcessGroup(comm, ranks, str(Backend(backend)) if backend else pg.name(),
                         timeout if timeout is not None else pg._timeout, prefixed)
    _subgroups.append(group)
    return group


def _get_default_store():
    """The default group's store (None when it met through MPI alone, init_method env://)."""
    return _require_init()._store


def _nccl_module():
    from minitorch.distributed import _nccl

    return _nccl


def _nccl_for(pg, *tensors):
    """The NCCL backend's module when this collective goes to NCCL (a "nccl" group, CUDA
    tensors), else None: CPU tensors of a "nccl" group take MPI, as PyTorch's "cpu:gloo,cuda:nccl"."""
    if pg.name() != Backend.NCCL:
        return None
    nccl = _nccl_module()
    return nccl if nccl.uses_nccl(pg, *tensors) else None


# ---- buffers ----

_FLOAT_UP = ("float16", "bfloat16")  # reduced in float32 (MPI has no 16-bit float type)


def _dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


def _pair_group(out, out_name: str, inp, in_name: str, group) -> Optional["ProcessGroup"]:
    """The checks of a collective from one tensor into another: both tensors, then _group."""
    _check_tensor(out, out_name)
    _check_tensor(inp, in_name)
    return _group(group)


def _check_tensor(t, what: str = "tensor") -> None:
    if not isinstance(t, minitorch.Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{what}` of type torch.Tensor\n"
                        f"             but got {type(t)} instead.")


def _host(t):
    """t's values in contiguous host memory (t itself when it is a contiguous CPU tensor): CUDA
    tensors go through the host, as gloo's CUDA collectives do."""
    t = t.detach()
    return (t.cpu() if t.is_cuda else t).contiguous()


def _flat(t) -> np.ndarray:
    """The tensor's memory as a 1-D array (no copy): it must be contiguous."""
    if not t.is_contiguous():
        raise ValueError("Tensors must be contiguous")
    if t.numel() == 0:
        return np.empty(0, dtype=np.uint8)
    return np.asarray(memoryview(t.detach())).reshape(-1)


def _bytes(t) -> np.ndarray:
    a = _flat(t)
    return a.view(np.uint8) if a.size else a


def _mpi_op(op, dtype_name: str):
    MPI = _mpi()
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"op must be a ReduceOp, got {op!r}")
    if dtype_name == "bool":
        table = {0: MPI.LOR, 4: MPI.LOR, 3: MPI.LAND, 2: MPI.LAND, 6: MPI.LOR, 5: MPI.LAND, 7: MPI.LXOR}
    else:
        table = {0: MPI.SUM, 1: MPI.SUM, 2: MPI.PROD, 3: MPI.MIN, 4: MPI.MAX, 5: MPI.BAND, 6: MPI.BOR,
                 7: MPI.BXOR}
    if op.value not in table:
        raise ValueError(f"Cannot use {op} with bool tensors")
    if op.value in (5, 6, 7) and dtype_name.startswith(("float", "bfloat", "complex")):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op.value in (3, 4) and dtype_name.startswith("complex"):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with Complex tensors")
    return table[op.value]


# ---- profiler ranges ----

class _comm_event:
    """A `Comm::<name>` range in the profiler's events (and so in the journey and the Chrome trace),
    one per collective call, tagged with the bytes of this rank's message."""

    def __init__(self, name: str, nbytes: int = 0) -> None:
        self.name = name
        self.nbytes = nbytes
        self.open = False

    def __enter__(self):
        self.open = minitorch._C._trace_enabled()
        if self.open:
            minitorch._C._trace_enter("Comm::" + self.name, "user_annotation", self.nbytes)
        return self

    def __exit__(self, *exc) -> bool:
        if self.open:
            minitorch._C._trace_exit()
        return False


# ---- Work ----

_CLOSED = "Application timeout caused pair closure"  # PyTorch's gloo, on every call after a timeout


def _fail(pg: "ProcessGroup", what: str, detail: str, broken: bool = True) -> "DistBackendError":
    """The error of a failed collective; broken: its requests may never complete (a timeout, a
    dead peer), so the process must not wait in MPI_Finalize at exit."""
    global _broken
    _broken = _broken or broken
    return DistBackendError(f"[Rank {_default_pg.rank() if _default_pg else '?'}] {what} on {pg!r} "
                            f"failed: {detail}")


def _timed_out(pg: "ProcessGroup", what: str) -> "DistBackendError":
    """The error of a collective that timed out; the group is aborted from now on (_abort_check)."""
    pg._aborted = True
    return _fail(pg, what, f"timed out after {pg._timeout.total_seconds():g} s (a peer process died, or did "
                           f"not call {what} with this group)")


def _abort_check(pg: "ProcessGroup", what: str) -> None:
    """Raises at once on a group aborted by a timeout, as PyTorch's gloo does on every call after
    one (the peers' side of the timed-out collective can never match again)."""
    if getattr(pg, "_aborted", False):
        raise _fail(pg, what, _CLOSED)


def _wait_requests(pg: "ProcessGroup", what: str, reqs, deadline: float, statuses=None) -> None:
    """Polls the requests (MPICH progresses them inside MPI_Test) until done or past deadline: a
    busy poll for the first millisecond, then back to this rank's CPU (_back_to_own_cpu) and
    yielding the core between polls (the ranks may share cores), then polls 1 ms apart once it
    has lasted 50 ms. On a group aborted by a timeout (this one's or an earlier one's) raises at once."""
    global _broken
    MPI = _mpi()
    t0 = time.monotonic()
    homed = False
    try:
        while True:
            if MPI.Request.Testall(reqs, statuses):
                return
            _abort_check(pg, what)
            now = time.monotonic()
            if now > deadline:
                raise _timed_out(pg, what)
            if now - t0 > 0.001:
                if not homed:
                    homed = True
                    _back_to_own_cpu(now)
                time.sleep(0 if now - t0 < 0.05 else 0.001)
    except MPI.Exception as e:
        raise _fail(pg, what, f"MPI error: {e.Get_error_string()}") from None
    except KeyboardInterrupt:
        # Ctrl-C during the wait: the requests stay pending, and MPI_Finalize would wait for them
        _broken = True
        raise


_own_cpu_rank = -1  # the rank whose CPU this process keeps to (init_process_group's), -1: none
_own_cpu_last = 0.0  # when it last went back there


def _back_to_own_cpu(now: float) -> None:
    """A wait that lasts: the peer may be waiting for a turn on this CPU (the scheduler of a
    loaded machine moves ranks together again after init_process_group parted them). Going back
    to this rank's CPU (at most every 10 ms) parts them again."""
    global _own_cpu_last
    if _own_cpu_rank >= 0 and now - _own_cpu_last > 0.01:
        _own_cpu_last = now
        _start_on_own_cpu(_own_cpu_rank)


class Work:
    """An issued collective: wait() blocks until it finished (raising DistBackendError on a timeout,
    a failed peer or arguments that differ across ranks), is_completed() asks without blocking.

    A collective with a cross-rank check of its arguments (_check) runs in two steps, neither of
    which blocks the call: the check, an all-gather of each rank's signature on the group's check
    communicator, starts at once; the collective itself starts on the group's communicator once the
    check came back equal on every rank, at the first of: the next collective call on the group,
    is_completed(), wait(). The group's queue (_Queue) starts them in call order, the same order
    on every rank, as MPI requires."""

    def __init__(self, pg: "ProcessGroup", what: str, start, finish=None, check=None) -> None:
        self._pg = pg
        self._what = what
        self._start = start
        self._reqs = None  # the collective's requests, once started
        self._statuses = []
        self._finish = finish
        self._check = check  # a _Check, or None
        self._error = None  # the check's DistBackendError: the collective never started, on any rank
        self._done = False
        self._deadline = time.monotonic() + pg._timeout.total_seconds()

    def _begin(self) -> None:
        """Starts the collective (its check passed on every rank), or keeps the check's error."""
        if self._check is not None:
            self._error = self._check.verdict()
            self._check = None
        if self._error is not None:
            self._done = True
            return
        MPI = _mpi()
        try:
            self._reqs = list(self._start())
        except MPI.Exception as e:
            raise _fail(self._pg, self._what, f"MPI error: {e.Get_error_string()}") from None
        self._statuses = [MPI.Status() for _ in self._reqs]

    def is_completed(self) -> bool:
        if self._done:
            return True
        _queue(self._pg).advance()
        if self._reqs is None:
            return self._done  # still waiting for its check (or failed it: done)
        MPI = _mpi()
        try:
            if MPI.Request.Testall(self._reqs, self._statuses):
                self._complete()
        except MPI.Exception as e:
            raise _fail(self._pg, self._what, f"MPI error: {e.Get_error_string()}") from None
        return self._done

    def _complete(self) -> None:
        if not self._done:
            self._done = True
            if self._finish is not None:
                self._finish()

    def wait(self, timeout: Optional[datetime.timedelta] = None) -> bool:
        if not self._done:
            deadline = self._deadline
            if timeout is not None:
                deadline = min(deadline, time.monotonic() + timeout.total_seconds())
            _queue(self._pg).advance(through=self, deadline=deadline)
            if self._reqs is not None and not self._done:
                _wait_requests(self._pg, self._what, self._reqs, deadline, self._statuses)
                self._complete()
        if self._error is not None:
            raise self._error
        return True

    def is_success(self) -> bool:
        return self._done and self._error is None

    def exception(self):
        return self._error

    def result(self) -> List:
        """The tensors the collective wrote (all_reduce's tensor, ...), once it completed."""
        self.wait()
        return list(getattr(self, "_result", []))

    def get_future(self):
        """A minitorch.futures.Future of the collective's result tensors (a list)."""
        return minitorch.futures.Future._of(self.result, self.is_completed)


class _Check:
    """The cross-rank check of a collective's arguments: every rank's signature (numbers of
    elements, dtype codes, root) gathered on the group's check communicator, nonblocking; every
    rank gets the same table, so all of them pass or all raise. agree(table, rank) says whether
    the table is right (by default: every row equal to this rank's)."""

    def __init__(self, pg: "ProcessGroup", what: str, signature: List[int], agree=None) -> None:
        self.pg = pg
        self.what = what
        self.mine = np.asarray(signature, dtype=np.int64)
        self.table = np.empty((pg.size(), self.mine.size), dtype=np.int64)
        self.agree = agree
        self.req = None
        if getattr(pg, "_aborted", False):  # its work fails at once (_Queue.advance, wait)
            return
        MPI = _mpi()
        try:
            self.req = pg._checks.Iallgather(self.mine, self.table)
        except MPI.Exception as e:
            raise _fail(pg, what, f"MPI error: {e.Get_error_string()}") from None

    def verdict(self) -> Optional["DistBackendError"]:
        """None when the ranks agree, else the error to raise (the check's request completed)."""
        if self.agree is not None:
            bad = self.agree(self.table)
        else:
            bad = None if (self.table == self.mine).all() else (
                "the ranks passed tensors of different sizes or dtypes (this rank: "
                f"{self.mine.tolist()}; by rank: {self.table.tolist()})")
        return None if bad is None else _fail(self.pg, self.what, bad, broken=False)

    def wait(self) -> None:
        """Blocks until the check came back (at most the group's timeout); raises when it failed."""
        _abort_check(self.pg, self.what)
        _wait_requests(self.pg, self.what, [self.req], time.monotonic() + self.pg._timeout.total_seconds())
        err = self.verdict()
        if err is not None:
            raise err


class _Queue:
    """A group's collectives whose check was issued and whose call was not: they start in call
    order (on every rank the same), each once its check completed."""

    def __init__(self, pg: "ProcessGroup") -> None:
        self.pg = pg
        self.works: List[Work] = []

    def advance(self, through: Optional[Work] = None, deadline: Optional[float] = None) -> None:
        """Starts the works whose checks completed, in order; through: waits (until deadline) for
        the checks up to that work and starts it."""
        MPI = _mpi()
        while self.works:
            head = self.works[0]
            if getattr(self.pg, "_aborted", False):  # never started, and never will be: each raises at its wait()
                self.works.pop(0)
                head._check = None
                head._error = _fail(self.pg, head._what, _CLOSED)
                head._done = True
                continue
            if head._check is not None:
                waiting = through is not None and through in self.works
                try:
                    if not waiting:
                        if not head._check.req.Test():
                            return
                    else:  # a timeout names the collective waited for (an earlier one may be the cause)
                        _wait_requests(self.pg, through._what, [head._check.req], deadline)
                except MPI.Exception as e:
                    raise _fail(self.pg, head._what, f"MPI error: {e.Get_error_string()}") from None
            self.works.pop(0)
            head._begin()

    def add(self, work: Work) -> None:
        self.works.append(work)
        self.advance()


def _queue(pg: "ProcessGroup") -> _Queue:
    q = pg.__dict__.get("_queue")
    if q is None:
        q = pg._queue = _Queue(pg)
    return q


def _flush(pg: "ProcessGroup") -> None:
    """Starts every collective of the group's queue (waiting for their checks): before any other
    call on the group's communicator, so that every rank makes its calls in the same order."""
    q = _queue(pg)
    if q.works:
        q.advance(through=q.works[-1], deadline=q.works[-1]._deadline)


def _issue(pg, what: str, start, finish=None, async_op: bool = False, check=None, nbytes: int = 0,
           p2p: bool = False):
    """Runs start() -> requests as the `what` collective, after the cross-rank check of its
    arguments when there is one (check: the signature, or a _Check): a Work when async_op, which
    nothing here waits for; else waits for it. One Comm::<what> range of nbytes. p2p: a send or
    receive, started at once (MPI matches those by peer and tag, not by order among collectives)."""
    with _comm_event(what, nbytes):
        if check is not None and not isinstance(check, _Check) and pg.size() > 1:
            check = _Check(pg, what, check)
        work = Work(pg, what, start, finish, check if isinstance(check, _Check) else None)
        if getattr(pg, "_aborted", False):  # a Work that raises at wait(), as PyTorch's gloo
            work._check, work._error, work._done = None, _fail(pg, what, _CLOSED), True
        elif p2p:
            work._begin()
        else:
            _queue(pg).add(work)
        if not async_op:
            work.wait()
            return None
    return _retained(work)


_in_flight: List[Work] = []  # the async collectives issued and not seen completed


def _retained(work: Work) -> Work:
    """work, referenced here until it completes: MPI (or NCCL on its stream) uses the buffers until
    then, so an async collective whose Work the caller drops (Join.notify_join_context's) must not
    free them."""
    _in_flight[:] = [w for w in _in_flight if not w.is_completed()]
    _in_flight.append(work)
    return work


def _check_across(pg, what: str, signature: List[int]) -> None:
    """Every rank must pass the same signature (numbers of elements, dtype codes): raises, on every
    rank alike, when some rank differs (a blocking _Check)."""
    _abort_check(pg, what)
    if pg.size() > 1:
        _Check(pg, what, signature).wait()


def _nbytes(t) -> int:
    """The bytes of t's elements (a Comm:: range's size: this rank's message, as PyTorch's
    profiler gives a collective's element count and dtype)."""
    return t.numel() * t.element_size()


def _dtype_code(t) -> int:
    # stable across processes: the dtype's name, hashed to a number the same everywhere
    return sum((i + 1) * ord(c) for i, c in enumerate(_dtype_name(t)))


def _staged(tensor, dtype=None):
    """A contiguous tensor (of dtype when given) a collective writes, and the function that puts
    what it wrote back into tensor (nothing to do when that is tensor itself)."""
    if dtype is not None and tensor.dtype != dtype:
        out = _host(tensor).to(dtype).contiguous()
    else:
        out = tensor.detach().cpu().contiguous() if tensor.is_cuda else (
            tensor if tensor.is_contiguous() else tensor.detach().contiguous())

    def back() -> None:
        if out is not tensor:
            with minitorch.no_grad():
                tensor.copy_(out)

    return out, back


def _avg(buf: np.ndarray, n: int) -> None:
    """ReduceOp.AVG after the SUM: floats divided, integers divided and truncated (as NCCL's)."""
    if buf.dtype.kind in "iu":
        np.copyto(buf, np.trunc(buf / n).astype(buf.dtype))
    elif buf.dtype.kind != "b":
        buf[...] /= n


def _root_list(pg, root: int, lst, tensor, name: str, role: str) -> None:
    """gather's and scatter's list: one tensor per rank like tensor on the root, none elsewhere."""
    if pg.rank() == root:
        if lst is None:
            raise ValueError(f"Argument ``{name}`` must be specified on {role} rank.")
        _same_layout(lst, tensor, name, pg.size())
    elif lst:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{role} ranks.")


# ---- collectives ----

def _reduction_buffer(tensor, op):
    """(the MPI op, the flat buffer to reduce tensor in, the copy back into tensor) of a reduction
    in place: the narrow float dtypes (_FLOAT_UP) reduce in float32."""
    name = _dtype_name(tensor)
    mop = _mpi_op(op, name)
    work_t, back = _staged(tensor, minitorch.float32 if name in _FLOAT_UP else None)
    return mop, _flat(work_t), back


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduces tensor over the group's ranks, in place on each (SUM, AVG, PRODUCT, MIN, MAX, BAND,
    BOR, BXOR)."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    if _nccl_for(pg, tensor):
        return _with_result(_nccl_for(pg, tensor).all_reduce(pg, tensor, op, async_op), [tensor])
    mop, buf, back = _reduction_buffer(tensor, op)
    MPI = _mpi()
    n = pg.size()

    def finish():
        if op == ReduceOp.AVG:
            _avg(buf, n)
        back()

    return _with_result(_issue(pg, "all_reduce", lambda: [pg._comm.Iallreduce(MPI.IN_PLACE, buf, mop)], finish,
                               async_op, [tensor.numel(), _dtype_code(tensor)], _nbytes(tensor)), [tensor])


def _with_result(work, tensors):
    """work (None for a blocking call), knowing the tensors it writes (Work.result())."""
    if work is not None:
        work._result = tensors
        if work not in _in_flight:
            _retained(work)
    return work


def _rooted(tensor, group, group_root: Optional[int], root, what: str):
    """(group, the root's rank in it) of a collective on tensor rooted at a rank (group_root, a rank
    of the group, or else root, a global one); (None, None) where this rank is not in the group."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None, None
    return pg, group_root if group_root is not None else pg._group_rank(root, what)


def broadcast(tensor, src: int = 0, group=None, async_op: bool = False, group_src: Optional[int] = None):
    """Copies src's tensor into every rank's tensor."""
    pg, root = _rooted(tensor, group, group_src, src, "src rank")
    if pg is None:
        return None
    if _nccl_for(pg, tensor):
        return _nccl_for(pg, tensor).broadcast(pg, tensor, root, async_op)
    work_t, finish = _staged(tensor)
    buf = _bytes(work_t)
    return _issue(pg, "broadcast", lambda: [pg._comm.Ibcast(buf, root)], finish, async_op,
                  [tensor.numel(), _dtype_code(tensor), root], _nbytes(tensor))


def _same_layout(tensors, ref, what: str, n: int) -> None:
    """A list of one tensor per rank, each of ref's dtype and shape (PyTorch's RuntimeErrors)."""
    if len(tensors) != n:
        raise RuntimeError(f"{what}: invalid tensor list (expected length {n}, got {len(tensors)})")
    for i, t in enumerate(tensors):
        _check_tensor(t, what)
        if t.dtype != ref.dtype:
            raise RuntimeError(f"{what}: invalid tensor type at index {i} (expected {ref.dtype}, got {t.dtype})")
        if tuple(t.shape) != tuple(ref.shape):
            raise RuntimeError(f"{what}: invalid tensor size at index {i} (expected {tuple(ref.shape)}, got "
                               f"{tuple(t.shape)})")


def all_gather(tensor_list: List, tensor, group=None, async_op: bool = False):
    """tensor_list[i] <- rank i's tensor, on every rank."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    n = pg.size()
    _same_layout(tensor_list, tensor, "all_gather", n)
    if _nccl_for(pg, tensor, *tensor_list):
        return _nccl_for(pg, tensor).all_gather(pg, tensor_list, tensor, async_op)
    send = _bytes(_host(tensor))
    recv = np.empty(send.size * n, dtype=np.uint8)

    def finish():
        for i, t in enumerate(tensor_list):
            part = recv[i * send.size:(i + 1) * send.size]
            _assign_bytes(t, part)

    return _issue(pg, "all_gather", lambda: [pg._comm.Iallgather(send, recv)], finish, async_op,
                  [tensor.numel(), _dtype_code(tensor)], _nbytes(tensor))


def _assign_bytes(t, raw: np.ndarray) -> None:
    """t <- raw bytes of its dtype and shape."""
    if t.numel() == 0:
        return
    if t.is_contiguous() and not t.is_cuda:
        _bytes(t)[:] = raw
    else:
        tmp = minitorch.empty(tuple(t.shape), dtype=t.dtype)
        _bytes(tmp)[:] = raw
        with minitorch.no_grad():
            t.copy_(tmp)


def _check_split_pair(group, output, input, names, gather):
    """The group (None where this rank is not in it) of all_gather_into_tensor (gather) or
    reduce_scatter_tensor, after their checks: both tensors, the same dtype, and the whole side
    (output when gathering, else input) world_size times the other's elements, in the messages of
    each (PyTorch's ProcessGroup checks)."""
    pg = _pair_group(output, names[0], input, names[1], group)
    if pg is None:
        return None
    whole, part = (output, input) if gather else (input, output)
    if output.dtype != input.dtype:
        raise RuntimeError("output tensor must have the same type as input tensor" if gather
                           else "input tensor must have the same type as output tensor")
    if whole.numel() != part.numel() * pg.size():
        raise RuntimeError("output tensor size must be equal to world_size times input tensor size" if gather
                           else "input tensor must be the same size as output size times world size")
    return pg


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op: bool = False):
    """output_tensor (world_size * input's elements, stacked or concatenated along dim 0) <- every
    rank's input_tensor in rank order."""
    pg = _check_split_pair(group, output_tensor, input_tensor, ("output_tensor", "input_tensor"), gather=True)
    if pg is None:
        return None
    if _nccl_for(pg, output_tensor, input_tensor):
        return _nccl_for(pg, input_tensor).all_gather_into_tensor(pg, output_tensor, input_tensor, async_op)
    send = _bytes(_host(input_tensor))
    out, finish = _staged(output_tensor)
    recv = _bytes(out)
    return _issue(pg, "all_gather_into_tensor", lambda: [pg._comm.Iallgather(send, recv)], finish, async_op,
                  [input_tensor.numel(), _dtype_code(input_tensor)], _nbytes(input_tensor))


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """output <- rank's slice (1/world_size of input, in rank order) of input reduced over the ranks."""
    pg = _check_split_pair(group, output, input, ("output", "input"), gather=False)
    if pg is None:
        return None
    n = pg.size()
    if _nccl_for(pg, output, input):
        return _nccl_for(pg, input).reduce_scatter_tensor(pg, output, input, op, async_op)
    name = _dtype_name(input)
    mop = _mpi_op(op, name)
    up = name in _FLOAT_UP
    src = _host(input)
    send = _flat(src.to(minitorch.float32).contiguous() if up else src)
    out, back = _staged(output, minitorch.float32 if up else None)
    recv = _flat(out)

    def finish():
        if op == ReduceOp.AVG:
            _avg(recv, n)
        back()

    return _issue(pg, "reduce_scatter_tensor", lambda: [pg._comm.Ireduce_scatter_block(send, recv, mop)],
                  finish, async_op, [input.numel(), _dtype_code(input)], _nbytes(input))


def gather(tensor, gather_list: Optional[List] = None, dst: int = 0, group=None, async_op: bool = False,
           group_dst: Optional[int] = None):
    """On dst: gather_list[i] <- rank i's tensor; other ranks pass no gather_list."""
    pg, root = _rooted(tensor, group, group_dst, dst, "dst rank")
    if pg is None:
        return None
    n = pg.size()
    me = pg.rank()
    _root_list(pg, root, gather_list, tensor, "gather_list", "destination")
    if _nccl_for(pg, tensor):
        return _nccl_for(pg, tensor).gather(pg, tensor, gather_list, root, async_op)
    send = _bytes(_host(tensor))
    recv = np.empty(send.size * n, dtype=np.uint8) if me == root else None

    def finish():
        if me == root:
            for i, t in enumerate(gather_list):
                _assign_bytes(t, recv[i * send.size:(i + 1) * send.size])

    return _issue(pg, "gather", lambda: [pg._comm.Igather(send, recv, root)], finish, async_op,
                  [tensor.numel(), _dtype_code(tensor), root], _nbytes(tensor))


def scatter(tensor, scatter_list: Optional[List] = None, src: int = 0, group=None, async_op: bool = False,
            group_src: Optional[int] = None):
    """tensor <- src's scatter_list[rank]; other ranks pass no scatter_list."""
    pg, root = _rooted(tensor, group, group_src, src, "src rank")
    if pg is None:
        return None
    _root_list(pg, root, scatter_list, tensor, "scatter_list", "source")
    if _nccl_for(pg, tensor):
        return _nccl_for(pg, tensor).scatter(pg, tensor, scatter_list, root, async_op)
    send = np.concatenate([_bytes(_host(t)) for t in scatter_list]) if pg.rank() == root else None
    out, finish = _staged(tensor)
    recv = _bytes(out)
    return _issue(pg, "scatter", lambda: [pg._comm.Iscatter(send, recv, root)], finish, async_op,
                  [tensor.numel(), _dtype_code(tensor), root], _nbytes(tensor))


def reduce(tensor, dst: Optional[int] = None, op=ReduceOp.SUM, group=None, async_op: bool = False,
           group_dst: Optional[int] = None):
    """dst's tensor <- tensor reduced over the group's ranks (the others' tensors are left as they
    were)."""
    pg, root = _rooted(tensor, group, group_dst, 0 if dst is None else dst, "dst rank")
    if pg is None:
        return None
    if _nccl_for(pg, tensor):
        return _nccl_for(pg, tensor).reduce(pg, tensor, root, op, async_op)
    mop, buf, back = _reduction_buffer(tensor, op)
    MPI = _mpi()
    n = pg.size()
    me = pg.rank()

    def start():
        if me == root:
            return [pg._comm.Ireduce(MPI.IN_PLACE, buf, mop, root)]
        return [pg._comm.Ireduce(buf, None, mop, root)]

    def finish():
        if me == root:
            if op == ReduceOp.AVG:
                _avg(buf, n)
            back()

    return _issue(pg, "reduce", start, finish, async_op, [tensor.numel(), _dtype_code(tensor), root],
                  _nbytes(tensor))


def _object_bytes(obj) -> "minitorch.Tensor":
    return minitorch.from_numpy(np.frombuffer(pickle.dumps(obj), dtype=np.uint8).copy())


def all_gather_object(object_list: List, obj: Any, group=None) -> None:
    """object_list[i] <- rank i's obj (any picklable object), on every rank."""
    pg = _group(group)
    if pg is None:
        return
    n = pg.size()
    if len(object_list) != n:
        raise ValueError(f"all_gather_object: object_list must have {n} entries (the group's size)")
    data = _object_bytes(obj)
    sizes = [minitorch.zeros(1, dtype=minitorch.int64) for _ in range(n)]
    all_gather(sizes, minitorch.tensor([data.numel()], dtype=minitorch.int64), group=group)
    longest = max(int(s.item()) for s in sizes)
    padded = minitorch.zeros(longest, dtype=minitorch.uint8)
    padded[:data.numel()] = data
    parts = [minitorch.empty(longest, dtype=minitorch.uint8) for _ in range(n)]
    all_gather(parts, padded, group=group)
    for i in range(n):
        object_list[i] = pickle.loads(parts[i].numpy()[: int(sizes[i].item())].tobytes())


def broadcast_object_list(object_list: List, src: Optional[int] = None, group=None, device=None,
                          group_src: Optional[int] = None) -> None:
    """object_list <- src's object_list (picklable objects; every rank passes a list of that length)."""
    pg = _group(group)
    if pg is None:
        return
    root = group_src if group_src is not None else pg._group_rank(0 if src is None else src, "src rank")
    data = _object_bytes(list(object_list)) if pg.rank() == root else None
    size = minitorch.tensor([data.numel() if data is not None else 0], dtype=minitorch.int64)
    broadcast(size, group=group, group_src=root)
    if data is None:
        data = minitorch.empty(int(size.item()), dtype=minitorch.uint8)
    broadcast(data, group=group, group_src=root)
    if pg.rank() != root:
        got = pickle.loads(data.numpy().tobytes())
        if len(got) != len(object_list):
            raise ValueError(f"broadcast_object_list: src sent {len(got)} objects into a list of {len(object_list)}")
        object_list[:] = got


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Returns once every rank of the group called barrier."""
    pg = _group(group)
    if pg is None:
        return None
    if pg.name() == Backend.NCCL and minitorch.cuda.is_available():
        return _nccl_module().barrier(pg, async_op)
    return _issue(pg, "barrier", lambda: [pg._comm.Ibarrier()], None, async_op)


def isend(tensor, dst: Optional[int] = None, group=None, tag: int = 0, group_dst: Optional[int] = None):
    """Starts sending tensor to rank dst; returns a Work."""
    pg, peer = _rooted(tensor, group, group_dst, dst, "dst rank")
    if pg is None:
        return None
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same as the rank of "
                         "the current process.")
    if _nccl_for(pg, tensor):
        return _nccl_for(pg, tensor).send(pg, tensor, peer, tag)
    data = _bytes(_host(tensor))
    return _issue(pg, "send", lambda: [pg._comm.Isend(data, peer, tag)], None, True, nbytes=data.size, p2p=True)


def irecv(tensor, src: Optional[int] = None, group=None, tag: int = 0, group_src: Optional[int] = None):
    """Starts receiving into tensor from rank src (any rank when None); returns a Work."""
    _check_tensor(tensor)
    pg = _group(group)
    if pg is None:
        return None
    MPI = _mpi()
    peer = group_src if group_src is not None else (MPI.ANY_SOURCE if src is None else pg._group_rank(src, "src rank"))
    if _nccl_for(pg, tensor):
        if peer == MPI.ANY_SOURCE:
            raise ValueError("NCCL does not support recv from any source: give src")
        return _nccl_for(pg, tensor).recv(pg, tensor, peer, tag)
    out, back = _staged(tensor)
    data = _bytes(out)

    def finish():
        got = work._statuses[0].Get_count(MPI.BYTE)
        if got != data.size:
            raise _fail(pg, "recv", f"received {got} bytes into a tensor of {data.size}", broken=False)
        back()

    work = _issue(pg, "recv", lambda: [pg._comm.Irecv(data, peer, tag)], finish, True, nbytes=data.size, p2p=True)
    return work


def send(tensor, dst: Optional[int] = None, group=None, tag: int = 0, group_dst: Optional[int] = None) -> None:
    """Sends tensor to rank dst (returns once it was handed over)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src: Optional[int] = None, group=None, tag: int = 0, group_src: Optional[int] = None) -> int:
    """Receives into tensor from rank src (any rank when None); returns the sender's rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    if hasattr(work, "_peer"):  # NCCL's: from the rank it was asked to receive from
        return work._pg._ranks[work._peer]
    return work._pg._ranks[work._statuses[0].Get_source()]


class _ReduceOpAlias:
    """torch.distributed.reduce_op, the deprecated name of ReduceOp's SUM, PRODUCT, MIN and MAX."""

    def __getattr__(self, name: str):
        if name in ("SUM", "PRODUCT", "MIN", "MAX"):
            import warnings

            warnings.warn("`torch.distributed.reduce_op` is deprecated, please use `torch.distributed.ReduceOp` "
                          "instead", FutureWarning, stacklevel=2)
            return getattr(ReduceOp, name)
        raise AttributeError(name)


reduce_op = _ReduceOpAlias()


def __getattr__(name: str):
    if name == "GradBucket":  # defined beside DDP, which imports this module
        from minitorch.nn.parallel.distributed import GradBucket

        return GradBucket
    if name in ("DeviceMesh", "init_device_mesh"):  # torch.distributed's names of device_mesh's
        from minitorch.distributed import device_mesh

        return getattr(device_mesh, name)
    raise AttributeError(f"module 'minitorch.distributed' has no attribute '{name}'")


from minitorch.distributed._all_to_all import all_to_all, all_to_all_single  # noqa: E402  (uses the names above)
from minitorch.distributed._objects_p2p import (P2POp, batch_isend_irecv, gather_object,  # noqa: E402
                                                get_global_rank, get_group_rank, get_node_local_rank, get_pg_count,
                                                get_process_group_ranks, is_backend_available,
                                                is_torchelastic_launched, monitored_barrier, recv_object_list,
                                                reduce_scatter, scatter_object_list, send_object_list,
                                                supports_complex)
from minitorch.distributed import distributed_c10d  # noqa: E402,F401  (after every name it re-exports)
from minitorch.distributed import rpc  # noqa: E402,F401
from minitorch.distributed import autograd  # noqa: E402,F401  (after rpc, which its calls go through)
