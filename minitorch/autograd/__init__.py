"""minitorch.autograd: backward(), grad(), and the graph the C engine records.

The engine is C (csrc/autograd/): each differentiable op records a node when an input requires
grad, and _C._run_backward runs the graph. This module only shapes PyTorch's Python API over it.
"""
from __future__ import annotations

import warnings
from typing import Optional, Sequence, Tuple, Union

from .. import _C
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from .._grad_mode import no_grad as _C_no_grad
from . import forward_ad, functional, grad_mode, graph  # noqa: F401
from .grad_mode import is_multithreading_enabled, set_multithreading_enabled  # noqa: F401
from .function import Function  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .._legacy import Variable  # noqa: F401
from ..overrides import handle_torch_function, has_torch_function, is_tensor_like  # noqa: F401
from ..profiler import ProfilerActivity  # noqa: F401


def kineto_available() -> bool:
    """Whether the profiler is Kineto (PyTorch's, with CUPTI): minitorch's records its own events."""
    return False


def is_view_replay_enabled() -> bool:
    """Whether autograd replays a view chain to rebuild a view (torch's off by default; minitorch
    rebuilds views from their base's as_strided, never by replay)."""
    return False

_TensorOrTensors = Union["_C.TensorBase", Sequence["_C.TensorBase"]]


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, _C.TensorBase):
        return (x,)
    return tuple(x)


def _grads_for(outputs, grad_outputs):
    grads = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad requires one gradient per output: got {len(grads)} gradients "
                           f"for {len(outputs)} outputs")
    return grads


def backward(tensors: _TensorOrTensors, grad_tensors: Optional[_TensorOrTensors] = None,
             retain_graph: Optional[bool] = None, create_graph: bool = False,
             grad_variables: Optional[_TensorOrTensors] = None, inputs: Optional[_TensorOrTensors] = None) -> None:
    """Accumulates into each leaf's .grad the gradient of tensors (weighted by grad_tensors); with
    inputs, into the .grad of those tensors only (leaves or not), the rest of the graph untouched.
    grad_variables is grad_tensors's old name, taken with PyTorch's warning."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    grads = _grads_for(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        graph._run_backward(tensors, grads, bool(retain_graph), bool(create_graph), ())
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    found = graph._run_backward(tensors, grads, bool(retain_graph), bool(create_graph), inputs)
    for x, g in zip(inputs, found):
        if g is not None and not (x.grad_fn is not None and x.retains_grad):  # retain_grad's hook added it
            _accumulate(x, g, bool(create_graph))


def _accumulate(x, g, create_graph: bool) -> None:
    """x.grad += g as the engine's accumulation does for a leaf: the first gradient is kept
    (detached unless create_graph), later ones added in place (out of place under
    create_graph, so the graph of the earlier one stays intact); then the post-accumulate hooks."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the .grad of a non-leaf input is wanted here
        current = x.grad
    if current is None:
        x.grad = g if create_graph else g.detach()
    elif create_graph:
        x.grad = current + g
    else:
        with _C_no_grad():
            current.add_(g)
    hooks = getattr(x, "_post_accumulate_grad_hooks", None)
    if hooks and x.grad_fn is None:
        from .._tensor import _run_post_accumulate_hooks

        _run_post_accumulate_hooks(hooks, x)


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize_grads):
    """grad() for each vector along the first dim of grads, the results stacked along it."""
    from .. import stack

    sizes = {g.shape[0] if g.dim() else None for g in grads if g is not None}
    if None in sizes or len(sizes) != 1:
        raise RuntimeError("grad(is_grads_batched=True): each grad_output needs a batch dim, of one size for all, "
                           f"got sizes {sorted(map(str, sizes))}")
    n = sizes.pop()
    each = [grad(outputs, inputs, [None if g is None else g[b] for g in grads], retain_graph=retain_graph or b < n - 1,
                 create_graph=create_graph, allow_unused=allow_unused, materialize_grads=materialize_grads)
            for b in range(n)]
    return tuple(None if each[0][k] is None else stack([r[k] for r in each]) for k in range(len(inputs)))


def grad(outputs: _TensorOrTensors, inputs: _TensorOrTensors,
         grad_outputs: Optional[_TensorOrTensors] = None, retain_graph: Optional[bool] = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: Optional[bool] = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> Tuple[Optional["_C.TensorBase"], ...]:
    """The gradients of outputs with respect to inputs, returned rather than accumulated.
    is_grads_batched: the first dim of each grad_output is a batch of vectors, and each result has
    it too (PyTorch vmaps the backward pass; here it runs once per vector, the graph kept until
    the last). only_inputs is PyTorch's deprecated switch, ignored with its warning."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.",
                      FutureWarning, stacklevel=2)
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grads = _grads_for(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize_grads)
    result = graph._run_backward(outputs, grads, bool(retain_graph), bool(create_graph), inputs)
    if materialize_grads:
        allow_unused = True
    for k, (g, x) in enumerate(zip(result, inputs)):
        if g is None and not allow_unused:
            raise RuntimeError(f"The differentiated Tensor at index {k} appears to not have been used in "
                               "the graph. Set allow_unused=True if this is the desired behavior.")
    if materialize_grads:
        from .. import zeros_like

        result = tuple(zeros_like(x) if g is None else g for g, x in zip(result, inputs))
    return result
