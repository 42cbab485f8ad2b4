"""The updates of the optimizers that take sparse COO gradients (embedding(sparse=True)): SGD,
Adagrad and SparseAdam, as PyTorch's single-tensor loops write them. Each touches only the
rows (the entries) the gradient has: the gradient is coalesced first where the update is not
linear in it, and the state and the parameter are read at its indices (advanced indexing) and
added into there (index_put_ with accumulate), which is what PyTorch's dense.add_(sparse) and
dense.sparse_mask(sparse) do. No element is touched in Python.
"""
from __future__ import annotations

import math
from typing import Any, Dict

import minitorch


def sgd(param: minitorch.Tensor, grad, state: Dict[str, Any], group: Dict[str, Any], lr: float) -> None:
    """PyTorch's _single_tensor_sgd for one parameter with a sparse gradient: its momentum buffer
    is sparse too (a weight decay raises PyTorch's add(sparse, dense) error)."""
    if group["maximize"]:
        grad = -grad
    if group["weight_decay"] != 0:
        grad = grad.add(param, alpha=group["weight_decay"])
    momentum = group["momentum"]
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = grad.detach().clone()
        else:
            buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
        grad = grad.add(buf, alpha=momentum) if group["nesterov"] else buf
    param.add_(grad, alpha=-lr)


def adagrad(param: minitorch.Tensor, grad, state_sum: minitorch.Tensor, clr: float, eps: float) -> None:
    """PyTorch's Adagrad step on the entries of a sparse gradient."""
    grad = grad.coalesce()  # the update is not linear in the gradient: one entry per index
    at, values = tuple(grad._indices()), grad._values()
    state_sum.index_put_(at, values.pow(2), accumulate=True)
    std_values = state_sum[at].sqrt_().add_(eps)
    param.index_put_(at, (values / std_values) * -clr, accumulate=True)


def sparse_adam(param: minitorch.Tensor, grad, state: Dict[str, Any], lr: float, beta1: float, beta2: float,
                eps: float) -> None:
    """PyTorch's sparse_adam for one parameter: the moments move only at the gradient's entries,
    and so does the parameter; state['step'] is already advanced."""
    grad = grad.coalesce()
    at, values = tuple(grad._indices()), grad._values()
    if values.numel() == 0:
        return
    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
    # old <- b * old + (1 - b) * new, written old += (1 - b) * (new - old), at the entries
    old_exp_avg = exp_avg[at]
    exp_avg_update = values.sub(old_exp_avg).mul_(1 - beta1)
    exp_avg.index_put_(at, exp_avg_update, accumulate=True)
    old_exp_avg_sq = exp_avg_sq[at]
    exp_avg_sq_update = values.pow(2).sub_(old_exp_avg_sq).mul_(1 - beta2)
    exp_avg_sq.index_put_(at, exp_avg_sq_update, accumulate=True)
    numer = exp_avg_update.add_(old_exp_avg)
    denom = exp_avg_sq_update.add_(old_exp_avg_sq).sqrt_().add_(eps)
    step = state["step"]
    step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
    param.index_put_(at, numer.div_(denom) * -step_size, accumulate=True)
