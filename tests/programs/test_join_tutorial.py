"""PyTorch's tutorial "Distributed Training with Uneven Inputs Using the Join Context Manager", its
three workers as published (with `import torch` read as minitorch), on the emulated GPUs with the
"nccl" backend: DDP(torch.nn.Linear(1, 1).to(rank), device_ids=[rank]) under `with Join([model]):`
where rank 1 has one input more than rank 0; the same with ZeroRedundancyOptimizer(model.parameters(),
torch.optim.Adam, lr=0.01) under `with Join([model, optim]):`; and the tutorial's own Joinable, a
Counter with a CounterJoinHook (main_hook's shadow all_reduce, post_hook's broadcast of the max
count from the last joiner, find_common_rank) under `with Join([counter], sync_max_count=True):`.
The worker to run is picked on the command line, MASTER_PORT comes from the environment instead of
the fixed 29500 (concurrent runs must not collide), and a line added after each Join block saves
what the test checks: the counts, each rank's gradients and the final parameters, computed by hand
from PyTorch's documented semantics (a joined rank contributes zero gradients, divided by the
initial world size; ZeRO's joined rank steps its shard with the gradient it last had)."""
import os
import sys
from pathlib import Path

import numpy as np

import minitorch as torch
import minitorch.distributed as dist
import minitorch.multiprocessing as mp
from minitorch.distributed.algorithms.join import Join, Joinable, JoinHook
from minitorch.distributed.optim import ZeroRedundancyOptimizer as ZeRO
from minitorch.nn.parallel import DistributedDataParallel as DDP

from prog_helpers import free_port, needs_distributed, run_script

BACKEND = "nccl"
WORLD_SIZE = 2
NUM_INPUTS = 5


def save(rank, **arrays):  # added for the test
    np.savez(os.path.join(os.environ["JOIN_OUT"], f"{sys.argv[1]}{rank}.npz"), **arrays)


def worker_ddp(rank):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = os.environ["JOIN_PORT"]
    dist.init_process_group(BACKEND, rank=rank, world_size=WORLD_SIZE)

    model = DDP(torch.nn.Linear(1, 1).to(rank), device_ids=[rank])
    # Rank 1 gets one more input than rank 0
    inputs = [torch.tensor([1]).float() for _ in range(NUM_INPUTS + rank)]

    num_inputs = 0
    with Join([model]):
        for input in inputs:
            num_inputs += 1
            loss = model(input).sum()
            loss.backward()

    print(f"Rank {rank} has exhausted all {num_inputs} of its inputs!")
    save(rank, grads=np.array([p.grad.item() for p in model.parameters()]))


def worker_zero(rank):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = os.environ["JOIN_PORT"]
    dist.init_process_group(BACKEND, rank=rank, world_size=WORLD_SIZE)

    model = DDP(torch.nn.Linear(1, 1).to(rank), device_ids=[rank])
    init = [p.item() for p in model.parameters()]
    optim = ZeRO(model.parameters(), torch.optim.Adam, lr=0.01)
    # Rank 1 gets one more input than rank 0
    inputs = [torch.tensor([1]).float() for _ in range(NUM_INPUTS + rank)]

    num_inputs = 0
    # Pass both `model` and `optim` into `Join()`
    with Join([model, optim]):
        for input in inputs:
            num_inputs += 1
            loss = model(input).sum()
            loss.backward()
            optim.step()

    print(f"Rank {rank} has exhausted all {num_inputs} of its inputs!")
    save(rank, init=np.array(init), params=np.array([p.item() for p in model.parameters()]))


class CounterJoinHook(JoinHook):
    r"""
    Join hook for :class:`Counter`.

    Arguments:
        counter (Counter): the :class:`Counter` object using this hook.
        sync_max_count (bool): whether to sync the max count once all ranks
            join.
    """
    def __init__(
        self,
        counter,
        sync_max_count
    ):
        self.counter = counter
        self.sync_max_count = sync_max_count

    def main_hook(self):
        r"""
        Shadows the counter's all-reduce by all-reducing a dim-1 zero tensor.
        """
        t = torch.zeros(1, device=self.counter.device)
        dist.all_reduce(t)

    def post_hook(self, is_last_joiner: bool):
        r"""
        Synchronizes the max count across all :class:`Counter` s if
        ``sync_max_count=True``.
        """
        if not self.sync_max_count:
            return
        rank = dist.get_rank(self.counter.process_group)
        common_rank = self.counter.find_common_rank(rank, is_last_joiner)
        if rank == common_rank:
            self.counter.max_count = self.counter.count.detach().clone()
        dist.broadcast(self.counter.max_count, src=common_rank)


class Counter(Joinable):
    r"""
    Example :class:`Joinable` that counts the number of training iterations
    that it participates in.
    """
    def __init__(self, device, process_group):
        super(Counter, self).__init__()
        self.device = device
        self.process_group = process_group
        self.count = torch.tensor([0], device=device).float()
        self.max_count = torch.tensor([0], device=device).float()

    def __call__(self):
        r"""
        Counts the number of inputs processed on this iteration by all ranks
        by all-reducing a dim-1 one tensor; increments its own internal count.
        """
        Join.notify_join_context(self)
        t = torch.ones(1, device=self.device).float()
        dist.all_reduce(t)
        self.count += t

    def join_hook(self, **kwargs) -> JoinHook:
        r"""
        Return a join hook that shadows the all-reduce in :meth:`__call__`.

        This join hook supports the following keyword arguments:
            sync_max_count (bool, optional): whether to synchronize the maximum
                count across all ranks once all ranks join; default is ``False``.
        """
        sync_max_count = kwargs.get("sync_max_count", False)
        return CounterJoinHook(self, sync_max_count)

    @property
    def join_device(self) -> torch.device:
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def find_common_rank(self, rank, to_consider):
        r"""
        Returns the max rank of the ones to consider over the process group.
        """
        common_rank = torch.tensor([rank if to_consider else -1], device=self.device)
        dist.all_reduce(common_rank, op=dist.ReduceOp.MAX, group=self.process_group)
        common_rank = common_rank.item()
        return common_rank


def worker_counter(rank):
    assert torch.cuda.device_count() >= WORLD_SIZE
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = os.environ["JOIN_PORT"]
    dist.init_process_group(BACKEND, rank=rank, world_size=WORLD_SIZE)

    counter = Counter(torch.device(f"cuda:{rank}"), dist.group.WORLD)
    inputs = [torch.tensor([1]).float() for _ in range(NUM_INPUTS + rank)]

    with Join([counter], sync_max_count=True):
        for _ in inputs:
            counter()

    print(f"{int(counter.count.item())} inputs processed before rank {rank} joined!")
    print(f"{int(counter.max_count.item())} inputs processed across all ranks!")
    save(rank, count=counter.count.cpu().numpy(), max_count=counter.max_count.cpu().numpy())


def main():
    worker = {"ddp": worker_ddp, "zero": worker_zero, "counter": worker_counter}[sys.argv[1]]
    mp.spawn(worker, nprocs=WORLD_SIZE, join=True)


if __name__ == "__main__":
    main()


# ---- the test ----

def run_worker(tmp_path, name):
    out = run_script([Path(__file__).resolve(), name], tmp_path, gpus=True, JOIN_PORT=str(free_port()),
                     JOIN_OUT=str(tmp_path)).stdout
    return out, [dict(np.load(tmp_path / f"{name}{r}.npz")) for r in range(WORLD_SIZE)]


def adam(x, grads, lr=0.01, betas=(0.9, 0.999), eps=1e-8):
    """Adam's steps of a scalar x with the given gradients (PyTorch's formula, in float64)."""
    m = v = 0.0
    for t, g in enumerate(grads, 1):
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        x -= lr * (m / (1 - betas[0] ** t)) / (np.sqrt(v / (1 - betas[1] ** t)) + eps)
    return x


@needs_distributed
def test_join_with_ddp(tmp_path):
    out, res = run_worker(tmp_path, "ddp")
    assert "Rank 0 has exhausted all 5 of its inputs!" in out and "Rank 1 has exhausted all 6 of its inputs!" in out
    # d(w*1 + b)/d(w, b) = (1, 1), accumulated without zero_grad: after 5 averaged backwards 5; rank
    # 1's 6th accumulates 6, all-reduced with the joined rank's zeros and divided by the world size
    np.testing.assert_allclose(res[0]["grads"], [5.0, 5.0], rtol=1e-6)
    np.testing.assert_allclose(res[1]["grads"], [3.0, 3.0], rtol=1e-6)


@needs_distributed
def test_join_with_ddp_and_zero(tmp_path):
    out, res = run_worker(tmp_path, "zero")
    assert "Rank 1 has exhausted all 6 of its inputs!" in out
    np.testing.assert_array_equal(res[0]["params"], res[1]["params"])
    w0, b0 = res[0]["init"]
    # the weight's shard is rank 0's: at the 6th step it joined and steps with its last gradient (5);
    # the bias's is rank 1's: accumulated 6, averaged with rank 0's zeros
    np.testing.assert_allclose(res[0]["params"], [adam(w0, [1, 2, 3, 4, 5, 5]), adam(b0, [1, 2, 3, 4, 5, 3])],
                               rtol=1e-5)


@needs_distributed
def test_join_custom_joinable_counter(tmp_path):
    out, res = run_worker(tmp_path, "counter")
    assert "10 inputs processed before rank 0 joined!" in out
    assert "11 inputs processed before rank 1 joined!" in out
    assert out.count("11 inputs processed across all ranks!") == 2
    np.testing.assert_array_equal([res[r]["max_count"][0] for r in range(2)], [11, 11])
