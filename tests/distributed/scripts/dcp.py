"""distributed.checkpoint across a restart: `dcp.py <out> save <dir> <kind>` trains an FSDP model
(kind fsdp1: FullyShardedDataParallel; fsdp2: fully_shard, its parameters DTensors) with Adam for
2 steps, saves it (model, optimizer, step) through the tutorial's AppState, each rank its shards,
and goes on for 2 more steps; `dcp.py <out> load <dir> <kind>` (another launch, any number of
ranks, either kind) starts from other parameters, loads the checkpoint and trains the same 2
steps. Both write the final full parameters (and the step loaded) to <out>/rank<r>.npz."""
import datetime
import sys

import numpy as np

import minitorch
import minitorch.distributed as dist
import minitorch.distributed.checkpoint as dcp
from minitorch import nn
from minitorch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from minitorch.distributed.checkpoint.stateful import Stateful
from minitorch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from minitorch.distributed.fsdp import FullyShardedDataParallel as FSDP
from minitorch.distributed.fsdp import fully_shard
from minitorch.distributed.fsdp.wrap import ModuleWrapPolicy

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from fsdp_models import N, Block, data, full_params, mlp  # noqa: E402


class AppState(Stateful):
    """The official "Getting Started with Distributed Checkpoint" tutorial's wrapper."""

    def __init__(self, model, optimizer=None):
        self.model = model
        self.optimizer = optimizer

    def state_dict(self):
        model_state_dict, optimizer_state_dict = get_state_dict(self.model, self.optimizer)
        return {"model": model_state_dict, "optim": optimizer_state_dict}

    def load_state_dict(self, state_dict):
        set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["model"],
                       optim_state_dict=state_dict["optim"])


dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
r, n = dist.get_rank(), dist.get_world_size()
out, phase, ckpt, kind = sys.argv[1:5]
rows = slice(r * N // n, (r + 1) * N // n)
if kind == "fsdp1":  # the loading run wraps the parameters the other way: the checkpoint's names are the original ones
    model = FSDP(mlp(0 if phase == "save" else 5), auto_wrap_policy=ModuleWrapPolicy({Block}),
                 use_orig_params=phase == "load")
else:
    model = mlp(0 if phase == "save" else 5)
    for block in (model[2], model[3]):
        fully_shard(block)
    fully_shard(model)
optimizer = minitorch.optim.Adam(model.parameters(), lr=0.01)


def steps(first, last):
    for step in range(first, last):
        x, y = data("mlp", step)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x[rows]), y[rows]).backward()
        optimizer.step()


res = {}
if phase == "save":
    steps(0, 2)
    dcp.save({"app": AppState(model, optimizer), "step": 2}, checkpoint_id=ckpt)
    steps(2, 4)
else:
    state = {"app": AppState(model, optimizer), "step": 0}
    dcp.load(state, checkpoint_id=ckpt)
    res["loaded_step"] = np.array(state["step"])
    steps(state["step"], 4)
res["final"] = full_params(get_model_state_dict(model, options=StateDictOptions(full_state_dict=True)))
np.savez(f"{out}/rank{r}.npz", **res)
dist.destroy_process_group()
