"""optim.ASGD: averaged stochastic gradient descent (Polyak & Juditsky), SGD with a decaying
step eta and a running average ax of the weights from step t0 on.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/asgd.py); state: "step", "eta", "mu" (float32 CPU tensors) and "ax".
"""
from __future__ import annotations

from typing import Optional

import minitorch

from .optimizer import ParamsT, _SingleTensorOptimizer, _check_options, _check_supported, _lr_of, _scalar_state

__all__ = ["ASGD"]


class ASGD(_SingleTensorOptimizer):
    """Implements Averaged Stochastic Gradient Descent, as torch.optim.ASGD (foreach is accepted
    and ignored)."""

    _old_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_options(lr, ("weight_decay", weight_decay))
        _check_supported(differentiable, capturable)
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        state["eta"] = _scalar_state(float(_lr_of(group)))
        state["mu"] = _scalar_state(1.0)
        state["ax"] = minitorch.zeros_like(param)

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        lambd, lr, wd = group["lambd"], float(_lr_of(group)), group["weight_decay"]
        mu, ax, eta = state["mu"], state["ax"], state["eta"]
        if wd != 0:
            grad = grad.add(param, alpha=wd)
        eta_value = eta.item()
        param.mul_(1 - lambd * eta_value)
        param.add_(grad, alpha=-eta_value)
        if mu.item() != 1:
            ax.add_(param.sub(ax).mul_(mu))
        else:
            ax.copy_(param)
        eta.fill_(lr / ((1 + lambd * lr * step) ** group["alpha"]))
        mu.fill_(1 / max(1, step - group["t0"]))
