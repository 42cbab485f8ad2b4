"""A process manager's PMI-1 server for processes that meet through a store (no mpiexec).

MPICH's MPI_Init asks its process manager (mpiexec's proxy) for the world through PMI: rank and
size, then a key-value space and barriers in which the ranks exchange their addresses. A process
that finds PMI_FD (a connected socket), PMI_RANK and PMI_SIZE in its environment speaks PMI-1's
text protocol on that socket ("cmd=init ...", "cmd=put ...", "cmd=barrier_in", ...). This file is
that server: init_process_group's rank 0 starts it as a process of its own (rank 0's MPI_Init
holds Python's GIL while it waits, so no thread of rank 0 could answer), publishes its port
through the rendezvous store, and every rank connects to it before MPI_Init. The N processes then
form one MPI world (MPI.COMM_WORLD of size N), exactly as under mpiexec.

It runs without minitorch (`python _pmi.py N timeout_seconds`), prints its port on the first line
of stdout, and exits once every rank closed its connection (after MPI_Finalize, or at its death).
Each rank's first line, before MPI_Init's, is minitorch's own: "cmd=minitorch_hello rank=R pid=P"
(or "cmd=minitorch_leave": this rank raised before MPI_Init, leave it out), and its line once
MPI_Init returned too: "cmd=minitorch_initialized". MPI_Init waits for the other ranks of the
machine on shared memory, not through PMI, holding Python's GIL: a rank that dies before every
rank initialized (the world formed), or a world not formed within the timeout, would leave the
others there forever. So the server then tells why on stderr and ends
the ranks that entered MPI_Init (SIGTERM), the only way out of it; once the world formed, a rank
that dies is the others' collectives' timeout to report (DistBackendError).

MPICH's ranks of a machine meet in a POSIX shared memory segment named after the key-value
space, /dev/shm/mpich_shm_<FNV-1a hash of kvsname, hex>_<node> (mpich_vci_... for more virtual
communication interfaces), which the first rank creates in MPI_Init and unlinks in
MPI_Finalize. A rank killed or ending without MPI_Finalize would leave it behind (2 MB each, in a
/dev/shm that may be small): the server unlinks these names once no rank can still need them to
attach (a failure, the world's end); the ranks themselves unlink it once every rank is in
(init_process_group, after its first collective over the world).
"""
import os
import selectors
import signal
import socket
import sys
import time

# the limits it announces (cmd=maxes): MPICH splits longer values over several keys
_KVSNAME_MAX, _KEYLEN_MAX, _VALLEN_MAX = 256, 64, 1024


class _Rank:
    def __init__(self, conn: socket.socket) -> None:
        self.conn = conn
        self.buf = b""
        self.finalized = False
        self.rank = -1
        self.pid = 0
        self.left = False  # it said it will not call MPI_Init
        self.initialized = False  # its MPI_Init returned


def _fields(line: str) -> dict:
    out = {}
    for part in line.split(" "):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k] = v
    return out


def _world_id(kvsname: str) -> int:
    """MPICH's id of the world: FNV-1a (32 bits) of the key-value space's name."""
    h = 0x811C9DC5
    for byte in kvsname.encode():
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def segments(kvsname: str) -> list:
    """The paths of the shared memory segments MPICH names after kvsname (one node: node 0)."""
    wid = _world_id(kvsname)
    return [f"/dev/shm/mpich_{kind}_{wid:x}_0" for kind in ("shm", "vci")]


def _remove_segments(kvsname: str) -> None:
    for path in segments(kvsname):
        try:
            os.unlink(path)
        except OSError:
            pass  # never made, or already unlinked by MPICH or a rank


def _ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def serve(listener: socket.socket, size: int, timeout: float) -> int:
    # unique on the machine, as mpiexec's: MPICH names its shared memory segment after it
    kvsname = f"kvs_{os.getpid()}_0"
    kvs = {"PMI_process_mapping": f"(vector,(0,1,{size}))"}  # one node holding the N ranks
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ)
    ranks = {}
    barrier = []
    joined = 0
    world_formed = False  # every rank's MPI_Init returned
    deadline = time.monotonic() + timeout

    def reply(rk: _Rank, text: str) -> None:
        try:
            rk.conn.sendall((text + "\n").encode())
        except OSError:
            pass

    def close_all(why: str) -> int:
        if not world_formed:
            stuck = [rk for rk in ranks.values() if rk.pid and not rk.left and not rk.initialized]
            print(f"minitorch.distributed: the MPI world of {size} processes ({kvsname}) did not form ({why}); "
                  f"ending the ranks waiting in MPI_Init: {sorted(rk.rank for rk in stuck)}", file=sys.stderr,
                  flush=True)
            for rk in stuck:
                try:
                    os.kill(rk.pid, signal.SIGTERM)
                except OSError:
                    pass
            # a rank ended in the middle of MPI_Init may have just made the segment: unlink once
            # they are gone (a rank that ignores SIGTERM gets 2 s)
            end = time.monotonic() + 2.0
            while time.monotonic() < end and not all(_ended(rk.pid) for rk in stuck):
                time.sleep(0.02)
        _remove_segments(kvsname)
        for rk in list(ranks.values()):
            rk.conn.close()
        listener.close()
        return 1

    while True:
        wait = None if world_formed else max(0.0, deadline - time.monotonic())
        events = sel.select(wait if wait is None else min(wait, 1.0))
        if not world_formed and time.monotonic() > deadline:
            return close_all(f"not every rank came within {timeout:g} s")
        for key, _ in events:
            if key.fileobj is listener:
                conn, _ = listener.accept()
                ranks[conn.fileno()] = _Rank(conn)
                sel.register(conn, selectors.EVENT_READ)
                joined += 1
                continue
            rk = ranks[key.fileobj.fileno()]
            try:
                data = rk.conn.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(rk.conn)
                del ranks[rk.conn.fileno()]
                if rk in barrier:
                    barrier.remove(rk)
                rk.conn.close()
                if rk.left and not world_formed:
                    return close_all(f"rank {rk.rank} raised before MPI_Init")
                if not rk.finalized:
                    return close_all(f"rank {rk.rank} (pid {rk.pid}) ended before MPI_Finalize")
                if not ranks and joined >= size:
                    _remove_segments(kvsname)
                    listener.close()
                    return 0
                continue
            rk.buf += data
            while b"\n" in rk.buf:
                raw, rk.buf = rk.buf.split(b"\n", 1)
                f = _fields(raw.decode(errors="replace").strip())
                cmd = f.get("cmd")
                if cmd == "minitorch_hello":
                    rk.rank, rk.pid = int(f.get("rank", -1)), int(f.get("pid", 0))
                elif cmd == "minitorch_leave":
                    rk.left = True
                elif cmd == "minitorch_initialized":
                    rk.initialized = True
                    world_formed = sum(x.initialized for x in ranks.values()) == size
                elif cmd == "init":
                    reply(rk, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0")
                elif cmd == "get_maxes":
                    reply(rk, f"cmd=maxes rc=0 kvsname_max={_KVSNAME_MAX} keylen_max={_KEYLEN_MAX} "
                              f"vallen_max={_VALLEN_MAX}")
                elif cmd == "get_appnum":
                    reply(rk, "cmd=appnum rc=0 appnum=0")
                elif cmd == "get_my_kvsname":
                    reply(rk, f"cmd=my_kvsname rc=0 kvsname={kvsname}")
                elif cmd == "get_universe_size":
                    reply(rk, f"cmd=universe_size rc=0 size={size}")
                elif cmd == "put":
                    kvs[f.get("key", "")] = f.get("value", "")
                    reply(rk, "cmd=put_result rc=0")
                elif cmd == "get":
                    value = kvs.get(f.get("key", ""))
                    if value is None:
                        reply(rk, "cmd=get_result rc=-1 msg=key_not_found")
                    else:
                        reply(rk, f"cmd=get_result rc=0 value={value}")
                elif cmd == "barrier_in":
                    barrier.append(rk)
                    if len(barrier) == size:
                        for other in barrier:
                            reply(other, "cmd=barrier_out rc=0")
                        barrier = []
                elif cmd == "finalize":
                    rk.finalized = True
                    reply(rk, "cmd=finalize_ack rc=0")
                elif cmd == "abort":
                    return close_all(f"rank {rk.rank} aborted")
                else:  # spawn, publish_name, ...: not a process manager's for MPI_Comm_spawn
                    reply(rk, f"cmd={cmd} rc=-1 msg=unsupported_by_minitorch")


def main() -> int:
    size, timeout = int(sys.argv[1]), float(sys.argv[2])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(max(16, size))
    print(listener.getsockname()[1], flush=True)
    sys.stdout.close()
    return serve(listener, size, timeout)


if __name__ == "__main__":
    sys.exit(main())
