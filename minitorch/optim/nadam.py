"""optim.NAdam: Adam with Nesterov momentum (Dozat), with momentum decay and optionally
decoupled weight decay.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/nadam.py); state: "step" and "mu_product" (float32 CPU tensors: the product of the
momentum coefficients is accumulated in float32, as PyTorch does), "exp_avg", "exp_avg_sq".
"""
from __future__ import annotations

from typing import Optional, Tuple

import minitorch

from .optimizer import ParamsT, _SingleTensorOptimizer, _check_options, _check_supported, _lr_of, _scalar_state

__all__ = ["NAdam"]


class NAdam(_SingleTensorOptimizer):
    """Implements the NAdam algorithm, as torch.optim.NAdam (foreach is accepted and ignored)."""

    _old_defaults = dict(
        maximize=False, foreach=None, capturable=False, differentiable=False, decoupled_weight_decay=False
    )

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr, ("epsilon", eps), ("betas", betas), ("weight_decay", weight_decay),
                       ("momentum_decay", momentum_decay))
        _check_supported(differentiable, capturable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "momentum_decay": momentum_decay,
            "decoupled_weight_decay": decoupled_weight_decay,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        for p_state in self.state.values():
            if len(p_state) != 0 and not isinstance(p_state["mu_product"], minitorch.Tensor):
                p_state["mu_product"] = _scalar_state(p_state["mu_product"])

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        state["mu_product"] = _scalar_state(1.0)
        state["exp_avg"] = minitorch.zeros_like(param)
        state["exp_avg_sq"] = minitorch.zeros_like(param)

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        lr, (beta1, beta2) = _lr_of(group), group["betas"]
        wd, momentum_decay = group["weight_decay"], group["momentum_decay"]
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        bias_correction2 = 1 - beta2**step
        if wd != 0:
            if group["decoupled_weight_decay"]:
                param.mul_(1 - lr * wd)
            else:
                grad = grad.add(param, alpha=wd)
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        state["mu_product"] *= mu
        mu_product = state["mu_product"].item()
        exp_avg.lerp_(grad, 1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()
        mu_product_next = mu_product * mu_next
        denom.add_(group["eps"])
        param.addcdiv_(grad, denom, value=(-lr * (1.0 - mu) / (1.0 - mu_product)))
        param.addcdiv_(exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))
