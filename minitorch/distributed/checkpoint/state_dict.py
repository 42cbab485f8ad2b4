"""distributed.checkpoint.state_dict: a model's and its optimizers' state keyed by the parameters'
canonical names (no DDP "module." nor FSDP "_fsdp_wrapped_module." in them), whatever wraps the
model, and the way back. The optimizer state is keyed by those names too ({"state": {name: ...},
"param_groups": [{..., "params": [names]}]}), so a checkpoint outlives the wrapping and the
number of ranks. An FSDP model's state (FSDP1's or fully_shard's) is its full state (PyTorch's
default is its sharded DTensor state, which minitorch has not; full_state_dict=True is PyTorch's
option for this one)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import minitorch
from minitorch import nn

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict", "get_state_dict",
           "set_model_state_dict", "set_optimizer_state_dict", "set_state_dict"]


@dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _unwrapped(model: nn.Module) -> nn.Module:
    """The model without DistributedDataParallel (whose names start with "module.")."""
    from minitorch.nn.parallel import DistributedDataParallel

    while isinstance(model, DistributedDataParallel):
        model = model.module
    return model


def _optims(optimizers) -> List[Any]:
    return list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]


def _offload(obj: Any) -> Any:
    if isinstance(obj, minitorch.Tensor):
        return obj.cpu()
    if isinstance(obj, dict):
        return {k: _offload(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_offload(v) for v in obj]
    return obj


def get_model_state_dict(model: nn.Module, *, submodules: Any = None,
                         options: Optional[StateDictOptions] = None) -> Dict[str, Any]:
    from minitorch.distributed.fsdp import FSDPModule

    options = options or StateDictOptions()
    inner = _unwrapped(model)
    if isinstance(inner, FSDPModule):  # fully_shard's: its full parameters, gathered
        with inner._full_state():
            sd = {k: v.clone() for k, v in inner.state_dict().items()}
    else:
        sd = dict(inner.state_dict())
    if options.ignore_frozen_params:
        frozen = {name for name, p in inner.named_parameters() if not p.requires_grad}
        sd = {k: v for k, v in sd.items() if k not in frozen}
    return _offload(sd) if options.cpu_offload else sd


def _init_optim_state(optim) -> None:
    """Gives an optimizer that never stepped its state (as PyTorch's helper does: one step of zero
    gradients at learning rate 0), so that a checkpoint can be loaded into it in place."""
    if optim.state:
        return
    params = [p for g in optim.param_groups for p in g["params"] if p.requires_grad]
    if any(p.grad is not None for p in params):
        raise RuntimeError("state_dict can only be used if the optimizer states are initialized (usually after "
                           "one step() with gradients) or gradients are None. For the later case, state_dict "
                           "will fake the gradients as zero to initialize the optimizer states. However, the "
                           "gradients are not None.")
    lrs = [g["lr"] for g in optim.param_groups]
    for g in optim.param_groups:
        g["lr"] = 0.0
    for p in params:
        p.grad = minitorch.zeros_like(p)
    optim.step()
    for g, lr in zip(optim.param_groups, lrs):
        g["lr"] = lr
    optim.zero_grad(set_to_none=True)


def get_optimizer_state_dict(model: nn.Module, optimizers, *, submodules: Any = None,
                             options: Optional[StateDictOptions] = None) -> Dict[str, Any]:
    from minitorch.distributed.fsdp._optim_utils import full_optim_state_dict

    options = options or StateDictOptions()
    inner = _unwrapped(model)
    out: Dict[str, Any] = {"state": {}, "param_groups": []}
    for optim in _optims(optimizers):
        _init_optim_state(optim)
        one = full_optim_state_dict(inner, optim)
        out["state"].update(one["state"])
        out["param_groups"].extend(one["param_groups"])
    return _offload(out) if options.cpu_offload else out


def get_state_dict(model: nn.Module, optimizers, *, submodules: Any = None,
                   options: Optional[StateDictOptions] = None) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(the model's state, its optimizers' state), keyed by the parameters' names."""
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_model_state_dict(model: nn.Module, model_state_dict: Dict[str, Any], *,
                         options: Optional[StateDictOptions] = None):
    from minitorch.distributed.fsdp import FSDPModule

    options = options or StateDictOptions()
    inner = _unwrapped(model)
    if isinstance(inner, FSDPModule):  # loaded into the full parameters, kept in the shards
        with inner._full_state(writeback=True):
            return inner.load_state_dict(model_state_dict, strict=options.strict)
    return inner.load_state_dict(model_state_dict, strict=options.strict)


def set_optimizer_state_dict(model: nn.Module, optimizers, optim_state_dict: Dict[str, Any], *,
                             options: Optional[StateDictOptions] = None) -> None:
    from minitorch.distributed.fsdp._optim_utils import _owners, sharded_optim_state_dict

    inner = _unwrapped(model)
    owners = _owners(inner)
    for optim in _optims(optimizers):
        _init_optim_state(optim)
        # this optimizer's groups: those with its groups' parameters (in any order: the flat
        # parameters of FSDP order them by unit)
        names = [frozenset(n for p in g["params"] for n in owners[id(p)][2]) for g in optim.param_groups]
        groups = [g for g in optim_state_dict["param_groups"] if frozenset(g["params"]) in names]
        if len(groups) != len(names):
            raise ValueError("optim_state_dict's param_groups do not match the optimizer's parameters")
        groups.sort(key=lambda g: names.index(frozenset(g["params"])))
        mine = set().union(*names)
        full = {"state": {k: v for k, v in optim_state_dict["state"].items() if k in mine}, "param_groups": groups}
        optim.load_state_dict(sharded_optim_state_dict(inner, optim, full))


def set_state_dict(model: nn.Module, optimizers, *, model_state_dict: Dict[str, Any],
                   optim_state_dict: Dict[str, Any], options: Optional[StateDictOptions] = None):
    """Loads both; returns the model's load_state_dict result (missing and unexpected keys)."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
