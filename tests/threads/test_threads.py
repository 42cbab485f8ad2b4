"""The seed network's forward and backward from 4 Python threads at once: every result equals the
single-threaded one, and grad mode is per thread."""
import copy
import os
import threading
import time

import numpy as np

import minitorch
from minitorch import nn

SECONDS = float(os.environ.get("MINITORCH_THREAD_SECONDS", "2"))
N_THREADS = 4


def seed_model(seed):
    minitorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def step(model, x, y):
    """Forward, MSE loss and backward; the loss, output and gradients as NumPy arrays."""
    model.zero_grad()
    out = model(x)
    loss = nn.MSELoss()(out, y)
    loss.backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    return out.detach().numpy().copy(), loss.item(), grads


def inputs(k):
    rng = np.random.default_rng(k)
    x = minitorch.tensor(rng.standard_normal((5, 4)).astype(np.float32))
    y = minitorch.tensor(rng.standard_normal((5, 2)).astype(np.float32))
    return x, y


def same(a, b):
    out_a, loss_a, grads_a = a
    out_b, loss_b, grads_b = b
    return (np.array_equal(out_a, out_b) and loss_a == loss_b
            and all(np.array_equal(g, h) for g, h in zip(grads_a, grads_b)))


def test_forward_backward_from_four_threads():
    base = seed_model(0)
    models = [copy.deepcopy(base) for _ in range(N_THREADS)]
    for k, m in enumerate(models):  # each thread its own weights, so a mixed-up result shows
        with minitorch.no_grad():
            for p in m.parameters():
                p.mul_(1.0 + 0.25 * k)
    data = [inputs(k) for k in range(N_THREADS)]
    expected = [step(models[k], *data[k]) for k in range(N_THREADS)]
    counts = [0] * N_THREADS
    failures = []
    start = threading.Barrier(N_THREADS)

    def worker(k):
        try:
            start.wait()
            end = time.monotonic() + SECONDS
            while time.monotonic() < end:
                got = step(models[k], *data[k])
                if not same(got, expected[k]):
                    failures.append((k, counts[k], got, expected[k]))
                    return
                counts[k] += 1
        except BaseException as e:  # reported by the main thread
            failures.append((k, counts[k], repr(e)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]
    assert all(c > 0 for c in counts), counts


def test_grad_mode_is_per_thread():
    model = seed_model(1)
    x, _ = inputs(0)
    in_no_grad = threading.Event()
    checked = threading.Event()
    seen = {}

    def no_grad_thread():
        with minitorch.no_grad():
            seen["inner"] = minitorch.is_grad_enabled()
            in_no_grad.set()
            checked.wait(10)
            seen["inner_out"] = model(x).requires_grad

    t = threading.Thread(target=no_grad_thread)
    t.start()
    assert in_no_grad.wait(10)
    # another thread is inside no_grad: this one still records the graph
    assert minitorch.is_grad_enabled()
    out = model(x)
    assert out.requires_grad and out.grad_fn is not None
    checked.set()
    t.join()
    assert seen == {"inner": False, "inner_out": False}
    assert minitorch.is_grad_enabled()
