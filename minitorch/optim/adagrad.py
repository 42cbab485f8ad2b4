"""optim.Adagrad: each coordinate's step is scaled by the root of its sum of squared gradients.

Written in Python with tensor ops, as PyTorch's single-tensor implementation
(torch/optim/adagrad.py): the state ("step", a float32 CPU tensor, and "sum") is made for every
parameter when the optimizer is built, as PyTorch does.
"""
from __future__ import annotations

from typing import Optional

import minitorch

from . import _sparse
from .optimizer import ParamsT, _SingleTensorOptimizer, _check_options, _check_supported, _lr_of, _scalar_state

__all__ = ["Adagrad"]


class Adagrad(_SingleTensorOptimizer):
    """Implements the Adagrad algorithm, as torch.optim.Adagrad (foreach and fused are accepted
    and ignored); a sparse gradient updates only its entries (optim/_sparse.py)."""

    _sparse_grad_error = None

    _old_defaults = dict(foreach=None, maximize=False, differentiable=False, fused=None)

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: Optional[bool] = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: Optional[bool] = None,
    ) -> None:
        _check_options(lr, ("lr_decay", lr_decay), ("weight_decay", weight_decay),
                       ("initial_accumulator_value", initial_accumulator_value), ("epsilon", eps))
        _check_supported(differentiable)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:  # the state is made at once, as PyTorch's
            for p in group["params"]:
                self._init_state(self.state[p], p, group)

    def share_memory(self) -> None:
        """Moves the accumulators to shared memory (where minitorch has it)."""
        for group in self.param_groups:
            for p in group["params"]:
                s = self.state[p]["sum"]
                if hasattr(s, "share_memory_"):
                    s.share_memory_()

    def _init_state(self, state: dict, param: minitorch.Tensor, group: dict) -> None:
        state["step"] = _scalar_state(0.0)
        state["sum"] = minitorch.full_like(param, group["initial_accumulator_value"])

    def _update(self, group: dict, param: minitorch.Tensor, grad: minitorch.Tensor, state: dict, step: float) -> None:
        if group["weight_decay"] != 0:
            if grad.is_sparse:
                raise RuntimeError("weight_decay option is not compatible with sparse gradients")
            grad = grad.add(param, alpha=group["weight_decay"])
        clr = _lr_of(group) / (1 + (step - 1) * group["lr_decay"])
        if grad.is_sparse:
            return _sparse.adagrad(param, grad, state["sum"], clr, group["eps"])
        state["sum"].addcmul_(grad, grad, value=1)
        std = state["sum"].sqrt().add_(group["eps"])
        param.addcdiv_(grad, std, value=-clr)
