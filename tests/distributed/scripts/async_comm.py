"""Async collectives and what the profiler sees of them; modes:
`overlap`: rank 0's async all_reduce returns before rank 1 (1.5 s late) calls it, compute runs
meanwhile, wait() gives the sum; async calls with sizes that differ across ranks raise at wait();
async calls waited for in another order than issued. `profile`: one Comm::<name> event per
collective, with its bytes. `dead`: rank 1 exits; the others call every collective, blocking and
async, each raising DistBackendError within the group's timeout. A third argument "nccl" runs
`overlap` on CUDA tensors over NCCL (whose check of the sizes runs once per signature).
Each rank saves its results to <out>/rank<r>.npz."""
import datetime
import json
import os
import sys
import time

import numpy as np

import minitorch
import minitorch.distributed as dist

out, mode = sys.argv[1], sys.argv[2]
backend = sys.argv[3] if len(sys.argv) > 3 else "gloo"
dev = "cuda" if backend == "nccl" else "cpu"
TIMEOUT = 1.5 if mode == "dead" else 30.0
dist.init_process_group(backend, timeout=datetime.timedelta(seconds=TIMEOUT))
r, n = dist.get_rank(), dist.get_world_size()
res = {}
dist.barrier()

if mode == "overlap":
    x = minitorch.full((1000,), float(r + 1), device=dev)
    if r == 1:
        time.sleep(1.5)
    t0 = time.monotonic()
    work = dist.all_reduce(x, async_op=True)
    res["issue_s"] = np.array(time.monotonic() - t0)
    a = minitorch.randn(64, 64)
    for _ in range(20):  # compute while the peer has not come yet
        a = (a @ a).tanh()
    res["completed_early"] = np.array(work.is_completed())
    work.wait()
    res["waited_s"] = np.array(time.monotonic() - t0)
    res["sum"] = x.cpu().numpy().copy()
    # sizes that differ across ranks: the call returns, wait() raises (on every rank), the group works on
    t0 = time.monotonic()
    bad = dist.all_reduce(minitorch.ones(3 + r, device=dev), async_op=True)
    res["bad_issue_s"] = np.array(time.monotonic() - t0)
    try:
        bad.wait()
        res["bad_error"] = np.array("")
    except dist.DistBackendError as e:
        res["bad_error"] = np.array(str(e))
    res["bad_success"] = np.array(bad.is_success())
    # several in flight, waited for last to first
    y = minitorch.full((5,), float(r + 1), device=dev)
    z = minitorch.full((4,), float(10 * r), device=dev)
    g = minitorch.empty(2 * n, device=dev)
    works = [dist.all_reduce(y, async_op=True), dist.broadcast(z, src=1, async_op=True),
             dist.all_gather_into_tensor(g, minitorch.full((2,), float(r), device=dev), async_op=True)]
    for w in reversed(works):
        w.wait()
    res["y"], res["z"], res["g"] = y.cpu().numpy().copy(), z.cpu().numpy().copy(), g.cpu().numpy().copy()
elif mode == "profile":
    t = minitorch.ones(256)  # 1 KiB
    g = minitorch.empty(256 * n)
    with minitorch.profiler.profile() as prof:
        dist.all_reduce(t)
        dist.all_reduce(t, async_op=True).wait()
        dist.broadcast(t, src=0, async_op=True).wait()
        dist.all_gather_into_tensor(g, t)
        dist.reduce_scatter_tensor(t, g)
        dist.all_to_all_single(g, g.clone())
        dist.barrier()
    events = [e for e in prof.events() if e.name.startswith("Comm::")]
    names = [e.name for e in events]
    res["names"] = np.array(sorted(names))
    res["bytes"] = np.array([e.bytes for e in events if e.name == "Comm::all_reduce"])
    res["journey"] = np.array(prof.journey())
    prof.export_chrome_trace(f"{out}/trace{r}.json")
    with open(f"{out}/trace{r}.json") as f:
        trace = json.load(f)["traceEvents"]
    res["trace_bytes"] = np.array([e["args"].get("Bytes", 0) for e in trace if e.get("name") == "Comm::all_reduce"])
elif mode == "dead":
    if r == 1:
        os._exit(3)
    t = minitorch.ones(100)
    g = minitorch.empty(100 * n)
    parts = [minitorch.empty(100) for _ in range(n)]
    blocking = {
        "all_reduce": lambda: dist.all_reduce(t),
        "broadcast": lambda: dist.broadcast(t, src=0),
        "all_gather": lambda: dist.all_gather(parts, t),
        "all_gather_into_tensor": lambda: dist.all_gather_into_tensor(g, t),
        "reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(t, g),
        "gather": lambda: dist.gather(t, parts if r == 0 else None, dst=0),
        "scatter": lambda: dist.scatter(t, parts if r == 0 else None, src=0),
        "reduce": lambda: dist.reduce(t, dst=0),
        "barrier": lambda: dist.barrier(),
        "all_to_all_single": lambda: dist.all_to_all_single(g, g.clone()),
        "all_to_all": lambda: dist.all_to_all(parts, [p.clone() for p in parts]),
        "recv": lambda: dist.recv(t, src=1),
    }
    asyncs = {
        "async all_reduce": lambda: dist.all_reduce(t, async_op=True),
        "async broadcast": lambda: dist.broadcast(t, src=0, async_op=True),
        "async all_gather_into_tensor": lambda: dist.all_gather_into_tensor(g, t, async_op=True),
        "async reduce_scatter_tensor": lambda: dist.reduce_scatter_tensor(t, g, async_op=True),
        "async barrier": lambda: dist.barrier(async_op=True),
        "irecv": lambda: dist.irecv(t, src=1),
    }
    names, kinds, errors, seconds, issued = [], [], [], [], []
    for name, fn in [*blocking.items(), *asyncs.items()]:
        t0 = time.monotonic()
        issue = -1.0
        try:
            work = fn()
            issue = time.monotonic() - t0
            if work is not None:
                work.wait()
            kinds.append("")
            errors.append("")
        except Exception as e:  # noqa: BLE001 - the test reads what it was
            kinds.append(type(e).__name__ + (" (a RuntimeError)" if isinstance(e, RuntimeError) else ""))
            errors.append(str(e))
        names.append(name)
        seconds.append(time.monotonic() - t0)
        issued.append(issue)
    res.update(names=np.array(names), kinds=np.array(kinds), errors=np.array(errors), seconds=np.array(seconds),
               issued=np.array(issued))
np.savez(f"{out}/rank{r}.npz", **res)
if mode == "dead":
    sys.stdout.flush()
    os._exit(0)  # MPI_Finalize would wait for the dead rank
dist.destroy_process_group()
