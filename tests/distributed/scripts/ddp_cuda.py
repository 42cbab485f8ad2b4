"""CUDA tensors through the MPI engine (staged through host memory, as gloo's CUDA collectives):
collectives and 3 DDP steps of mlp.model on the device; results to <out>/rank<r>.npz."""
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from mlp import N, data, model, sgd_steps  # noqa: E402

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
res = {}
t = minitorch.arange(6.0, device="cuda").reshape(2, 3) * (r + 1)
dist.all_reduce(t)
res["all_reduce"] = t.cpu().numpy()
res["all_reduce_device"] = np.array(str(t.device))
v = minitorch.arange(6.0).reshape(3, 2).to("cuda").t()  # non-contiguous on the device
dist.all_reduce(v, op=dist.ReduceOp.MAX)
res["all_reduce_view"] = v.cpu().numpy()
lst = [minitorch.empty(2, device="cuda") for _ in range(n)]
dist.all_gather(lst, minitorch.full((2,), float(r), device="cuda"))
res["all_gather"] = np.stack([x.cpu().numpy() for x in lst])
b = minitorch.full((3,), float(r), device="cuda")
dist.broadcast(b, src=n - 1)
res["broadcast"] = b.cpu().numpy()

net = model(seed=r).to("cuda")
ddp = DDP(net)
steps = sgd_steps(ddp, net, 3, slice(r * N // n, (r + 1) * N // n), "cuda")[1]
res["steps"] = np.stack(steps)
res["grad_device"] = np.array(str(next(net.parameters()).grad.device))
# device_ids=[i] for a module on one GPU: a CPU batch is moved to cuda:i before the forward
one = model(seed=0).to("cuda")
one_ddp = DDP(one, device_ids=[0])
x, _ = data(0)
out = one_ddp(x)
res["moved_device"] = np.array(str(out.device))
res["moved_out"] = out.detach().cpu().numpy()
res["kept_ids"] = np.array([*one_ddp.device_ids, one_ddp.output_device])
for name, make in (("cpu_ids", lambda: DDP(model(seed=0), device_ids=[0])),
                   ("two_ids", lambda: DDP(one, device_ids=[0, 1]))):
    try:
        make()
    except ValueError as e:
        res[name] = np.array(str(e))
np.savez(f"{sys.argv[1]}/rank{r}.npz", **res)
dist.destroy_process_group()
