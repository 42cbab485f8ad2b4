"""DDP of a CUDA model on the "nccl" backend (the emulated device's NCCL in CI): 5 steps of
mlp.model (the last two with a no_sync micro-batch), then 2 steps with each default comm hook, and
the profiler's view of a backward (Comm:: events, ncclAllReduce calls and NCCL kernels); results to
<out>/rank<r>.npz."""
import datetime
import json
import os
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn
from minitorch.distributed.algorithms.ddp_comm_hooks import default_hooks
from minitorch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mlp import N, data, model, params  # noqa: E402

out = sys.argv[1]
init = sys.argv[2] if len(sys.argv) > 2 else "env://"
dev = f"cuda:{int(os.environ['LOCAL_RANK']) % minitorch.cuda.device_count()}"
minitorch.cuda.set_device(dev)
dist.init_process_group("nccl", init_method=init, timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
res = {"backend": np.array(dist.get_backend())}
share = slice(r * N // n, (r + 1) * N // n)


def train(net, ddp, steps, accumulate=()):
    opt = minitorch.optim.SGD(ddp.parameters(), lr=0.1)
    got = []
    for step in steps:
        x, y = (t.to(dev) for t in data(step))
        opt.zero_grad()
        if step in accumulate:
            half = (share.stop - share.start) // 2
            first, second = slice(share.start, share.start + half), slice(share.start + half, share.stop)
            with ddp.no_sync():
                (nn.functional.mse_loss(ddp(x[first]), y[first]) / 2).backward()
            (nn.functional.mse_loss(ddp(x[second]), y[second]) / 2).backward()
        else:
            nn.functional.mse_loss(ddp(x[share]), y[share]).backward()
        opt.step()
        got.append(params(net))
    return np.stack(got)


net = model(seed=r).to(dev)  # each rank a different start: DDP broadcasts rank 0's
ddp = DDP(net, bucket_cap_mb=0.0005)
res["n_buckets"] = np.array(len(ddp._buckets))
res["steps"] = train(net, ddp, range(5), accumulate=(3, 4))
res["grad_device"] = np.array(str(next(net.parameters()).grad.device))
res["bucket_device"] = np.array(str(ddp._buckets[0].flat.device))

for name, hook in (("allreduce_hook", default_hooks.allreduce_hook), ("fp16", default_hooks.fp16_compress_hook)):
    hnet = model(seed=r).to(dev)
    hddp = DDP(hnet, bucket_cap_mb=0.0005)
    hddp.register_comm_hook(None, hook)
    res[f"hook_{name}"] = train(hnet, hddp, range(3))

with minitorch.profiler.profile(activities=[minitorch.profiler.ProfilerActivity.CPU,
                                            minitorch.profiler.ProfilerActivity.CUDA]) as prof:
    x, y = (t.to(dev) for t in data(9))
    nn.functional.mse_loss(ddp(x[share]), y[share]).backward()
    minitorch.cuda.synchronize()
avg = prof.key_averages()
res["comm_events"] = np.array(sum(e.count for e in avg if e.key.startswith("Comm::all_reduce")))
res["library_calls"] = np.array(sum(e.count for e in avg if e.key == "Library::ncclAllReduce"))
prof.export_chrome_trace(f"{out}/trace{r}.json")
with open(f"{out}/trace{r}.json") as f:
    events = json.load(f)["traceEvents"]
res["trace_comm"] = np.array(sum(1 for e in events if e.get("name") == "Comm::all_reduce"))
res["trace_kernels"] = np.array(sum(1 for e in events if "ncclDevKernel_AllReduce" in str(e.get("name", ""))
                                    and e.get("cat") == "kernel"))
res["journey"] = np.array(prof.journey())
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
