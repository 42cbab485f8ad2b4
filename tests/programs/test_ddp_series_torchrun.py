"""The official "DDP tutorial series" script multigpu_torchrun.py (pytorch/examples,
distributed/ddp-tutorial-series), as published with `import torch` read as minitorch: ddp_setup
with torch.cuda.set_device(int(os.environ["LOCAL_RANK"])) and init_process_group(backend="nccl"),
a Trainer class that moves the model to its GPU id, loads a snapshot when one exists
(torch.load(..., map_location=f"cuda:{gpu_id}"), "MODEL_STATE" and "EPOCHS_RUN"), wraps it in
DDP(model, device_ids=[gpu_id]), runs epochs over a DataLoader(pin_memory=True, shuffle=False,
sampler=DistributedSampler(dataset)) with train_data.sampler.set_epoch(epoch), and saves
torch.save({"MODEL_STATE": self.model.module.state_dict(), "EPOCHS_RUN": epoch}) from rank 0;
destroy_process_group at the end; argparse's total_epochs, save_every and --batch_size. It runs on
the emulated GPUs (MINITORCH_CUDA_EMU=1, two devices, the emulated NCCL) under
`python -m minitorch.distributed.run --nproc-per-node 2`. The dataset and model are the
script's "load your dataset/model" placeholders filled in (datautils' random tensors become seeded
NumPy arrays, and the Linear(20, 1) a small classifier: with one output, cross_entropy has no
gradient). The test runs one epoch, then resumes from the snapshot for two more, and compares the
final snapshot with PyTorch training from the first snapshot on the two ranks' batches together."""
import os
from pathlib import Path

import numpy as np
import pytest

from prog_helpers import needs_distributed, run_script

import minitorch as torch
import minitorch.nn.functional as F
from minitorch.utils.data import Dataset, DataLoader

import minitorch.multiprocessing as mp  # noqa: F401  (the script's imports, as published)
from minitorch.utils.data.distributed import DistributedSampler
from minitorch.nn.parallel import DistributedDataParallel as DDP
from minitorch.distributed import init_process_group, destroy_process_group

DATA_SIZE, FEATURES, CLASSES = 64, 20, 4


def dataset_arrays():
    rng = np.random.default_rng(0)
    x = rng.random((DATA_SIZE, FEATURES), dtype=np.float32)
    y = (x[:, :CLASSES].argmax(axis=1) + (x[:, -1] > 0.8)) % CLASSES
    return x, y.astype(np.int64)


class MyTrainDataset(Dataset):
    def __init__(self, size):
        self.size = size
        x, y = dataset_arrays()
        self.data = [(torch.from_numpy(x[i]), torch.tensor(y[i])) for i in range(size)]

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return self.data[index]


def ddp_setup():
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    init_process_group(backend="nccl")


class Trainer:
    def __init__(
        self,
        model: torch.nn.Module,
        train_data: DataLoader,
        optimizer: torch.optim.Optimizer,
        save_every: int,
        snapshot_path: str,
    ) -> None:
        self.gpu_id = int(os.environ["LOCAL_RANK"])
        self.model = model.to(self.gpu_id)
        self.train_data = train_data
        self.optimizer = optimizer
        self.save_every = save_every
        self.epochs_run = 0
        self.snapshot_path = snapshot_path
        if os.path.exists(snapshot_path):
            print("Loading snapshot")
            self._load_snapshot(snapshot_path)

        self.model = DDP(self.model, device_ids=[self.gpu_id])

    def _load_snapshot(self, snapshot_path):
        loc = f"cuda:{self.gpu_id}"
        snapshot = torch.load(snapshot_path, map_location=loc)
        self.model.load_state_dict(snapshot["MODEL_STATE"])
        self.epochs_run = snapshot["EPOCHS_RUN"]
        print(f"Resuming training from snapshot at Epoch {self.epochs_run}")

    def _run_batch(self, source, targets):
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()

    def _run_epoch(self, epoch):
        b_sz = len(next(iter(self.train_data))[0])
        print(f"[GPU{self.gpu_id}] Epoch {epoch} | Batchsize: {b_sz} | Steps: {len(self.train_data)}")
        self.train_data.sampler.set_epoch(epoch)
        for source, targets in self.train_data:
            source = source.to(self.gpu_id)
            targets = targets.to(self.gpu_id)
            self._run_batch(source, targets)

    def _save_snapshot(self, epoch):
        snapshot = {
            "MODEL_STATE": self.model.module.state_dict(),
            "EPOCHS_RUN": epoch,
        }
        torch.save(snapshot, self.snapshot_path)
        print(f"Epoch {epoch} | Training snapshot saved at {self.snapshot_path}")

    def train(self, max_epochs: int):
        for epoch in range(self.epochs_run, max_epochs):
            self._run_epoch(epoch)
            if self.gpu_id == 0 and epoch % self.save_every == 0:
                self._save_snapshot(epoch)


def load_train_objs():
    train_set = MyTrainDataset(DATA_SIZE)  # load your dataset
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 16), torch.nn.ReLU(),
                                torch.nn.Linear(16, CLASSES))  # load your model
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    return train_set, model, optimizer


def prepare_dataloader(dataset: Dataset, batch_size: int):
    return DataLoader(
        dataset,
        batch_size=batch_size,
        pin_memory=True,
        shuffle=False,
        sampler=DistributedSampler(dataset)
    )


def main(save_every: int, total_epochs: int, batch_size: int, snapshot_path: str = "snapshot.pt"):
    ddp_setup()
    dataset, model, optimizer = load_train_objs()
    train_data = prepare_dataloader(dataset, batch_size)
    trainer = Trainer(model, train_data, optimizer, save_every, snapshot_path)
    trainer.train(total_epochs)
    destroy_process_group()


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser(description='simple distributed training job')
    parser.add_argument('total_epochs', type=int, help='Total epochs to train the model')
    parser.add_argument('save_every', type=int, help='How often to save a snapshot')
    parser.add_argument('--batch_size', default=32, type=int, help='Input batch size on each device (default: 32)')
    args = parser.parse_args()

    main(args.save_every, args.total_epochs, args.batch_size)


# ---- the test ----

NPROC, BATCH = 2, 8


def torchrun(cwd: Path, *args: str) -> str:
    """`python -m minitorch.distributed.run --nproc-per-node 2 <this script> args` in cwd; its stdout."""
    return run_script(["-m", "minitorch.distributed.run", "--nproc-per-node", NPROC, Path(__file__).resolve(), *args],
                      cwd, gpus=True).stdout


def full_batch_epochs(state: dict, epochs) -> dict:
    """PyTorch, one process: the model from `state` trained on each step's batches of both ranks
    together (DDP's averaged gradient of equal halves is the full batch's)."""
    ptorch = pytest.importorskip("torch")
    from torch.utils.data.distributed import DistributedSampler as TorchSampler

    model = ptorch.nn.Sequential(ptorch.nn.Linear(FEATURES, 16), ptorch.nn.ReLU(), ptorch.nn.Linear(16, CLASSES))
    model.load_state_dict({k: ptorch.tensor(v) for k, v in state.items()})
    optimizer = ptorch.optim.SGD(model.parameters(), lr=1e-1)
    x, y = dataset_arrays()
    for epoch in epochs:
        shares = []
        for rank in range(NPROC):
            sampler = TorchSampler(range(DATA_SIZE), num_replicas=NPROC, rank=rank)
            sampler.set_epoch(epoch)
            shares.append(list(sampler))
        for start in range(0, DATA_SIZE // NPROC, BATCH):
            idx = np.concatenate([share[start:start + BATCH] for share in shares])
            optimizer.zero_grad()
            ptorch.nn.functional.cross_entropy(model(ptorch.tensor(x[idx])), ptorch.tensor(y[idx])).backward()
            optimizer.step()
    return {k: v.detach().numpy() for k, v in model.state_dict().items()}


def snapshot(path: Path) -> tuple:
    snap = torch.load(path, map_location="cpu")
    return {k: v.numpy() for k, v in snap["MODEL_STATE"].items()}, snap["EPOCHS_RUN"]


@needs_distributed
def test_multigpu_torchrun_matches_full_batch_and_resumes(tmp_path):
    first = torchrun(tmp_path, "1", "1", "--batch_size", str(BATCH))
    steps = DATA_SIZE // NPROC // BATCH
    for rank in range(NPROC):
        assert f"[GPU{rank}] Epoch 0 | Batchsize: {BATCH} | Steps: {steps}" in first
    assert "Epoch 0 | Training snapshot saved at snapshot.pt" in first and "Loading snapshot" not in first
    state0, epochs_run = snapshot(tmp_path / "snapshot.pt")
    assert epochs_run == 0

    second = torchrun(tmp_path, "3", "1", "--batch_size", str(BATCH))
    assert second.count("Loading snapshot") == NPROC
    assert second.count("Resuming training from snapshot at Epoch 0") == NPROC
    # the snapshot holds the epoch it was saved after, so the resumed run repeats that epoch
    for rank in range(NPROC):
        for epoch in range(3):
            assert f"[GPU{rank}] Epoch {epoch} | Batchsize: {BATCH} | Steps: {steps}" in second
    assert "Epoch 2 | Training snapshot saved at snapshot.pt" in second
    final, epochs_run = snapshot(tmp_path / "snapshot.pt")
    assert epochs_run == 2
    want = full_batch_epochs(state0, range(3))
    assert sorted(final) == sorted(want)
    for k in want:
        np.testing.assert_allclose(final[k], want[k], rtol=1e-4, atol=1e-6, err_msg=k)
    assert any(not np.allclose(final[k], state0[k]) for k in want)
