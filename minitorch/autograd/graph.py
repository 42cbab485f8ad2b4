"""torch.autograd.graph: the graph's nodes and the hooks on the tensors it saves.

`tensor.grad_fn` is a Node (a subclass named after it, such as AddmmBackward0), with `name()`,
`next_functions`, and hooks on the node itself: register_prehook(fn), fn(grad_outputs), runs
before the node computes; register_hook(fn), fn(grad_inputs, grad_outputs), after it; either may
return a tuple to use instead of its first argument. Both return a handle whose remove() undoes
the registration.

saved_tensors_hooks(pack_hook, unpack_hook) is PyTorch's: while the context is active on a
thread, every tensor a node recorded there saves for its backward (the C engine's saved inputs
and outputs, an autograd.Function's ctx.save_for_backward) goes through pack_hook once, with
grad mode off, and the node keeps what pack_hook returned instead of the tensor; each backward
through the node calls the unpack_hook of that time on it and uses the tensor it returns. The
contexts nest (the innermost one packs) and are per thread. save_on_cpu is the pair that moves
saved tensors to the host, disable_saved_tensors_hooks makes entering any of them an error.

get_gradient_edge(t) is the (node, output_nr) pair a consumer of t records: t's grad_fn, or the
AccumulateGrad node of a leaf, read from an alias of t taken in grad mode (the alias's node is
kept as the ownership token). increment_version(t) bumps t's version counter by copying t onto
itself without grad, so a saved t then fails its version check as after any in-place write.
"""
from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any, Callable, NamedTuple, Optional

from .. import _C

__all__ = ["GradientEdge", "Node", "disable_saved_tensors_hooks", "get_gradient_edge", "increment_version",
           "register_multi_grad_hook", "save_on_cpu", "saved_tensors_hooks"]


class GradientEdge(NamedTuple):
    """An edge of the graph: output output_nr of node (a tensor's place in the backward pass)."""
    node: Any
    output_nr: int
    ownership_token: Optional[Any] = None


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge the gradient of tensor flows into: (grad_fn, output_nr), or (AccumulateGrad, 0)
    for a leaf."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require "
                           "gradients")
    from .._grad_mode import enable_grad

    with enable_grad():
        token = tensor.view_as(tensor).grad_fn
    node, output_nr = token.next_functions[0]
    return GradientEdge(node, output_nr, ownership_token=token)


def increment_version(tensor) -> None:
    """Bumps the version counter of tensor (or of each tensor of an iterable), as an in-place
    write would: for writes autograd cannot see (through data_ptr)."""
    from .._grad_mode import no_grad

    tensors = (tensor,) if isinstance(tensor, _C.TensorBase) else tuple(tensor)
    with no_grad():
        for t in tensors:
            t.copy_(t)


def _hook_name(fn) -> str:
    return getattr(fn, "__name__", type(fn).__name__)


def _checked(fn, res, given: tuple) -> tuple:
    """The tuple a node hook returned in place of `given`, checked as PyTorch checks it."""
    if not isinstance(res, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(res).__name__}'")
    if len(res) != len(given):
        raise RuntimeError(f"hook '{_hook_name(fn)}' has returned an incorrect number of values (got {len(res)}, "
                           f"but expected {len(given)})")
    for new, old in zip(res, given):
        if new is None:
            continue
        if not isinstance(new, _C.TensorBase):
            raise TypeError(f"expected Tensor or None, but hook '{_hook_name(fn)}' returned "
                            f"'{type(new).__name__}'")
        if old is not None and tuple(new.shape) != tuple(old.shape):
            raise RuntimeError(f"hook '{_hook_name(fn)}' has changed the size of value")
    return res


class _NodeHooks:
    """The hooks registered on one node, in order; the engine calls pre and post."""

    __slots__ = ("prehooks", "hooks", "__weakref__")

    def __init__(self) -> None:
        self.prehooks: OrderedDict = OrderedDict()
        self.hooks: OrderedDict = OrderedDict()

    def pre(self, grad_outputs: tuple):
        changed = False
        for fn in list(self.prehooks.values()):
            res = fn(grad_outputs)
            if res is not None:
                grad_outputs, changed = _checked(fn, res, grad_outputs), True
        return grad_outputs if changed else None

    def post(self, args: tuple):
        grad_inputs, grad_outputs = args
        changed = False
        for fn in list(self.hooks.values()):
            res = fn(grad_inputs, grad_outputs)
            if res is not None:
                grad_inputs, changed = _checked(fn, res, grad_inputs), True
        return grad_inputs if changed else None


class Node(_C.Node):
    """A node of the autograd graph: every tensor's grad_fn is an instance of a subclass of it."""

    def register_prehook(self, fn: Callable[[tuple], Any]):
        """fn(grad_outputs) -> None or a tuple used instead, before the node runs."""
        return self._add_hook("prehooks", fn)

    def register_hook(self, fn: Callable[[tuple, tuple], Any]):
        """fn(grad_inputs, grad_outputs) -> None or a tuple used instead of grad_inputs, after the
        node ran."""
        return self._add_hook("hooks", fn)

    def _add_hook(self, kind: str, fn):
        from ..utils.hooks import RemovableHandle

        table = getattr(_C._node_hooks(self, _NodeHooks), kind)
        handle = RemovableHandle(table)
        table[handle.id] = fn
        return handle


_C._set_node_base(Node)


class _HookState(threading.local):
    def __init__(self):
        self.stack: list = []  # (pack_hook, unpack_hook), innermost last
        self.disabled = None  # disable_saved_tensors_hooks' message while it is active


_state = _HookState()


def _pack(tensor) -> tuple:
    """The engine's call for a tensor a node saves while hooks are active on this thread:
    (the unpack hook to call in backward, what the pack hook made of the tensor)."""
    pack_hook, unpack_hook = _state.stack[-1]
    return unpack_hook, pack_hook(tensor)


def _hooks_active() -> bool:
    return bool(_state.stack)


_C._saved_tensors_hooks_init(_pack)


class saved_tensors_hooks:
    """Context manager: the tensors saved for backward inside it go through pack_hook, and come
    back through unpack_hook when a backward needs them."""

    def __init__(self, pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _state.disabled is not None:
            raise RuntimeError(_state.disabled)
        _state.stack.append((self.pack_hook, self.unpack_hook))
        _C._saved_tensors_hooks_active(True)

    def __exit__(self, *args: object) -> None:
        _state.stack.pop()
        _C._saved_tensors_hooks_active(bool(_state.stack))


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU (with pin_memory a copy of theirs, PyTorch's pinned copy)
    and copied back to their device when a backward needs them."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return tensor.device, tensor.cpu()
            # PyTorch's pinned copy; minitorch's host memory has no pinned kind, so a plain copy
            packed = _C.empty(tuple(tensor.shape), dtype=tensor.dtype)
            packed.copy_(tensor)
            return tensor.device, packed

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Inside it, entering saved_tensors_hooks (or save_on_cpu) raises RuntimeError(error_message)."""
    previous = _state.disabled
    try:
        _state.disabled = error_message
        yield
    finally:
        _state.disabled = previous


# ---- the backward passes running on this thread, and hooks over several tensors ----

class _Tasks(threading.local):
    def __init__(self) -> None:
        self.stack: list = []  # per running backward: the callbacks to run once it is done


_tasks = _Tasks()


def _run_backward(*args):
    """_C._run_backward, then the callbacks the hooks queued during it (register_multi_grad_hook's)."""
    callbacks: list = []
    _tasks.stack.append(callbacks)
    try:
        result = _C._run_backward(*args)
    finally:
        _tasks.stack.pop()
    for callback in callbacks:
        callback()
    return result


class _MultiHandle:
    """The handle register_multi_grad_hook returns: remove() takes every tensor's hook away."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def _get_grad_fn_or_grad_acc(t):
    """t's grad_fn, or a leaf's AccumulateGrad node."""
    if t.requires_grad and t.grad_fn is None:
        from .._grad_mode import enable_grad

        with enable_grad():
            return t.view_as(t).grad_fn.next_functions[0][0]
    return t.grad_fn


def register_multi_grad_hook(tensors, fn: Callable, *, mode: str = "all"):
    """mode "all": fn(grads) in each backward pass once the gradients of all of tensors that the
    pass computes are ready (before the nodes after them run), grads holding None for the ones
    it does not compute; mode "any": fn(grad) with the first gradient of one of them it computes.
    Returns a handle whose remove() unregisters it."""
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "all":
        count: dict = {}  # graph task id -> gradients seen in it
        buffer: dict = {}  # graph task id -> the gradients so far
        expected: dict = {}  # graph task id -> how many of tensors' nodes it runs
        grad_fns = [_get_grad_fn_or_grad_acc(t) for t in tensors]

        def inner(k: int):
            def hook(grad):
                task = _C._current_graph_task_id()
                if task == -1:
                    raise AssertionError("expected this hook to be called inside a backward call")
                with lock:
                    seen = count.get(task, 0)
                    count[task] = seen + 1
                    grads = buffer.setdefault(task, [None] * len(tensors))
                    if seen == 0:  # the first of them in this pass: how many it will see
                        expected[task] = sum(map(_C._will_engine_execute_node, grad_fns))
                    grads[k] = grad
                    done = seen == expected[task] - 1
                    if done:
                        del count[task], buffer[task], expected[task]
                if done:
                    fn(grads)
                return None

            return hook

        return _MultiHandle(tuple(t.register_hook(inner(k)) for k, t in enumerate(tensors)))

    ran: dict = {}  # graph task id -> whether fn ran in it

    def any_hook(grad):
        task = _C._current_graph_task_id()
        if task == -1:
            raise AssertionError("expected this hook to be called inside a backward call")
        with lock:
            first = not ran.get(task, False)
            ran[task] = True
        if first:
            fn(grad)
        return None

    return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad))
