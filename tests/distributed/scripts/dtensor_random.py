"""Random DTensors over the launched ranks (each seeded differently: the mesh's first rank's
generator wins, as PyTorch's tracker syncs it): the factories rand and randn, nn.init and
rand_like on DTensors; and DTensors pickled with minitorch.save and loaded back. Results to
<out>/rank<r>.npz for tests/distributed/test_dtensor_random.py to compare with one process."""
import datetime
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn
from minitorch.distributed.tensor import (DTensor, Partial, Replicate, Shard, distribute_tensor, init_device_mesh,
                                          rand, randn)

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
out = sys.argv[1]
mesh = init_device_mesh("cpu", (n,))
res = {}


def full(dt):
    return dt.full_tensor().detach().numpy()


# seed 5 on rank 0 (the others differ): the draws are seed 5's, split
minitorch.manual_seed(5 + 100 * r)
res["randn_s0"] = full(randn(7, 5, device_mesh=mesh, placements=[Shard(0)], dtype=minitorch.float64))
res["rand_s1"] = full(rand(7, 5, device_mesh=mesh, placements=[Shard(1)]))
res["randn_rep"] = full(randn((4, 3), device_mesh=mesh, placements=[Replicate()]))
if n == 4:
    mesh2 = init_device_mesh("cpu", (2, 2))
    two = randn(7, 5, device_mesh=mesh2, placements=[Shard(0), Shard(1)])
    res["randn_2d"] = full(two)
    res["randn_2d_local"] = two.to_local().numpy()
else:
    res["randn_2d"] = full(randn(7, 5, device_mesh=mesh, placements=[Shard(0)]))
res["after"] = minitorch.randn(3).numpy()  # every rank's generator where the draws left rank 0's

# nn.init and the *_like ops on DTensors: each rank its part of one draw
minitorch.manual_seed(7 + r)
w = nn.Parameter(distribute_tensor(minitorch.zeros(6, 4, dtype=minitorch.float64), mesh, [Shard(1)]))
nn.init.normal_(w, mean=1.0, std=2.0)
res["init_normal"] = full(w)
res["init_normal_layout"] = np.array(str(w.placements))
nn.init.uniform_(w, -1.0, 1.0)
res["init_uniform"] = full(w)
like = minitorch.rand_like(distribute_tensor(minitorch.zeros(5, 3), mesh, [Shard(0)]))
res["rand_like"] = full(like)
res["rand_like_layout"] = np.array(f"{type(like).__name__} {like.placements}")

# dropout of a sharded activation: each rank its slice of one process's mask (and its gradient)
minitorch.manual_seed(11 + r)
act = distribute_tensor(minitorch.ones(6, 4, dtype=minitorch.float64) * 3, mesh, [Shard(0)])
act.requires_grad_()
dropped = nn.functional.dropout(act, 0.5)
res["dropout"] = full(dropped)
res["dropout_layout"] = np.array(str(dropped.placements))
(dropped * 2).sum().full_tensor().backward()
res["dropout_grad"] = full(act.grad)

# minitorch.save / load of DTensors: each rank its own part, back in the same mesh
g = np.random.default_rng(0)
X = g.standard_normal((7, 5))
saved = {"rows": distribute_tensor(minitorch.from_numpy(X.copy()), mesh, [Shard(0)]),
         "cols": nn.Parameter(distribute_tensor(minitorch.from_numpy(X.copy()), mesh, [Shard(1)])),
         "part": DTensor.from_local(minitorch.from_numpy(X * (r + 1)), mesh, [Partial()])}
minitorch.save(saved, f"{out}/saved{r}.pt")
back = minitorch.load(f"{out}/saved{r}.pt")
res["pickled_kinds"] = np.array([f"{k} {type(v).__name__} {v.placements} {tuple(v.shape)} "
                                 f"{v.device_mesh == mesh} {v.requires_grad} {isinstance(v, nn.Parameter)}"
                                 for k, v in back.items()])
res["pickled_rows_local"] = back["rows"].to_local().numpy()
res["pickled_rows_full"] = full(back["rows"])
res["pickled_cols_full"] = full(back["cols"])
res["pickled_part_full"] = full(back["part"])
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
