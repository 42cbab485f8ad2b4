"""ZeroRedundancyOptimizer over DDP: mlp.model trained by ZeRO-sharded Adam (per-parameter and
bucket-view broadcasts), the partition, a learning rate set on the wrapper, add_param_group, the
consolidated state_dict and its reload; results to <out>/rank<r>.npz."""
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch.distributed.optim import ZeroRedundancyOptimizer
from minitorch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mlp import N, data, model, params  # noqa: E402

STEPS = 4
out = sys.argv[1]
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
share = slice(r * N // n, (r + 1) * N // n)
res = {}


def train(bucket_view):
    net = model(seed=0)
    ddp = DDP(net)
    opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=minitorch.optim.Adam, lr=0.01,
                                  betas=(0.8, 0.99), parameters_as_bucket_view=bucket_view)
    steps = []
    for step in range(STEPS):
        if step == 2:
            opt.param_groups[0]["lr"] = 0.005  # as a scheduler does: must reach the local optimizer
        x, y = data(step)
        opt.zero_grad()
        minitorch.nn.functional.mse_loss(ddp(x[share]), y[share]).backward()
        opt.step()
        steps.append(params(net))
    return net, opt, np.stack(steps)


net, opt, res["steps"] = train(False)
index = {id(p): i for i, p in enumerate(net.parameters())}
res["mine"] = np.array(sorted(index[id(p)] for g in opt.optim.param_groups for p in g["params"]))
res["local_lr"] = np.array(opt.optim.param_groups[0]["lr"])
try:
    opt.state_dict()
except RuntimeError as e:
    res["unconsolidated"] = np.array(str(e))
opt.consolidate_state_dict(to=0)
if r == 0:
    sd = opt.state_dict()
    res["state_keys"] = np.array(sorted(sd["state"]))
    res["exp_avg_sq"] = np.concatenate([sd["state"][i]["exp_avg_sq"].numpy().reshape(-1) for i in sorted(sd["state"])])
    res["steps_in_state"] = np.array([float(sd["state"][i]["step"]) for i in sorted(sd["state"])])
    res["group_lr"] = np.array(sd["param_groups"][0]["lr"])
else:
    sd = None
# rank 0's consolidated state to every rank, loaded into a fresh ZeRO: one more step continues exactly
holder = [sd]
dist.broadcast_object_list(holder, src=0)
fresh_net = model(seed=0)
with minitorch.no_grad():
    for p, q in zip(fresh_net.parameters(), net.parameters()):
        p.copy_(q)
fresh = ZeroRedundancyOptimizer(fresh_net.parameters(), optimizer_class=minitorch.optim.Adam, lr=0.01)
fresh.load_state_dict(holder[0])
for o, m in ((opt, net), (fresh, fresh_net)):
    x, y = data(STEPS)
    o.zero_grad()
    minitorch.nn.functional.mse_loss(m(x), y).backward()
    o.step()
res["continued"] = params(net)
res["reloaded"] = params(fresh_net)

_, bopt, res["steps_bucket"] = train(True)
res["n_buckets"] = np.array(len(bopt._buckets))

# add_param_group: a new parameter joins the rank with the fewest elements
extra = minitorch.nn.Parameter(minitorch.ones(3, dtype=minitorch.float64))
opt.add_param_group({"params": [extra], "lr": 0.5})
extra.grad = minitorch.ones(3, dtype=minitorch.float64)
for p in net.parameters():
    p.grad = None
opt.step()
res["extra"] = extra.detach().numpy().copy()
res["extra_here"] = np.array(any(p is extra for g in opt.optim.param_groups for p in g["params"]))
try:
    ZeroRedundancyOptimizer([], optimizer_class=minitorch.optim.SGD, lr=0.1)
except ValueError as e:
    res["empty"] = np.array(str(e))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
