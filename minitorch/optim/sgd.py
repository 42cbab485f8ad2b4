"""optim.SGD: stochastic gradient descent, with momentum, dampening, Nesterov and weight decay.

The update of every parameter of a group is one op, _fused_sgd_ (two on a step where some
momentum buffers start), with PyTorch's formula, on the parameters' device; the momentum buffers
are made here, once, and updated in place by the op.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import minitorch
from minitorch import _C

from . import _sparse
from .optimizer import Optimizer, ParamsT, _as_real, _check_supported, _to_scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """Implements stochastic gradient descent (optionally with momentum), as torch.optim.SGD.

    foreach and fused are accepted and ignored: the update is always one fused C call, but for
    a parameter with a sparse gradient (optim/_sparse.py).
    """

    _sparse_grad_error = None

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: Optional[bool] = None,
        differentiable: bool = False,
        fused: Optional[bool] = None,
    ) -> None:
        if isinstance(lr, minitorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        _check_supported(differentiable)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._group_defaults(nesterov=False, maximize=False, foreach=None, differentiable=False,
                             fused=False)

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Optional[Any]:
        """Performs a single optimization step."""
        loss = self._closure_loss(closure)
        for group, params in self._groups_with_grads():
            # The op takes one is_first_step for all its parameters, as PyTorch's fused SGD:
            # those whose momentum buffer is new (it starts as the gradient) go in a call of
            # their own.
            calls = {False: ([], []), True: ([], [])}
            for p in params:
                if p.grad.is_sparse:  # embedding(sparse=True): PyTorch's single-tensor update
                    with minitorch.no_grad():
                        _sparse.sgd(p, p.grad, self.state[p], group, float(_to_scalar(group["lr"])))
                    continue
                first, buf = False, None
                if group["momentum"] != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    first = buf is None
                    if first:
                        buf = state["momentum_buffer"] = minitorch.zeros_like(p)
                calls[first][0].append(p)
                if buf is not None:
                    calls[first][1].append(buf)
            for first, (ps, bufs) in calls.items():
                if not ps:
                    continue
                ps, grads, bufs = _as_real(ps, [p.grad for p in ps], bufs)
                with minitorch.no_grad():
                    _C._fused_sgd_(
                        ps,
                        grads,
                        bufs,
                        weight_decay=float(group["weight_decay"]),
                        momentum=float(group["momentum"]),
                        lr=float(_to_scalar(group["lr"])),
                        dampening=float(group["dampening"]),
                        nesterov=bool(group["nesterov"]),
                        maximize=bool(group["maximize"]),
                        is_first_step=first,
                    )
        return loss
