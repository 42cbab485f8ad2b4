"""torch.distributed.autograd: gradients through RPC calls, in PyTorch's "FAST mode": inside
`with dist_autograd.context() as context_id:`, every RPC (rpc_sync, rpc_async, remote and
RRef.to_here) is part of the autograd graph; `backward(context_id, roots)` computes the gradients
of every leaf reached, on every worker, and keeps them in that worker's context (read with
`get_gradients(context_id)`), never in `.grad`; `DistributedOptimizer.step(context_id)` applies them.

How a call joins the graph. The caller pickles the call with its tensors taken out (a pickler's
persistent ids, as PyTorch's RPC pickler does) and records those that require grad; the callee
turns each of them into a leaf that requires grad, remembers where it came from, runs the call
with the context made current on its thread, and records the reply's tensors that require grad.
On the caller, those of the reply become leaves too, each remembering its call. A worker's part
of a backward is one local autograd.grad over the leaves it reaches; then, outside the engine, a
reply's leaf with a gradient sends it to its callee, which runs its part from the reply's tensors
and returns the gradients of the leaves it received, and the caller goes on from the tensors it
sent with those (PyTorch's FAST mode: a part shared by several calls runs once per call). A
received leaf reached by a later call (a remote() whose value is fetched by to_here) has its
gradient pushed back to the worker that sent it, which carries the backward on from there. Every
step is a blocking RPC made by the backward call, so backward returns once all workers are done.
No thread waits for another worker inside the local engine, so several threads of a worker run
backward passes of their own contexts at once, as PyTorch's do.

A callee keeps its graphs until the context ends: a second backward in the same context is
allowed there as PyTorch's retain_graph=True would be; retain_graph applies to the caller's own graph.
"""
from __future__ import annotations

import io
import itertools
import pickle
import threading
from typing import Dict, List, Optional

import minitorch

__all__ = ["context", "backward", "get_gradients", "is_available", "DistAutogradContext"]

_MAX_LOCAL_ID = (1 << 48) - 1  # a context id is the worker id in its top 16 bits, then a counter
_contexts: Dict[int, "DistAutogradContext"] = {}
_contexts_lock = threading.Lock()
_next_local = itertools.count()
_next_call = itertools.count()
_thread = threading.local()  # .context_id: this thread's current context (-1: none)


def is_available() -> bool:
    return True


class DistAutogradContext:
    """One worker's part of a distributed autograd pass."""

    def __init__(self, context_id: int) -> None:
        self._id = context_id
        self._lock = threading.Lock()
        self._grads: Dict[int, tuple] = {}  # id(leaf) -> (leaf, its gradient so far)
        self._workers: set = set()  # the workers this context exchanged calls with
        self._sent: Dict[tuple, list] = {}  # call key -> the tensors this worker sent requiring grad
        self._calls: Dict[tuple, tuple] = {}  # call key -> (leaves received, reply tensors requiring grad)
        self._origin: Dict[int, tuple] = {}  # id(received leaf) -> (leaf, sender, call key, index)
        self._replies: Dict[int, tuple] = {}  # id(reply's leaf) -> (leaf, callee, call key, index)
        self._calls_out: Dict[tuple, list] = {}  # call key -> the reply's leaves (this worker the caller)

    def _context_id(self) -> int:
        return self._id

    def _known_worker_ids(self) -> set:
        return set(self._workers)

    def _accumulate(self, leaf, grad) -> None:
        with self._lock:
            old = self._grads.get(id(leaf))
            self._grads[id(leaf)] = (leaf, grad if old is None else old[1] + grad)


def _agent():
    from minitorch.distributed.rpc import api

    if api._agent is None:
        raise RuntimeError("Need to initialize distributed autograd using torch.distributed.autograd.init()")
    return api._agent


def _current_id() -> int:
    return getattr(_thread, "context_id", -1)


def _active() -> Optional[DistAutogradContext]:
    """The context current on this thread, or None (RPCs then carry no autograd)."""
    cid = _current_id()
    return None if cid == -1 else _contexts.get(cid)


def _new_context() -> DistAutogradContext:
    if _current_id() != -1:
        raise RuntimeError("Already have an autograd context id for this thread.")
    local = next(_next_local)
    if local > _MAX_LOCAL_ID:
        raise RuntimeError("Reached the maximum number of distributed autograd contexts for this worker")
    ctx = DistAutogradContext((_agent().info.id << 48) + local)
    with _contexts_lock:
        _contexts[ctx._id] = ctx
    _thread.context_id = ctx._id
    return ctx


def _retrieve_context(context_id: int) -> DistAutogradContext:
    _agent()
    ctx = _contexts.get(context_id)
    if ctx is None:
        raise RuntimeError(f"Could not find autograd context with id: {context_id}")
    return ctx


def _current_context() -> DistAutogradContext:
    cid = _current_id()
    if cid == -1:
        raise RuntimeError("Current thread doesn't have a valid autograd context. Please wrap your code using: "
                           "`with torch.distributed.autograd.context() as context_id` to generate a valid context")
    return _retrieve_context(cid)


def _is_valid_context(context_id: int) -> bool:
    return context_id in _contexts


def _get_max_id() -> int:
    return (_agent().info.id << 48) + _MAX_LOCAL_ID


def _release_context(context_id: int) -> None:
    """Drops this worker's part of the context, then asks every worker it exchanged calls with to
    drop theirs (without waiting: PyTorch cleans up asynchronously too)."""
    with _contexts_lock:
        ctx = _contexts.pop(context_id, None)
    if _current_id() == context_id:
        _thread.context_id = -1
    if ctx is None:
        return
    agent = _agent()
    for worker in ctx._workers - {agent.info.id}:
        try:
            agent.send(agent.workers[worker], ("ag", "release", context_id), -1)
        except OSError:  # a worker already gone has nothing left to drop
            pass


class context:
    """`with dist_autograd.context() as context_id:` one distributed forward and backward pass."""

    def __enter__(self) -> int:
        self.autograd_context = _new_context()
        return self.autograd_context._id

    def __exit__(self, exc_type, exc_value, tb) -> None:
        _release_context(self.autograd_context._id)


def get_gradients(context_id: int) -> Dict:
    """{tensor: gradient} of this worker's leaves reached by the backward passes of the context."""
    ctx = _retrieve_context(context_id)
    with ctx._lock:
        return {leaf: grad for leaf, grad in ctx._grads.values()}


def backward(context_id: int, roots: List, retain_graph: bool = False) -> None:
    """The distributed backward pass from roots (scalars), with a gradient of one for each."""
    if not isinstance(context_id, int) or not isinstance(roots, (list, tuple)):
        raise TypeError("backward(): incompatible function arguments. The following argument types are "
                        "supported:\n    1. (context_id: int, roots: list[torch.Tensor], retain_graph: bool = False) "
                        "-> None")
    ctx = _retrieve_context(context_id)
    if not roots:
        raise RuntimeError("No tensors provided for gradient computation.")
    for root in roots:
        if not isinstance(root, minitorch.Tensor):
            raise TypeError("backward(): incompatible function arguments: roots must be tensors")
        if not root.requires_grad:
            raise RuntimeError("requires_grad not set on root")
        if root.numel() != 1:
            raise RuntimeError(" is not a scalar, all roots need to be scalar")
        if root.grad_fn is None:
            raise RuntimeError(" does not have a valid gradient function.")
    _local_backward(ctx, list(roots), [minitorch.ones_like(r) for r in roots], (), retain_graph)


# -- the graph on this worker --


def _leaves(roots) -> list:
    """The leaves that require grad reached from roots (roots that are leaves included), in the
    order first met."""
    # the graph's node objects may be made on each access: those visited are kept alive so that
    # their ids stay theirs
    seen, visited, found, stack = set(), [], {}, []
    for r in roots:
        if r.grad_fn is None:
            if r.requires_grad:
                found.setdefault(id(r), r)
        else:
            stack.append(r.grad_fn)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        visited.append(node)
        leaf = getattr(node, "variable", None)
        if leaf is not None:
            found.setdefault(id(leaf), leaf)
            continue
        stack.extend(nxt for nxt, _ in node.next_functions)
    return list(found.values())


def _local_backward(ctx: DistAutogradContext, roots: list, grads: list, want, retain_graph: bool) -> list:
    """Runs this worker's part of the backward from roots with grads: the leaves reached keep
    their gradients in ctx, or (received leaves) send them back to their sender, or (a reply's
    leaves) go to their callee, the backward going on here from what was sent to it; returns the
    gradients of the tensors in want (None where none reached them)."""
    pairs = [(r, g) for r, g in zip(roots, grads) if g is not None]
    targets = {id(t): t for t in _leaves([r for r, _ in pairs])}
    for t in want:
        targets.setdefault(id(t), t)
    out = {id(t): None for t in want}
    if not pairs or not targets:
        return [out[id(t)] for t in want]
    leaves = list(targets.values())
    computed = minitorch.autograd.grad([r for r, _ in pairs], leaves, grad_outputs=[g for _, g in pairs],
                                       retain_graph=retain_graph, allow_unused=True)
    agent = _agent()
    replies: Dict[tuple, tuple] = {}  # call key -> (callee, the gradients of its reply's leaves)
    for leaf, g in zip(leaves, computed):
        if g is None:
            continue
        if id(leaf) in out:
            out[id(leaf)] = g
        elif id(leaf) in ctx._origin:
            _, sender, key, index = ctx._origin[id(leaf)]
            agent.send(agent.workers[sender], ("ag", "push", ctx._id, key, index, g), -1).wait()
        elif id(leaf) in ctx._replies:
            _, callee, key, index = ctx._replies[id(leaf)]
            n = len(ctx._calls_out[key])
            replies.setdefault(key, (callee, [None] * n))[1][index] = g
        else:
            ctx._accumulate(leaf, g)
    for key, (callee, reply_grads) in replies.items():
        sent_grads = agent.send(agent.workers[callee], ("ag", "backward", ctx._id, key, reply_grads), -1).wait()
        more = _local_backward(ctx, ctx._sent[key], sent_grads, want, True)
        for t, g in zip(want, more):
            if g is not None:
                out[id(t)] = g if out[id(t)] is None else out[id(t)] + g
    return [out[id(t)] for t in want]


# -- what travels --


class _Pickler(pickle.Pickler):
    """Pickles a value with its tensors taken out (listed in .tensors), so that each can be
    treated on its own: those that require grad travel detached and become graph edges."""

    def __init__(self, f) -> None:
        super().__init__(f, protocol=pickle.HIGHEST_PROTOCOL)
        self.tensors: list = []

    def persistent_id(self, obj):
        if isinstance(obj, minitorch.Tensor):
            self.tensors.append(obj)
            return len(self.tensors) - 1
        return None


def _split(value) -> tuple:
    buf = io.BytesIO()
    p = _Pickler(buf)
    p.dump(value)
    mask = [bool(t.requires_grad) for t in p.tensors]
    return buf.getvalue(), p.tensors, mask


def _join(data: bytes, tensors: list):
    u = pickle.Unpickler(io.BytesIO(data))
    u.persistent_load = lambda i: tensors[i]
    return u.load()


def _outgoing(ctx: DistAutogradContext, callee: int, kind: str, body) -> tuple:
    """The message for a call inside ctx, and its key."""
    data, tensors, mask = _split(body)
    key = (_agent().info.id, next(_next_call))
    ctx._sent[key] = [t for t, m in zip(tensors, mask) if m]
    ctx._workers.add(callee)
    travel = [t.detach() if m else t for t, m in zip(tensors, mask)]
    return ("ag", kind, ctx._id, key, data, travel, mask), key


def _incoming(ctx: DistAutogradContext, callee: int, key: tuple, reply):
    """The caller's value of a reply: its tensors that require grad made leaves of the call."""
    data, tensors, mask = reply
    if any(mask) and minitorch.is_grad_enabled():
        outs = []
        for i, m in enumerate(mask):
            if m:
                leaf = tensors[i].detach().requires_grad_()
                ctx._replies[id(leaf)] = (leaf, callee, key, len(outs))
                outs.append(leaf)
                tensors[i] = leaf
        ctx._calls_out[key] = outs
    return _join(data, tensors)


def _serve(agent, kind: str, *payload):
    """A worker's side of the messages above (run by the RPC agent's thread for the call)."""
    if kind == "release":
        _release_context(payload[0])
        return None
    cid, key = payload[0], payload[1]
    if kind == "push":  # a gradient for a tensor this worker sent: the backward goes on here
        index, grad = payload[2], payload[3]
        ctx = _retrieve_context(cid)
        t = ctx._sent[key][index]
        _local_backward(ctx, [t], [grad], (), True)
        return None
    if kind == "backward":
        ctx = _retrieve_context(cid)
        received, outs = ctx._calls[key]
        return _local_backward(ctx, outs, payload[2], received, True)
    # a call, a remote() or a fetch of an RRef's value, made inside the caller's context
    data, tensors, mask = payload[2], payload[3], payload[4]
    with _contexts_lock:
        ctx = _contexts.setdefault(cid, DistAutogradContext(cid))
    ctx._workers.add(key[0])
    received = []
    for i, m in enumerate(mask):
        if m:
            leaf = tensors[i].detach().requires_grad_()
            ctx._origin[id(leaf)] = (leaf, key[0], key, len(received))
            received.append(leaf)
            tensors[i] = leaf
    body = _join(data, tensors)
    previous = _current_id()
    _thread.context_id = cid
    try:
        value = agent.run_request(kind, body)
    finally:
        _thread.context_id = previous
    data, tensors, mask = _split(value)
    outs = [t for t, m in zip(tensors, mask) if m]
    ctx._calls[key] = (received, outs)
    return data, [t.detach() if m else t for t, m in zip(tensors, mask)], mask
