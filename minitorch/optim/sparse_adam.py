"""optim.SparseAdam: Adam for parameters whose gradients are sparse (an Embedding with sparse=True),
moving only the moments of the rows that have gradient (optim/_sparse.py), as PyTorch's: the
state ('step', a number, and the dense 'exp_avg' and 'exp_avg_sq') is made on a parameter's
first step; a dense gradient is refused with PyTorch's error, which points to Adam.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import minitorch

from . import _sparse
from .optimizer import Optimizer, ParamsT, _to_scalar

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Implements the lazy Adam of torch.optim.SparseAdam, for sparse gradients."""

    _sparse_grad_error = None

    def __init__(self, params: ParamsT, lr: Any = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, minitorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_at = [[g, i] for g, group in enumerate(self.param_groups)
                      for i, p in enumerate(group["params"]) if p.is_complex()]
        if complex_at:
            raise ValueError(f"Complex params at indices {complex_at}: SparseAdam does not support complex parameters")

    @minitorch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = None
        if closure is not None:
            with minitorch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            with_grad = [p for p in group["params"] if p.grad is not None]
            for p in with_grad:  # every gradient is checked before any parameter moves
                if not p.grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
            beta1, beta2 = group["betas"]
            for p in with_grad:
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = minitorch.zeros_like(p, memory_format=minitorch.preserve_format)
                    state["exp_avg_sq"] = minitorch.zeros_like(p, memory_format=minitorch.preserve_format)
                state["step"] += 1
                grad = -p.grad if group["maximize"] else p.grad
                _sparse.sparse_adam(p, grad, state, float(_to_scalar(group["lr"])), beta1, beta2, group["eps"])
        return loss
