"""The autograd Functions nn.Module uses, as torch/nn/modules/_functions.py: the identity that
full backward hooks put around a module's inputs and outputs."""
from __future__ import annotations

import threading
from typing import Callable

from minitorch.autograd.function import Function

_pending = threading.local()


class BackwardHookFunction(Function):
    """The tensors as they are (new views); in the backward, the callback given to `hooked`
    receives their gradients and may replace them. Its node is PyTorch's
    BackwardHookFunctionBackward, with an edge per tensor only, as PyTorch's."""

    @staticmethod
    def forward(ctx, *args):
        ctx.on_backward = _pending.on_backward
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return tuple(ctx.on_backward(grads))

    @classmethod
    def hooked(cls, on_backward: Callable, *tensors):
        """apply(*tensors), with on_backward(grads) -> grads called in the backward."""
        _pending.on_backward = on_backward
        try:
            return cls.apply(*tensors)
        finally:
            _pending.on_backward = None
