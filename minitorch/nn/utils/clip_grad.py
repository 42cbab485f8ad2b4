"""Gradient clipping, as torch/nn/utils/clip_grad.py: by the total norm of all the gradients
(one norm op per gradient, then the norm of those norms) or elementwise by a value. Gradients
are scaled or clamped in place, with grad mode off. PyTorch's foreach kernels are a speed-up
of the same arithmetic; `foreach=` is accepted and the per-tensor ops run either way."""
from __future__ import annotations

import functools
import types
import warnings
from typing import Iterable, Optional, Union

import minitorch
from minitorch import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]

_tensor_or_tensors = Union[Tensor, Iterable[Tensor]]


def _no_grad(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with minitorch.no_grad():
            return func(*args, **kwargs)

    return wrapper


def _check_foreach(tensors, foreach: Optional[bool]) -> None:
    """foreach=True on a device without PyTorch's foreach kernels is PyTorch's RuntimeError; the
    CPU and CUDA have them, and those are the devices minitorch has."""
    if foreach:
        for t in tensors:
            if t.device.type not in ("cpu", "cuda"):
                raise RuntimeError(
                    f"foreach=True was passed, but can't use the foreach API on {t.device.type} tensors"
                )


@_no_grad
def get_total_norm(
    tensors: _tensor_or_tensors,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Optional[bool] = None,
) -> Tensor:
    """The norm of the tensors' norms: the norm of all their elements as one vector."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return minitorch.tensor(0.0)
    _check_foreach(tensors, foreach)
    first_device = tensors[0].device
    if norm_type == float("inf") and foreach is not False and any(t.numel() == 0 for t in tensors):
        # what PyTorch's foreach kernel (its default on the CPU and CUDA) says; without foreach
        # the norm op's own message
        raise RuntimeError(
            "_foreach_norm cannot compute the infinity norm on an empty tensor because the "
            "operation does not have an identity"
        )
    norms = [minitorch.linalg.vector_norm(t, norm_type).to(first_device) for t in tensors]
    total_norm = minitorch.norm(minitorch.stack(norms), norm_type)
    if error_if_nonfinite and bool(minitorch.logical_or(total_norm.isnan(), total_norm.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`"
        )
    return total_norm


@_no_grad
def clip_grads_with_norm_(
    parameters: _tensor_or_tensors,
    max_norm: float,
    total_norm: Tensor,
    foreach: Optional[bool] = None,
) -> None:
    """grad *= min(max_norm / (total_norm + 1e-6), 1) for each parameter's grad, in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    _check_foreach(grads, foreach)
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = minitorch.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped.to(g.device))


@_no_grad
def clip_grad_norm_(
    parameters: _tensor_or_tensors,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: Optional[bool] = None,
) -> Tensor:
    """Scales the parameters' gradients in place so that their total norm (of order norm_type,
    float('inf') for the largest magnitude) is at most max_norm; returns the total norm before
    clipping, as a tensor."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator must not be exhausted before the clipping
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None) -> Tensor:
    """Deprecated spelling of clip_grad_norm_."""
    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(
    parameters: _tensor_or_tensors,
    clip_value: float,
    foreach: Optional[bool] = None,
) -> None:
    """Clamps every gradient element into [-clip_value, clip_value], in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    _check_foreach(grads, foreach)
    for grad in grads:
        grad.clamp_(min=-clip_value, max=clip_value)
