"""Store mode's process manager (distributed/_pmi.py) and what MPI_Init does under it: the node
the server publishes, MPICH's shared memory segment named after the server's key-value space and
removed when a run fails, and the ranks' CPU placement, which MPI_Init must leave alone (mpiexec's
ranks read the topology mpiexec found; a rank started alone finds it itself, and hwloc's x86
backend did so by binding the rank to every CPU in turn, leaving every rank on the last CPU:
collectives of ranks sharing a CPU took milliseconds instead of microseconds)."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from helpers import child_env
from launching import SCRIPTS, launch, needs_mpi, ok

from minitorch.distributed import _pmi

SERVER = _pmi.__file__


class _FakeRank:
    """A client of the PMI server speaking MPICH's PMI-1 lines, as MPI_Init would."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, line: str) -> None:
        self.sock.sendall((line + "\n").encode())

    def ask(self, line: str) -> dict:
        self.send(line)
        while b"\n" not in self.buf:
            data = self.sock.recv(4096)
            assert data, "the server closed the connection"
            self.buf += data
        raw, self.buf = self.buf.split(b"\n", 1)
        return dict(part.split("=", 1) for part in raw.decode().split() if "=" in part)


def _start_server(size: int, timeout: float):
    proc = subprocess.Popen([sys.executable, SERVER, str(size), str(timeout)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    return proc, port


def test_world_id_is_fnv1a_of_the_kvsname():
    # FNV-1a (32 bits)'s published test vectors: "" and "a"
    assert _pmi._world_id("") == 0x811C9DC5
    assert _pmi._world_id("a") == 0xE40C292C
    assert _pmi.segments("") == ["/dev/shm/mpich_shm_811c9dc5_0", "/dev/shm/mpich_vci_811c9dc5_0"]


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs /dev/shm")
def test_server_publishes_one_node_and_removes_the_segments_when_a_rank_dies():
    proc, port = _start_server(2, 30)
    waiting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # a rank in MPI_Init
    try:
        a, b = _FakeRank(port), _FakeRank(port)
        a.send(f"cmd=minitorch_hello rank=0 pid={waiting.pid}")
        b.send(f"cmd=minitorch_hello rank=1 pid={os.getpid()}")
        assert a.ask("cmd=init pmi_version=1 pmi_subversion=1")["rc"] == "0"
        kvs = a.ask("cmd=get_my_kvsname")["kvsname"]
        assert kvs == f"kvs_{proc.pid}_0"
        # every rank on one node: MPICH's ranks then meet over shared memory, not sockets
        got = a.ask(f"cmd=get kvsname={kvs} key=PMI_process_mapping")
        assert got["rc"] == "0" and got["value"] == "(vector,(0,1,2))"
        assert b.ask("cmd=get_universe_size")["size"] == "2"
        # the segment MPI_Init of rank 0 made (the server computes its name as MPICH does)
        seg, vci = _pmi.segments(kvs)
        with open(seg, "wb") as f:
            f.write(b"\0" * 64)
        b.sock.close()  # rank 1 dies before MPI_Init returned everywhere
        assert proc.wait(timeout=20) == 1
        assert "did not form (rank 1" in proc.stderr.read()
        assert waiting.wait(timeout=10) == -signal.SIGTERM  # ended: it would wait forever
        assert not os.path.exists(seg) and not os.path.exists(vci)
        a.sock.close()
    finally:
        for p in (proc, waiting):
            if p.poll() is None:
                p.kill()
                p.wait()


@needs_mpi
def test_ranks_unlink_mpichs_segment_once_every_rank_is_in(tmp_path):
    run = ok(launch(tmp_path, 2, "segments.py", via="spawn", timeout=120))
    server = int(run.result(0)["server"])
    assert server > 0
    seg = _pmi.segments(f"kvs_{server}_0")[0]  # the name MPICH gave it: the server's computation
    for r in range(2):
        res = run.result(r)
        np.testing.assert_array_equal(res["sum"], np.full(4, 2.0, np.float32))
        # still mapped (the ranks meet there), no longer named
        assert list(res["mapped"]) == [seg + " (deleted)"], res["mapped"]
        assert list(res["hwloc_env"]) == []  # the setting for MPI_Init is not the children's
    assert not os.path.exists(seg)


def _affinity_calls(trace: str) -> dict:
    """pid -> the CPU lists of its sched_setaffinity calls, in order, from strace's lines."""
    calls = {}
    for line in trace.splitlines():
        m = re.match(r"(\d+)\s+sched_setaffinity\(0, \d+, \[([\d ]*)\]", line)  # done or <unfinished ...>
        if m:
            calls.setdefault(int(m.group(1)), []).append([int(c) for c in m.group(2).split()])
    return calls


@needs_mpi
@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_mpi_init_moves_no_rank_and_each_starts_on_its_own_cpu(tmp_path):
    """In a store-mode run, the only CPU affinity changes are minitorch's: rank r moves to the r-th
    allowed CPU and gets its mask back. hwloc's x86 backend, in every rank's MPI_Init, bound each
    rank to every CPU in turn, leaving all of them on the last."""
    trace = tmp_path / "affinity.txt"
    out = tmp_path / "out"
    out.mkdir()
    cmd = ["strace", "-f", "-qq", "-e", "trace=sched_setaffinity", "-o", str(trace), sys.executable,
           str(SCRIPTS / "spawned.py"), "process", "2", "segments.py", str(out)]
    run = subprocess.run(cmd, env=child_env(OMP_NUM_THREADS="1", MINITORCH_NUM_THREADS="1"),
                         capture_output=True, text=True, timeout=180)
    if run.returncode != 0 and "ptrace" in run.stderr:
        pytest.skip(f"strace cannot trace here: {run.stderr.strip()[:200]}")
    assert run.returncode == 0, run.stderr
    cpus = sorted(os.sched_getaffinity(0))
    calls = _affinity_calls(trace.read_text())
    if len(cpus) == 1:
        assert calls == {}
        return
    # each rank: its own CPU then its mask back, once at init_process_group and again after a
    # wait that lasted (a collective's) -- never a walk over the CPUs
    assert len(calls) == 2, calls
    own = []
    for seq in calls.values():
        assert len(seq) >= 2 and len(seq) % 2 == 0, calls
        assert seq == seq[:2] * (len(seq) // 2) and seq[1] == cpus, calls
        own.append(seq[0])
    assert sorted(own) == [[cpus[0]], [cpus[1]]], calls


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux's CPU affinity")
def test_start_on_own_cpu_gives_the_mask_back():
    import minitorch.distributed as dist

    mask = os.sched_getaffinity(0)
    try:
        dist._start_on_own_cpu(1)
        assert os.sched_getaffinity(0) == mask
        one = {min(mask)}
        os.sched_setaffinity(0, one)  # a process the user bound stays bound
        dist._start_on_own_cpu(1)
        assert os.sched_getaffinity(0) == one
    finally:
        os.sched_setaffinity(0, mask)


def test_topology_is_read_without_binding_unless_the_user_chose(monkeypatch):
    import minitorch.distributed as dist

    monkeypatch.delenv("HWLOC_COMPONENTS", raising=False)
    monkeypatch.delenv("HWLOC_XMLFILE", raising=False)
    assert dist._topology_env() == {"HWLOC_COMPONENTS": "-x86"}
    monkeypatch.setenv("HWLOC_COMPONENTS", "linux")
    assert dist._topology_env() == {}
    monkeypatch.delenv("HWLOC_COMPONENTS")
    monkeypatch.setenv("HWLOC_XMLFILE", "/tmp/topo.xml")
    assert dist._topology_env() == {}


@needs_mpi
@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs /dev/shm")
@pytest.mark.parametrize("via, mode", [("process", "dead"), ("process", "dieinit"), ("launcher", "exit3")])
def test_failed_run_leaves_nothing_in_dev_shm(tmp_path, via, mode):
    """The run's MPICH segment is gone from /dev/shm after a run that failed: a rank dead after the
    world formed (the other raised, then left without MPI_Finalize), a rank dead before its
    MPI_Init (the server ended the other, waiting there), a rank failing under the launcher (which
    stopped the other). Its name: from the ranks that got past init_process_group, else from the
    server's message (its key-value space)."""
    run = launch(tmp_path, 2, "failures.py", mode, via=via, timeout=120)
    assert run.returncode != 0
    names = set()
    for r in range(2):
        seen = run.out / f"segment{r}.txt"
        if seen.exists():
            names.update(line.split(" (deleted)")[0] for line in seen.read_text().splitlines())
    kvs = re.search(r"processes \((kvs_\d+_0)\) did not form", run.stderr)
    if kvs:
        names.update(_pmi.segments(kvs.group(1)))
    assert names, (run.stdout, run.stderr)  # every mode names its segment one way or the other
    assert [n for n in names if os.path.exists(n)] == []


@needs_mpi
@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="needs /dev/shm")
def test_launcher_removes_the_segment_of_a_world_that_never_formed(tmp_path):
    """Under the launcher, rank 1 dies before its MPI_Init: rank 0, waiting inside MPI_Init, is
    stopped there after creating MPICH's segment (named after mpiexec's random key-value space,
    which no rank could report). The launcher removes what appeared during the run and no live
    process maps; segments of other runs on the machine stay."""
    from minitorch.distributed import run as launcher

    before = launcher._mpich_segments()
    run = launch(tmp_path, 2, "failures.py", "dieinit", via="launcher", timeout=120)
    assert run.returncode != 0
    left = launcher._mpich_segments() - before
    assert sorted(left - launcher._mapped_segments()) == [], (run.stdout, run.stderr)


def test_orphan_segment_removal_spares_mapped_and_young_ones(tmp_path, monkeypatch):
    """What the launcher removes: new names that no process maps, once settled; not a name that
    was there before, one some process maps, or (until it settled) one made just now."""
    import mmap

    from minitorch.distributed import run as launcher

    monkeypatch.setattr(launcher, "_SHM", str(tmp_path))
    (tmp_path / "mpich_shm_old_0").write_bytes(b"x")
    before = launcher._mpich_segments()
    for name in ("mpich_shm_dead_0", "mpich_vci_dead_0", "mpich_shm_live_0", "other_file"):
        (tmp_path / name).write_bytes(b"x" * 4096)
    with open(tmp_path / "mpich_shm_live_0", "r+b") as f, mmap.mmap(f.fileno(), 4096):
        t0 = time.monotonic()
        launcher._remove_orphan_segments(before, settle=0.3)
        assert time.monotonic() - t0 >= 0.25  # the new names were younger than settle
        assert sorted(p.name for p in tmp_path.iterdir()) == ["mpich_shm_live_0", "mpich_shm_old_0", "other_file"]

