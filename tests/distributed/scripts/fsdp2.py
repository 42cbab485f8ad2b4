"""fully_shard (FSDP2) over the launched ranks, its parameters DTensors: trainings (each rank its
share of every batch) with mixed precision, reshard_after_forward, gradient accumulation, a 2-D
mesh, CPU offload and ignored parameters, and FSDP1's SHARDED_STATE_DICT and LOCAL_STATE_DICT,
ignored_modules, param_init_fn and CPUOffload; results to <out>/rank<r>.npz for
tests/distributed/test_fsdp2.py to compare with one process on the full batch."""
import datetime
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
from minitorch import nn
from minitorch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict, set_model_state_dict
from minitorch.distributed.device_mesh import init_device_mesh
from minitorch.distributed.fsdp import (CPUOffload, CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy,
                                        ShardedStateDictConfig, StateDictType, fully_shard)
from minitorch.distributed.fsdp import FullyShardedDataParallel as FSDP
from minitorch.distributed.fsdp.wrap import ModuleWrapPolicy

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fsdp_models import N, Block, data, error, full_params, held_and_comm, mlp, train, transformer  # noqa: E402

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
out = sys.argv[1]
rows = slice(r * N // n, (r + 1) * N // n)
res = {}
FULL = StateDictOptions(full_state_dict=True)


def sharded_mlp(seed=0, **kwargs):
    m = mlp(seed)
    for block in (m[2], m[3]):
        fully_shard(block, **kwargs)
    return fully_shard(m, **kwargs)


def full_state(m):
    return get_model_state_dict(m, options=FULL)


# the transformer: each encoder layer, then the model; its parameters DTensors sharded on dim 0
m = transformer(0)
for layer in (m[1], m[2]):
    fully_shard(layer)
fully_shard(m)
params = list(m.named_parameters())
res["fs_names"] = np.array([name for name, _ in params])
res["fs_kinds"] = np.array(sorted({f"{type(p).__name__} {p.placements} {isinstance(p, nn.Parameter)}"
                                   for _, p in params}))
res["fs_shapes"] = np.array([str(tuple(p.shape)) for _, p in params])
res["fs_local_numel"] = np.array(sum(p.to_local().numel() for _, p in params))
_, res["tf_steps"], _ = train(m, "transformer", 3, rows, state=lambda: full_state(m))
sd = m.state_dict()
res["fs_sd_kinds"] = np.array(sorted({type(v).__name__ for v in sd.values()}))
res["fs_grad_kind"] = np.array(str(type(next(m.parameters()).grad).__name__))

# mixed precision: a float64 model computing in float32, gradients reduced in float32
mp = MixedPrecisionPolicy(param_dtype=minitorch.float32, reduce_dtype=minitorch.float32)
m = sharded_mlp(mp_policy=mp)
_, res["mp_steps"], _ = train(m, "mlp", 3, rows, state=lambda: full_state(m))
res["mp_param_dtypes"] = np.array(sorted({str(p.dtype) for p in m.parameters()}))
x, _ = data("mlp", 0)
with minitorch.no_grad():
    res["mp_out_dtype"] = np.array(str(m(x[rows]).dtype))
m_out = mlp(0)  # output_dtype on the root only, as PyTorch's users set it (each module casts its own output)
for block in (m_out[2], m_out[3]):
    fully_shard(block, mp_policy=MixedPrecisionPolicy(param_dtype=minitorch.float32))
fully_shard(m_out, mp_policy=MixedPrecisionPolicy(param_dtype=minitorch.float32, output_dtype=minitorch.float64))
with minitorch.no_grad():
    res["mp_output_dtype"] = np.array(str(m_out(x[rows]).dtype))


def groups_held(model):
    return [mod._fsdp_group.full is not None for mod in model.modules() if isinstance(mod, FSDPModule)]


# reshard_after_forward: True frees the Blocks' full parameters after their forward (gathered
# again in backward); False keeps them to backward; the root keeps its own either way
for keep in (True, False):
    m = sharded_mlp(reshard_after_forward=keep)
    _, res[f"raf_steps_{keep}"], _ = train(m, "mlp", 3, rows, state=lambda: full_state(m))
    res[f"raf_held_{keep}"], res[f"raf_comm_{keep}"] = held_and_comm(m, rows, groups_held)

# gradient accumulation: two micro-batches a step, the first without gradient sync
m = sharded_mlp()
opt = minitorch.optim.SGD(m.parameters(), lr=0.1)
accumulated = []
for step in range(3):
    x, y = data("mlp", step)
    half = (rows.stop - rows.start) // 2
    opt.zero_grad()
    m.set_requires_gradient_sync(False)
    (nn.functional.mse_loss(m(x[rows.start:rows.start + half]), y[rows.start:rows.start + half]) / 2).backward()
    m.set_requires_gradient_sync(True)
    (nn.functional.mse_loss(m(x[rows.start + half:rows.stop]), y[rows.start + half:rows.stop]) / 2).backward()
    opt.step()
    accumulated.append(full_params(full_state(m)))
res["accumulated_steps"] = np.stack(accumulated)

# a 2-D mesh (HSDP): replicated along the first dimension, sharded along the second
mesh = init_device_mesh("cpu", (2, n // 2) if n >= 4 else (1, n), mesh_dim_names=("replicate", "shard"))
m = sharded_mlp(mesh=mesh)
res["hsdp_placements"] = np.array(str(next(m.parameters()).placements))
_, res["hsdp_steps"], _ = train(m, "mlp", 3, rows, state=lambda: full_state(m))

# the recommended start: the model made on the meta device, sharded, materialized (to_empty),
# then given a full state dict
with minitorch.device("meta"):
    m = mlp(0)
for block in (m[2], m[3]):
    fully_shard(block)
fully_shard(m)
res["meta_devices"] = np.array(sorted({str(p.device) for p in m.parameters()}))
m.to_empty(device="cpu")
res["meta_load"] = np.array(str(set_model_state_dict(m, mlp(0).state_dict(), options=FULL)))
_, res["meta_steps"], _ = train(m, "mlp", 3, rows, state=lambda: full_state(m))

# CPU offload (the shards stay on the CPU) and ignored parameters (left whole, not reduced)
m = sharded_mlp(offload_policy=CPUOffloadPolicy())
_, res["offload_steps"], _ = train(m, "mlp", 3, rows, state=lambda: full_state(m))
m = mlp(0)
fully_shard(m, ignored_params=set(m[4].parameters()))
res["ignored_kinds"] = np.array([type(p).__name__ for p in m.parameters()])

# FSDP1: SHARDED_STATE_DICT gives DTensors (dim 0 chunks), LOCAL_STATE_DICT the flat shards
m1 = FSDP(mlp(0), auto_wrap_policy=ModuleWrapPolicy({Block}))
opt1 = minitorch.optim.SGD(m1.parameters(), lr=0.1, momentum=0.9)
for step in range(2):
    x, y = data("mlp", step)
    opt1.zero_grad()
    nn.functional.mse_loss(m1(x[rows]), y[rows]).backward()
    opt1.step()
with FSDP.state_dict_type(m1, StateDictType.SHARDED_STATE_DICT, ShardedStateDictConfig()):
    sharded = m1.state_dict()
res["sharded_kinds"] = np.array(sorted({f"{type(v).__name__} {getattr(v, 'placements', '')}"
                                        for v in sharded.values()}))
res["sharded_keys"] = np.array(list(sharded))
res["sharded_full"] = full_params({k: v.full_tensor() for k, v in sharded.items()})
with FSDP.state_dict_type(m1, StateDictType.SHARDED_STATE_DICT):
    sharded_osd = FSDP.optim_state_dict(m1, opt1)
res["sharded_osd_kinds"] = np.array(sorted({f"{k} {type(v).__name__}" for st in sharded_osd["state"].values()
                                            for k, v in st.items()}))
opt_other = minitorch.optim.SGD(m1.parameters(), lr=0.1, momentum=0.9)
opt_other.load_state_dict(FSDP.optim_state_dict_to_load(m1, opt_other, sharded_osd))
res["sharded_osd_back"] = np.array(all(
    minitorch.equal(opt_other.state[p]["momentum_buffer"], opt1.state[p]["momentum_buffer"])
    for p in m1.parameters()))
res["full_sd"] = full_params(m1.state_dict())
other = FSDP(mlp(4), auto_wrap_policy=ModuleWrapPolicy({Block}))
with FSDP.state_dict_type(other, StateDictType.SHARDED_STATE_DICT):
    res["sharded_load"] = np.array(str(other.load_state_dict(sharded)))
res["sharded_loaded"] = full_params(other.state_dict())
with FSDP.state_dict_type(m1, StateDictType.LOCAL_STATE_DICT):
    local_sd = m1.state_dict()
res["local_keys"] = np.array(list(local_sd))
res["local_numel"] = np.array(sum(v.numel() for v in local_sd.values()))
other = FSDP(mlp(4), auto_wrap_policy=ModuleWrapPolicy({Block}))
with FSDP.state_dict_type(other, StateDictType.LOCAL_STATE_DICT):
    other.load_state_dict(local_sd)
res["local_loaded"] = full_params(other.state_dict())

# FSDP1: CPUOffload(offload_params=True), ignored_modules, param_init_fn on a meta-device model
m1 = FSDP(mlp(0), auto_wrap_policy=ModuleWrapPolicy({Block}), cpu_offload=CPUOffload(offload_params=True))
_, res["fsdp1_offload_steps"], _ = train(m1, "mlp", 3, rows)
res["fsdp1_offload_devices"] = np.array(sorted({str(p.device) for p in m1.parameters()}))
base = mlp(0)
m1 = FSDP(base, ignored_modules=[base[4]])
res["fsdp1_ignored_names"] = np.array([name for name, _ in m1.named_parameters()])
res["fsdp1_ignored_shape"] = np.array(tuple(base[4].weight.shape))
with minitorch.device("meta"):
    meta = nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 3)).double()
inits = []


def init(module):
    inits.append(type(module).__name__)
    module.to_empty(device="cpu", recurse=False)
    with minitorch.no_grad():
        for p in module.parameters(recurse=False):
            p.fill_(0.5)


m1 = FSDP(meta, param_init_fn=init)
res["param_init_calls"] = np.array(inits)
res["param_init_sd"] = full_params(m1.state_dict())

# misuse, in PyTorch's classes and words
res["err_mp_frozen"] = np.array(error(lambda: setattr(mp, "param_dtype", minitorch.float64)))
res["err_fs_mesh"] = np.array(error(lambda: fully_shard(mlp(0), mesh=init_device_mesh("cpu", (1, 1, n)))))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
