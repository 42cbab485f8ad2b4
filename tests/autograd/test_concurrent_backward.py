"""Backward runs on several Python threads at once, as PyTorch's engine runs them.

Each run keeps its own dependency counts and buffers (engine.c's slots), so runs of separate
graphs go on side by side, and runs that share nodes (a parameter's AccumulateGrad, a part of a
graph both retain) lock only those: gradients summed into a shared leaf's .grad are all there,
a graph freed by one run is an error for the other, reentrant backwards (checkpoint) still
work. The graphs on threads are deep too: runs keep their state off the C stack."""
import subprocess
import sys
import threading

import numpy as np
import pytest

import minitorch
from minitorch.utils.checkpoint import checkpoint

from helpers import child_env

THREADS = 4
REPS = 50


def run_threads(fn, n=THREADS):
    """Runs fn(i) on n threads started together; returns their results, re-raises an error."""
    start = threading.Barrier(n)
    results, errors = [None] * n, []

    def body(i):
        try:
            start.wait()
            results[i] = fn(i)
        except BaseException as e:  # noqa: BLE001 (handed to the main thread)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive(), "a backward thread did not end"
    if errors:
        raise errors[0]
    return results


def mlp_grads(seed):
    """Gradients of an MLP's loss on its own data: the same for one seed, wherever it runs."""
    rng = np.random.default_rng(seed)
    x = minitorch.tensor(rng.standard_normal((16, 8), dtype=np.float32))
    w1 = minitorch.tensor(rng.standard_normal((8, 32), dtype=np.float32), requires_grad=True)
    w2 = minitorch.tensor(rng.standard_normal((32, 1), dtype=np.float32), requires_grad=True)
    for _ in range(REPS // 10):
        loss = (x @ w1).tanh().relu().matmul(w2).pow(2).mean()
        loss.backward()
    return w1.grad.numpy(), w2.grad.numpy()


def test_separate_graphs_on_threads_give_the_serial_gradients():
    serial = [mlp_grads(i) for i in range(THREADS)]
    threaded = run_threads(mlp_grads)
    for (a1, a2), (b1, b2) in zip(serial, threaded):
        np.testing.assert_array_equal(a1, b1)
        np.testing.assert_array_equal(a2, b2)


def test_gradients_into_a_shared_leaf_all_arrive():
    w = minitorch.zeros(3, 5, requires_grad=True)

    def body(i):
        for _ in range(REPS):
            ((w + 1.0) * float(i + 1)).sum().backward()

    run_threads(body)
    want = REPS * sum(range(1, THREADS + 1))
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 5), want, np.float32))


def test_a_shared_retained_part_of_a_graph_runs_on_every_thread():
    w0 = np.linspace(-1, 1, 4, dtype=np.float32)
    w = minitorch.tensor(w0, requires_grad=True)
    shared = (w * 3.0).exp()  # one ExpBackward0 and MulBackward0 for every thread's run

    def body(i):
        for _ in range(REPS):
            (shared * float(i)).sum().backward(retain_graph=True)

    run_threads(body)
    # d/dw sum(i exp(3w)) = 3 i exp(3w), summed over the threads' i and the repetitions
    want = REPS * sum(range(THREADS)) * 3 * np.exp(3 * w0)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-5)


def test_a_graph_freed_by_one_thread_fails_the_other_as_pytorch():
    try:
        import torch
    except ImportError:  # the counts are checked without it, the words with it
        torch = None
    for _ in range(20):
        w = minitorch.ones(3, requires_grad=True)
        loss = (w * w).sum()
        errors = []

        def body(i):
            try:
                loss.backward()
            except RuntimeError as e:
                errors.append(str(e))

        run_threads(body, n=2)
        # one run frees MulBackward0's saved tensors; the other, locked out of it until then,
        # finds them gone
        assert len(errors) == 1
        np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])
        if torch is None:
            continue
        tw = torch.ones(3, requires_grad=True)
        tl = (tw * tw).sum()
        tl.backward()
        with pytest.raises(RuntimeError) as want:
            tl.backward()
        assert errors[0] == str(want.value)


def test_runs_on_two_threads_go_on_at_once():
    # Each run's Function waits, inside its backward, for the other's to have started: runs that
    # took turns (one lock for a whole run) would never end.
    started = [threading.Event(), threading.Event()]

    class Meet(minitorch.autograd.Function):
        @staticmethod
        def forward(ctx, x, i):
            ctx.i = i
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            started[ctx.i].set()
            assert started[1 - ctx.i].wait(timeout=30), "the other thread's backward never ran"
            return g * 2.0, None

    def body(i):
        x = minitorch.ones(2, requires_grad=True)
        Meet.apply(x, i).sum().backward()
        return x.grad.numpy()

    for grad in run_threads(body, n=2):
        np.testing.assert_array_equal(grad, [2.0, 2.0])


def test_reentrant_checkpoint_on_threads():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x0 = rng.standard_normal((6, 4), dtype=np.float32)
    w0 = rng.standard_normal((4, 4), dtype=np.float32)

    def block(x, w):
        return (x @ w).sigmoid() @ w

    def body(i):
        w = minitorch.tensor(w0, requires_grad=True)
        x = minitorch.tensor(x0 * (i + 1), requires_grad=True)
        for _ in range(5):
            checkpoint(block, x, w, use_reentrant=True).pow(2).sum().backward()
        return x.grad.numpy(), w.grad.numpy()

    for i, (gx, gw) in enumerate(run_threads(body)):
        tw = torch.tensor(w0, requires_grad=True)
        tx = torch.tensor(x0 * (i + 1), requires_grad=True)
        for _ in range(5):
            block(tx, tw).pow(2).sum().backward()
        np.testing.assert_allclose(gx, tx.grad.numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(gw, tw.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_hooks_added_while_other_threads_run_backward():
    w = minitorch.ones(3, requires_grad=True)
    seen = []

    def body(i):
        if i == 0:
            for _ in range(REPS):
                w.register_hook(lambda g: seen.append(1))
            return
        for _ in range(REPS):
            (w * 2.0).sum().backward()

    run_threads(body)
    np.testing.assert_array_equal(w.grad.numpy(), np.full(3, 2.0 * REPS * (THREADS - 1), np.float32))
    assert len(seen) <= REPS * REPS * (THREADS - 1)


def test_deep_graphs_on_threads_with_small_stacks():
    # in a child: a stack overflow kills it, not pytest
    code = """
import threading
import minitorch
threading.stack_size(256 * 1024)
out = [None, None]
def body(i):
    x = minitorch.ones(2, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0 + 0.0
    y.sum().backward()
    out[i] = x.grad.tolist()
ts = [threading.Thread(target=body, args=(i,)) for i in range(2)]
[t.start() for t in ts]
[t.join() for t in ts]
assert out == [[1.0, 1.0], [1.0, 1.0]], out
"""
    proc = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
