"""fuse_modules and fuse_modules_qat (torch.ao.quantization.fuse_modules): runs of submodules,
named by their dotted paths, replaced by one fused module (the first name) and nn.Identity (the
others), so that quantization treats conv + bn + relu as one layer."""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional

from minitorch import nn

from .fuser_method_mappings import get_fuser_method

__all__ = ["fuse_known_modules", "fuse_modules", "fuse_modules_qat"]


def _get_module(model: nn.Module, name: str) -> nn.Module:
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set_module(model: nn.Module, name: str, new: nn.Module) -> None:
    *parents, last = name.split(".")
    for part in parents:
        model = getattr(model, part)
    setattr(model, last, new)


def fuse_known_modules(mod_list: List[nn.Module], is_qat: bool,
                       additional_fuser_method_mapping: Optional[Dict[tuple, Callable]] = None) -> List[nn.Module]:
    """[the fused module, nn.Identity, ...] for mod_list; the first module's forward pre-hooks and
    the last one's forward hooks move to the fused module."""
    fused_method = get_fuser_method(tuple(type(m) for m in mod_list), additional_fuser_method_mapping)
    fused = fused_method(is_qat, *mod_list)
    for hook in mod_list[0]._forward_pre_hooks.values():
        fused.register_forward_pre_hook(hook)
    mod_list[0]._forward_pre_hooks.clear()
    for hook in mod_list[-1]._forward_hooks.values():
        fused.register_forward_hook(hook)
    mod_list[-1]._forward_hooks.clear()
    new_mods: List[nn.Module] = [fused]
    for _ in mod_list[1:]:
        identity = nn.Identity()
        identity.training = mod_list[0].training
        new_mods.append(identity)
    return new_mods


def _fuse_modules(model: nn.Module, modules_to_fuse: List[Any], is_qat: bool, inplace: bool,
                  fuser_func: Callable, fuse_custom_config_dict: Optional[dict]) -> nn.Module:
    if not inplace:
        model = copy.deepcopy(model)
    additional = (fuse_custom_config_dict or {}).get("additional_fuser_method_mapping", {})
    groups = modules_to_fuse if all(isinstance(m, list) for m in modules_to_fuse) else [modules_to_fuse]
    for names in groups:
        new_mods = fuser_func([_get_module(model, n) for n in names], is_qat, additional)
        for name, new in zip(names, new_mods):
            _set_module(model, name, new)
    return model


def fuse_modules(model: nn.Module, modules_to_fuse: List[Any], inplace: bool = False,
                 fuser_func: Callable = fuse_known_modules, fuse_custom_config_dict: Optional[dict] = None
                 ) -> nn.Module:
    """model (a copy unless inplace) with each list of names in modules_to_fuse (one list, or a
    list of lists) fused for inference: conv + bn (+ relu), conv + relu, linear + bn,
    linear + relu, bn + relu. The modules must be in eval mode when a batch norm is folded."""
    return _fuse_modules(model, modules_to_fuse, False, inplace, fuser_func, fuse_custom_config_dict)


def fuse_modules_qat(model: nn.Module, modules_to_fuse: List[Any], inplace: bool = False,
                     fuser_func: Callable = fuse_known_modules, fuse_custom_config_dict: Optional[dict] = None
                     ) -> nn.Module:
    """fuse_modules for quantization-aware training: batch norms are kept in the fused modules."""
    return _fuse_modules(model, modules_to_fuse, True, inplace, fuser_func, fuse_custom_config_dict)
