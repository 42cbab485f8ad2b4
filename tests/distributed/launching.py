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


def spawned_stdout(script: Path, library: str, nprocs: int = 2) -> list:
    """The stdout lines of `script nprocs port` (a script that starts its workers with mp.spawn
    on a free loopback port), run with the library named by PROGRAM_TORCH: minitorch, or PyTorch
    for the reference."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.run([sys.executable, str(script), str(nprocs), str(port)], capture_output=True, text=True,
                          timeout=300, env=child_env(PROGRAM_TORCH=library, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def launch(tmp_path: Path, n: int, script: str, *args: str, timeout: float = 60, launcher_args=(),
           via: str = "launcher", env=None) -> Launched:
    """`python -m minitorch.distributed.run [launcher_args] --nproc-per-node n scripts/<script> <out dir> args`;
    via "spawn" or "process": the ranks started without the launcher, meeting through a TCPStore
    (scripts/spawned.py); via "self": `python scripts/<script> <out dir> n args`, a script that
    starts its ranks itself. env: more environment variables for the command."""
    out = tmp_path / f"{Path(script).stem}-{n}-{via}"
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    if via in ("launcher", "launch"):  # "launch": the legacy minitorch.distributed.launch
        module = "minitorch.distributed.run" if via == "launcher" else "minitorch.distributed.launch"
        cmd = [sys.executable, "-m", module, *launcher_args, "--nproc-per-node", str(n),
               str(SCRIPTS / script), str(out), *args]
    elif via == "self":  # the script starts its ranks itself (mp.spawn), given <out> <n> args
        cmd = [sys.executable, str(SCRIPTS / script), str(out), str(n), *args]
    else:
        cmd = [sys.executable, str(SCRIPTS / "spawned.py"), via, str(n), script, str(out), *args]
    # a session of its own: on a timeout, the launcher, mpiexec and every rank are stopped together
    p = subprocess.Popen(
        cmd,
        env=child_env(OMP_NUM_THREADS="1", MINITORCH_NUM_THREADS="1", **(env or {})), stdout=subprocess.PIPE,
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


def launched_once(tmp_path_factory, script: str, timeout: float, args=()):
    """results(n): the per-rank results of script on n processes, launched once per n (for a
    module-scoped fixture shared by a file's tests); "{out}" in args is the run's folder."""
    runs = {}

    def results(n: int):
        if n not in runs:
            where = tmp_path_factory.mktemp(f"{Path(script).stem}{n}")
            run = ok(launch(where, n, script, *[a.format(out=where) for a in args], timeout=timeout))
            runs[n] = [run.result(r) for r in range(n)]
        return runs[n]

    return results


def ok(run: Launched) -> Launched:
    assert run.returncode == 0, f"exit {run.returncode}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    return run


def chunk(size: int, n: int, r: int):
    """torch.chunk's share of rank r of size elements over n ranks: (start, length)."""
    c = -(-size // n)
    start = min(c * r, size)
    return start, max(0, min(c, size - start))
