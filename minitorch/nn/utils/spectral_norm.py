"""The legacy nn.utils.spectral_norm/remove_spectral_norm, as PyTorch's: the weight divided by
its largest singular value, estimated by power iteration (in training) on buffers weight_u and
weight_v; the parameter becomes weight_orig, so state dicts match PyTorch's."""
from __future__ import annotations

from typing import Any, Optional

import minitorch
import minitorch.nn.functional as F
from minitorch.nn.modules.module import Module

from .weight_norm import _remove_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _reshape_weight_to_matrix(weight, dim: int):
    """The weight as a (size of dim, everything else) matrix."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.size(0), -1)


class SpectralNorm:
    _version: int = 1

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        return _reshape_weight_to_matrix(weight, self.dim)

    def compute_weight(self, module: Module, do_power_iteration: bool):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with minitorch.no_grad():
                for _ in range(self.n_power_iterations):
                    # in place, as PyTorch's out=: the buffers carry the iteration across calls
                    v.copy_(F.normalize(minitorch.mv(weight_mat.t(), u), dim=0, eps=self.eps))
                    u.copy_(F.normalize(minitorch.mv(weight_mat, v), dim=0, eps=self.eps))
                u = u.clone()
                v = v.clone()
        sigma = minitorch.dot(u, minitorch.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with minitorch.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, minitorch.nn.Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int, eps: float) -> "SpectralNorm":
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with minitorch.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: Optional[int] = None) -> Module:
    # dim 1 for transposed convolutions, which minitorch does not have yet
    SpectralNorm.apply(module, name, n_power_iterations, 0 if dim is None else dim, eps)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    return _remove_hook(module, SpectralNorm, name, "spectral_norm")
