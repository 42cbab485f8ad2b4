"""optim.Adam: adaptive moment estimation, with AMSGrad, coupled or decoupled weight decay.

The update of every parameter of a group is one op, _fused_adam_ (or _fused_adamw_), with
PyTorch's formula, on the parameters' device; the state (step count, exp_avg, exp_avg_sq,
max_exp_avg_sq) is made here, once per parameter, on that device (the step count too, as
PyTorch's fused Adam keeps it), and updated in place by the op.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import minitorch
from minitorch import _C

from .optimizer import Optimizer, ParamsT, _as_real, _check_options, _check_supported, _to_scalar

__all__ = ["Adam"]


class Adam(Optimizer):
    """Implements the Adam algorithm, as torch.optim.Adam.

    foreach and fused are accepted and ignored: the update is always one fused C call.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: Optional[bool] = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_options(lr, ("epsilon", eps), ("betas", betas), ("weight_decay", weight_decay))
        if not (
            (isinstance(betas[0], float) and isinstance(betas[1], float))
            or (isinstance(betas[0], minitorch.Tensor) and isinstance(betas[1], minitorch.Tensor))
        ):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, beta in enumerate(betas):
            if isinstance(beta, minitorch.Tensor) and beta.numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))
        _check_supported(differentiable, capturable)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    _sparse_grad_error = "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._group_defaults(amsgrad=False, maximize=False, foreach=None, capturable=False,
                             differentiable=False, decoupled_weight_decay=False, fused=None)
        self._steps_as_tensors()

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Optional[Any]:
        """Performs a single optimization step."""
        loss = self._closure_loss(closure)
        for group, params in self._groups_with_grads():
            states = [self._state_of(p, group["amsgrad"]) for p in params]
            beta1, beta2 = group["betas"]
            fused = _C._fused_adamw_ if group["decoupled_weight_decay"] else _C._fused_adam_
            ps, grads, exp_avgs, exp_avg_sqs, maxes = _as_real(
                params, [p.grad for p in params], [s["exp_avg"] for s in states],
                [s["exp_avg_sq"] for s in states],
                [s["max_exp_avg_sq"] for s in states] if group["amsgrad"] else [])
            with minitorch.no_grad():
                fused(
                    ps,
                    grads,
                    exp_avgs,
                    exp_avg_sqs,
                    maxes,
                    [s["step"] for s in states],
                    lr=float(_to_scalar(group["lr"])),
                    beta1=float(_to_scalar(beta1)),
                    beta2=float(_to_scalar(beta2)),
                    weight_decay=float(group["weight_decay"]),
                    eps=float(group["eps"]),
                    amsgrad=bool(group["amsgrad"]),
                    maximize=bool(group["maximize"]),
                )
        return loss

    def _state_of(self, p: minitorch.Tensor, amsgrad: bool) -> dict:
        """p's state, made on its first step: a float32 step count and zeroed moving averages."""
        state = self.state[p]
        if len(state) == 0:
            state["step"] = minitorch.tensor(0.0, dtype=minitorch.float32, device=p.device)
            state["exp_avg"] = minitorch.zeros_like(p)
            state["exp_avg_sq"] = minitorch.zeros_like(p)
            if amsgrad:
                state["max_exp_avg_sq"] = minitorch.zeros_like(p)
        return state
