"""PyTorch's DDP tutorial (ddp_tutorial.rst's demo_basic) with minitorch: the script sets
MASTER_ADDR/MASTER_PORT itself and starts its ranks with mp.spawn; each calls
init_process_group("gloo", rank=rank, world_size=world_size), no launcher. Arguments: <out>
<world_size> [init: env (default), tcp, file, store, store_last]. Each rank trains mlp.model on
its share of every batch and saves the parameters after each step to <out>/rank<r>.npz, beside
what new_group, send/recv, DistributedSampler and the collectives on a subgroup gave."""
import datetime
import os
import sys

import numpy as np

import minitorch as torch
import minitorch.distributed as dist
import minitorch.multiprocessing as mp
import minitorch.nn as nn
import minitorch.optim as optim
from minitorch.nn.parallel import DistributedDataParallel as DDP
from minitorch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp import N, data, model, params  # noqa: E402

STEPS = 4


def setup(rank, world_size, init, port, out):
    timeout = datetime.timedelta(seconds=30)
    if init == "env":
        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = str(port)
        dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timeout)
    elif init == "tcp":
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world_size,
                                timeout=timeout)
    elif init == "file":
        dist.init_process_group("gloo", init_method=f"file://{out}/rendezvous", rank=rank, world_size=world_size,
                                timeout=timeout)
    else:  # "store": rank 0 serves the TCPStore; "store_last": the last rank does
        master = 0 if init == "store" else world_size - 1
        store = dist.TCPStore("127.0.0.1", port, world_size, rank == master, timeout)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=world_size, timeout=timeout)


def cleanup():
    dist.destroy_process_group()


def demo_basic(rank, world_size, init, port, out):
    setup(rank, world_size, init, port, out)
    res = {"rank": np.array(dist.get_rank()), "world": np.array(dist.get_world_size())}
    net = model(seed=rank)  # a different start on each rank: DDP broadcasts rank 0's
    ddp_model = DDP(net, bucket_cap_mb=0.0005)
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.1)
    share = slice(rank * N // world_size, (rank + 1) * N // world_size)
    steps = []
    for step in range(STEPS):
        x, y = data(step)
        optimizer.zero_grad()
        loss_fn(ddp_model(x[share]), y[share]).backward()
        optimizer.step()
        steps.append(params(net))
    res["steps"] = np.stack(steps)
    # a subgroup of the even ranks, and point to point between neighbours
    evens = list(range(0, world_size, 2))
    g = dist.new_group(evens)
    t = torch.full((3,), float(rank + 1))
    if rank in evens:
        dist.all_reduce(t, group=g)
    res["group_sum"] = t.numpy()
    nxt, prv = (rank + 1) % world_size, (rank - 1) % world_size
    got = torch.empty(4, dtype=torch.int64)
    if rank % 2 == 0:
        dist.send(torch.arange(4) * (rank + 1), dst=nxt)
        src = dist.recv(got, src=prv)
    else:
        src = dist.recv(got, src=prv)
        dist.send(torch.arange(4) * (rank + 1), dst=nxt)
    res["recv"] = got.numpy()
    res["recv_src"] = np.array(src)
    res["sampler"] = np.array(list(iter(DistributedSampler(list(range(10)), shuffle=False))))
    dist.barrier()
    np.savez(f"{out}/rank{rank}.npz", **res)
    cleanup()


if __name__ == "__main__":
    out, world_size = sys.argv[1], int(sys.argv[2])
    init = sys.argv[3] if len(sys.argv) > 3 else "env"
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(demo_basic, args=(world_size, init, port, out), nprocs=world_size, join=True)
