"""Failure cases: `dead` (rank 1 exits without calling), `exit3` (rank 1's script ends with
sys.exit(3) while rank 0 waits), `slow` (rank 1 calls too late), `shape` (ranks pass different
sizes), `ddp_model` (rank 1 has another model), `noinit` (rank 1 never calls init_process_group),
`dieinit` (rank 1 dies before its MPI_Init). Each rank saves what it raised and how long it took
to <out>/rank<r>.npz. A third argument "nccl" runs them on CUDA tensors over NCCL."""
import datetime
import os
import sys
import time

import numpy as np

import minitorch
import minitorch.distributed as dist

out, mode = sys.argv[1], sys.argv[2]
backend = sys.argv[3] if len(sys.argv) > 3 else "mpi"
dev = "cuda" if backend == "nccl" else "cpu"
TIMEOUT = 3.0
res = {"error": np.array(""), "kind": np.array(""), "seconds": np.array(-1.0)}


def attempt(fn):
    t0 = time.monotonic()
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the test reads what it was
        res["error"] = np.array(str(e))
        res["kind"] = np.array(type(e).__name__)
        res["is_runtime_error"] = np.array(isinstance(e, RuntimeError))
    res["seconds"] = np.array(time.monotonic() - t0)


launched = "PMI_RANK" in os.environ  # by the launcher; else started on their own (scripts/spawned.py)
if mode == "dieinit":  # rank 1 dies after the rendezvous, before its MPI_Init (no launcher)
    if os.environ["RANK"] == "1":
        dist._mpi = lambda: os._exit(0)
    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=60))
    sys.exit(0)  # rank 0 never gets here: the PMI server ends it, stuck in MPI_Init
if mode == "noinit":  # rank 1 never comes to the rendezvous
    if os.environ["RANK"] == "1":
        os._exit(0)
    attempt(lambda: dist.init_process_group(backend, timeout=datetime.timedelta(seconds=TIMEOUT)))
    np.savez(f"{out}/rank0.npz", **res)
    sys.exit(0)
# processes started on their own may start seconds apart (each imports minitorch): they meet with
# a longer timeout, then fail within TIMEOUT on a group of that timeout
dist.init_process_group(backend, timeout=datetime.timedelta(seconds=TIMEOUT if launched else 60))
with open("/proc/self/maps") as maps, open(f"{out}/segment{os.environ['RANK']}.txt", "w") as f:
    # MPICH's shared memory segment of this world, named in /dev/shm until its ranks were all in
    f.write("".join(sorted({line.split(None, 5)[5] for line in maps if "/dev/shm/mpich_shm_" in line})))
r, n = dist.get_rank(), dist.get_world_size()
G = None if launched else dist.new_group(timeout=datetime.timedelta(seconds=TIMEOUT))
dist.barrier(group=G)
if mode == "dead":
    if r == 1:
        os._exit(3)
    attempt(lambda: dist.all_reduce(minitorch.ones(1000, device=dev), group=G))
elif mode == "exit3":
    if r == 1:
        sys.exit(3)
    time.sleep(60)  # the launcher stops this rank long before
elif mode == "slow":
    if r == 1:
        time.sleep(TIMEOUT + 2)
        np.savez(f"{out}/rank{r}.npz", **res)
        os._exit(0)
    attempt(lambda: dist.all_reduce(minitorch.ones(10, device=dev), group=G))
elif mode == "shape":
    attempt(lambda: dist.all_reduce(minitorch.ones(3 + r, device=dev), group=G))
    t = minitorch.ones(5, device=dev)
    dist.all_reduce(t, group=G)  # the group still works after the mismatch was found
    res["after"] = t.cpu().numpy().copy()
    # the cross-rank check of the sizes: before every MPI collective, once per signature for NCCL
    checks = []
    check = dist._Check

    class Counted(check):
        def __init__(self, pg, what, *args):
            checks.append(what)
            super().__init__(pg, what, *args)

    dist._Check = Counted
    for _ in range(5):
        dist.all_reduce(t, group=G)
    dist._Check = check
    res["checks_repeated"] = np.array(len(checks))
elif mode == "ddp_model":
    from minitorch import nn
    from minitorch.nn.parallel import DistributedDataParallel as DDP

    attempt(lambda: DDP(nn.Linear(3, 2 + (r == 1)), process_group=G))
np.savez(f"{out}/rank{r}.npz", **res)
