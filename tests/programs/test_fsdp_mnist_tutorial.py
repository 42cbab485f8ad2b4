"""The official "Getting Started with Fully Sharded Data Parallel (FSDP)" tutorial's FSDP_mnist.py
(pytorch/tutorials, intermediate_source/FSDP_tutorial.rst), with `import torch` read as minitorch,
launched as torchrun launches it: `python -m minitorch.distributed.run --nproc-per-node 2`, each
process on its emulated GPU (MINITORCH_CUDA_EMU=1, the emulated NCCL). As published: the Net
(two convolutions, max-pooling, dropout, two Linears, log_softmax), DistributedSampler for the
train and test sets, size_based_auto_wrap_policy(min_num_params=100), FSDP(model,
auto_wrap_policy=...), Adadelta with StepLR, train() and test() that all-reduce their loss sums,
the CUDA events' timing and print(model) on rank 0, and model.state_dict() saved by rank 0. The
torchvision MNIST datasets become seeded NumPy arrays of 12x12 images (so fc1 takes 1024 features,
not 9216), setup() reads torchrun's environment instead of mp.spawn's rank, and three options
of the test's: --dropout (the tutorial's 0.25 and 0.5 by default) and --allow-tf32 0 (the
convolutions in float32 rather than in TF32, cuDNN's default on a GPU, whose 10-bit mantissa puts
them 1e-3 away from the CPU's) make the run comparable with PyTorch on the CPU, and --init gives
its parameters. The test compares the saved
model with PyTorch training one process on both ranks' batches together, step for step."""
import argparse
import functools
import os
from pathlib import Path

import numpy as np
import pytest

from prog_helpers import needs_distributed, run_script

import minitorch as torch
import minitorch.nn as nn
import minitorch.nn.functional as F
import minitorch.optim as optim
from minitorch.optim.lr_scheduler import StepLR

import minitorch.distributed as dist
from minitorch.utils.data.distributed import DistributedSampler
from minitorch.distributed.fsdp import FullyShardedDataParallel as FSDP
from minitorch.distributed.fsdp.fully_sharded_data_parallel import (  # noqa: F401  (as published)
    CPUOffload,
    BackwardPrefetch,
)
from minitorch.distributed.fsdp.wrap import (  # noqa: F401  (as published)
    size_based_auto_wrap_policy,
    enable_wrap,
    wrap,
)

SIDE, TRAIN, TEST = 12, 64, 32


def arrays(train: bool):
    """The MNIST stand-in: seeded images whose label is the brightest of ten regions."""
    rng = np.random.default_rng(0 if train else 1)
    n = TRAIN if train else TEST
    x = rng.standard_normal((n, 1, SIDE, SIDE)).astype(np.float32)
    y = x.reshape(n, -1)[:, :100].reshape(n, 10, 10).sum(axis=2).argmax(axis=1)
    return x, y.astype(np.int64)


class LocalMNIST(torch.utils.data.Dataset):
    def __init__(self, train: bool):
        x, y = arrays(train)
        self.data = [(torch.from_numpy(x[i]), torch.tensor(y[i])) for i in range(len(y))]

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.data[i]


def setup(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class Net(nn.Module):
    def __init__(self, p1=0.25, p2=0.5):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(p1)
        self.dropout2 = nn.Dropout(p2)
        self.fc1 = nn.Linear(1024, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, rank, world_size, train_loader, optimizer, epoch, sampler=None):
    model.train()
    ddp_loss = torch.zeros(2).to(rank)
    if sampler:
        sampler.set_epoch(epoch)
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(rank), target.to(rank)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target, reduction='sum')
        loss.backward()
        optimizer.step()
        ddp_loss[0] += loss.item()
        ddp_loss[1] += len(data)

    dist.all_reduce(ddp_loss, op=dist.ReduceOp.SUM)
    if rank == 0:
        print('Train Epoch: {} \tLoss: {:.6f}'.format(epoch, ddp_loss[0] / ddp_loss[1]))


def test(model, rank, world_size, test_loader):
    model.eval()
    correct = 0  # noqa: F841  (as published)
    ddp_loss = torch.zeros(3).to(rank)
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(rank), target.to(rank)
            output = model(data)
            ddp_loss[0] += F.nll_loss(output, target, reduction='sum').item()  # sum up batch loss
            pred = output.argmax(dim=1, keepdim=True)  # get the index of the max log-probability
            ddp_loss[1] += pred.eq(target.view_as(pred)).sum().item()
            ddp_loss[2] += len(data)

    dist.all_reduce(ddp_loss, op=dist.ReduceOp.SUM)

    if rank == 0:
        test_loss = ddp_loss[0] / ddp_loss[2]
        print('Test set: Average loss: {:.4f}, Accuracy: {}/{} ({:.2f}%)\n'.format(
            test_loss, int(ddp_loss[1]), int(ddp_loss[2]),
            100. * ddp_loss[1] / ddp_loss[2]))


test.__test__ = False  # the tutorial's test(), not pytest's


def fsdp_main(rank, world_size, args):
    setup(rank, world_size)

    dataset1 = LocalMNIST(train=True)
    dataset2 = LocalMNIST(train=False)

    sampler1 = DistributedSampler(dataset1, rank=rank, num_replicas=world_size, shuffle=True)
    sampler2 = DistributedSampler(dataset2, rank=rank, num_replicas=world_size)

    train_kwargs = {'batch_size': args.batch_size, 'sampler': sampler1}
    test_kwargs = {'batch_size': args.test_batch_size, 'sampler': sampler2}
    cuda_kwargs = {'num_workers': 2,
                   'pin_memory': True,
                   'shuffle': False}
    train_kwargs.update(cuda_kwargs)
    test_kwargs.update(cuda_kwargs)

    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)
    my_auto_wrap_policy = functools.partial(
        size_based_auto_wrap_policy, min_num_params=100
    )
    torch.cuda.set_device(rank)
    torch.backends.cudnn.allow_tf32 = args.allow_tf32  # the test's: True (PyTorch's default) unless told

    init_start_event = torch.cuda.Event(enable_timing=True)
    init_end_event = torch.cuda.Event(enable_timing=True)

    torch.manual_seed(args.seed)
    model = Net(*args.dropout).to(rank)
    if args.init:  # the test's: the same start as PyTorch's reference
        model.load_state_dict(torch.load(args.init))

    model = FSDP(model, auto_wrap_policy=my_auto_wrap_policy)

    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    init_start_event.record()
    for epoch in range(1, args.epochs + 1):
        train(args, model, rank, world_size, train_loader, optimizer, epoch, sampler=sampler1)
        test(model, rank, world_size, test_loader)
        scheduler.step()

    init_end_event.record()

    if rank == 0:
        init_end_event.synchronize()
        print(f"CUDA event elapsed time: {init_start_event.elapsed_time(init_end_event) / 1000}sec")
        print(f"{model}")

    if args.save_model:
        # use a barrier to make sure training is done on all ranks
        dist.barrier()
        states = model.state_dict()
        if rank == 0:
            torch.save(states, "mnist_cnn.pt")

    cleanup()


if __name__ == '__main__':
    # Training settings
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N',
                        help='input batch size for training (default: 64)')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N',
                        help='input batch size for testing (default: 1000)')
    parser.add_argument('--epochs', type=int, default=10, metavar='N',
                        help='number of epochs to train (default: 14)')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR',
                        help='learning rate (default: 1.0)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='Learning rate step gamma (default: 0.7)')
    parser.add_argument('--no-cuda', action='store_true', default=False,
                        help='disables CUDA training')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--save-model', action='store_true', default=False,
                        help='For Saving the current Model')
    parser.add_argument('--dropout', type=float, nargs=2, default=[0.25, 0.5])
    parser.add_argument('--init', type=str, default="")
    parser.add_argument('--allow-tf32', type=int, default=1)
    args = parser.parse_args()

    torch.manual_seed(args.seed)

    fsdp_main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)


# ---- the test ----

NPROC, BATCH, EPOCHS = 2, 16, 2


def torch_reference(init: dict) -> dict:
    """PyTorch, one process: each step on both ranks' batches together, the loss summed over them
    and divided by the number of ranks (FSDP averages the ranks' gradients of their summed losses)."""
    ptorch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    class TorchNet(ptorch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = ptorch.nn.Conv2d(1, 32, 3, 1), ptorch.nn.Conv2d(32, 64, 3, 1)
            self.fc1, self.fc2 = ptorch.nn.Linear(1024, 128), ptorch.nn.Linear(128, 10)

        def forward(self, x):
            x = ptorch.nn.functional.max_pool2d(ptorch.relu(self.conv2(ptorch.relu(self.conv1(x)))), 2)
            return ptorch.log_softmax(self.fc2(ptorch.relu(self.fc1(ptorch.flatten(x, 1)))), dim=1)

    model = TorchNet()
    model.load_state_dict({k: ptorch.tensor(v) for k, v in init.items()})
    optimizer = ptorch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = ptorch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    x, y = arrays(train=True)
    for epoch in range(1, EPOCHS + 1):
        shares = []
        for rank in range(NPROC):
            sampler = TorchSampler(range(TRAIN), num_replicas=NPROC, rank=rank, shuffle=True)
            sampler.set_epoch(epoch)
            shares.append(list(sampler))
        for start in range(0, TRAIN // NPROC, BATCH):
            idx = np.concatenate([share[start:start + BATCH] for share in shares])
            optimizer.zero_grad()
            loss = ptorch.nn.functional.nll_loss(model(ptorch.tensor(x[idx])), ptorch.tensor(y[idx]), reduction="sum")
            (loss / NPROC).backward()
            optimizer.step()
        scheduler.step()
    return {k: v.detach().numpy() for k, v in model.state_dict().items()}


@needs_distributed
def test_fsdp_mnist_tutorial_matches_one_process(tmp_path):
    torch.manual_seed(3)
    init = {k: v.numpy().copy() for k, v in Net().state_dict().items()}
    torch.save({k: torch.from_numpy(v) for k, v in init.items()}, tmp_path / "init.pt")
    out = run_script(["-m", "minitorch.distributed.run", "--nproc-per-node", NPROC, Path(__file__).resolve(),
                      "--batch-size", BATCH, "--test-batch-size", BATCH, "--epochs", EPOCHS, "--save-model",
                      "--dropout", "0", "0", "--allow-tf32", "0", "--init", tmp_path / "init.pt"], tmp_path,
                     gpus=True).stdout
    losses = [float(line.split("Loss: ")[1]) for line in out.splitlines() if line.startswith("Train Epoch: ")]
    assert len(losses) == EPOCHS and losses[-1] < losses[0]
    assert out.count(f"Accuracy: ") == EPOCHS and f"/{TEST} (" in out
    assert "CUDA event elapsed time: " in out and "FullyShardedDataParallel(" in out
    assert out.count("(_fsdp_wrapped_module): Linear(in_features=1024, out_features=128, bias=True)") == 1
    saved = {k: v.cpu().numpy() for k, v in torch.load(tmp_path / "mnist_cnn.pt", map_location="cpu").items()}
    assert list(saved) == list(init)
    want = torch_reference(init)
    for k in want:
        assert saved[k].shape == want[k].shape
        np.testing.assert_allclose(saved[k], want[k], rtol=2e-4, atol=2e-5, err_msg=k)
    assert any(not np.allclose(saved[k], init[k]) for k in init)
