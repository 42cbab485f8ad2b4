"""PyTorch's tutorial "Writing Distributed Applications with PyTorch" (dist_tuto), its run
functions as the tutorial writes them over 2 processes: blocking point-to-point (dist.send /
dist.recv), non-blocking (dist.isend / dist.irecv and req.wait()), all_reduce over
dist.new_group([0, 1]) with dist.ReduceOp.SUM, the hand-written ring allreduce (isend to the
right, recv from the left, accum[:] += recv_buff[:]), and distributed synchronous SGD: the
Partition/DataPartitioner split with random.Random(1234), a DataLoader over the rank's
partition, the tutorial's Net (Conv2d, Dropout2d, F.dropout, F.log_softmax without dim), and
average_gradients (all_reduce of each param.grad.data, then /= size). The processes start as the
tutorial starts them: init_process sets MASTER_ADDR/MASTER_PORT and calls
init_process_group("gloo", rank=rank, world_size=size); mp.set_start_method("spawn") and
mp.Process. This file is the script (run as `python test_dist_tuto.py <out> <size> <port>`,
with the library named by DIST_TUTO_LIB, minitorch by default) and the test, which runs it
under PyTorch and under minitorch and compares every rank's results."""
import importlib
import os
import sys
from math import ceil
from pathlib import Path
from random import Random

import numpy as np
import pytest

from prog_helpers import free_port, needs_distributed, run_script

torch = importlib.import_module(os.environ.get("DIST_TUTO_LIB", "minitorch"))
dist = torch.distributed
mp = torch.multiprocessing
nn = torch.nn
F = torch.nn.functional
optim = torch.optim

RESULTS = {}


def p2p_blocking(rank, size):
    """Blocking point-to-point communication."""
    tensor = torch.zeros(1)
    if rank == 0:
        tensor += 1
        # Send the tensor to process 1
        dist.send(tensor=tensor, dst=1)
    else:
        # Receive tensor from process 0
        dist.recv(tensor=tensor, src=0)
    print("Rank ", rank, " has data ", tensor[0])
    RESULTS["blocking"] = tensor.numpy().copy()


def p2p_nonblocking(rank, size):
    """Non-blocking point-to-point communication."""
    tensor = torch.zeros(1)
    req = None
    if rank == 0:
        tensor += 1
        # Send the tensor to process 1
        req = dist.isend(tensor=tensor, dst=1)
        print("Rank 0 started sending")
    else:
        # Receive tensor from process 0
        req = dist.irecv(tensor=tensor, src=0)
        print("Rank 1 started receiving")
    req.wait()
    print("Rank ", rank, " has data ", tensor[0])
    RESULTS["nonblocking"] = tensor.numpy().copy()


def all_reduce_run(rank, size):
    """All-Reduce example."""
    group = dist.new_group([0, 1])
    tensor = torch.ones(1)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=group)
    print("Rank ", rank, " has data ", tensor[0])
    RESULTS["all_reduce"] = tensor.numpy().copy()


def allreduce(send, recv):
    """Implementation of a ring-reduce."""
    rank = dist.get_rank()
    size = dist.get_world_size()
    send_buff = send.clone()
    recv_buff = send.clone()
    accum = send.clone()

    left = ((rank - 1) + size) % size
    right = (rank + 1) % size

    for i in range(size - 1):
        if i % 2 == 0:
            # Send send_buff
            send_req = dist.isend(send_buff, right)
            dist.recv(recv_buff, left)
            accum[:] += recv_buff[:]
        else:
            # Send recv_buff
            send_req = dist.isend(recv_buff, right)
            dist.recv(send_buff, left)
            accum[:] += send_buff[:]
        send_req.wait()
    recv[:] = accum[:]


def ring_run(rank, size):
    send = torch.arange(6, dtype=torch.float32).view(2, 3) * (rank + 1)
    recv = torch.zeros(2, 3)
    allreduce(send, recv)
    RESULTS["ring"] = recv.numpy().copy()


class Partition(object):
    """Dataset-like object, but only access a subset of it."""

    def __init__(self, data, index):
        self.data = data
        self.index = index

    def __len__(self):
        return len(self.index)

    def __getitem__(self, index):
        data_idx = self.index[index]
        return self.data[data_idx]


class DataPartitioner(object):
    """Partitions a dataset into different chuncks."""

    def __init__(self, data, sizes=[0.7, 0.2, 0.1], seed=1234):
        self.data = data
        self.partitions = []
        rng = Random()
        rng.seed(seed)
        data_len = len(data)
        indexes = [x for x in range(0, data_len)]
        rng.shuffle(indexes)

        for frac in sizes:
            part_len = int(frac * data_len)
            self.partitions.append(indexes[0:part_len])
            indexes = indexes[part_len:]

    def use(self, partition):
        return Partition(self.data, self.partitions[partition])


class Net(nn.Module):
    """Network architecture."""

    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x)


class LocalMNIST:
    """The MNIST download replaced by 64 seeded 28x28 images: (image (1, 28, 28), label)."""

    def __init__(self, n=64):
        rng = np.random.default_rng(0)
        self.labels = rng.integers(0, 10, n)
        self.images = (rng.random((n, 1, 28, 28)) * 0.3).astype(np.float32)
        for k, y in enumerate(self.labels):  # a bright band whose place gives the class
            self.images[k, 0, 2 * y + 4: 2 * y + 7, 4:24] += 0.7
        self.images = (self.images - 0.1307) / 0.3081

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, k):
        return torch.from_numpy(self.images[k]), int(self.labels[k])


def partition_dataset():
    """Partitioning MNIST."""
    dataset = LocalMNIST()
    size = dist.get_world_size()
    bsz = 32 // size
    partition_sizes = [1.0 / size for _ in range(size)]
    partition = DataPartitioner(dataset, partition_sizes)
    partition = partition.use(dist.get_rank())
    train_set = torch.utils.data.DataLoader(partition, batch_size=bsz, shuffle=True)
    return train_set, bsz


def average_gradients(model):
    """Gradient averaging."""
    size = float(dist.get_world_size())
    for param in model.parameters():
        dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
        param.grad.data /= size


def sgd_run(rank, size):
    """Distributed Synchronous SGD Example."""
    torch.manual_seed(1234)
    train_set, bsz = partition_dataset()
    model = Net()
    optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)

    num_batches = ceil(len(train_set.dataset) / float(bsz))
    losses = []
    for epoch in range(10):
        epoch_loss = 0.0
        for data, target in train_set:
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            epoch_loss += loss.item()
            loss.backward()
            average_gradients(model)
            optimizer.step()
        print("Rank ", dist.get_rank(), ", epoch ", epoch, ": ", epoch_loss / num_batches)
        losses.append(epoch_loss / num_batches)
    RESULTS["losses"] = np.array(losses)
    RESULTS["partition"] = np.array(train_set.dataset.index)
    for name, p in model.named_parameters():
        RESULTS["param." + name] = p.detach().numpy().copy()


def run(rank, size, out):
    for fn in (p2p_blocking, p2p_nonblocking, all_reduce_run, ring_run, sgd_run):
        fn(rank, size)
    np.savez(f"{out}/rank{rank}.npz", **RESULTS)
    dist.destroy_process_group()


def init_process(rank, size, fn, out, port, backend="gloo"):
    """Initialize the distributed environment."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = port
    dist.init_process_group(backend, rank=rank, world_size=size)
    fn(rank, size, out)


if __name__ == "__main__":
    out, size, port = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    processes = []
    mp.set_start_method("spawn")
    for rank in range(size):
        p = mp.Process(target=init_process, args=(rank, size, run, out, port))
        p.start()
        processes.append(p)

    for p in processes:
        p.join()
    sys.exit(max(abs(p.exitcode) for p in processes))


def launch_tutorial(tmp_path, library):
    """The script under `library` on 2 processes; each rank's saved results."""
    out = tmp_path / library
    out.mkdir()
    proc = run_script([Path(__file__).resolve(), out, 2, free_port()], tmp_path, DIST_TUTO_LIB=library)
    results = []
    for rank in range(2):
        with np.load(out / f"rank{rank}.npz") as f:
            results.append(dict(f))
    return results, proc.stdout


@needs_distributed
def test_dist_tuto_run_functions(tmp_path):
    pytest.importorskip("torch")
    ref, _ = launch_tutorial(tmp_path, "torch")
    got, printed = launch_tutorial(tmp_path, "minitorch")
    for rank in range(2):
        assert sorted(got[rank]) == sorted(ref[rank])
        for key in ref[rank]:
            np.testing.assert_allclose(got[rank][key], ref[rank][key], rtol=2e-4, atol=2e-5,
                                       err_msg=f"rank {rank} {key}")
        np.testing.assert_array_equal(got[rank]["blocking"], [1.0])
        np.testing.assert_array_equal(got[rank]["nonblocking"], [1.0])
        np.testing.assert_array_equal(got[rank]["all_reduce"], [2.0])
        np.testing.assert_array_equal(got[rank]["ring"], np.arange(6).reshape(2, 3) * 3)
    # the averaged gradients keep the two replicas equal; the partitions split the data
    for key in got[0]:
        if key.startswith("param."):
            np.testing.assert_allclose(got[0][key], got[1][key], rtol=1e-6, atol=1e-7)
    assert sorted(np.concatenate([got[0]["partition"], got[1]["partition"]]).tolist()) == list(range(64))
    # the ranks' prints interleave: count them (3 runs print "has data" on each rank)
    assert printed.count("has data") == 6 and printed.count("tensor(2.)") == 2
    assert ref[0]["losses"][-3:].mean() < ref[0]["losses"][:3].mean()
