"""PyTorch's recipe "Shard Optimizer States with ZeroRedundancyOptimizer", as published with
`import torch` read as minitorch: mp.spawn of two ranks that each seed with torch.manual_seed(0)
and torch.cuda.manual_seed(0), init_process_group("gloo"), an nn.Sequential of Linear layers
moved to the rank's GPU with .to(rank), DDP(model, device_ids=[rank]), ZeroRedundancyOptimizer(
ddp_model.parameters(), optimizer_class=torch.optim.Adam, lr=0.01) or plain Adam, nn.MSELoss, and
torch.cuda.max_memory_allocated(device) printed around the step; the result printed as
sum(model.parameters()).sum(). The GPUs are the emulated ones (MINITORCH_CUDA_EMU=1, two
devices), the layers 20 of 2000 become 6 of 256 (the recipe's sizes need 2 x 1.3 GB of Adam state),
and MASTER_PORT comes from the command line instead of the fixed 29500, so that concurrent runs
do not collide. The test compares the printed sums with PyTorch's single-process run (both ranks
see the same batch, so DDP's mean gradient is that batch's) and checks that sharding the Adam
state lowers the peak memory of the step."""
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from prog_helpers import free_port, needs_distributed, run_script

import minitorch as torch
import minitorch.distributed as dist
import minitorch.multiprocessing as mp
import minitorch.nn as nn
from minitorch.distributed.optim import ZeroRedundancyOptimizer
from minitorch.nn.parallel import DistributedDataParallel as DDP

WIDTH, DEPTH, BATCH = 256, 6, 20


def print_peak_memory(prefix, device):
    if device == 0:
        print(f"{prefix}: {torch.cuda.max_memory_allocated(device) // 1e6}MB ")


def example(rank, world_size, use_zero, port):
    torch.manual_seed(0)
    torch.cuda.manual_seed(0)
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = port
    # create default process group
    dist.init_process_group("gloo", rank=rank, world_size=world_size)

    # create local model
    model = nn.Sequential(*[nn.Linear(WIDTH, WIDTH).to(rank) for _ in range(DEPTH)])
    print_peak_memory("Max memory allocated after creating local model", rank)

    # construct DDP model
    ddp_model = DDP(model, device_ids=[rank])
    print_peak_memory("Max memory allocated after creating DDP", rank)

    # define loss function and optimizer
    loss_fn = nn.MSELoss()
    if use_zero:
        optimizer = ZeroRedundancyOptimizer(
            ddp_model.parameters(),
            optimizer_class=torch.optim.Adam,
            lr=0.01
        )
    else:
        optimizer = torch.optim.Adam(ddp_model.parameters(), lr=0.01)

    # forward pass
    outputs = ddp_model(torch.randn(BATCH, WIDTH).to(rank))
    labels = torch.randn(BATCH, WIDTH).to(rank)
    # backward pass
    loss_fn(outputs, labels).backward()

    # update parameters
    print_peak_memory("Max memory allocated before optimizer step()", rank)
    optimizer.step()
    print_peak_memory("Max memory allocated after optimizer step()", rank)

    print(f"params sum is: {sum(model.parameters()).sum()}")


def main(port):
    world_size = 2
    print("=== Using ZeroRedundancyOptimizer ===", flush=True)
    mp.spawn(example, args=(world_size, True, port), nprocs=world_size, join=True)
    print("=== Not Using ZeroRedundancyOptimizer ===", flush=True)
    mp.spawn(example, args=(world_size, False, port), nprocs=world_size, join=True)


if __name__ == "__main__":
    main(sys.argv[1])


# ---- the test ----

def torch_reference() -> float:
    """The recipe's computation in one PyTorch process on the CPU: the printed sum."""
    ptorch = pytest.importorskip("torch")
    ptorch.manual_seed(0)
    model = ptorch.nn.Sequential(*[ptorch.nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)])
    optimizer = ptorch.optim.Adam(model.parameters(), lr=0.01)
    outputs = model(ptorch.randn(BATCH, WIDTH))
    labels = ptorch.randn(BATCH, WIDTH)
    ptorch.nn.MSELoss()(outputs, labels).backward()
    optimizer.step()
    return sum(model.parameters()).sum().item()


@needs_distributed
def test_zero_redundancy_recipe(tmp_path):
    proc = run_script([Path(__file__).resolve(), free_port()], tmp_path, timeout=300, gpus=True)
    zero, plain = proc.stdout.split("=== Not Using ZeroRedundancyOptimizer ===")
    want = torch_reference()
    for part in (zero, plain):
        # the two ranks print at once: a line's end may come after the other's text
        sums = [float(v) for v in re.findall(r"params sum is: (-?\d+\.\d*(?:e[-+]?\d+)?)", part)]
        assert len(sums) == 2
        np.testing.assert_allclose(sums, [want, want], rtol=1e-4)
    peak = {name: [float(v) for v in re.findall(r"after optimizer step\(\): ([\d.]+)MB", part)]
            for name, part in (("zero", zero), ("plain", plain))}
    before = [float(v) for v in re.findall(r"before optimizer step\(\): ([\d.]+)MB", zero)]
    # Adam's two moments for half of the parameters instead of all of them
    assert peak["zero"][0] < peak["plain"][0] and before[0] > 0
