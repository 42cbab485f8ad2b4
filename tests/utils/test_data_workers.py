"""DataLoader with worker processes: batches in sampler order whatever order the workers finish
in, and the same as PyTorch's; worker seeds, worker_init_fn, get_worker_info and IterableDataset
sharding as in PyTorch; persistent workers; errors raised again in the main process with the
worker's traceback; a worker that dies, a timeout, Ctrl-C and a dropped iterator all end the
workers; and no deadlock when the parent ran multi-threaded (OpenMP, OpenBLAS) ops before forking.
Every test that could hang runs under a timeout: a subprocess's, or DataLoader's own."""
import gc
import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from data_compare import same_structure
from helpers import child_env

import minitorch
from minitorch.utils import data
from minitorch.utils.data import dataloader as dataloader_module

# Worker processes under the sanitizer run inherit libasan and LeakSanitizer, which make each
# fork and exit slow enough to hit these tests' timeouts (seen: a 30 s DataLoader timeout); the
# worker code is Python over the same C ops the rest of the sanitizer run covers.
pytestmark = pytest.mark.skipif(os.environ.get("MINITORCH_SANITIZE_RUN") == "1",
                                reason="worker processes are too slow under ASan for their timeouts")


class Slow(data.Dataset):
    """Sample i is (i, worker id, pid); odd samples sleep, so workers finish out of order."""

    def __init__(self, n=12, fail_at=None, error=ValueError):
        self.n, self.fail_at, self.error = n, fail_at, error

    def __getitem__(self, i):
        if i == self.fail_at:
            raise self.error(f"bad sample {i}")
        time.sleep(0.02 * (i % 2))
        info = data.get_worker_info()
        return i, -1 if info is None else info.id, os.getpid()

    def __len__(self):
        return self.n


def test_two_workers_keep_sampler_order():
    order = [5, 3, 8, 0, 1, 11, 2, 9, 4, 6, 10, 7]
    batches = list(data.DataLoader(Slow(), batch_size=2, sampler=order, num_workers=2, timeout=30))
    assert [b[0].tolist() for b in batches] == [order[k:k + 2] for k in range(0, 12, 2)]
    assert [b[1].tolist() for b in batches] == [[k % 2] * 2 for k in range(6)]  # batch k from worker k % 2
    assert {b[2][0].item() for b in batches}.isdisjoint({os.getpid()})


def test_worker_batches_match_pytorch():
    torch = pytest.importorskip("torch")
    ds = [(np.arange(3, dtype=np.float32) + i, {"i": i, "s": str(i)}) for i in range(9)]
    kwargs = dict(batch_size=2, sampler=[8, 1, 4, 4, 0, 7, 2], num_workers=2, timeout=30)
    for a, b in zip(list(data.DataLoader(ds, **kwargs)), list(torch.utils.data.DataLoader(ds, **kwargs)), strict=True):
        same_structure(a, b, torch)


def test_out_of_order_and_prefetch():
    loader = data.DataLoader(Slow(), batch_size=1, num_workers=2, in_order=False, prefetch_factor=4, timeout=30)
    assert sorted(b[0].item() for b in loader) == list(range(12))


class Seeds(data.Dataset):
    def __getitem__(self, i):
        info = data.get_worker_info()
        return {"id": info.id, "seed": info.seed, "num_workers": info.num_workers, "torch": minitorch.initial_seed(),
                "random": random.random(), "numpy": float(np.random.rand()), "init": os.environ.get("INIT_BY")}

    def __len__(self):
        return 4


def worker_init(worker_id):
    os.environ["INIT_BY"] = f"worker {worker_id}"


def test_worker_seeds_and_init_fn():
    minitorch.manual_seed(0)
    a = list(data.DataLoader(Seeds(), batch_size=None, num_workers=2, worker_init_fn=worker_init, timeout=30))
    base = a[0]["seed"]
    for k, sample in enumerate(a):
        w = k % 2
        assert sample["id"] == w and sample["num_workers"] == 2 and sample["seed"] == base + w
        assert sample["torch"] == base + w and sample["init"] == f"worker {w}"
        assert sample["random"] == random.Random(base + w).random() if k < 2 else True
    assert a[0]["numpy"] != a[1]["numpy"]
    minitorch.manual_seed(0)
    b = list(data.DataLoader(Seeds(), batch_size=None, num_workers=2, worker_init_fn=worker_init, timeout=30))
    assert a == b  # the base seed comes from minitorch's generator: reproducible after manual_seed


def test_numpy_worker_seed_is_pytorchs():
    pytest.importorskip("torch")
    from torch.utils.data._utils.worker import _generate_state

    from minitorch.utils.data._utils.worker import _generate_state as ours
    for base, wid in [(0, 0), (123, 1), (2**63 - 5, 3), (987654321987, 7)]:
        assert list(ours(base, wid)) == list(_generate_state(base, wid))


def Shards(lib, n):
    """range(n) as lib's IterableDataset, each worker taking every num_workers-th element from its
    id on (PyTorch's recipe)."""

    class Sharded(lib.utils.data.IterableDataset):
        def __iter__(self):
            info = lib.utils.data.get_worker_info()
            start, step = (0, 1) if info is None else (info.id, info.num_workers)
            return iter(range(start, n, step))
    return Sharded()


def plain(batch):
    return batch.tolist() if hasattr(batch, "tolist") else batch


@pytest.mark.parametrize("n,batch_size,drop_last", [(11, 2, False), (11, 2, True), (3, 4, False), (9, None, False)])
def test_iterable_dataset_sharded_like_pytorch(n, batch_size, drop_last):
    ours = [plain(b) for b in data.DataLoader(Shards(minitorch, n), batch_size=batch_size, drop_last=drop_last,
                                                num_workers=2, timeout=30)]
    flat = sum(ours, []) if batch_size else ours
    assert sorted(flat) == list(range(n)) if not drop_last else len(set(flat)) == len(flat)
    try:
        import torch
    except ImportError:
        return
    theirs = [plain(b) for b in torch.utils.data.DataLoader(Shards(torch, n), batch_size=batch_size,
                                                              drop_last=drop_last, num_workers=2, timeout=30)]
    assert ours == theirs


def test_persistent_workers_survive_epochs():
    loader = data.DataLoader(Slow(6), batch_size=2, num_workers=2, persistent_workers=True, timeout=30)
    first = [b[2].tolist() for b in loader]
    second = [b[2].tolist() for b in loader]
    assert first == second  # the same processes served both epochs
    workers = loader._iterator._workers
    del loader
    gc.collect()
    for w in workers:
        w.join(10)
        assert not w.is_alive()
    stream = data.DataLoader(Shards(minitorch, 5), batch_size=2, num_workers=2, persistent_workers=True, timeout=30)
    assert [b.tolist() for b in stream] == [b.tolist() for b in stream] == [[0, 2], [1, 3], [4]]


@pytest.mark.parametrize("error", [ValueError, KeyError, ZeroDivisionError])
def test_worker_error_is_raised_again_with_its_traceback(error):
    it = iter(data.DataLoader(Slow(fail_at=5, error=error), batch_size=2, num_workers=2, timeout=30))
    workers = list(it._workers)
    with pytest.raises(error) as info:
        list(it)
    message = str(info.value)
    assert f"Caught {error.__name__} in DataLoader worker process 0." in message
    assert "Original Traceback (most recent call last):" in message and "bad sample 5" in message
    assert "in __getitem__" in message
    del it, info
    gc.collect()
    for w in workers:  # told to stop, not terminated
        w.join(10)
        assert w.exitcode == 0


def test_worker_init_error_is_raised_again():
    def init(worker_id):
        raise RuntimeError(f"no init in {worker_id}")

    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0"):
        next(iter(data.DataLoader(range(4), num_workers=2, worker_init_fn=init, timeout=30)))


class Dies(data.Dataset):
    def __getitem__(self, i):
        if i == 3:
            os._exit(1)
        return i

    def __len__(self):
        return 8


def test_dead_worker_is_detected(monkeypatch):
    monkeypatch.setattr(dataloader_module, "MP_STATUS_CHECK_INTERVAL", 0.5)
    it = iter(data.DataLoader(Dies(), batch_size=1, num_workers=2))
    workers = list(it._workers)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(it)
    for w in workers:
        w.join(10)
        assert not w.is_alive()


def test_timeout():
    class Sleeps(data.Dataset):
        def __getitem__(self, i):
            time.sleep(1.5)
            return i

        def __len__(self):
            return 2

    it = iter(data.DataLoader(Sleeps(), num_workers=1, timeout=0.3))
    with pytest.raises(RuntimeError, match="DataLoader timed out after 0.3 seconds"):
        next(it)
    workers = list(it._workers)
    del it
    gc.collect()
    for w in workers:
        w.join(10)
        assert not w.is_alive()


def test_dropped_iterator_ends_its_workers():
    it = iter(data.DataLoader(Slow(), batch_size=2, num_workers=2, timeout=30))
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it
    gc.collect()
    for w in workers:
        w.join(10)
        assert not w.is_alive()


def run_child(script, timeout=120, **popen):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], env=child_env(OMP_NUM_THREADS="4"),
                          capture_output=True, text=True, timeout=timeout, **popen)


def test_fork_after_openmp_and_openblas_threads_does_not_hang():
    # Without the workers' switch to one thread, the first parallel region in a forked child
    # waits forever for the parent's OpenMP threads.
    out = run_child("""
        import minitorch
        from minitorch.utils import data
        x = minitorch.rand(1000, 1000)
        for _ in range(3):
            (x @ x).sum(); (x * 2).exp().sum()  # OpenBLAS and OpenMP thread pools now exist

        class Heavy(data.Dataset):
            def __getitem__(self, i):
                y = minitorch.rand(1000, 1000)
                return ((y * 2).exp().sum() + (y @ y).sum()).reshape(1)
            def __len__(self):
                return 6

        batches = list(data.DataLoader(Heavy(), batch_size=2, num_workers=2, timeout=60))
        print("ok", len(batches))
    """)
    assert out.returncode == 0 and "ok 3" in out.stdout, out.stderr


def test_ctrl_c_ends_parent_and_workers():
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import time
        from minitorch.utils import data

        class Slow(data.Dataset):
            def __getitem__(self, i):
                time.sleep(0.05)
                return i
            def __len__(self):
                return 10**6

        it = iter(data.DataLoader(Slow(), num_workers=2))
        next(it)
        print(" ".join(str(w.pid) for w in it._workers), flush=True)
        for _ in it:
            pass
    """)], env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_training_loop_with_workers_matches_single_process():
    def train(num_workers):
        minitorch.manual_seed(0)
        x = minitorch.randn(64, 3)
        y = x @ minitorch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
        model = minitorch.nn.Linear(3, 1)
        opt = minitorch.optim.SGD(model.parameters(), lr=0.1)
        loader = data.DataLoader(data.TensorDataset(x, y), batch_size=16, shuffle=True, num_workers=num_workers,
                                 timeout=30 if num_workers else 0)
        losses = []
        for _ in range(4):
            for xb, yb in loader:
                opt.zero_grad()
                loss = minitorch.nn.functional.mse_loss(model(xb), yb)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses

    with_workers = train(2)
    assert with_workers == train(0) and with_workers[-1] < 0.1 * with_workers[0]


def shm_mappings():
    """(start, end, path) of this process's mappings of minitorch's shared-memory files."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            if "/dev/shm/minitorch_" in line:
                lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                out.append((lo, hi, line.split()[5]))
    return out


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def ours_in_shm(before):
    """minitorch's shared-memory files made since `before` (another run's leftovers do not count)."""
    return [p for p in os.listdir("/dev/shm") if p.startswith("minitorch_") and p not in before]


def test_batches_arrive_through_shared_memory():
    before = set(os.listdir("/dev/shm"))
    x = minitorch.randn(40, 3, 4)
    loader = data.DataLoader(data.TensorDataset(x, minitorch.arange(40)), batch_size=8, num_workers=2, timeout=30)
    batches = list(loader)
    np.testing.assert_array_equal(minitorch.cat([b[0] for b in batches]).numpy(), x.numpy())
    maps = shm_mappings()
    for images, labels in batches:  # each batch is a mapping of a (deleted) shared-memory file: no copy was made
        ptr = images.numpy().__array_interface__["data"][0]
        assert any(lo <= ptr < hi for lo, hi, _ in maps)
    assert not ours_in_shm(before)  # all unlinked on arrival
    it = iter(loader)
    next(it)
    del it  # batches in flight are drained, so their files go too
    gc.collect()
    assert not ours_in_shm(before)
    del batches, images, labels
    gc.collect()
    assert not shm_mappings()


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_other_start_methods(method):
    loader = data.DataLoader(list(range(7)), batch_size=2, num_workers=2, multiprocessing_context=method, timeout=60)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6]]


def test_generator_argument_makes_shuffling_reproducible():
    def epoch(seed, num_workers=0):
        g = minitorch.Generator()
        g.manual_seed(seed)
        loader = data.DataLoader(range(20), batch_size=5, shuffle=True, generator=g, num_workers=num_workers)
        return [b.tolist() for b in loader]

    assert epoch(1) == epoch(1) == epoch(1, num_workers=2) != epoch(2)
    g = minitorch.Generator()
    g.manual_seed(3)
    assert sorted(sum((s.indices for s in data.random_split(range(10), [0.5, 0.5], generator=g)), [])) == list(range(10))


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm")
def test_crash_in_the_loop_leaves_no_shared_memory_behind():
    out = run_child("""
        import time
        import minitorch
        from minitorch.utils import data
        it = iter(data.DataLoader(data.TensorDataset(minitorch.randn(100, 50)), batch_size=4, num_workers=2))
        next(it)
        print(" ".join(str(w.pid) for w in it._workers), flush=True)
        time.sleep(0.3)  # the workers have prefetched batches into shared memory by now
        raise SystemExit("crash in the training loop")
    """, timeout=60)
    assert out.returncode == 1 and "crash in the training loop" in out.stderr
    pids = out.stdout.split()
    assert len(pids) == 2
    assert not [p for p in os.listdir("/dev/shm") if p.startswith("minitorch_") and p.split("_")[1] in pids]


class Blobs:
    """A map-style dataset as users write one: NumPy features, an int label, a dict sample."""

    def __init__(self):
        rng = np.random.default_rng(7)
        self.y = rng.integers(0, 3, 60)
        self.x = (rng.standard_normal((60, 4)) + self.y[:, None]).astype(np.float32)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": int(self.y[i])}

    def __len__(self):
        return 60


def test_training_loop_matches_pytorch_number_for_number():
    torch = pytest.importorskip("torch")
    order = np.random.default_rng(1).permutation(60).tolist()
    w0 = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32) * 0.1

    def train(lib):
        model = lib.nn.Linear(4, 3)
        with lib.no_grad():
            model.weight.copy_(lib.from_numpy(w0.copy()))
            model.bias.zero_()
        opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loader = lib.utils.data.DataLoader(Blobs(), batch_size=8, sampler=order, num_workers=2,
                                           persistent_workers=True, timeout=30)
        losses = []
        for _ in range(3):
            for batch in loader:
                opt.zero_grad()
                loss = lib.nn.functional.cross_entropy(model(batch["x"]), batch["y"])
                loss.backward()
                opt.step()
                losses.append(loss.item())
        return losses

    ours, theirs = train(minitorch), train(torch)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert ours[-1] < ours[0]
