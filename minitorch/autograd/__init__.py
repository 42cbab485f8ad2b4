"""minitorch.autograd: backward(), grad(), and the graph the C engine records.

The engine is C (csrc/autograd/): each differentiable op records a node when an input requires
grad, and _C._run_backward runs the graph. This module only shapes PyTorch's Python API over it.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple, Union

from .. import _C
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
from . import forward_ad, functional, grad_mode, graph  # noqa: F401
from .grad_mode import is_multithreading_enabled, set_multithreading_enabled  # noqa: F401
from .function import Function  # noqa: F401
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .gradcheck import gradcheck, gradgradcheck  # noqa: F401
from .._legacy import Variable  # noqa: F401

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
             inputs: Optional[_TensorOrTensors] = None) -> None:
    """Accumulates into each leaf's .grad the gradient of tensors (weighted by grad_tensors)."""
    if inputs is not None:
        raise NotImplementedError("backward(inputs=...) is not supported yet; use autograd.grad")
    tensors = _as_tuple(tensors)
    grads = _grads_for(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    _C._run_backward(tensors, grads, bool(retain_graph), bool(create_graph), ())


def grad(outputs: _TensorOrTensors, inputs: _TensorOrTensors,
         grad_outputs: Optional[_TensorOrTensors] = None, retain_graph: Optional[bool] = None,
         create_graph: bool = False, allow_unused: Optional[bool] = None,
         materialize_grads: bool = False) -> Tuple[Optional["_C.TensorBase"], ...]:
    """The gradients of outputs with respect to inputs, returned rather than accumulated."""
    outputs = _as_tuple(outputs)
    inputs = _as_tuple(inputs)
    grads = _grads_for(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    result = _C._run_backward(outputs, grads, bool(retain_graph), bool(create_graph), inputs)
    if materialize_grads:
        allow_unused = True
    for k, (g, x) in enumerate(zip(result, inputs)):
        if g is None and not allow_unused:
            raise RuntimeError("One of the differentiated Tensors appears to not have been used in the "
                               "graph. Set allow_unused=True if this is the desired behavior.")
    if materialize_grads:
        from .. import zeros_like

        result = tuple(zeros_like(x) if g is None else g for g, x in zip(result, inputs))
    return result
