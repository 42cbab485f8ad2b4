"""optim.Muon: momentum SGD whose update is orthogonalised, for the 2-D weights of hidden layers.

Each step blends the gradient into a momentum buffer, takes the Nesterov look-ahead (or the buffer
itself), and replaces that matrix by an approximately orthogonal one of the same singular vectors:
a few Newton-Schulz iterations of the quintic p(X) = aX + b(XX^T)X + c(XX^T)^2 X, run in bfloat16
as PyTorch's does, after scaling X to a Frobenius (hence spectral) norm of at most one. The wide
orientation is iterated (a tall matrix is transposed first) so that the Gram matrix is the small
one. The learning rate is scaled by the matrix's shape so that updates of rectangular weights
have comparable size. State per parameter: "momentum_buffer" only (no step count).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple

import minitorch

from .optimizer import Optimizer, ParamsT

__all__ = ["Muon"]

# The quintic's coefficients and the iteration count of Keller Jordan's Muon, PyTorch's defaults.
_NS_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
_NS_STEPS = 5
_EPS = 1e-7


def _orthogonalize(update: minitorch.Tensor, coefficients: Tuple[float, float, float], steps: int,
                   eps: float) -> minitorch.Tensor:
    """The Newton-Schulz approximation of U V^T for update = U S V^T (its singular values land
    near one, roughly in [0.5, 1.5], which is all the method needs)."""
    if steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if update.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coefficients
    tall = update.size(0) > update.size(1)
    x = update.bfloat16()
    if tall:
        x = x.T
    x.div_(x.norm().clamp(min=eps))
    for _ in range(steps):
        gram = x @ x.T
        poly = minitorch.addmm(gram, gram, gram, beta=b, alpha=c)  # b G + c G^2
        x = minitorch.addmm(x, poly, x, beta=a)  # a X + (b G + c G^2) X
    return x.T if tall else x


def _shape_scaled_lr(lr: float, adjust_lr_fn: Optional[str], shape: Any) -> float:
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":  # Moonshot's scaling: the update's RMS as AdamW's
        return lr * 0.2 * math.sqrt(max(rows, cols))
    return lr


class Muon(Optimizer):
    """Implements Muon, as torch.optim.Muon. Only 2-D parameters: optimise biases, embeddings and
    norms' weights with another optimizer (AdamW, say)."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        momentum: float = 0.95,
        nesterov: bool = True,
        ns_coefficients: Tuple[float, float, float] = _NS_COEFFICIENTS,
        eps: float = _EPS,
        ns_steps: int = _NS_STEPS,
        adjust_lr_fn: Optional[str] = None,
    ) -> None:
        if isinstance(lr, minitorch.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {
            "lr": lr,
            "weight_decay": weight_decay,
            "momentum": momentum,
            "nesterov": nesterov,
            "ns_coefficients": ns_coefficients,
            "eps": eps,
            "ns_steps": ns_steps,
            "adjust_lr_fn": adjust_lr_fn,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(
                        f"Muon only supports 2D parameters whereas we found a parameter with size: {p.size()}")

    def step(self, closure: Optional[Callable[[], Any]] = None) -> Optional[Any]:
        """Performs a single optimization step."""
        loss = self._closure_loss(closure)
        with minitorch.no_grad():
            for group, params in self._groups_with_grads():
                lr = float(group["lr"])
                momentum = group["momentum"]
                for param in params:
                    grad = param.grad
                    if param.is_complex():
                        raise RuntimeError("Muon does not support complex parameters")
                    if grad.is_sparse:
                        raise RuntimeError("Muon does not support sparse gradients")
                    if grad.ndim != 2:
                        raise ValueError("Param gradient must be a 2D matrix")
                    state = self.state[param]
                    if "momentum_buffer" not in state:
                        state["momentum_buffer"] = minitorch.zeros_like(grad)
                    buf = state["momentum_buffer"]
                    buf.lerp_(grad, 1 - momentum)
                    update = grad.lerp(buf, momentum) if group["nesterov"] else buf
                    update = _orthogonalize(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
                    param.mul_(1 - lr * group["weight_decay"])
                    param.add_(update, alpha=-_shape_scaled_lr(lr, group["adjust_lr_fn"], param.shape))
        return loss
