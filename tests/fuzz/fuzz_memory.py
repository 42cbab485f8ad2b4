"""The memory fuzzer's worker: `python fuzz_memory.py N_CALLS TRACE_FILE [SEED] [DEEP_NODES]`.

It hunts what the call fuzzer (fuzz_worker.py) cannot see, memory that outlives or underlies a
call: reads past a tensor's storage, exports of a storage that was freed, stacks that overflow.
Three families of calls, each drawn from a seed (the same calls every run for one SEED):

- buffer consumers (bytes +, bytearray, b"".join, hashlib, zlib, io.BytesIO, struct,
  np.frombuffer, memoryview, bytes(t), np.asarray) over random tensors, expanded (to huge sizes
  too), sliced, transposed, offset, 0-d and empty: each must refuse or read exactly the
  tensor's bytes, and never refuse a contiguous tensor;
- exports kept alive (NumPy arrays, memoryviews, DLPack capsules consumed before or after)
  while the tensor's storage is replaced (`.data =` of another size or dtype, a module's
  .double() / .float() / .to()) or written in place, or the tensor dies; the export is read
  after the freed blocks were reused and must show the storage it was made from;
- graphs 10^5 to 10^6 nodes deep of several node shapes (GRAPHS), freed with or without a
  backward first, on a thread with a 256 KiB stack; grads are checked, and that every node
  was freed.

Before each call its source is written over TRACE_FILE, so that when the process dies the
parent (test_fuzz_memory.py) names the call. The last stdout line is a JSON report: counts per
family, and the failing calls.
"""
import faulthandler
import gc
import hashlib
import io
import json
import os
import random
import resource
import struct
import sys
import threading
import warnings
import zlib

import numpy as np
from hypothesis import HealthCheck, given, seed, settings, strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_calls import DTYPES, MT_DTYPE, _lit, arrays, make_tensor  # noqa: E402

import minitorch  # noqa: E402

PER_EXAMPLE = 10  # calls drawn per hypothesis example
SMALL_STACK = 256 * 1024  # bytes: a recursion per node overflows this within ~10^4 nodes

# ---- graphs: GRAPHS[shape](steps) -> (root, [(leaf, expected grad)]) ----


def _leaf(*values):
    return minitorch.tensor(list(values), dtype=minitorch.float64, requires_grad=True)


class _Keep(minitorch.autograd.Function):
    """The identity, saving its input: each node's ctx holds the previous node's output, so
    freeing goes through Python objects too."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g


def _chain(step, leaf=(1.0, 2.0)):
    def build(steps):
        x = y = _leaf(*leaf)
        for _ in range(steps):
            y = step(y)
        return y.sum(), [(x, np.ones(len(leaf)))]
    return build


def _two_leaves(steps):
    x, w = _leaf(1.0, 2.0), _leaf(3.0, 4.0)
    y = x
    for _ in range(steps):
        y = y + w  # edges to the chain and to w's one AccumulateGrad
    return y.sum(), [(x, np.ones(2)), (w, np.full(2, float(steps)))]


def _running_loss(steps):
    w, data = _leaf(1.0, 2.0), minitorch.tensor([3.0, 5.0], dtype=minitorch.float64)
    total = 0
    for _ in range(steps):
        total = total + (w * data).sum()  # the loss summed without .item()
    return total, [(w, np.array([3.0, 5.0]) * steps)]


def _ladder(steps):
    x = _leaf(1.0, 2.0)
    a, b = x, x * 1.0
    for _ in range(steps):
        a, b = b, (a + b) * 0.5  # each node reaches back two: a DAG, not a chain
    return b.sum(), [(x, np.ones(2))]


def _negated(steps):
    x = y = _leaf(1.0, 2.0)
    for _ in range(steps):
        y = -y
    return y.sum(), [(x, np.full(2, (-1.0) ** steps))]


# name -> (builder, autograd nodes per step)
GRAPHS = {
    "add scalar": (_chain(lambda y: y + 0.0), 1),  # an edge to nowhere beside the chain's
    "mul scalar": (_chain(lambda y: y * 1.0), 1),  # saves its input: a tensor holding the chain
    "neg": (_negated, 1),  # one edge
    "two leaves": (_two_leaves, 1),
    "running loss": (_running_loss, 3),
    "view": (_chain(lambda y: y.view(-1)), 1),
    "multi-output": (_chain(lambda y: y.max(0, keepdim=True).values, leaf=(1.0,)), 1),
    "stack": (_chain(lambda y: minitorch.stack([y, y]).mean(0)), 2),  # list edges
    "ladder": (_ladder, 2),
    "function": (_chain(_Keep.apply), 1),  # an autograd.Function's ctx
}
ACTIONS = ("free", "backward", "backward twice", "grad")


def _run_graph(shape, nodes, action):
    gc.collect()
    before = minitorch._C._live_objects()["nodes"]
    build, per_step = GRAPHS[shape]
    root, leaves = build(max(1, nodes // per_step))
    built = minitorch._C._live_objects()["nodes"] - before
    if action == "grad":
        got = minitorch.autograd.grad(root, [leaf for leaf, _ in leaves])
    elif action != "free":
        root.backward(retain_graph=action == "backward twice")
        if action == "backward twice":
            root.backward()
        got = [leaf.grad for leaf, _ in leaves]
    del root
    gc.collect()
    left = minitorch._C._live_objects()["nodes"] - before
    assert left == 0, f"{left} of {built} nodes still alive after the graph was dropped"
    for (leaf, want), g in zip(leaves, got if action != "free" else []):
        scale = 2.0 if action == "backward twice" else 1.0
        np.testing.assert_allclose(np.asarray(g), want * scale, rtol=1e-9)
    return built


def deep_graph(shape, nodes, action, stack=SMALL_STACK):
    """Builds a graph of about `nodes` autograd nodes of one shape, runs action on it and frees
    it, all on a thread with a small stack. Returns (nodes built, None) or (nodes, the error)."""
    out = [0, None]

    def work():
        try:
            out[0] = _run_graph(shape, nodes, action)
        except BaseException as e:  # noqa: BLE001 - reported to the caller
            out[1] = f"{type(e).__name__}: {e}"

    old = threading.stack_size(stack)
    try:
        th = threading.Thread(target=work)
        th.start()
    finally:
        threading.stack_size(old)
    th.join()
    return out[0], out[1]
