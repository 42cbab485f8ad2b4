"""`python -m minitorch.distributed.run --nproc-per-node N script.py [args]`, as torchrun.

Starts N processes on this machine under MPICH's mpiexec (the processes of one MPI world: MPICH
cannot join processes that each started alone; see the README's "More than one process") and
gives each torchrun's environment: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK,
MASTER_ADDR (127.0.0.1) and MASTER_PORT, on loopback only. A process that fails does not stop the
others: they raise within their process group's timeout. The exit status is mpiexec's (not 0 when
a process failed).
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
from typing import List, Optional


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
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--no-python", "--no_python", action="store_true", help="run the script as a program")
    p.add_argument("training_script", type=str)
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.nnodes not in ("1", "1:1") or args.node_rank != 0:
        raise SystemExit("minitorch.distributed.run: only --nnodes 1 (this machine) is supported")
    if args.nproc_per_node < 1:
        raise SystemExit("minitorch.distributed.run: --nproc-per-node must be at least 1")
    if args.master_addr not in ("127.0.0.1", "localhost"):
        raise SystemExit("minitorch.distributed.run: processes meet on loopback only (--master-addr 127.0.0.1)")
    mpiexec = find_mpiexec()
    if mpiexec is None:
        raise SystemExit("minitorch.distributed.run needs MPI's mpiexec: pip install mpi4py mpich")
    n = args.nproc_per_node
    env = dict(os.environ)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.master_port or _free_port()), WORLD_SIZE=str(n),
               LOCAL_WORLD_SIZE=str(n), GROUP_RANK="0", ROLE_RANK="0", ROLE_WORLD_SIZE=str(n), NODE_RANK="0",
               OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"))
    if args.no_python:
        target = [args.training_script]
    elif args.module:
        target = [sys.executable, "-m", "minitorch.distributed._bootstrap", "-m", args.training_script]
    else:
        target = [sys.executable, "-m", "minitorch.distributed._bootstrap", args.training_script]
    # -disable-auto-cleanup: a process that fails leaves the others running, so that they report
    # the failure themselves (DistBackendError within their timeout) instead of being killed
    cmd = [mpiexec, "-n", str(n), "-host", "localhost", "-disable-auto-cleanup", *target,
           *args.training_script_args]
    return subprocess.call(cmd, env=env)


if __name__ == "__main__":
    sys.exit(main())
