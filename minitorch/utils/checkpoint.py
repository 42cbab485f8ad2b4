"""torch.utils.checkpoint: activation checkpointing, which trades compute for memory.

`checkpoint(function, *args)` runs function without keeping the tensors its ops save for
backward, and computes them again when the backward pass needs them. With preserve_rng_state=True
(the default) the recomputation starts from the random state the forward pass saw, so dropout
draws the same masks both times.

use_reentrant=False is PyTorch's non-reentrant variant, over saved-tensor hooks
(autograd.graph.saved_tensors_hooks): function runs under autograd, its graph is recorded as
usual, but every tensor a node saves is packed as a placeholder; the first unpack of a backward
runs function again (under hooks that collect what its nodes save, in the same order) and each
placeholder gives its recomputed tensor. So keyword arguments, tensors inside containers, inputs
that need no grad, closed-over parameters, autograd.grad(..., inputs=...) and nested checkpoints
all work as without checkpointing, and a recomputation that saves differently raises
CheckpointError. Selective checkpointing (create_selective_checkpoint_contexts, CheckpointPolicy) runs as plain
checkpointing: every op is recomputed, whatever the policy says to save. That is allowed because
the recomputation restores the random state and replays the same ops, so the values and gradients
are the same; only the memory saved and the compute spent differ (the policy function is not
called). set_checkpoint_early_stop keeps its flag; a recomputation here always runs the whole
function, which early stopping only shortens. use_reentrant=True is the reentrant variant: an autograd.Function that runs
function under no_grad and, in its backward, recomputes it and backpropagates through that
(positional tensor arguments only, gradients accumulated into the .grad of closed-over tensors).
"""
from __future__ import annotations

import contextlib
import enum
import warnings
from typing import Any, Callable, Iterable, Tuple

from .. import _C
from .._grad_mode import enable_grad, no_grad
from ..autograd.function import Function

__all__ = ["CheckpointError", "CheckpointPolicy", "checkpoint", "checkpoint_sequential",
           "create_selective_checkpoint_contexts", "detach_variable", "set_checkpoint_early_stop", "DefaultDeviceType",
           "check_backward_validity", "get_device_states", "set_device_states", "noop_context_fn"]

_early_stop = True  # set_checkpoint_early_stop's flag (a recomputation here always runs to the end)


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: keep it or recompute it."""
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


def detach_variable(inputs: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """inputs with each tensor detached, keeping its requires_grad (other values as they are)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: {type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, _C.TensorBase):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether a non-reentrant checkpoint's recomputation may stop once it has every tensor the
    backward needs; restored on exit."""
    global _early_stop
    prev, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = prev


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation: bool = False):
    """The (forward, recompute) context pair for checkpoint(..., context_fn=...): a list of ops to
    save or a policy function(ctx, op, *args, **kwargs) -> CheckpointPolicy, checked as PyTorch
    does. Every op is recomputed here (see the module's note), so both contexts do nothing."""
    from .._ops import OpOverload, OpOverloadPacket

    if isinstance(policy_fn_or_list, list):
        for op in policy_fn_or_list:
            if not isinstance(op, OpOverload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For example, if you have "
                         "`torch.ops.aten.mm`, change it to `torch.ops.aten.mm.default`."
                         if isinstance(op, OpOverloadPacket) else "")
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} of type {type(op)}. "
                                 f"{extra}")
    elif not callable(policy_fn_or_list):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointError(RuntimeError):
    """A recomputation that saved other tensors than the forward pass."""


def _devices(tensors) -> list:
    """The CUDA devices the tensors live on, whose generators the recomputation restores."""
    return sorted({t.device.index or 0 for t in tensors if t.device.type == "cuda"})


def _flatten(obj, out: list):
    """Appends the tensors inside obj (nested lists, tuples and dicts) to out."""
    if isinstance(obj, _C.TensorBase):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _flatten(item, out)
    elif isinstance(obj, dict):
        for item in obj.values():
            _flatten(item, out)
    return out


def _replace(obj, it):
    """obj with each tensor replaced by the next item of it (the same nesting)."""
    if isinstance(obj, _C.TensorBase):
        return next(it)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
        return type(obj)(*(_replace(item, it) for item in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_replace(item, it) for item in obj)
    if isinstance(obj, dict):
        return {k: _replace(v, it) for k, v in obj.items()}
    return obj


class DefaultDeviceType:
    """The device type whose random states checkpointing keeps when no tensor argument is on an
    accelerator (torch.utils.checkpoint.DefaultDeviceType): set, else the current accelerator's
    (where one is usable), else "cpu"."""

    _default_device_type: "str | None" = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            from .. import accelerator

            acc = accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc is not None else "cpu"
        return DefaultDeviceType._default_device_type


def check_backward_validity(inputs: Iterable[Any]) -> None:
    """PyTorch's warning when no tensor among inputs requires grad (the reentrant checkpoint's)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, _C.TensorBase)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)


def get_device_states(*args) -> Tuple[list, list]:
    """(device indices, random states): one of each per tensor among args (nested in lists, tuples
    and dicts) on a CUDA device, as the reversible networks that recompute with the same dropout
    masks save them."""
    from .. import cuda

    ids = [t.get_device() for t in _flatten(args, []) if t.device.type not in ("cpu", "meta")]
    return ids, [cuda.get_rng_state(d) for d in ids]


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restores the random state of each device (get_device_states's pair) on device_type's
    devices (default DefaultDeviceType.get_device_type(); "meta" has none)."""
    from .. import get_device_module

    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    module = get_device_module(device_type)
    for device, state in zip(devices, states):
        module.set_rng_state(state, device)


def noop_context_fn():
    """The context_fn checkpoint uses by default: two contexts that do nothing."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class _RngState:
    """The CPU generator's state and those of the CUDA devices tensors live on."""

    def __init__(self, tensors):
        from .. import cuda, random

        self.cpu = random.get_rng_state()
        self.devices = _devices(tensors)
        self.cuda = [cuda.get_rng_state(d) for d in self.devices]

    def restore(self):
        from .. import cuda, random

        random.set_rng_state(self.cpu)
        for d, state in zip(self.devices, self.cuda):
            cuda.set_rng_state(state, d)


class CheckpointFunction(Function):
    """Runs run_function under no_grad; its backward recomputes it under autograd and
    backpropagates the incoming gradients through the recomputation. rebuild(tensors) gives the
    arguments (args, kwargs) back from the tensor inputs; holder["out"] receives the output, whose
    tensors are this function's outputs."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, rebuild, holder, *tensors):
        ctx.run_function, ctx.rebuild, ctx.reentrant = run_function, rebuild, holder["reentrant"]
        ctx.rng = _RngState(tensors) if preserve_rng_state else None
        ctx.save_for_backward(*tensors)
        args, kwargs = rebuild(tensors)
        holder["out"] = run_function(*args, **kwargs)
        outs = tuple(_flatten(holder["out"], []))
        ctx.mark_non_differentiable(*(o for o in outs if not o.dtype.is_floating_point))
        return outs

    @staticmethod
    def backward(ctx, *grads):
        from .. import autograd, random

        inputs = [t.detach().requires_grad_(t.requires_grad) for t in ctx.saved_tensors]
        args, kwargs = ctx.rebuild(inputs)
        with random.fork_rng(devices=ctx.rng.devices if ctx.rng else [], enabled=ctx.rng is not None):
            if ctx.rng is not None:
                ctx.rng.restore()
            with enable_grad():
                out = ctx.run_function(*args, **kwargs)
        pairs = [(o, g) for o, g in zip(_flatten(out, []), grads) if o.requires_grad and g is not None]
        if not pairs and ctx.reentrant:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        if not pairs:  # non-reentrant: nothing inside needed grad (frozen parameters), so none flows
            return (None,) * (4 + len(inputs))
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None, None, None) + tuple(t.grad if t.requires_grad else None for t in inputs)


_TENSOR = object()  # marks where a reentrant checkpoint's positional tensor arguments go


def checkpoint(function: Callable, *args: Any, use_reentrant: bool | None = None, context_fn=None,
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """function(*args, **kwargs), recomputed during backward instead of keeping its activations."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in "
            "PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. use_reentrant=False "
            "is recommended, but if you need to preserve the current default behavior, you can pass "
            "use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant and (context_fn is not None or debug is not False):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    holder: dict = {"reentrant": use_reentrant}
    if use_reentrant:
        # as PyTorch's: only the positional tensor arguments are inputs (others are constants)
        tensors = [a for a in args if isinstance(a, _C.TensorBase)]
        if _C.is_grad_enabled() and not any(t.requires_grad for t in tensors):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        marked = [_TENSOR if isinstance(a, _C.TensorBase) else a for a in args]

        def rebuild(ts):
            it = iter(ts)
            return [next(it) if a is _TENSOR else a for a in marked], {}

        outs = CheckpointFunction.apply(function, preserve, rebuild, holder, *tensors)
    else:
        return _checkpoint_without_reentrant(function, preserve, context_fn, args, kwargs)
    return _replace(holder["out"], iter(outs))


class _Holder:
    """What a node keeps, in the forward pass, for a tensor it saves: the tensor's place in the
    order of saves, and its metadata."""

    __slots__ = ("index", "meta")

    def __init__(self, index, meta):
        self.index, self.meta = index, meta


def _meta(t) -> tuple:
    return tuple(t.shape), t.dtype, t.device


def _checkpoint_without_reentrant(function, preserve, context_fn, args, kwargs):
    from .. import random
    from ..autograd.graph import saved_tensors_hooks

    rng = _RngState(_flatten((args, kwargs), [])) if preserve else None
    holders: list = []  # the forward pass's holders' metadata, in the order of saves
    recomputed: dict = {}  # index -> tensor, from the latest recomputation, each used once

    def pack(t):
        holders.append(_meta(t))
        return _Holder(len(holders) - 1, holders[-1])

    def recompute():
        saved: list = []

        def save(t):
            saved.append(t)

        def refuse(_):
            raise CheckpointError("torch.utils.checkpoint: unpack is called on a tensor saved during the "
                                  "recomputation, which is not supported")

        _, recompute_context = (context_fn or noop_context_fn)()
        with random.fork_rng(devices=rng.devices if rng else [], enabled=rng is not None):
            if rng is not None:
                rng.restore()
            with enable_grad(), recompute_context, saved_tensors_hooks(save, refuse):
                function(*args, **kwargs)
        if len(saved) < len(holders):
            raise CheckpointError("torch.utils.checkpoint: A different number of tensors was saved during the "
                                  "original forward and recomputation.\n"
                                  f"Number of tensors saved during forward: {len(holders)}\n"
                                  f"Number of tensors saved during recomputation: {len(saved)}")
        wrong = [k for k, (t, meta) in enumerate(zip(saved, holders)) if _meta(t) != meta]
        if wrong:
            lines = "".join(f"tensor at position {k}:\nsaved metadata: {holders[k]}\nrecomputed metadata: "
                            f"{_meta(saved[k])}\n" for k in wrong)
            raise CheckpointError("torch.utils.checkpoint: Recomputed values for the following tensors have "
                                  "different metadata than during the forward pass.\n" + lines)
        recomputed.clear()
        recomputed.update(enumerate(saved[:len(holders)]))

    def unpack(holder):
        if holder.index not in recomputed:
            recompute()
        return recomputed.pop(holder.index)

    forward_context, _ = (context_fn or noop_context_fn)()
    with forward_context, saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None, **kwargs):
    """Runs a Sequential (or a list of modules or functions) in `segments` chunks, each but the
    last checkpointed."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
            "explicitly. In version 2.9 we will raise an exception if use_reentrant is not passed. "
            "use_reentrant=False is recommended, but if you need to preserve the current default behavior, "
            "you can pass use_reentrant=True. Refer to docs for more details on the differences between the "
            "two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x

        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
