"""optim.Rprop: resilient backpropagation, a step size per weight that grows while the gradient
keeps its sign and shrinks when it flips.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/rprop.py); state: "step" (a float32 CPU tensor), "prev", "step_size".
"""
from __future__ import annotations

from typing import Optional, Tuple

import minitorch

from .optimizer import ParamsT, _SingleTensorOptimizer, _check_options, _check_supported, _lr_of, _scalar_state

__all__ = ["Rprop"]


class Rprop(_SingleTensorOptimizer):
    """Implements the resilient backpropagation algorithm, as torch.optim.Rprop (foreach is
    accepted and ignored)."""

    _old_defaults = dict(foreach=None, maximize=False, differentiable=False, capturable=False)

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        etas: Tuple[float, float] = (0.5, 1.2),
        step_sizes: Tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: Optional[bool] = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_options(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        _check_supported(differentiable, capturable)
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        state["prev"] = minitorch.zeros_like(param)
        state["step_size"] = minitorch.full_like(param, float(_lr_of(group)))

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        prev, step_size = state["prev"], state["step_size"]
        sign = grad.mul(prev).sign()
        # etaplus where the sign held, etaminus where it flipped, 1 where either was 0
        factor = minitorch.where(sign.gt(0), minitorch.full_like(sign, etaplus),
                                 minitorch.where(sign.lt(0), minitorch.full_like(sign, etaminus), minitorch.ones_like(sign)))
        step_size.mul_(factor).clamp_(step_size_min, step_size_max)
        grad = minitorch.where(factor.eq(etaminus), minitorch.zeros_like(grad), grad)
        param.addcmul_(grad.sign(), step_size, value=-1)
        prev.copy_(grad)
