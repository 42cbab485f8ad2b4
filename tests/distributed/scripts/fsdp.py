"""FullyShardedDataParallel over the launched ranks (each its share of every batch) in several
configurations; the full parameters after each step (and more, see res[...]) go to
<out>/rank<r>.npz, for tests/distributed/test_fsdp.py to compare with one process on the full batch."""
import datetime
import functools
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn
from minitorch.distributed.device_mesh import init_device_mesh
from minitorch.distributed.fsdp import FullStateDictConfig, MixedPrecision, ShardingStrategy, StateDictType
from minitorch.distributed.fsdp import FullyShardedDataParallel as FSDP
from minitorch.distributed.fsdp.wrap import (ModuleWrapPolicy, size_based_auto_wrap_policy,
                                             transformer_auto_wrap_policy)

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fsdp_models import N, Block, data, error, full_params, held_and_comm, mlp, tied, train, transformer  # noqa: E402

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
out = sys.argv[1]
rows = slice(r * N // n, (r + 1) * N // n)
res = {}


def clip(model):
    return model.clip_grad_norm_(0.5)


# FULL_SHARD, a flat parameter per unit, one unit per Block, gradients clipped
m = FSDP(mlp(0), sharding_strategy=ShardingStrategy.FULL_SHARD, auto_wrap_policy=ModuleWrapPolicy({Block}))
res["full_names"] = np.array([name for name, _ in m.named_parameters()])
res["full_local_numel"] = np.array(sum(p.numel() for p in m.parameters()))
res["full_units"] = np.array(sum(isinstance(u, FSDP) for u in m.modules()))
opt, res["full_steps"], res["full_norms"] = train(m, "mlp", 4, rows, clip=clip)
full_model = m


def comm_in_backward(model):
    """Which units hold full parameters after forward, and the collectives of the backward."""
    return held_and_comm(model, rows,
                         lambda m: [u._handle.full is not None for u in m.modules() if isinstance(u, FSDP)])


# FULL_SHARD frees the Blocks' full parameters after their forward and gathers them again in
# backward (the root keeps its own, as PyTorch's); each unit's gradient is reduce-scattered once
res["full_held"], res["full_backward_comm"] = comm_in_backward(m)

# SHARD_GRAD_OP, the original parameters (sharded) under their names, Adam, its state gathered
m = FSDP(mlp(0), sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, use_orig_params=True,
         auto_wrap_policy=functools.partial(size_based_auto_wrap_policy, min_num_params=60))
res["orig_names"] = np.array([name for name, _ in m.named_parameters()])
res["orig_local_numel"] = np.array(sum(p.numel() for p in m.parameters()))
opt, res["orig_steps"], _ = train(m, "mlp", 4, rows, optim="adam")
res["orig_held"], res["orig_backward_comm"] = comm_in_backward(m)  # SHARD_GRAD_OP keeps them to backward
osd = FSDP.optim_state_dict(m, opt)
res["orig_osd_names"] = np.array(list(osd["state"]))
res["orig_exp_avg"] = np.concatenate([osd["state"][k]["exp_avg"].numpy().reshape(-1) for k in osd["state"]])
res["orig_osd_groups"] = np.array(osd["param_groups"][0]["params"])
res["full_osd_len"] = np.array(len(FSDP.full_optim_state_dict(m, opt)))  # rank 0 only
# loaded into a fresh model's optimizer, the state gives the same next step
m2 = FSDP(mlp(0), sharding_strategy=ShardingStrategy.SHARD_GRAD_OP, use_orig_params=True,
          auto_wrap_policy=functools.partial(size_based_auto_wrap_policy, min_num_params=60))
m2.load_state_dict(m.state_dict())
opt2 = minitorch.optim.Adam(m2.parameters(), lr=0.01)
opt2.load_state_dict(FSDP.optim_state_dict_to_load(m2, opt2, osd))
for model, o in ((m, opt), (m2, opt2)):
    x, y = data("mlp", 4)
    o.zero_grad()
    nn.functional.mse_loss(model(x[rows]), y[rows]).backward()
    o.step()
res["resumed_step"] = full_params(m2.state_dict())
res["continued_step"] = full_params(m.state_dict())

# NO_SHARD: replicated, gradients all-reduced
m = FSDP(mlp(0), sharding_strategy=ShardingStrategy.NO_SHARD)
res["noshard_local_numel"] = np.array(sum(p.numel() for p in m.parameters()))
_, res["noshard_steps"], _ = train(m, "mlp", 3, rows)

# a weight registered twice (tied), flat or as original parameters
for orig in (False, True):
    m = FSDP(tied(0), use_orig_params=orig)
    _, res[f"tied_steps_{orig}"], _ = train(m, "mlp", 3, rows)
    res[f"tied_keys_{orig}"] = np.array(list(m.state_dict()))

# gradient accumulation: two micro-batches a step, the first under no_sync
m = FSDP(mlp(0), auto_wrap_policy=ModuleWrapPolicy({Block}))
opt = minitorch.optim.SGD(m.parameters(), lr=0.1)
accumulated = []
for step in range(3):
    x, y = data("mlp", step)
    half = (rows.stop - rows.start) // 2
    opt.zero_grad()
    with m.no_sync():
        (nn.functional.mse_loss(m(x[rows.start:rows.start + half]), y[rows.start:rows.start + half]) / 2).backward()
    if step == 0:
        res["grads_after_no_sync"] = np.array([p.grad is None for p in m.parameters()])
    (nn.functional.mse_loss(m(x[rows.start + half:rows.stop]), y[rows.start + half:rows.stop]) / 2).backward()
    opt.step()
    accumulated.append(full_params(m.state_dict()))
res["accumulated_steps"] = np.stack(accumulated)
res["err_no_sync_inner"] = np.array(error(lambda: m.module[2].no_sync().__enter__()))

# mixed precision: a float64 model computing in float32
mp = MixedPrecision(param_dtype=minitorch.float32, reduce_dtype=minitorch.float32)
m = FSDP(mlp(0), auto_wrap_policy=ModuleWrapPolicy({Block}), mixed_precision=mp)
_, res["mp_steps"], _ = train(m, "mlp", 3, rows)
res["mp_param_dtypes"] = np.array([str(p.dtype) for p in m.parameters()])

# a transformer: a unit per encoder layer, original parameters
policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={nn.TransformerEncoderLayer})
m = FSDP(transformer(0), auto_wrap_policy=policy, use_orig_params=True)
res["tf_units"] = np.array(sum(isinstance(u, FSDP) for u in m.modules()))
res["tf_local_numel"] = np.array(sum(p.numel() for p in m.parameters()))
_, res["tf_steps"], _ = train(m, "transformer", 3, rows)

# FSDP2: fully_shard each encoder layer, then the model; the state through get_state_dict
from minitorch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict  # noqa: E402
from minitorch.distributed.fsdp import FSDPModule, fully_shard  # noqa: E402

m = transformer(0)
for layer in (m[1], m[2]):
    fully_shard(layer)
fully_shard(m)
res["fs_class"] = np.array([type(m).__name__, type(m[1]).__name__, str(isinstance(m[2], FSDPModule))])
res["fs_local_numel"] = np.array(sum(p.to_local().numel() for p in m.parameters()))
_, res["fs_steps"], _ = train(m, "transformer", 3, rows, state=lambda: get_state_dict(m, [])[0])
fs_opt = minitorch.optim.Adam(m.parameters(), lr=0.01)
x, y = data("transformer", 0)
nn.functional.mse_loss(m(x[rows]), y[rows]).backward()
fs_opt.step()
msd, osd = get_state_dict(m, fs_opt)
res["fs_osd_names"] = np.array(list(osd["state"]))
other = transformer(1)
for layer in (other[1], other[2]):
    fully_shard(layer)
fully_shard(other)
other_opt = minitorch.optim.Adam(other.parameters(), lr=0.01)
set_state_dict(other, other_opt, model_state_dict=msd, optim_state_dict=osd)
res["fs_loaded"] = full_params(get_state_dict(other, [])[0])
res["fs_saved"] = full_params(msd)
loaded_osd = get_state_dict(other, other_opt)[1]
res["fs_loaded_exp_avg"] = full_params({k: v["exp_avg"] for k, v in loaded_osd["state"].items()})
res["fs_saved_exp_avg"] = full_params({k: v["exp_avg"] for k, v in osd["state"].items()})
res["err_fs_twice"] = np.array(error(lambda: fully_shard(m)))

# HYBRID_SHARD on a 2-D mesh: replicated along "replicate", sharded along "shard"
mesh = init_device_mesh("cpu", (2, n // 2) if n >= 4 else (1, n), mesh_dim_names=("replicate", "shard"))
m = FSDP(mlp(0), device_mesh=mesh, sharding_strategy=ShardingStrategy.HYBRID_SHARD,
         auto_wrap_policy=ModuleWrapPolicy({Block}))
res["hybrid_local_numel"] = np.array(sum(p.numel() for p in m.parameters()))
_, res["hybrid_steps"], _ = train(m, "mlp", 3, rows)

# full state_dict: rank 0 only, on the CPU; then loaded into a model started elsewhere
with FSDP.state_dict_type(full_model, StateDictType.FULL_STATE_DICT,
                          FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
    res["rank0_only_len"] = np.array(len(full_model.state_dict()))
sd = full_model.state_dict()
res["sd_keys"] = np.array(list(sd))
other = FSDP(mlp(3), auto_wrap_policy=ModuleWrapPolicy({Block}))
res["load_result"] = np.array(str(other.load_state_dict(sd)))
x, _ = data("mlp", 9)
with minitorch.no_grad():
    res["loaded_out"] = other(x).numpy()
    res["saved_out"] = full_model(x).numpy()
res["loaded_sd"] = full_params(other.state_dict())

# summon_full_params: full shapes inside; writeback keeps a change, writeback=False drops it
with FSDP.summon_full_params(other):
    res["summoned_shapes"] = np.array([str(tuple(p.shape)) for p in other.module[0].parameters()])
    with minitorch.no_grad():
        other.module[0].weight.fill_(2.0)
with FSDP.summon_full_params(other, writeback=False):
    with minitorch.no_grad():
        other.module[4].bias.fill_(7.0)
after = other.state_dict()
res["written_back"] = after["0.weight"].numpy()
res["not_written_back"] = after["4.bias"].numpy()

# sync_module_states: every rank starts from rank 0's parameters
synced = FSDP(mlp(r), sync_module_states=True, auto_wrap_policy=ModuleWrapPolicy({Block}))
res["synced"] = full_params(synced.state_dict())

# misuse, in PyTorch's classes and words
res["err_clip_nonroot"] = np.array(error(lambda: full_model.module[2].clip_grad_norm_(1.0)))
mixed = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2).double())
res["err_dtype"] = np.array(error(lambda: FSDP(mixed)))
frozen = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
frozen[0].weight.requires_grad_(False)
res["err_requires_grad"] = np.array(error(lambda: FSDP(frozen)))
res["frozen_orig_ok"] = np.array(error(lambda: FSDP(frozen, use_orig_params=True)))


class Summoner(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        with FSDP.summon_full_params(wrapped):
            return self.lin(x)


wrapped = FSDP(Summoner())
res["err_summon_in_forward"] = np.array(error(lambda: wrapped(minitorch.ones(1, 2))))
res["err_rank0_writeback"] = np.array(error(lambda: FSDP.summon_full_params(wrapped, rank0_only=True).__enter__()))

# DeviceMesh
mesh1 = init_device_mesh("cpu", (n,))
res["mesh1"] = np.array([mesh1.size(), mesh1.get_local_rank(), mesh1.ndim, dist.get_world_size(mesh1.get_group())])
mesh2 = init_device_mesh("cpu", (2, n // 2), mesh_dim_names=("dp", "tp"))
dp, tp = mesh2["dp"], mesh2["tp"]
t = minitorch.tensor([float(r)])
dist.all_reduce(t, group=mesh2.get_group("tp"))
res["mesh2"] = np.array([mesh2.size(), mesh2.size(0), mesh2.size(1), dp.size(), tp.size(), mesh2.get_local_rank("dp"),
                         mesh2.get_local_rank(1), dp.get_local_rank(), tp.get_local_rank(), float(t)])
res["mesh2_coord"] = np.array(mesh2.get_coordinate())
res["mesh2_dp_ranks"] = dp.mesh.numpy()
res["mesh2_shape"] = np.array(mesh2.shape)
res["mesh2_names"] = np.array(tp.mesh_dim_names)
res["err_mesh_group"] = np.array(error(lambda: mesh2.get_group()))
res["err_mesh_key"] = np.array(error(lambda: mesh2["pp"]))
res["err_mesh_names"] = np.array(error(lambda: init_device_mesh("cpu", (n,), mesh_dim_names=("a", "b"))))
res["err_mesh_big"] = np.array(error(lambda: init_device_mesh("cpu", (2 * n,))))
res["err_mesh_slice"] = np.array(error(lambda: mesh1["dp"]))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
