"""torch.utils._python_dispatch: __torch_dispatch__ and TorchDispatchMode.

The C dispatcher's Python key (csrc/dispatch/dispatch.h) sits below Autograd, above the backends:
a call has it when one of its tensors is an instance of a Tensor subclass with a
__torch_dispatch__ (Tensor._make_wrapper_subclass, _make_subclass, as_subclass), or while a
TorchDispatchMode is entered on this thread. Its fallback (csrc/python/python_dispatch.c) boxes
the call's arguments as the op's schema names them and calls _dispatch below, with grad mode off
(autograd recorded the op above), which hands the op, as the OpOverload PyTorch names it
(minitorch.ops.aten.add.Tensor), to the innermost mode, else to the arguments' classes,
subclasses first. Ops that are composites of other ops (linear, matmul) reach Python as those
ops, as PyTorch's CompositeImplicitAutograd ones do.
"""
from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Any, Iterator, List, Optional

from minitorch import _C
from minitorch._ops import dispatch_overload

__all__ = ["TorchDispatchMode", "is_traceable_wrapper_subclass", "transform_subclass",
           "return_and_correct_aliasing"]


class _ModeStack(threading.local):
    def __init__(self) -> None:
        self.modes: List["TorchDispatchMode"] = []


_stack = _ModeStack()


def _push_mode(mode: "TorchDispatchMode") -> None:
    _stack.modes.append(mode)
    _C._set_dispatch_modes(len(_stack.modes))


def _pop_mode(k: Any = None) -> "TorchDispatchMode":
    if not _stack.modes:
        raise AssertionError("Trying to pop from an empty mode stack")
    mode = _stack.modes.pop()
    _C._set_dispatch_modes(len(_stack.modes))
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily(k: Any = None) -> Iterator["TorchDispatchMode"]:
    """The innermost mode, off the stack while its __torch_dispatch__ runs (the ops it calls go
    to the modes below it, then to the tensors' classes), back on afterwards."""
    mode = _pop_mode(k)
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_dispatch_mode() -> Optional["TorchDispatchMode"]:
    return _stack.modes[-1] if _stack.modes else None


def _get_current_dispatch_mode_stack() -> List["TorchDispatchMode"]:
    return list(_stack.modes)


def _len_torch_dispatch_stack() -> int:
    return len(_stack.modes)


@contextlib.contextmanager
def _disable_current_modes() -> Iterator[List["TorchDispatchMode"]]:
    """No dispatch mode inside; yields the modes it took off (innermost last)."""
    saved = list(_stack.modes)
    _stack.modes.clear()
    _C._set_dispatch_modes(0)
    try:
        yield saved
    finally:
        _stack.modes[:] = saved
        _C._set_dispatch_modes(len(saved))


class TorchDispatchMode:
    """A context manager whose __torch_dispatch__(func, types, args, kwargs) sees every op that
    reaches the dispatcher while it is entered, below autograd (the backward's ops too), factories
    included. Modes nest: inside its __torch_dispatch__ a mode is off the stack, so the ops it
    calls go to the mode entered before it, then to the tensors' __torch_dispatch__."""

    def __init__(self, _dispatch_key: Any = None) -> None:
        self.old_dispatch_mode_flags: List[bool] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)

    @classmethod
    def is_infra_mode(cls) -> bool:
        return False


def is_traceable_wrapper_subclass(t: Any) -> bool:
    """Whether t is an instance of a Tensor subclass that __tensor_flatten__ and
    __tensor_unflatten__ describe (PyTorch's traceable wrapper subclasses)."""
    from minitorch import Tensor

    return isinstance(t, Tensor) and type(t) is not Tensor and hasattr(t, "__tensor_flatten__") and \
        hasattr(t, "__tensor_unflatten__")


def transform_subclass(t: Any, callback, outer_size=None, outer_stride=None) -> Any:
    """A new instance of t's class whose inner tensors are callback(name, inner) of t's."""
    attrs, ctx = t.__tensor_flatten__()
    inner = {a: callback(a, getattr(t, a)) for a in attrs}
    return type(t).__tensor_unflatten__(inner, ctx, outer_size or t.size(), outer_stride or t.stride())


# ---- aliasing of the ops a wrapper subclass runs on the tensors it wraps ----

# The ops whose result views their first argument, by aten name, as PyTorch's schemas annotate
# them (Tensor(a) self -> Tensor(a)); detach too, which aliases without being a view. The C
# fallback links such a result to its input for autograd (python_dispatch.c's returns_view).
_VIEW_OPS = frozenset({
    "alias", "as_strided", "view", "view_as", "t", "transpose", "swapaxes", "swapdims", "permute", "movedim",
    "moveaxis", "expand", "expand_as", "squeeze", "unsqueeze", "unflatten", "select", "slice", "narrow",
    "diagonal", "unbind", "split", "split_with_sizes", "chunk", "tensor_split", "view_as_real",
    "view_as_complex", "detach"})
# PyTorch's inplace_view ops: they change their first argument's sizes and strides, not its data
_INPLACE_VIEW_OPS = frozenset({"t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_",
                               "as_strided_", "detach_"})


def _mutated_output(func, args: tuple, kwargs: dict) -> Any:
    """What an op that writes its result into an argument returns (PyTorch's Tensor(a!) ->
    Tensor(a!)): out= for an out= call, self for an in-place op; None for the other ops."""
    if kwargs.get("out") is not None:
        return kwargs["out"]
    schema = getattr(func, "_schema", None)
    op = getattr(schema, "_op", None)
    if op is not None and _C._op_info(op)["inplace"] and args:
        return args[0]
    return None


def _correct_storage_aliasing(func, args: tuple, outs: Any) -> None:
    """For a view op, each wrapper result goes onto the storage of the input it views (its
    sizes and strides kept), as PyTorch's."""
    from minitorch import Tensor, _ops

    if not isinstance(func, _ops.OpOverload):
        raise AssertionError(f"func must be an OpOverload, got {type(args)}")
    if not isinstance(args, tuple):
        raise AssertionError(f"args must be a tuple, got {type(args)}")
    if not isinstance(outs, (list, tuple)):
        raise AssertionError(f"outs must be a list or tuple, got {type(args)}")
    if func.namespace != "aten" or func._opname not in _VIEW_OPS or not args or \
            not isinstance(args[0], Tensor):
        return
    arg = args[0]
    for ret in outs:
        rets = ret if isinstance(ret, list) else [ret]
        if type(arg) is not type(ret) and (is_traceable_wrapper_subclass(arg) or
                                           any(is_traceable_wrapper_subclass(r) for r in rets)):
            for r in rets:
                if type(arg) is not type(r):
                    raise AssertionError(f"Called {func} with input of type {type(arg)}\n"
                                         f"and output of type {type(ret)}. But expected types to match.")
        for r in rets:
            if not isinstance(r, Tensor):
                raise AssertionError(f"expected torch.Tensor, got {type(r)}")
            _C._functionalize_unsafe_set(r, arg)


def _replay_inplace_view(func, args: tuple, kwargs: dict) -> None:
    """An in-place view op's new sizes and strides, given to the wrapper it was called on: the
    op run on a meta tensor of the wrapper's geometry, with no dispatch mode on."""
    import minitorch

    self = args[0]
    size, stride, offset = tuple(self.size()), self.stride(), self.storage_offset()
    span = offset + 1 + sum((n - 1) * st for n, st in zip(size, stride)) if all(size) else offset
    with _disable_current_modes(), minitorch.no_grad():
        m = minitorch.empty(span, dtype=self.dtype, device="meta").as_strided(size, stride, offset)
        func(m, *args[1:], **kwargs)
    _C._set_geometry(self, tuple(m.size()), m.stride(), m.storage_offset())


def return_and_correct_aliasing(func, args, kwargs, out):
    """For a wrapper subclass's __torch_dispatch__: its result made to alias its inputs as the
    op's schema says. A view op's wrapper results share the storage of the input they view; an
    in-place view op (t_, unsqueeze_) gives the wrapper it was called on its new geometry; an
    in-place or out= op returns that argument itself, not the fresh wrapper out may be."""
    kwargs = kwargs or {}
    _correct_storage_aliasing(func, args, (out,) if not isinstance(out, tuple) else out)
    if func.namespace == "aten" and func._opname in _INPLACE_VIEW_OPS:
        _replay_inplace_view(func, args, kwargs)
    mutated = _mutated_output(func, args, kwargs)
    return out if mutated is None else mutated


# ---- the C fallback's entry ----

def _overloaded(args: tuple, kwargs: dict) -> list:
    """One tensor per class that has its own __torch_dispatch__, in the order they come, but a
    subclass before its bases."""
    chosen: list = []
    for v in list(args) + list(kwargs.values()):
        for item in (v if isinstance(v, (list, tuple)) else (v,)):
            cls = type(item)
            if not isinstance(item, _C.TensorBase) or \
                    getattr(cls, "__torch_dispatch__", _C._disabled_torch_dispatch_impl) is \
                    _C._disabled_torch_dispatch_impl or any(type(c) is cls for c in chosen):
                continue
            spot = next((i for i, c in enumerate(chosen) if issubclass(cls, type(c))), len(chosen))
            chosen.insert(spot, item)
    return chosen


_LOCAL_SCALAR = None


def _local_scalar_dense():
    """aten._local_scalar_dense: what item(), float(), int() and bool() of a tensor with the
    Python key send (csrc/python/python_dispatch.c's mt_py_local_scalar); it returns the number."""
    global _LOCAL_SCALAR
    if _LOCAL_SCALAR is None:
        from minitorch._ops import OpOverload

        _LOCAL_SCALAR = OpOverload("aten", "_local_scalar_dense", "default", lambda self: self.item(),
                                   "aten::_local_scalar_dense(Tensor self) -> Scalar")
    return _LOCAL_SCALAR


def _dispatch(name: str, args: tuple, kwargs: dict) -> Any:
    """The Python key's kernel for C op `name` (csrc/python/python_dispatch.c): the innermost
    mode's __torch_dispatch__, else the arguments' classes', the first answer other than
    NotImplemented."""
    func = _local_scalar_dense() if name == "_local_scalar_dense" else dispatch_overload(name, args, kwargs)
    return _dispatch_func(func, args, kwargs)


def _dispatch_func(func, args: tuple, kwargs: dict) -> Any:
    """func(*args, **kwargs) as __torch_dispatch__ takes it: the innermost mode's answer, else the
    arguments' classes' (minitorch/_python_ops.py's factories come here themselves)."""
    chosen = _overloaded(args, kwargs)
    types = tuple(type(a) for a in chosen)
    if _stack.modes:
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_dispatch__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in chosen:
        result = type(arg).__torch_dispatch__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if not chosen and _stack.modes:  # the modes declined: the op runs as if none were on
        with _disable_current_modes():
            return func(*args, **kwargs)
    if not chosen:
        raise RuntimeError(f"{func}: a tensor of a __torch_dispatch__ subclass reached the dispatcher as a "
                           "plain Tensor (a view of it made without its class); only its class can run ops on it")
    handlers = "".join(f"  - tensor subclass {type(a)}\n" for a in chosen)
    raise TypeError(f"Multiple dispatch failed for {func}; all __torch_dispatch__ handlers returned "
                    f"NotImplemented:\n\n{handlers}\nFor more information, try re-running with "
                    "TORCH_LOGS=not_implemented")
