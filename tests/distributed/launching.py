"""Helpers of the tests of minitorch.distributed: processes started by the launcher, compared with NumPy.

They need MPI (mpi4py and the mpich wheel; `make install-test` installs both) and skip without it,
and under the sanitizer run (MPICH's own allocations would bury LeakSanitizer's report)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from helpers import child_env

import minitorch

SCRIPTS = Path(__file__).resolve().parent / "scripts"

needs_mpi = pytest.mark.skipif(
    not minitorch.distributed.is_available() or os.environ.get("MINITORCH_SANITIZE_RUN") == "1",
    reason="minitorch.distributed needs mpi4py and an MPI library (pip install mpi4py mpich)",
)


class Launched:
    def __init__(self, proc: subprocess.CompletedProcess, seconds: float, out: Path, n: int) -> None:
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.seconds = seconds
        self.out = out
        self.n = n

    def result(self, rank: int) -> dict:
        with np.load(self.out / f"rank{rank}.npz") as f:
            return dict(f)


def launch(tmp_path: Path, n: int, script: str, *args: str, timeout: float = 60, launcher_args=(),
           via: str = "launcher") -> Launched:
    """`python -m minitorch.distributed.run [launcher_args] --nproc-per-node n scripts/<script> <out dir> args`;
    via "spawn" or "process": the ranks started without the launcher, meeting through a TCPStore
    (scripts/spawned.py); via "self": `python scripts/<script> <out dir> n args`, a script that
    starts its ranks itself."""
    out = tmp_path / f"{Path(script).stem}-{n}-{via}"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    if via == "launcher":
        cmd = [sys.executable, "-m", "minitorch.distributed.run", *launcher_args, "--nproc-per-node", str(n),
               str(SCRIPTS / script), str(out), *args]
    elif via == "self":  # the script starts its ranks itself (mp.spawn), given <out> <n> args
        cmd = [sys.executable, str(SCRIPTS / script), str(out), str(n), *args]
    else:
        cmd = [sys.executable, str(SCRIPTS / "spawned.py"), via, str(n), script, str(out), *args]
    # a session of its own: on a timeout, the launcher, mpiexec and every rank are stopped together
    p = subprocess.Popen(
        cmd,
        env=child_env(OMP_NUM_THREADS="1", MINITORCH_NUM_THREADS="1"), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        stdout, stderr = p.communicate()
        pytest.fail(f"{script} on {n} processes did not end within {timeout} s\nstdout:\n{stdout}\n"
                    f"stderr:\n{stderr}")
    proc = subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr)
    return Launched(proc, time.monotonic() - t0, out, n)


def ok(run: Launched) -> Launched:
    assert run.returncode == 0, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    return run


SHM = Path("/dev/shm")
_SHM_PREFIXES = ("mpich_", "ucx_", "mt-nccl")  # MPICH's, UCX's (under MPICH) and the emulated NCCL's


def shm_names() -> set:
    """The names in /dev/shm now (empty where there is none)."""
    return set(os.listdir(SHM)) if SHM.is_dir() else set()


def _mapped_anywhere() -> set:
    """The /dev/shm paths that some live process maps (every process whose maps are readable)."""
    paths = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/maps") as f:
                    paths.update(line.split(None, 5)[5].strip() for line in f if " /dev/shm/" in line)
            except (OSError, IndexError):
                pass
    return paths


def _ours(path: Path) -> bool:
    try:
        return path.stat().st_uid == os.getuid()
    except OSError:  # gone meanwhile
        return False


def orphaned_shm(before: set) -> list:
    """The files of MPI or minitorch that appeared in /dev/shm since `before` and that no live
    process maps: what a run left behind. Another run (another test, elsewhere on the machine)
    maps its own files while it lasts; a file counts only when unmapped at two looks 0.5 s apart."""
    def candidates() -> set:
        mapped = _mapped_anywhere()
        return {n for n in shm_names() - before
                if n.startswith(_SHM_PREFIXES) and str(SHM / n) not in mapped and _ours(SHM / n)}

    first = candidates()
    if not first:
        return []
    time.sleep(0.5)
    return sorted(first & candidates())
