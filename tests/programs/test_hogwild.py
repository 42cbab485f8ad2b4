"""Hogwild training as in the PyTorch examples' mnist_hogwild: a model whose parameters are moved
to shared memory (Module.share_memory()), trained by worker processes started with
multiprocessing (here one after another, so that the result is deterministic), each with its own
data shard and SGD optimizer, then evaluated by the parent, which sees the workers' updates.
Workers are spawned, as the example does; data comes from NumPy."""
import importlib

import numpy as np

from prog_helpers import compare_program, numpy_of, start_from

SHARDS, N, FEATURES, CLASSES = 2, 64, 10, 3


def make_data(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, N)
    x = rng.standard_normal((N, FEATURES)) + 2 * np.eye(CLASSES, FEATURES)[y]
    return x.astype(np.float32), y


def train_shard(library, rank, model, q):
    torch = importlib.import_module(library)
    F = torch.nn.functional
    x, y = make_data(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    losses = []
    for start in range(0, N, 16):
        xb, yb = torch.from_numpy(x[start:start + 16]), torch.from_numpy(y[start:start + 16])
        optimizer.zero_grad()
        loss = F.nll_loss(F.log_softmax(model(xb), dim=1), yb)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    q.put(losses)


def hogwild(torch, init=None):
    nn = torch.nn
    mp = torch.multiprocessing
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, CLASSES))
    result = {}
    start_from(torch, model, init, result)
    model.share_memory()
    shared = all(p.is_shared() for p in model.parameters())
    ctx = mp.get_context("spawn")
    q = ctx.SimpleQueue()
    losses = []
    for rank in range(SHARDS):
        p = ctx.Process(target=train_shard, args=(torch.__name__, rank, model, q))
        p.start()
        p.join(timeout=120)  # a worker that dies must fail the test, not leave q.get() waiting
        if p.is_alive():
            p.kill()
        assert p.exitcode == 0, f"worker {rank} ended with exit code {p.exitcode}"
        losses.append(q.get())
    x, y = make_data(SHARDS)
    with torch.no_grad():
        out = model(torch.from_numpy(x))
    result.update(shared=shared, losses=losses, out=numpy_of(out),
                  params={k: numpy_of(v) for k, v in model.named_parameters()},
                  accuracy=(out.argmax(1).numpy() == y).mean())
    return result


def test_hogwild_workers_train_the_shared_model():
    ref, got = compare_program(hogwild)
    assert got["shared"] and ref["shared"]
    assert any(not np.allclose(got["params"][k], ref["init"][k]) for k in got["params"])  # the workers' steps
    assert ref["accuracy"] > 0.5  # chance: 1/3
