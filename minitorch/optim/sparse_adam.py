"""optim.SparseAdam: Adam for parameters whose gradients are sparse (an Embedding with sparse=True),
moving only the moments of the rows that have gradient.

minitorch's autograd makes dense gradients only (minitorch.sparse keeps no sparse .grad), so, as
PyTorch's SparseAdam does for a dense gradient, step() refuses every parameter that has one and
points to Adam. The constructor and the state_dict are PyTorch's, so a script that builds one
(and steps only parameters without gradients) runs unchanged.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import minitorch

from .optimizer import Optimizer, ParamsT

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """torch.optim.SparseAdam's arguments and checks; step() raises for a dense gradient."""

    def __init__(self, params: ParamsT, lr: Any = 1e-3, betas: Tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, minitorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i in (0, 1):
            if not 0.0 <= betas[i] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {betas[i]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        complex_at = [[g, i] for g, group in enumerate(self.param_groups)
                      for i, p in enumerate(group["params"]) if p.is_complex()]
        if complex_at:
            raise ValueError(f"Complex params at indices {complex_at}: SparseAdam does not support complex parameters")

    @minitorch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = None
        if closure is not None:
            with minitorch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    # every minitorch gradient is dense (see the module's docstring)
                    raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
        return loss
