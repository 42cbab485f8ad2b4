"""DTensor.__setitem__ on every rank: for each layout of a 5x6 tensor, index and value, the full
tensor after the write, beside NumPy's; and what the cases PyTorch 2.13 refuses raise.
Results to <out>/rank<r>.npz."""
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch.distributed.device_mesh import init_device_mesh
from minitorch.distributed.tensor import Replicate, Shard, distribute_tensor

out = sys.argv[1]
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (n,))
X = np.arange(30, dtype=np.float32).reshape(5, 6)
KEYS = [1, -1, 4, slice(1, 4), slice(0, 5, 2), slice(None, None, 3), slice(3, 1), (slice(None), 2),
        (Ellipsis, slice(1, 5, 2)), (slice(1, None, 2), slice(None, None, 4)), (2, Ellipsis, 3), (None, slice(1, 5, 3))]
res = {}
for p in (Shard(0), Shard(1), Replicate()):
    for k, key in enumerate(KEYS):
        want = X.copy()
        region = want[key].shape
        for j, vshape in enumerate((region, region[-1:])):  # the region's shape, and one it broadcasts from
            v = np.arange(1, 1 + int(np.prod(vshape)), dtype=np.float32).reshape(vshape) * -1
            want[key] = v
            d = distribute_tensor(minitorch.from_numpy(X.copy()), mesh, [p])
            d[key] = distribute_tensor(minitorch.from_numpy(v.copy()), mesh, [Replicate()])
            res[f"{p}|{k}|{j}"] = d.full_tensor().numpy()
            res[f"want {p}|{k}|{j}"] = want.copy()
            assert d.placements == (p,)
# a sharded value is gathered first
d = distribute_tensor(minitorch.from_numpy(X.copy()), mesh, [Shard(0)])
d[:, 1:3] = distribute_tensor(minitorch.ones(5, 2), mesh, [Shard(0)])
res["sharded value"] = d.full_tensor().numpy()
res["want sharded value"] = np.where(np.isin(np.arange(6), [1, 2]), 1.0, X).astype(np.float32)
# what PyTorch refuses, with its errors
errors = []
for what, fn in [("number", lambda d: d.__setitem__(1, 5.0)),
                 ("tensor", lambda d: d.__setitem__(1, minitorch.ones(6))),
                 ("mask", lambda d: d.__setitem__(d > 5, 0.0))]:
    d = distribute_tensor(minitorch.from_numpy(X.copy()), mesh, [Shard(0)])
    try:
        fn(d)
        errors.append(f"{what}: none")
    except Exception as e:  # noqa: BLE001 - the test reads what it was
        errors.append(f"{what}: {type(e).__name__}: {e}")
res["errors"] = np.array(errors)
d = distribute_tensor(minitorch.from_numpy(X.copy()), mesh, [Replicate()])
d[d > 20] = 0.0  # a replicated self takes a mask, as PyTorch's index_put_
res["mask"] = d.full_tensor().numpy()
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
