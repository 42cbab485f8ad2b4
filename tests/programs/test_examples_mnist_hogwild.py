"""pytorch/examples' mnist_hogwild (main.py and train.py) as published, run as a script whose
`torch` is the library named by PROGRAM_TORCH (minitorch, or PyTorch for the reference run):
mp.set_start_method('spawn', force=True), torch.manual_seed(args.seed), Net (Conv2d, Dropout2d,
F.dropout(training=self.training), log_softmax) moved .to(device) and put in shared memory by
model.share_memory(), two mp.Process workers started together that each seed with args.seed + rank,
build a DataLoader(dataset, **kwargs) with shuffle=True over the dataset they were passed, and
train the shared model with their own SGD(momentum) at once (Hogwild: no locks), printing
'{pid}\\tTrain Epoch: ...' lines; then the parent's test over the test set with nll_loss(reduction=
'sum'), output.max(1)[1] and pred.eq(...).sum().item(). MNIST is replaced by a local dataset of
28x28 images with torchvision's interface, at a small size (two workers of one epoch over 128
images, batch 16, lr 0.1); the parent also tests the untrained model first. The workers' updates
race, so a run is checked by what it must show: every worker's log, the parent seeing the trained
weights (its test accuracy well above chance, its loss under the untrained one's). PyTorch's run
of this script takes over 30 s here (each spawned worker imports PyTorch), so the test runs
minitorch's only; run by hand with PROGRAM_TORCH=torch it printed the same log as minitorch's
(the workers did not overlap: 2.2994 before, then 1.3412 and 48/64)."""
import argparse
import importlib
import os
import re
import sys
from pathlib import Path

import numpy as np

from prog_helpers import run_script

torch = importlib.import_module(os.environ.get("PROGRAM_TORCH", "minitorch"))
nn = torch.nn
F = torch.nn.functional
mp = torch.multiprocessing
optim = torch.optim


class MNIST(torch.utils.data.Dataset):
    """torchvision's MNIST(root, train=..., transform=ToTensor + Normalize((0.1307,), (0.3081,)))."""

    def __init__(self, root, train=True, download=False, transform=None):
        rng = np.random.default_rng(0 if train else 1)
        n = 128 if train else 64
        self.targets = rng.integers(0, 10, n)
        self.data = rng.random((n, 28, 28)).astype(np.float32) * 0.3
        for i, c in enumerate(self.targets):  # a bright bar per class, so that there is something to learn
            self.data[i, 2 * c + 3:2 * c + 6, 4:24] += 0.7
        self.transform = transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        img = (torch.tensor(self.data[i]).unsqueeze(0) - 0.1307) / 0.3081
        return img, int(self.targets[i])


# ---- main.py ----

class Net(nn.Module):
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
        return F.log_softmax(x, dim=1)


def main():
    args = argparse.Namespace(batch_size=16, test_batch_size=64, epochs=1, lr=0.1, momentum=0.5, seed=1,
                              log_interval=2, num_processes=2, cuda=False, mps=False, device='cpu',
                              save_model=False, dry_run=False)
    use_cuda = args.cuda and torch.cuda.is_available()
    use_mps = args.mps and torch.backends.mps.is_available()
    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device(args.device)
    dataset1 = MNIST('../data', train=True, download=True)
    dataset2 = MNIST('../data', train=False)
    kwargs = {'batch_size': args.batch_size,
              'shuffle': True}
    if use_cuda:
        kwargs.update({'num_workers': 1, 'pin_memory': True})
    torch.manual_seed(args.seed)
    mp.set_start_method('spawn', force=True)
    model = Net().to(device)
    model.share_memory()  # gradients are allocated lazily, so they are not shared here
    test(args, model, device, dataset2, kwargs)  # the untrained model, for the test to compare
    processes = []
    for rank in range(args.num_processes):
        p = mp.Process(target=train, args=(rank, args, model, device, dataset1, kwargs))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
        assert p.exitcode == 0, f"a worker ended with exit code {p.exitcode}"
    test(args, model, device, dataset2, kwargs)


# ---- train.py ----

def train(rank, args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed + rank)
    train_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    optimizer = optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    for epoch in range(1, args.epochs + 1):
        train_epoch(epoch, args, model, device, train_loader, optimizer)


def test(args, model, device, dataset, dataloader_kwargs):
    torch.manual_seed(args.seed)
    test_loader = torch.utils.data.DataLoader(dataset, **dataloader_kwargs)
    test_epoch(model, device, test_loader)


def train_epoch(epoch, args, model, device, data_loader, optimizer):
    model.train()
    pid = os.getpid()
    for batch_idx, (data, target) in enumerate(data_loader):
        optimizer.zero_grad()
        output = model(data.to(device))
        loss = F.nll_loss(output, target.to(device))
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('{}\tTrain Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                pid, epoch, batch_idx * len(data), len(data_loader.dataset),
                100. * batch_idx / len(data_loader), loss.item()), flush=True)
            if args.dry_run:
                break


def test_epoch(model, device, data_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in data_loader:
            output = model(data.to(device))
            test_loss += F.nll_loss(output, target.to(device), reduction='sum').item()  # sum up batch loss
            pred = output.max(1)[1]  # get the index of the max log-probability
            correct += pred.eq(target.to(device)).sum().item()
    test_loss /= len(data_loader.dataset)
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(data_loader.dataset),
        100. * correct / len(data_loader.dataset)), flush=True)


test.__test__ = test_epoch.__test__ = False  # the script's functions, not pytest's tests

if __name__ == '__main__':
    main()


# ---- the test ----

TRAIN = re.compile(r"^(\d+)\tTrain Epoch: 1 \[(\d+)/128 \((\d+)%\)\]\tLoss: (\d+\.\d{6})$", re.M)
TEST = re.compile(r"Test set: Average loss: (\d+\.\d{4}), Accuracy: (\d+)/64 \((\d+)%\)")


def run_hogwild(library, tmp_path):
    out = run_script([Path(__file__).resolve()], tmp_path, timeout=300, PROGRAM_TORCH=library).stdout
    lines = TRAIN.findall(out)
    pids = sorted({pid for pid, *_ in lines})
    assert len(pids) == 2 and all([n for p, n, *_ in lines if p == pid] == ["0", "32", "64", "96"] for pid in pids)
    (before_loss, _, _), (after_loss, correct, _) = [(float(a), int(c), p) for a, c, p in TEST.findall(out)]
    return before_loss, after_loss, correct


def test_mnist_hogwild_example(tmp_path):
    before, after, correct = run_hogwild("minitorch", tmp_path)
    assert before == 2.2994  # the untrained model from the script's seed, as PyTorch's
    assert after < before - 0.5 and correct >= 32, (before, after, correct)  # chance: 1 in 10
