"""distributed.checkpoint in PyTorch's format over the launched ranks: saves DTensors sharded by
rows and by columns, a replicated one, a plain tensor and plain values into <out>/mine (for
PyTorch to read in tests/distributed/test_dcp_torch_format.py), and loads the checkpoint that
PyTorch saved there (<out>/torch's) into DTensors sharded by columns; results to <out>/rank<r>.npz."""
import datetime
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
import minitorch.distributed.checkpoint as dcp
from minitorch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
out = sys.argv[1]
mesh = init_device_mesh("cpu", (n,))
g = np.random.default_rng(0)
X = g.standard_normal((7, 5))
x = minitorch.from_numpy(X.copy())
model = {"rows": distribute_tensor(x, mesh, [Shard(0)]), "cols": distribute_tensor(x.float(), mesh, [Shard(1)]),
         "rep": distribute_tensor(x * 2, mesh, [Replicate()]), "plain": minitorch.arange(6)}
dcp.save({"model": model, "step": 3, "name": "mlp"}, checkpoint_id=f"{out}/mine")
into = {"model": {"w": distribute_tensor(minitorch.zeros(7, 5, dtype=minitorch.float64), mesh, [Shard(1)]),
                  "b": minitorch.zeros(5, dtype=minitorch.float32)}, "step": 0}
dcp.load(into, checkpoint_id=f"{out}/theirs")
w = into["model"]["w"]
np.savez(f"{out}/rank{r}.npz", w_local=w.to_local().numpy(), w_full=w.full_tensor().numpy(),
         b=into["model"]["b"].numpy(), step=np.array(into["step"]))
dist.destroy_process_group()
