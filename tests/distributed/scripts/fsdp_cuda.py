"""FSDP of mlp (fsdp_models) on each rank's CUDA device under backend "nccl": FULL_SHARD with the
original parameters, Adam and clip_grad_norm_, then a distributed.checkpoint round trip of the
model and optimizer (each rank writing its shards); then fully_shard (DTensor parameters) with
SGD; results to <out>/rank<r>.npz."""
import os
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
import minitorch.distributed.checkpoint as dcp
from minitorch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict, get_state_dict,
                                                         set_state_dict)
from minitorch.distributed.fsdp import FullyShardedDataParallel as FSDP
from minitorch.distributed.fsdp import fully_shard
from minitorch.distributed.fsdp.wrap import ModuleWrapPolicy

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fsdp_models import N, Block, full_params, mlp, train  # noqa: E402

out = sys.argv[1]
local = int(os.environ["LOCAL_RANK"])
minitorch.cuda.set_device(local)
dist.init_process_group("nccl")
r, n = dist.get_rank(), dist.get_world_size()
rows = slice(r * N // n, (r + 1) * N // n)


class OnDevice(minitorch.nn.Module):
    """The batches (CPU tensors) moved to this rank's device."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x.to(f"cuda:{local}")).cpu()


m = FSDP(mlp(0), device_id=local, use_orig_params=True, auto_wrap_policy=ModuleWrapPolicy({Block}))
res = {"devices": np.array(sorted({str(p.device) for p in m.parameters()}))}
model = OnDevice(m)
opt, res["steps"], res["norms"] = train(model, "mlp", 3, rows, optim="adam", clip=lambda _: m.clip_grad_norm_(0.5),
                                        state=m.state_dict)
msd, osd = get_state_dict(m, opt)
dcp.save({"model": msd, "optim": osd}, checkpoint_id=sys.argv[2])
train(model, "mlp", 1, rows, optim="adam", state=m.state_dict)  # moves the parameters on
state = {"model": get_state_dict(m, opt)[0], "optim": get_state_dict(m, opt)[1]}
dcp.load(state, checkpoint_id=sys.argv[2])
set_state_dict(m, opt, model_state_dict=state["model"], optim_state_dict=state["optim"])
res["restored"] = full_params(m.state_dict())

# fully_shard on this rank's device: the parameters DTensors over a "cuda" mesh, gathered by NCCL
m2 = mlp(0).to(f"cuda:{local}")
for block in (m2[2], m2[3]):
    fully_shard(block)
fully_shard(m2)
res["fs_devices"] = np.array(sorted({f"{p.to_local().device} {p.device_mesh.device_type}" for p in m2.parameters()}))
_, res["fs_steps"], _ = train(OnDevice(m2), "mlp", 3, rows,
                              state=lambda: get_model_state_dict(m2, options=StateDictOptions(full_state_dict=True)))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
