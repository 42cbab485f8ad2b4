"""DDP training of mlp.model over the launched ranks (each its share of every batch); the parameters
after each step go to <out>/rank<r>.npz, beside checks of no_sync, find_unused_parameters and the
profiler's Comm events."""
import copy
import datetime
import json
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn
from minitorch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mlp import N, data, model, params, sgd_steps  # noqa: E402

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=20))
r, n = dist.get_rank(), dist.get_world_size()
out = sys.argv[1]
res = {}
net = model(seed=r)  # each rank a different start: DDP must broadcast rank 0's
ddp = DDP(net, bucket_cap_mb=0.0005)  # small buckets: several all-reduces per backward
res["n_buckets"] = np.array(len(ddp._buckets))
share = slice(r * N // n, (r + 1) * N // n)
opt, steps = sgd_steps(ddp, net, 3, share)
# gradient accumulation: two micro-batches, the first under no_sync
for step in range(3, 5):
    x, y = data(step)
    opt.zero_grad()
    half = (share.stop - share.start) // 2
    first, second = slice(share.start, share.start + half), slice(share.start + half, share.stop)
    with ddp.no_sync():
        (nn.functional.mse_loss(ddp(x[first]), y[first]) / 2).backward()
    if step == 3:
        res["local_grad_after_no_sync"] = np.concatenate([p.grad.numpy().reshape(-1) for p in net.parameters()])
    (nn.functional.mse_loss(ddp(x[second]), y[second]) / 2).backward()
    opt.step()
    steps.append(params(net))
res["steps"] = np.stack(steps)

# the profiler sees the gradient all-reduces
with minitorch.profiler.profile() as prof:
    x, y = data(9)
    nn.functional.mse_loss(ddp(x[share]), y[share]).backward()
names = [e.key for e in prof.key_averages()]
res["comm_events"] = np.array(sum(1 for k in names if k.startswith("Comm::all_reduce")))
res["journey_comm"] = np.array("collective of minitorch.distributed: all_reduce" in prof.journey())
prof.export_chrome_trace(f"{out}/trace{r}.json")
with open(f"{out}/trace{r}.json") as f:
    res["trace_comm"] = np.array(sum(1 for e in json.load(f)["traceEvents"] if e.get("name") == "Comm::all_reduce"))


class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2).double()
        self.b = nn.Linear(3, 2).double()
        self.c = nn.Linear(3, 2).double()  # never used

    def forward(self, x):
        return self.a(x) + (self.b(x) if r == 0 else 0)


minitorch.manual_seed(5)
br = Branches()
local = copy.deepcopy(br)
xb = minitorch.from_numpy(np.random.default_rng(11 + r).standard_normal((4, 3)))
d2 = DDP(br, find_unused_parameters=True)
d2(xb).sum().backward()
local(xb).sum().backward()
res["unused_a"] = d2.module.a.weight.grad.numpy().copy()
res["local_a"] = local.a.weight.grad.numpy().copy()
res["unused_b"] = d2.module.b.weight.grad.numpy().copy()
res["local_b"] = local.b.weight.grad.numpy().copy() if local.b.weight.grad is not None else np.zeros((2, 3))
res["unused_c_is_none"] = np.array(d2.module.c.weight.grad is None)
# the second iteration works as well
d2.zero_grad()
d2(xb).sum().backward()
res["unused_a_2"] = d2.module.a.weight.grad.numpy().copy()

# without find_unused_parameters, the next forward says why the reduction never finished
d3 = DDP(Branches())
d3(xb).sum().backward()
try:
    d3(xb)
    res["unfinished_error"] = np.array("")
except RuntimeError as e:
    res["unfinished_error"] = np.array(str(e))
# broadcast_buffers: every forward starts from rank 0's buffers (BatchNorm's running statistics)
minitorch.manual_seed(3)
bn = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()
with minitorch.no_grad():
    bn[1].running_mean.fill_(float(r))  # a different start on each rank: DDP broadcasts rank 0's
seen = []
bn.register_forward_pre_hook(lambda mod, args: seen.append(mod[1].running_mean.numpy().copy()))
d4 = DDP(bn)
d4(minitorch.from_numpy(np.random.default_rng(20 + r).standard_normal((6, 3))))
res["bn_post1"] = bn[1].running_mean.numpy().copy()
d4(minitorch.from_numpy(np.random.default_rng(30 + r).standard_normal((6, 3))))
res["bn_pre"] = np.stack(seen)
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
