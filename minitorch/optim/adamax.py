"""optim.Adamax: Adam with the infinity norm of past gradients in place of the second moment.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/adamax.py); state: "step" (a float32 CPU tensor), "exp_avg", "exp_inf".
"""
from __future__ import annotations

from typing import Optional, Tuple

import minitorch

from .optimizer import ParamsT, _SingleTensorOptimizer, _check_options, _check_supported, _lr_of, _scalar_state

__all__ = ["Adamax"]


class Adamax(_SingleTensorOptimizer):
    """Implements the Adamax algorithm, as torch.optim.Adamax (foreach is accepted and ignored)."""

    _old_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: Optional[bool] = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_options(lr, ("epsilon", eps), ("betas", betas), ("weight_decay", weight_decay))
        _check_supported(differentiable, capturable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "capturable": capturable,
        }
        super().__init__(params, defaults)

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        state["exp_avg"] = minitorch.zeros_like(param)
        state["exp_inf"] = minitorch.zeros_like(param)

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        (beta1, beta2), wd = group["betas"], group["weight_decay"]
        exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        exp_avg.lerp_(grad, 1 - beta1)
        minitorch.maximum(exp_inf.mul_(beta2), grad.abs().add_(group["eps"]), out=exp_inf)
        clr = _lr_of(group) / (1 - beta1**step)
        param.addcdiv_(exp_avg, exp_inf, value=-clr)
