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
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz_calls import DTYPES, MT_DTYPE, _lit, arrays, make_tensor  # noqa: E402
from fuzz_drive import drive  # noqa: E402

import minitorch  # noqa: E402

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


# ---- tensors: each drawn with the source that rebuilds it ----

LAYOUTS = ("contiguous", "transposed", "sliced", "expanded", "broadcast", "offset", "element")
BROADCAST_SIZES = (0, 2, 100, 10_000, 3_000_000)  # from one element: up to 24 MB never stored


@st.composite
def memory_tensors(draw):
    """(src, values): src builds a tensor from literals; values is its logical content."""
    a = draw(arrays())
    layout = draw(st.sampled_from(LAYOUTS))
    flat = a.reshape(-1)
    if layout == "broadcast" and flat.size:
        n = draw(st.sampled_from(BROADCAST_SIZES))
        return f"minitorch.tensor({_lit(flat[:1])}).expand({n})", np.broadcast_to(flat[:1], (n,))
    if layout == "offset":  # contiguous, one element into its storage
        padded = np.concatenate([np.zeros(1, a.dtype), flat])
        return f"minitorch.tensor({_lit(padded)})[1:].reshape({a.shape})", a
    if layout == "element" and flat.size:  # 0-d, at the end of its storage
        return f"minitorch.tensor({_lit(flat)})[{flat.size - 1}]", flat[-1]
    layout = layout if layout in ("transposed", "sliced", "expanded") else "contiguous"
    return f"make_tensor({_lit(a)}, '{layout}')[0]", make_tensor(a, layout)[1]


# ---- buffer consumers: the expression of each, over t ----

# They ask for a plain buffer (no strides) and read view->len bytes: applied to the tensor's
# bytes they give what they must give for the tensor, or the tensor is refused.
BYTE_CONSUMERS = (
    "b'' + t",
    "bytes(bytearray() + t)",
    "b''.join([t])",
    "hashlib.sha256(t).digest()",
    "zlib.crc32(t)",
    "io.BytesIO(t).getvalue()",
    "struct.unpack_from(f'{memoryview(t).nbytes}s', t)[0]",
    "np.frombuffer(t, np.uint8).tobytes()",
    "int.from_bytes(t, 'little')",
)
# They ask for strides: any layout is read, as the C-order copy of its values.
STRIDED_CONSUMERS = (
    "bytes(t)",
    "bytes(bytearray(t))",
    "memoryview(t).tobytes()",
    "np.asarray(t).tobytes()",
    "t.numpy().tobytes()",
)
REFUSALS = (BufferError, TypeError)  # TypeError: bytes +, join and int.from_bytes rephrase it
GRAD_REFUSAL = "Can't call numpy() on Tensor that requires grad"


@st.composite
def buffer_calls(draw):
    src, values = draw(memory_tensors())
    if values.dtype.kind == "f" and draw(st.integers(0, 9)) == 0:
        src += ".requires_grad_()"
    consumer = draw(st.sampled_from(BYTE_CONSUMERS + STRIDED_CONSUMERS))
    if consumer.startswith("bytes(") and values.size == 1 and values.dtype.kind in "biu":
        # a one-element integer tensor is an index (as in PyTorch): bytes(n) is n zero bytes
        consumer = "memoryview(t).tobytes()"
    return "buffer", f"t = {src}\nr = {consumer}", (consumer, np.ascontiguousarray(values).tobytes())


def check_buffer(ns, info, error):
    """None, or why the outcome of a consumer call is wrong."""
    consumer, want = info
    t = ns["t"]
    if t.requires_grad:  # refused, in PyTorch's words unless the consumer rephrases it
        refused = isinstance(error, TypeError) or (isinstance(error, RuntimeError) and GRAD_REFUSAL in str(error))
        return None if refused else f"requires grad, yet {error or 'read'}"
    plain = consumer in BYTE_CONSUMERS
    if error is not None:
        if plain and not t.is_contiguous() and isinstance(error, REFUSALS):
            return None
        return f"refused a{' contiguous' if plain else ''} tensor: {type(error).__name__}: {error}"
    expect = eval(consumer, dict(NAMESPACE, t=want, want=want)) if plain else want
    if ns["r"] != expect:
        return f"read {str(ns['r'])[:120]!r}, expected {str(expect)[:120]!r}"
    return None


# ---- exports kept while the storage changes ----

# export expression -> the expression that reads it back as bytes (r)
EXPORTS = {
    "t.numpy()": "np.ascontiguousarray(e).tobytes()",
    "np.asarray(t)": "np.ascontiguousarray(e).tobytes()",
    "memoryview(t)": "e.tobytes()",
    "np.from_dlpack(t)": "np.ascontiguousarray(e).tobytes()",
    "t.__dlpack__()": "values(minitorch.from_dlpack(e))",
    "t.__dlpack__(max_version=(1, 0))": "values(minitorch.from_dlpack(e))",
    "minitorch.from_numpy(t.numpy())": "values(e)",
}
DROPPED = "want  # the export is dropped unread: its deleter runs on the old storage"
# what happens to t while the export lives; KEEP: t still views the storage
KEEP = ("t.zero_()", "t.fill_(1)", "t.detach_()", "t.add_(t)")
REPLACE = ("t.data = {other}", "del t")
# a frozen module's parameter or buffer as t, and what converts the module
MODULES = ("minitorch.nn.Linear(3, 2)\nt = m.weight", "minitorch.nn.Embedding(4, 3)\nt = m.weight",
           "minitorch.nn.Conv2d(2, 3, 2)\nt = m.weight", "minitorch.nn.LayerNorm(3)\nt = m.bias",
           "minitorch.nn.BatchNorm1d(3)\nt = m.running_var")
CONVERSIONS = ("m.double()", "m.float()", "m.to(minitorch.float64)", "m.to('cpu', minitorch.float64)",
               "m.double().float()")


def values(t):
    """The bytes of t's values, read without the buffer protocol (tolist)."""
    return np.array(t.tolist(), dtype=str(t.dtype).split(".")[1]).reshape(tuple(t.shape)).tobytes()


def reuse_freed_memory():
    """Fresh blocks of many sizes, so an export left pointing at a freed one reads 7s."""
    return [minitorch.full((n,), 7.0) for n in (1, 2, 4, 8, 16, 64, 256, 1024) for _ in range(8)]


@st.composite
def lifetime_calls(draw):
    export = draw(st.sampled_from(sorted(EXPORTS)))
    read = draw(st.sampled_from([EXPORTS[export], EXPORTS[export], DROPPED]))
    if draw(st.booleans()):
        setup = f"m = {draw(st.sampled_from(MODULES))}\nm.requires_grad_(False)"
        change = draw(st.sampled_from(CONVERSIONS))
    else:
        src, values_ = draw(memory_tensors())
        setup = f"t = {src}"
        change = draw(st.sampled_from(KEEP + REPLACE))
        if values_.size > 100_000:  # t.add_(t) and tolist() of a broadcast: slow, not wrong
            change = "del t"
        if "{other}" in change:
            change = change.format(other=draw(memory_tensors())[0])
    prologue = f"{setup}\nwant = values(t)\ne = {export}"
    # the change may be refused (zero_ of an expanded tensor): then the storage is as it was
    middle = f"try:\n    {change}\nexcept ALLOWED:\n    pass"
    if change in KEEP:
        middle += "\nwant = values(t)"
    epilogue = f"junk = reuse_freed_memory()\nr = {read}"
    return "lifetime", "\n".join([prologue, middle, epilogue]), (export, change.split(" = ")[0])


def check_lifetime(ns, info, error):
    export, change = info
    if error is not None:
        return f"{export}, {change}: {type(error).__name__}: {error}"
    return None if ns["r"] == ns["want"] else f"{export}, {change}: the export reads other values"


# the names a call's source may use
NAMESPACE = {"np": np, "minitorch": minitorch, "hashlib": hashlib, "zlib": zlib, "io": io,
             "struct": struct, "make_tensor": make_tensor, "values": values,
             "reuse_freed_memory": reuse_freed_memory, "ALLOWED": (RuntimeError, ValueError, TypeError)}
CHECKS = {"buffer": check_buffer, "lifetime": check_lifetime}


def live_storages():
    return minitorch._C._live_objects()["storages"]


# ---- the worker ----


def main():
    n_calls, trace_path = int(sys.argv[1]), sys.argv[2]
    fixed_seed = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    deep_nodes = int(sys.argv[4]) if len(sys.argv) > 4 else 1_000_000
    faulthandler.enable()
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))  # as fuzz_worker.py
    minitorch._C._set_alloc_poison(True)
    warnings.simplefilter("ignore")
    trace = os.open(trace_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    counts = {"buffer": {"calls": 0, "refused": 0, "read": 0}, "lifetime": {"calls": 0, "refused": 0, "read": 0},
              "graphs": {"calls": 0, "nodes": 0}}
    failures, seen = [], {}

    def announce(src):
        os.ftruncate(trace, 0)
        os.pwrite(trace, src.encode("utf-8", "replace")[:4000], 0)

    def fail(src, kind, detail):
        key = (kind, detail.splitlines()[0][:60])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] <= 2 and len(failures) < 200:
            failures.append({"call": src, "kind": kind, "detail": detail[:2000]})

    def run_one(family, src, info):
        announce(src)
        c = counts[family]
        c["calls"] += 1
        before = live_storages()
        ns, error = dict(NAMESPACE), None
        try:
            exec(src, ns)
        except BaseException as e:  # noqa: BLE001 - judged by the family's check
            error = e
            c["refused"] += 1
        else:
            c["read"] += 1
        problem = CHECKS[family](ns, info, error)
        if problem:
            fail(src, "bad outcome", problem)
        ns.clear()
        error = None  # its traceback holds the call's objects too
        left = live_storages() - before
        if left:  # refcounts free all but cycles: collect those before calling it a leak
            gc.collect()
            left = live_storages() - before
        if left:
            fail(src, "leak", f"{left} storages still alive after the call's objects died")

    drive(st.one_of(buffer_calls(), lifetime_calls()), lambda call: run_one(*call), n_calls, fixed_seed)
    # Deep graphs: few and slow, so drawn from a budget of nodes rather than by hypothesis.
    rng = random.Random(fixed_seed)
    left = deep_nodes
    while left >= 100_000:
        shape, action = rng.choice(sorted(GRAPHS)), rng.choice(ACTIONS)
        nodes = min(left, int(10 ** rng.uniform(5, 6)))
        nodes = left if left - nodes < 100_000 else nodes  # the budget is spent whole
        src = f"deep_graph({shape!r}, {nodes}, {action!r})"
        announce(src)
        built, error = deep_graph(shape, nodes, action)
        counts["graphs"]["calls"] += 1
        counts["graphs"]["nodes"] += built
        if error:
            fail(src, "graph", error)
        left -= nodes
    os.ftruncate(trace, 0)
    print(json.dumps({"counts": counts, "failures": failures, "distinct": len(seen)}), flush=True)


if __name__ == "__main__":
    main()
