"""optim.Adadelta: steps scaled by the ratio of running RMS of past updates and of gradients.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/adadelta.py); state: "step" (a float32 CPU tensor), "square_avg", "acc_delta".
"""
from __future__ import annotations

from typing import Optional

import minitorch

from .optimizer import ParamsT, _SingleTensorOptimizer, _check_options, _check_supported, _lr_of, _scalar_state

__all__ = ["Adadelta"]


class Adadelta(_SingleTensorOptimizer):
    """Implements the Adadelta algorithm, as torch.optim.Adadelta (foreach is accepted and
    ignored)."""

    _old_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: Optional[bool] = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr, ("rho", rho), ("epsilon", eps), ("weight_decay", weight_decay))
        _check_supported(differentiable, capturable)
        defaults = {
            "lr": lr,
            "rho": rho,
            "eps": eps,
            "weight_decay": weight_decay,
            "maximize": maximize,
            "capturable": capturable,
            "foreach": foreach,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        state["square_avg"] = minitorch.zeros_like(param)
        state["acc_delta"] = minitorch.zeros_like(param)

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        rho, eps, wd = group["rho"], group["eps"], group["weight_decay"]
        square_avg, acc_delta = state["square_avg"], state["acc_delta"]
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        square_avg.mul_(rho).addcmul_(grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        delta.div_(std).mul_(grad)
        acc_delta.mul_(rho).addcmul_(delta, delta, value=1 - rho)
        param.add_(delta, alpha=-_lr_of(group))
