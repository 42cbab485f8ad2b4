"""`python -m minitorch.distributed.run --nproc-per-node N script.py [args]`, as torchrun.

Starts N processes on this machine under MPICH's mpiexec (the processes of one MPI world: MPICH
cannot join processes that each started alone; see the README's "More than one process") and
gives each torchrun's environment: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
MASTER_ADDR (127.0.0.1) and MASTER_PORT, on loopback only. As torchrun, when a process fails (a
non-zero exit status, or it died of a signal), the launcher stops the others (SIGTERM, then SIGKILL
after --kill-grace seconds) and exits with the failed process's status (128 + the signal's number
for a process killed by a signal, 1 when the status could not be known). With --keep-going
(minitorch's own) a failed process leaves the others running, so that they report the failure
themselves (DistBackendError within their process group's timeout), and the status is mpiexec's.
Each process gets torchrun's TORCHELASTIC_ERROR_FILE (<log dir>/<run id>_*/attempt_0/<local rank>/error.json;
--log-dir keeps them, else a temporary folder): @record writes a failing process's exception
there, and the launcher prints torchrun's report of the failure with that traceback and copies the
file to its own TORCHELASTIC_ERROR_FILE where one is set.
Ctrl-C (SIGINT), SIGTERM and SIGHUP to the launcher stop the processes the same way (mpiexec starts
them in sessions of their own, out of the terminal's reach), and the status is 128 + its number.
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Set


def find_mpiexec() -> Optional[str]:
    """MINITORCH_MPIEXEC, else the mpiexec installed beside this Python (the mpich wheel's), else PATH's."""
    env = os.environ.get("MINITORCH_MPIEXEC")
    if env:
        return env
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.path.exists(here):
        return here
    return shutil.which("mpiexec")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m minitorch.distributed.run",
                                description="Starts N processes of a training script on this machine.")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=int, default=1,
                   help="number of processes to start (default 1)")
    p.add_argument("--nnodes", type=str, default="1", help="1 only: minitorch starts processes on this machine")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", type=str, default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=None)
    p.add_argument("--standalone", action="store_true", help="accepted for torchrun's command lines")
    p.add_argument("--rdzv-id", "--rdzv_id", type=str, default="none", help="the run's id (TORCHELASTIC_RUN_ID)")
    p.add_argument("--rdzv-backend", "--rdzv_backend", type=str, default="static",
                   help="accepted for torchrun's command lines: the processes meet through MPI")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", type=str, default="",
                   help="accepted for torchrun's command lines: loopback only")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true", help="run the script as a program")
    p.add_argument("--keep-going", action="store_true",
                   help="minitorch's own: a failed process does not stop the others")
    p.add_argument("--log-dir", "--log_dir", type=str, default=None,
                   help="keep the processes' error files under this folder (default: a temporary one)")
    p.add_argument("--kill-grace", type=float, default=5.0,
                   help="seconds between SIGTERM and SIGKILL when stopping the processes (default 5)")
    p.add_argument("training_script", type=str)
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    return run(_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Starts the processes of parsed command-line arguments (minitorch.distributed.launch's too:
    args.use_env False there passes each process --local-rank=<its local rank>)."""
    if args.nnodes not in ("1", "1:1") or args.node_rank != 0:
        raise SystemExit("minitorch.distributed.run: only --nnodes 1 (this machine) is supported")
    if args.nproc_per_node < 1:
        raise SystemExit("minitorch.distributed.run: --nproc-per-node must be at least 1")
    host = args.rdzv_endpoint.rsplit(":", 1)[0] if args.rdzv_endpoint else "localhost"
    if args.master_addr not in ("127.0.0.1", "localhost") or host not in ("127.0.0.1", "localhost"):
        raise SystemExit("minitorch.distributed.run: processes meet on loopback only (--master-addr 127.0.0.1)")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise SystemExit("minitorch.distributed.run needs MPI's mpiexec: pip install mpi4py mpich")
    n = args.nproc_per_node
    env = dict(os.environ)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.master_port or _free_port()), WORLD_SIZE=str(n),
               LOCAL_WORLD_SIZE=str(n), GROUP_RANK="0", ROLE_RANK="0", ROLE_WORLD_SIZE=str(n), NODE_RANK="0",
               OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"), TORCHELASTIC_RUN_ID=args.rdzv_id,
               TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS="0")
    if not getattr(args, "use_env", True):
        env["MINITORCH_RUN_LOCAL_RANK_ARG"] = "1"  # read by _bootstrap, which knows the local rank
    if args.no_python:
        target = [args.training_script]
    elif args.module:
        target = [sys.executable, "-m", "minitorch.distributed._bootstrap", "-m", args.training_script]
    else:
        target = [sys.executable, "-m", "minitorch.distributed._bootstrap", args.training_script]
    # -disable-auto-cleanup: mpiexec itself leaves the others running when one fails; this
    # launcher stops them (unless --keep-going), knowing which failed and with what status
    cmd = [mpiexec, "-n", str(n), "-host", "localhost", "-disable-auto-cleanup", *target,
           *args.training_script_args]
    before = _mpich_segments()
    try:
        return _launch(cmd, env, n, args)
    finally:
        _remove_orphan_segments(before)


def _launch(cmd: List[str], env: Dict[str, str], n: int, args: argparse.Namespace) -> int:
    if args.no_python:
        return subprocess.call(cmd, env=env)  # no bootstrap to report the processes' statuses
    log_dir = getattr(args, "log_dir", None)
    if log_dir:
        os.makedirs(log_dir, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="minitorch-run-") as status_dir, \
            tempfile.TemporaryDirectory(prefix="torchelastic_") as temp_errors:
        errors = tempfile.mkdtemp(prefix=f"{args.rdzv_id}_", dir=log_dir) if log_dir else temp_errors
        env["MINITORCH_RUN_STATUS_DIR"] = status_dir
        env["MINITORCH_RUN_ERROR_DIR"] = errors
        proc = subprocess.Popen(cmd, env=env, start_new_session=True)
        try:
            for sig in (signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, _raise_stop)
            status, failed = _watch(proc, n, status_dir, args.keep_going, args.kill_grace)
            if failed is not None:
                _report(args.training_script, failed, status, _read(status_dir, "pid").get(failed, -1), errors)
            return status
        except KeyboardInterrupt:
            _stop(proc, _read(status_dir, "pid"), args.kill_grace)
            return 128 + signal.SIGINT
        except _Stopped as e:
            _stop(proc, _read(status_dir, "pid"), args.kill_grace)
            return 128 + e.signum


_SHM = "/dev/shm"


def _mpich_segments() -> Set[str]:
    """The names of MPICH's shared memory segments in /dev/shm now."""
    try:
        return {n for n in os.listdir(_SHM) if n.startswith(("mpich_shm_", "mpich_vci_"))}
    except OSError:
        return set()  # no /dev/shm (not Linux)


def _mapped_segments() -> Set[str]:
    """The /dev/shm names mapped by the live processes whose maps this user may read (all of
    its own: the only ones whose segments it may remove, see below)."""
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/maps") as f:
                found.update(line.rsplit("/", 1)[1].strip() for line in f if " " + _SHM + "/" in line)
        except OSError:
            continue  # ended meanwhile, or another user's
    return found


def _remove_orphan_segments(before: Set[str], settle: float = 1.0) -> None:
    """Unlinks the MPICH segments that appeared during the job and that no process maps any
    more. MPICH's first rank creates the machine's segment in MPI_Init, named after mpiexec's
    random key-value space, and unlinks it in MPI_Finalize; the ranks unlink it themselves once
    the world formed (init_process_group), so only a rank killed inside MPI_Init leaves one
    (2 MB of a /dev/shm that may be small). A segment younger than settle seconds may belong
    to another job whose first rank has created but not yet mapped it: it gets that long."""
    new = _mpich_segments() - before
    if not new:
        return
    for name in sorted(new):
        try:
            age = time.time() - os.stat(os.path.join(_SHM, name)).st_mtime
        except OSError:
            continue
        if age < settle:
            time.sleep(settle - age)
    mapped = _mapped_segments()
    for name in new - mapped:
        path = os.path.join(_SHM, name)
        try:
            if os.stat(path).st_uid == os.getuid():  # another user's processes' maps were not read
                os.unlink(path)
        except OSError:
            pass  # gone already


class _Stopped(Exception):
    """The launcher got SIGTERM or SIGHUP (a supervisor, a closed terminal)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stop(signum, frame) -> None:
    # mpiexec and the processes are in a session of their own: only the launcher can stop them
    raise _Stopped(signum)


def _read(folder: str, what: str) -> Dict[int, int]:
    """rank -> the number in its rank<r>.<what> file (pid or exit), for the files written so far."""
    out = {}
    for name in os.listdir(folder):
        if name.startswith("rank") and name.endswith("." + what):
            try:
                with open(os.path.join(folder, name)) as f:
                    out[int(name[4:-len(what) - 1])] = int(f.read())
            except (OSError, ValueError):
                pass
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (exited, not yet reaped by its proxy) has ended too
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _stop(proc: subprocess.Popen, pids: Dict[int, int], grace: float) -> None:
    """SIGTERM to the processes and mpiexec, SIGKILL to what is left after grace seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids.values():
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            pass
        try:
            proc.wait(timeout=grace)
            if not any(_alive(p) for p in pids.values()):
                return
        except subprocess.TimeoutExpired:
            pass


def _report(script: str, rank: int, status: int, pid: int, errors: str) -> None:
    """torchrun's report of a failed process (its traceback, when @record wrote its error file), and
    its error file copied to the launcher's own TORCHELASTIC_ERROR_FILE where one is set."""
    from minitorch.distributed.elastic.multiprocessing.errors import (ChildFailedError, ErrorHandler,
                                                                      ProcessFailure)

    path = os.path.join(errors, "attempt_0", str(rank), "error.json")
    failure = ProcessFailure(local_rank=rank, pid=pid, exitcode=status,
                             error_file=path if os.path.isfile(path) else "<N/A>")
    print(ChildFailedError(script, {rank: failure}).format_msg(), file=sys.stderr, flush=True)
    if os.path.isfile(path):
        ErrorHandler().dump_error_file(path, status)


def _watch(proc: subprocess.Popen, n: int, status_dir: str, keep_going: bool, grace: float):
    """Waits for mpiexec; the first process that fails (in the order seen) stops the others and
    gives the launcher's exit status, as torchrun's: (that status, that rank or None)."""
    gone_since: Dict[int, float] = {}
    while True:
        rc = proc.poll()
        exits = _read(status_dir, "exit")
        failed = {r: c for r, c in exits.items() if c != 0}
        if rc is not None:
            if failed:
                return failed[min(failed)] & 0xFF or 1, min(failed)
            return (rc if rc >= 0 else 128 - rc), None
        if not keep_going:
            pids = _read(status_dir, "pid")
            now = time.monotonic()
            for r, pid in pids.items():
                if r not in exits and not _alive(pid):
                    gone_since.setdefault(r, now)
            # a process gone without its exit file died of a signal or os._exit: its status file
            # may lag its end a little, so it counts as failed once 0.2 s passed without one
            died = [r for r, t in gone_since.items() if r not in exits and now - t > 0.2]
            if failed or died:
                # the status of a process that ended without writing it (os._exit, a signal) is
                # not known here (its parent is mpiexec's proxy): 1 says that it failed
                first = min(failed) if failed else min(died)
                status = (failed[first] & 0xFF or 1) if failed else 1
                print(f"minitorch.distributed.run: rank {first} failed (exit status {status}); stopping the "
                      f"others", file=sys.stderr, flush=True)
                _stop(proc, {r: p for r, p in pids.items() if r != first}, grace)
                return status, first
        time.sleep(0.05)



if __name__ == "__main__":
    sys.exit(main())
