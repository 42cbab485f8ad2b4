"""optim.AdamW: Adam with decoupled weight decay (the parameter shrinks before the update)."""
from __future__ import annotations

from typing import Optional, Tuple

from .adam import Adam
from .optimizer import ParamsT

__all__ = ["AdamW"]


class AdamW(Adam):
    """Implements the AdamW algorithm, as torch.optim.AdamW: Adam whose weight decay does not
    pass through the moving averages."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: Optional[bool] = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: Optional[bool] = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        # Loading any state into AdamW keeps it AdamW.
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
