"""PyTorch's "Getting Started with Distributed Data Parallel" tutorial (ddp_tutorial.rst) as one
script, its three demos run as its __main__ runs them on the emulated GPUs (MINITORCH_CUDA_EMU=1,
two devices): demo_basic (ToyModel().to(rank), DDP(model, device_ids=[rank]), a CPU batch),
demo_checkpoint (rank 0 saves ddp_model.state_dict() under tempfile.gettempdir(), dist.barrier(),
every rank loads it with map_location={'cuda:0': f'cuda:{rank}'} and weights_only=True, one step,
rank 0 removes the file) and demo_model_parallel (ToyMpModel split over dev0 and dev1 with
x.to(self.dev1) between its halves, DDP of a multi-device module without device_ids), each started
by run_demo with mp.spawn(nprocs=world_size, join=True) and setup's init_process_group("gloo").
MASTER_PORT comes from the command line instead of the tutorial's fixed 12355 (concurrent runs
must not collide), and the checkpoint's name carries it for the same reason. A line added after
each demo's step saves the parameters, so that the test can check the replicas agree."""
import os
import tempfile
from pathlib import Path

import numpy as np

from prog_helpers import free_port, needs_distributed, run_script

import minitorch as torch
import minitorch.distributed as dist
import minitorch.nn as nn
import minitorch.optim as optim
import minitorch.multiprocessing as mp

from minitorch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = os.environ["DEMO_PORT"]

    # initialize the process group
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


def save_params(name, rank, model):  # added for the test
    np.savez(os.path.join(os.environ["DEMO_OUT"], f"{name}{rank}.npz"),
             **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(rank, world_size):
    print(f"Running basic DDP example on rank {rank}.")
    setup(rank, world_size)

    # create model and move it to GPU with id rank
    model = ToyModel().to(rank)
    ddp_model = DDP(model, device_ids=[rank])

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(rank)
    loss_fn(outputs, labels).backward()
    optimizer.step()
    save_params("basic", rank, model)

    cleanup()
    print(f"Finished running basic DDP example on rank {rank}.")


def demo_checkpoint(rank, world_size):
    print(f"Running DDP checkpoint example on rank {rank}.")
    setup(rank, world_size)

    model = ToyModel().to(rank)
    ddp_model = DDP(model, device_ids=[rank])

    CHECKPOINT_PATH = tempfile.gettempdir() + f"/model{os.environ['DEMO_PORT']}.checkpoint"
    if rank == 0:
        # All processes should see same parameters as they all start from same
        # random parameters and gradients are synchronized in backward passes.
        # Therefore, saving it in one process is sufficient.
        torch.save(ddp_model.state_dict(), CHECKPOINT_PATH)

    # Use a barrier() to make sure that process 1 loads the model after process
    # 0 saves it.
    dist.barrier()
    # configure map_location properly
    map_location = {'cuda:%d' % 0: 'cuda:%d' % rank}
    ddp_model.load_state_dict(
        torch.load(CHECKPOINT_PATH, map_location=map_location, weights_only=True))

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(rank)

    loss_fn(outputs, labels).backward()
    optimizer.step()
    save_params("checkpoint", rank, model)

    # Not necessary to use a dist.barrier() to guard the file deletion below
    # as the AllReduce ops in the backward pass of DDP already served as
    # a synchronization.

    if rank == 0:
        os.remove(CHECKPOINT_PATH)

    cleanup()
    print(f"Finished running DDP checkpoint example on rank {rank}.")


class ToyMpModel(nn.Module):
    def __init__(self, dev0, dev1):
        super(ToyMpModel, self).__init__()
        self.dev0 = dev0
        self.dev1 = dev1
        self.net1 = torch.nn.Linear(10, 10).to(dev0)
        self.relu = torch.nn.ReLU()
        self.net2 = torch.nn.Linear(10, 5).to(dev1)

    def forward(self, x):
        x = x.to(self.dev0)
        x = self.relu(self.net1(x))
        x = x.to(self.dev1)
        return self.net2(x)


def demo_model_parallel(rank, world_size):
    print(f"Running DDP with model parallel example on rank {rank}.")
    setup(rank, world_size)

    # setup mp_model and devices for this process
    dev0 = rank * 2
    dev1 = rank * 2 + 1
    mp_model = ToyMpModel(dev0, dev1)
    ddp_mp_model = DDP(mp_model)

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_mp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    # outputs will be on dev1
    outputs = ddp_mp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(dev1)
    loss_fn(outputs, labels).backward()
    optimizer.step()
    save_params("model_parallel", rank, mp_model)

    cleanup()
    print(f"Finished running DDP with model parallel example on rank {rank}.")


def run_demo(demo_fn, world_size):
    mp.spawn(demo_fn,
             args=(world_size,),
             nprocs=world_size,
             join=True)


if __name__ == "__main__":
    n_gpus = torch.cuda.device_count()
    assert n_gpus >= 2, f"Requires at least 2 GPUs to run, but got {n_gpus}"
    world_size = n_gpus
    run_demo(demo_basic, world_size)
    run_demo(demo_checkpoint, world_size)
    world_size = n_gpus // 2
    run_demo(demo_model_parallel, world_size)


# ---- the test ----

@needs_distributed
def test_ddp_tutorial_demos(tmp_path):
    port = free_port()
    proc = run_script([Path(__file__).resolve()], tmp_path, timeout=300, gpus=True, DEMO_PORT=str(port),
                      DEMO_OUT=str(tmp_path))
    for rank in range(2):
        assert f"Finished running basic DDP example on rank {rank}." in proc.stdout
        assert f"Finished running DDP checkpoint example on rank {rank}." in proc.stdout
    assert "Finished running DDP with model parallel example on rank 0." in proc.stdout
    assert not os.path.exists(tempfile.gettempdir() + f"/model{port}.checkpoint")
    for name in ("basic", "checkpoint"):
        states = [dict(np.load(tmp_path / f"{name}{r}.npz")) for r in range(2)]
        for k in states[0]:  # rank 0's start (DDP's broadcast, or the checkpoint) and the mean gradient
            np.testing.assert_array_equal(states[0][k], states[1][k], err_msg=f"{name} {k}")
    assert sorted(np.load(tmp_path / "model_parallel0.npz")) == ["net1.bias", "net1.weight", "net2.bias",
                                                                 "net2.weight"]
