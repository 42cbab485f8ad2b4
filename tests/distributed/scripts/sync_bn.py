"""SyncBatchNorm over the ranks: each rank normalises its quarter of one seeded batch (N=8) with
the statistics of the whole batch; saves its output, its input's gradient, the parameters'
gradients (summed over the ranks, as DDP would before averaging) and the running statistics."""
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
rng = np.random.default_rng(5)
full = rng.standard_normal((8, 3, 4, 5)) * 2 + 1
weight_out = rng.standard_normal((8, 3, 4, 5))
part = 8 // world
x = minitorch.tensor(full[rank * part:(rank + 1) * part]).requires_grad_(True)
net = minitorch.nn.Sequential(minitorch.nn.BatchNorm2d(3, momentum=0.3)).double()
net = minitorch.nn.SyncBatchNorm.convert_sync_batchnorm(net)
bn = net[0]
with minitorch.no_grad():
    bn.weight.copy_(minitorch.tensor([1.5, -0.5, 2.0]))
    bn.bias.copy_(minitorch.tensor([0.1, 0.2, -0.3]))
out = net(x)
(out * minitorch.tensor(weight_out[rank * part:(rank + 1) * part])).sum().backward()
grads = [bn.weight.grad.clone(), bn.bias.grad.clone()]
for g in grads:
    dist.all_reduce(g)
np.savez(f"{sys.argv[1]}/rank{rank}.npz", kind=np.array(type(bn).__name__), out=out.detach().numpy(),
         grad=x.grad.numpy(), weight_grad=grads[0].numpy(), bias_grad=grads[1].numpy(),
         running_mean=bn.running_mean.numpy(), running_var=bn.running_var.numpy(),
         batches=np.array(int(bn.num_batches_tracked)))
dist.destroy_process_group()
