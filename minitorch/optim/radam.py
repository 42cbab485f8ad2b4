"""optim.RAdam: Adam with the variance of the adaptive learning rate rectified (Liu et al.),
optionally with decoupled weight decay.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/radam.py); state: "step" (a float32 CPU tensor), "exp_avg", "exp_avg_sq".
"""
from __future__ import annotations

from typing import Optional, Tuple

import minitorch

from .optimizer import ParamsT, _SingleTensorOptimizer, _check_options, _check_supported, _lr_of, _scalar_state

__all__ = ["RAdam"]


class RAdam(_SingleTensorOptimizer):
    """Implements the RAdam algorithm, as torch.optim.RAdam (foreach is accepted and ignored)."""

    _old_defaults = dict(
        foreach=None, maximize=False, differentiable=False, decoupled_weight_decay=False, capturable=False
    )

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr, ("epsilon", eps), ("betas", betas), ("weight_decay", weight_decay))
        _check_supported(differentiable, capturable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "decoupled_weight_decay": decoupled_weight_decay,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        state["exp_avg"] = minitorch.zeros_like(param)
        state["exp_avg_sq"] = minitorch.zeros_like(param)

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        lr, (beta1, beta2), wd = _lr_of(group), group["betas"], group["weight_decay"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        if wd != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * wd)
            else:
                grad = grad.add(param, alpha=wd)
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        # the variance rectification term: the maximum length of the approximated SMA and its
        # value at this step
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2**0.5) / exp_avg_sq.sqrt().add_(group["eps"])
            param.add_(bias_corrected_exp_avg * lr * adaptive_lr * rect, alpha=-1.0)
        else:
            param.add_(bias_corrected_exp_avg * lr, alpha=-1.0)
