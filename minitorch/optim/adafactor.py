"""optim.Adafactor (Shazeer & Stern 2018, PyTorch's variant): Adam-like steps whose second
moment of a matrix is kept factored, a row and a column vector, so it costs O(n + m) memory.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/_adafactor.py); state: "step" (a float32 CPU tensor), and "row_var" and "col_var"
(a matrix or more dims) or "variance" (a vector).
"""
from __future__ import annotations

from typing import Optional, Tuple

import minitorch

from .optimizer import ParamsT, _SingleTensorOptimizer, _lr_of, _scalar_state

__all__ = ["Adafactor"]


class Adafactor(_SingleTensorOptimizer):
    """Implements Adafactor, as torch.optim.Adafactor (foreach is accepted and ignored)."""

    _old_defaults = dict(foreach=None, maximize=False)

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        beta2_decay: float = -0.8,
        eps: Tuple[Optional[float], float] = (None, 1e-3),
        d: float = 1.0,
        weight_decay: float = 0.0,
        *,
        foreach: Optional[bool] = None,
        maximize: bool = False,
    ) -> None:
        if isinstance(lr, minitorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        grad = param.grad
        if grad.dim() > 1:
            state["row_var"] = grad.new_zeros(list(grad.shape[:-1]) + [1])
            state["col_var"] = grad.new_zeros(list(grad.shape[:-2]) + [1, grad.shape[-1]])
        else:
            state["variance"] = minitorch.zeros_like(grad)

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        lr, d, wd = float(_lr_of(group)), group["d"], group["weight_decay"]
        eps1, eps2 = group["eps"]
        if eps1 is None:
            eps1 = minitorch.finfo(param.dtype).eps
        one_minus_beta2_t = step ** group["beta2_decay"]
        rho_t = min(lr, 1 / (step**0.5))
        alpha = max(eps2, param.norm(2).item() / (param.numel() ** 0.5)) * rho_t
        if wd != 0:
            param.mul_(1 - lr * wd)
        if grad.dim() > 1:
            row_var, col_var = state["row_var"], state["col_var"]
            row_mean = minitorch.norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
            row_var.lerp_(row_mean, one_minus_beta2_t)
            col_mean = minitorch.norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
            col_var.lerp_(col_mean, one_minus_beta2_t)
            var_estimate = row_var @ col_var
            var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
        else:
            variance = state["variance"]
            variance.lerp_(grad * grad, one_minus_beta2_t)
            var_estimate = variance.clone()
        update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
        update.mul_(grad)
        denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
        param.add_(update, alpha=-alpha / denom)
