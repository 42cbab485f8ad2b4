"""fully_shard with shard_placement_fn (parameters sharded on dim 1, on dim -1) and
unshard(async_op=True) over the launched ranks: trainings on each rank's share of every batch,
the layouts, the all-gathers counted; FSDP1's SHARDED_STATE_DICT made without a gather; results to <out>/rank<r>.npz for
tests/distributed/test_fsdp2_shard_dims.py to compare with one process on the full batch."""
import datetime
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from minitorch.distributed.fsdp import fully_shard
from minitorch.distributed.tensor import Replicate, Shard

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fsdp_models import N, data, error, full_params, mlp, train  # noqa: E402

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
out = sys.argv[1]
rows = slice(r * N // n, (r + 1) * N // n)
res = {}
FULL = StateDictOptions(full_state_dict=True)


def columns(p):
    """Shard(1) (as Shard(-1) for the biggest) where the columns split evenly, else the default."""
    if p.dim() == 2 and p.shape[1] % n == 0:
        return Shard(-1) if p.shape[1] == 12 else Shard(1)
    return None


def sharded_mlp(**kwargs):
    m = mlp(0)
    for block in (m[2], m[3]):
        fully_shard(block, **kwargs)
    return fully_shard(m, **kwargs)


# shard_placement_fn: the parameters sharded on their columns where they split evenly
m = sharded_mlp(shard_placement_fn=columns)
res["placements"] = np.array([f"{name} {p.placements} {tuple(p.to_local().shape)}" for name, p in m.named_parameters()])
_, res["columns_steps"], _ = train(m, "mlp", 3, rows, state=lambda: get_model_state_dict(m, options=FULL))
res["grad_placements"] = np.array(sorted({str(p.grad.placements) for p in m.parameters()}))

# the same on a 2-D mesh (HSDP): replicated along the first dimension, columns along the second
from minitorch.distributed.device_mesh import init_device_mesh  # noqa: E402

mesh = init_device_mesh("cpu", (2, n // 2) if n >= 4 else (1, n))
m = sharded_mlp(mesh=mesh, shard_placement_fn=lambda p: Shard(1) if p.dim() == 2 and p.shape[1] % (
    mesh.size(1)) == 0 else None)
res["hsdp_placements"] = np.array(str(m[2].fc1.weight.placements))
_, res["hsdp_steps"], _ = train(m, "mlp", 3, rows, state=lambda: get_model_state_dict(m, options=FULL))

# unshard(async_op=True): the all-gather issued, finished by wait(); the forward then gathers no more
m = sharded_mlp(shard_placement_fn=columns)
handle = m.unshard(async_op=True)
res["async_before_wait"] = np.array(m._fsdp_group.full is None)
handle.wait()
res["async_after_wait"] = np.array([m._fsdp_group.full is not None, tuple(m[0].weight.shape) == (6, 5),
                                    type(m[0].weight).__name__ == "Tensor"])
x, y = data("mlp", 0)
with minitorch.profiler.profile() as prof:
    loss = minitorch.nn.functional.mse_loss(m(x[rows]), y[rows])
names = [e.key for e in prof.key_averages() for _ in range(e.count)]
res["async_forward_gathers"] = np.array(names.count("Comm::all_gather_into_tensor"))
m.zero_grad()
m = sharded_mlp(shard_placement_fn=columns)
opt = minitorch.optim.SGD(m.parameters(), lr=0.1)
steps = []
for step in range(3):  # each step's root parameters gathered ahead by unshard(async_op=True)
    handle = m.unshard(async_op=True)
    x, y = data("mlp", step)
    opt.zero_grad()
    handle.wait()
    minitorch.nn.functional.mse_loss(m(x[rows]), y[rows]).backward()
    opt.step()
    steps.append(full_params(get_model_state_dict(m, options=FULL)))
res["async_steps"] = np.stack(steps)
m = sharded_mlp(shard_placement_fn=columns)
m.unshard(async_op=True)  # never waited: the forward finishes it
with minitorch.no_grad():
    res["async_unwaited_out"] = m(x).numpy()
res["async_unwaited_want"] = mlp(0)(x).detach().numpy()

# FSDP1's SHARDED_STATE_DICT: each rank's rows from the flat shards by one all-to-all per unit, no gather
from minitorch.distributed.fsdp import FullyShardedDataParallel as FSDP, StateDictType  # noqa: E402
from minitorch.distributed.fsdp.wrap import ModuleWrapPolicy  # noqa: E402
from fsdp_models import Block  # noqa: E402

for orig in (False, True):
    m1 = FSDP(mlp(0), auto_wrap_policy=ModuleWrapPolicy({Block}), use_orig_params=orig)
    with minitorch.profiler.profile() as prof:
        with FSDP.state_dict_type(m1, StateDictType.SHARDED_STATE_DICT):
            sd = m1.state_dict()
    names = [e.key for e in prof.key_averages() for _ in range(e.count)]
    res[f"fsdp1_comm_{orig}"] = np.array([names.count("Comm::all_gather_into_tensor"),
                                          names.count("Comm::all_to_all_single")])
    res[f"fsdp1_keys_{orig}"] = np.array([f"{k} {v.placements} {tuple(v.to_local().shape)}" for k, v in sd.items()])
    res[f"fsdp1_local_{orig}"] = np.concatenate([v.to_local().numpy().reshape(-1) for v in sd.values()])
    res[f"fsdp1_full_{orig}"] = full_params({k: v.full_tensor() for k, v in sd.items()})

# misuse, in PyTorch's classes and words
res["err_uneven"] = np.array(error(lambda: fully_shard(mlp(0), shard_placement_fn=lambda p: Shard(1) if
                                                       p.dim() == 2 and p.shape[1] == 5 else None)))
res["err_not_shard"] = np.array(error(lambda: fully_shard(mlp(0), shard_placement_fn=lambda p: Replicate())))
res["err_dim"] = np.array(error(lambda: fully_shard(mlp(0), shard_placement_fn=lambda p: Shard(2))))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
