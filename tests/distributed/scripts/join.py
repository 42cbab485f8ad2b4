"""DDP under Join on uneven inputs (rank r has 3 + r batches): divide_by_initial_world_size=False,
a BatchNorm's buffers synced from the ranks still training and the last joiner's model copied to
all at the end, throw_on_early_termination; results to <out>/rank<r>.npz."""
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch.distributed.algorithms.join import Join
from minitorch.nn.parallel import DistributedDataParallel as DDP

out = sys.argv[1]
dist.init_process_group("gloo")
r = dist.get_rank()
res = {}

# gradients divided by the ranks still training: rank 1's last backward is its own
lin = DDP(minitorch.nn.Linear(1, 1))
with lin.join(divide_by_initial_world_size=False):
    for _ in range(3 + r):
        lin(minitorch.ones(1)).sum().backward()
res["grads_live"] = np.array([p.grad.item() for p in lin.parameters()])

# a BatchNorm model trained with SGD on uneven batches: equal parameters and buffers at the end
minitorch.manual_seed(0)
net = minitorch.nn.Sequential(minitorch.nn.Linear(3, 4), minitorch.nn.BatchNorm1d(4), minitorch.nn.Linear(4, 1))
ddp = DDP(net)
opt = minitorch.optim.SGD(ddp.parameters(), lr=0.1)
g = np.random.default_rng(r)
with Join([ddp]):
    for _ in range(3 + 2 * r):
        opt.zero_grad()
        ddp(minitorch.from_numpy(g.standard_normal((8, 3)).astype(np.float32))).pow(2).mean().backward()
        opt.step()
res["state"] = np.concatenate([v.detach().reshape(-1).float().numpy() for v in net.state_dict().values()])

# throw_on_early_termination: every rank raises once one has run out
try:
    with ddp.join(throw_on_early_termination=True):
        for _ in range(2 + r):
            ddp(minitorch.ones(8, 3)).sum().backward()
except RuntimeError as e:
    res["thrown"] = np.array(str(e))
try:
    Join([])
except ValueError as e:
    res["empty"] = np.array(str(e))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
