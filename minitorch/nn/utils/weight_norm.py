"""The legacy nn.utils.weight_norm/remove_weight_norm, as PyTorch's: the weight becomes
weight_g * weight_v / ||weight_v|| (norm over every dim but `dim`), recomputed by a forward
pre-hook; parameters weight_g and weight_v, so state dicts match PyTorch's."""
from __future__ import annotations

import warnings
from typing import Any, Callable

import minitorch
from minitorch.nn.modules.module import Module
from minitorch.nn.parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_except_dim(v, dim: int):
    """torch.norm_except_dim(v, 2, dim): the 2-norm over every dim but `dim`, kept as size-1 dims
    (over everything, 0-dim, for dim=-1)."""
    if dim == -1:
        return v.norm()
    dims = [d for d in range(v.dim()) if d != dim]
    return minitorch.linalg.vector_norm(v, 2, dim=dims, keepdim=True) if dims else v.abs()


def _weight_norm(v, g, dim: int):
    """torch._weight_norm: v * (g / ||v||)."""
    return v * (g / _norm_except_dim(v, dim))


class WeightNorm:
    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> "WeightNorm":
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    WeightNorm.apply(module, name, dim)
    return module


def _undo_pre_hook(module: Module, cls: type, name_of: Callable[[Any], str], name: str) -> bool:
    """Finds module's forward pre-hook of cls acting on `name` (name_of(hook)), lets it restore the
    tensor (hook.remove(module)) and drops it; False if there is none. weight_norm, spectral_norm
    and prune undo themselves so."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, cls) and name_of(hook) == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return True
    return False


def _remove_hook(module: Module, cls: type, name: str, what: str) -> Module:
    """Undoes a legacy weight_norm/spectral_norm: finds its forward pre-hook, restores the weight."""
    if not _undo_pre_hook(module, cls, lambda hook: hook.name, name):
        raise ValueError(f"{what} of '{name}' not found in {module}")
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    return _remove_hook(module, WeightNorm, name, "weight_norm")
