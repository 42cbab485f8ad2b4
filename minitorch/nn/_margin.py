"""torch.nn.functional's multi-class margin losses and pdist, composites of gather,
clamp and sums, so that autograd gives their gradients and every device runs them. PyTorch's
checks and messages (LossMultiMargin.cpp, LossMultiLabelMargin.cpp, Distance.cpp) in its order.

multi_margin_loss: loss(x, y) = sum_{i != y} w[y] * max(0, margin - x[y] + x[i])^p / C.
multilabel_margin_loss: the targets of a sample are y[0..k) up to the first -1;
loss(x, y) = sum_{j < k} sum_{i not a target} max(0, 1 - (x[y[j]] - x[i])) / C."""
from __future__ import annotations

from typing import Optional

import minitorch as _minitorch
from minitorch import Tensor
from minitorch._checks import _tensors

__all__ = ["multi_margin_loss", "multilabel_margin_loss", "pdist"]


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    return loss.sum()


def _reduction(size_average, reduce, reduction: str) -> str:
    from minitorch.nn.functional import _legacy_reduction

    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _vector_or_matrix(input: Tensor) -> None:
    """PyTorch's check of a margin loss's input: (C) or (N, C), C > 0."""
    if not (input.dim() <= 1 and input.numel() > 0 or input.dim() == 2 and input.shape[1] != 0):
        raise RuntimeError(
            f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: {list(input.shape)}")


def _long_target(target: Tensor) -> None:
    if target.dtype != _minitorch.int64:
        from minitorch._shape import _SCALAR_NAMES

        raise RuntimeError(f"expected scalar type Long but found {_SCALAR_NAMES.get(str(target.dtype))}")


def _float_input(kernel: str, input: Tensor) -> None:
    from minitorch.nn.functional import _floats_only

    _floats_only(kernel, input)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Optional[Tensor] = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """The multi-class hinge loss of input (N, C) or (C) and class indices target (N) or ()."""
    _tensors("multi_margin_loss", input=input, target=target)
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad and _minitorch.is_grad_enabled():
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    _vector_or_matrix(input)
    x = input.reshape(-1, input.shape[-1]) if input.dim() else input.reshape(1, 1)
    n, c = x.shape
    if not (target.dim() <= 1 and target.numel() == n):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples "
            f"(batch size). Expected target size [{n}], but got {list(target.shape)}. Input has shape "
            f"{list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    _long_target(target)
    _float_input("multi_margin_loss_cpu_kernel", input)
    y = target.reshape(n, 1)
    if n and bool(((y < 0) | (y >= c)).any()):
        raise RuntimeError("target out of range")
    z = (margin - x.gather(1, y) + x).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[y]
    z = z.scatter(1, y, 0.0)  # the target's own term is not counted
    loss = z.sum(1) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """The multi-label hinge loss of input (N, C) or (C) and target class lists (N, C) or (C),
    each cut at its first -1."""
    _tensors("multilabel_margin_loss", input=input, target=target)
    reduction = _reduction(size_average, reduce, reduction)
    _vector_or_matrix(input)
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    _long_target(target)
    _float_input("multilabel_margin_loss_forward_out_frame", input)
    c = input.shape[-1] if input.dim() else 1
    x, y = input.reshape(-1, c), target.reshape(-1, c)
    if y.numel() and bool(((y < -1) | (y >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    valid = (y >= 0).cumprod(1).bool()  # the targets before a sample's first -1
    picked = y.clamp_min(0)
    classes = _minitorch.arange(c, device=input.device)
    is_target = ((picked.unsqueeze(-1) == classes) & valid.unsqueeze(-1)).any(1)  # (N, C)
    # terms (N, J, C): target j against class i
    terms = (1 - x.gather(1, picked).unsqueeze(-1) + x.unsqueeze(1)).clamp_min(0)
    keep = valid.unsqueeze(-1) & ~is_target.unsqueeze(1)
    loss = (terms * keep).sum((1, 2)) / c
    if input.dim() < 2:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of input (N, M), pairs i < j in row order:
    (N * (N - 1) / 2)."""
    _tensors("pdist", input=input)
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = _minitorch.triu_indices(n, n, 1, device=input.device)
    return _minitorch.linalg.vector_norm(input[i] - input[j], p, dim=1)
