"""optim.RMSprop: a running average of squared gradients scales each step (Hinton's RMSprop),
optionally centered and with momentum.

The update of every parameter of a group is one op, _fused_rmsprop_, with PyTorch's formula,
on the parameters' device; the state (step, square_avg, momentum_buffer, grad_avg) is made here,
on that device.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import minitorch
from minitorch import _C

from .optimizer import Optimizer, ParamsT, _check_options, _check_supported, _to_scalar

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Implements the RMSprop algorithm, as torch.optim.RMSprop.

    foreach is accepted and ignored: the update is always one fused C call.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr, ("epsilon", eps), ("momentum", momentum), ("weight_decay", weight_decay),
                       ("alpha", alpha))
        _check_supported(differentiable, capturable)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._group_defaults(momentum=0, centered=False, foreach=None, maximize=False,
                             differentiable=False, capturable=False)
        self._steps_as_tensors()

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Optional[Any]:
        """Performs a single optimization step."""
        loss = self._closure_loss(closure)
        for group, params in self._groups_with_grads():
            momentum, centered = group["momentum"], group["centered"]
            states = [self._state_of(p, momentum, centered) for p in params]
            with minitorch.no_grad():
                _C._fused_rmsprop_(
                    params,
                    [p.grad for p in params],
                    [s["square_avg"] for s in states],
                    [s["grad_avg"] for s in states] if centered else [],
                    [s["momentum_buffer"] for s in states] if momentum > 0 else [],
                    [s["step"] for s in states],
                    lr=float(_to_scalar(group["lr"])),
                    alpha=float(group["alpha"]),
                    eps=float(group["eps"]),
                    weight_decay=float(group["weight_decay"]),
                    momentum=float(momentum),
                    centered=bool(centered),
                    maximize=bool(group["maximize"]),
                )
        return loss

    def _state_of(self, p: minitorch.Tensor, momentum: float, centered: bool) -> dict:
        """p's state, made on its first step: a float32 step count and zeroed averages."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = minitorch.tensor(0.0, dtype=minitorch.float32, device=p.device)
            state["square_avg"] = minitorch.zeros_like(p)
            if momentum > 0:
                state["momentum_buffer"] = minitorch.zeros_like(p)
            if centered:
                state["grad_avg"] = minitorch.zeros_like(p)
        return state
