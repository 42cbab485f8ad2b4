"""distributed.checkpoint.state_dict: a model's and its optimizers' state keyed by the parameters'
canonical names (no DDP "module." nor FSDP "_fsdp_wrapped_module." in them), whatever wraps the
model, and the way back. The optimizer state is keyed by those names too ({"state": {name: ...},
"param_groups": [{..., "params": [names]}]}), so a checkpoint outlives the wrapping and the
number of ranks. An FSDP model's state is sharded by default, as PyTorch's: its parameters (and
their per-element optimizer state) are DTensors (fully_shard's own; FSDP1's gathered and chunked
on dim 0), which distributed.checkpoint saves from every rank; full_state_dict=True gives the full
tensors instead. Setting takes either form."""
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


def _fsdp1(model: nn.Module) -> bool:
    from minitorch.distributed.fsdp import FullyShardedDataParallel

    return isinstance(model, FullyShardedDataParallel)


def _full(obj: Any) -> Any:
    """obj with its DTensors gathered into full tensors (in dicts and lists too)."""
    from minitorch.distributed.tensor import DTensor

    if isinstance(obj, DTensor):
        return obj.full_tensor()
    if isinstance(obj, dict):
        return {k: _full(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_full(v) for v in obj]
    return obj


def _fsdp1_mesh(model: nn.Module):
    """A 1-D DeviceMesh over an FSDP1 model's sharding group (no new process group)."""
    from minitorch.distributed.device_mesh import DeviceMesh

    pg = model.process_group
    device = next(iter(model.parameters()), minitorch.empty(0)).device.type
    return DeviceMesh(device, list(pg._ranks), _groups=[pg])


def _sharded(t, mesh):
    """t (the same full tensor on every rank) as a DTensor sharded on dim 0 (no communication)."""
    from minitorch.distributed.tensor import Replicate, Shard, distribute_tensor

    return distribute_tensor(t, mesh, [Shard(0) if t.dim() else Replicate()], src_data_rank=None)


def get_model_state_dict(model: nn.Module, *, submodules: Any = None,
                         options: Optional[StateDictOptions] = None) -> Dict[str, Any]:
    """The model's state under its parameters' names: sharded (DTensors) for an FSDP model, the
    full tensors with options.full_state_dict."""
    options = options or StateDictOptions()
    inner = _unwrapped(model)
    if _fsdp1(inner):  # its full state, gathered; sharded again as DTensors unless full is asked
        sd = dict(inner.state_dict())
        if not options.full_state_dict:
            from minitorch.distributed.fsdp.fully_sharded_data_parallel import _clean

            mesh = _fsdp1_mesh(inner)
            buffers = {_clean(name) for name, _ in nn.Module.named_buffers(inner)}
            sd = {k: (_sharded(v, mesh) if k not in buffers and isinstance(v, minitorch.Tensor) else v)
                  for k, v in sd.items()}
    else:
        sd = dict(inner.state_dict())
    if options.full_state_dict:
        sd = {k: _full(v) for k, v in sd.items()}
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
    """The optimizers' state keyed by the parameters' names: a sharded parameter's per-element
    state is a DTensor laid out as it is (an FSDP1 model's: chunked on dim 0), unless
    options.full_state_dict."""
    from minitorch.distributed.fsdp._optim_utils import full_optim_state_dict

    options = options or StateDictOptions()
    inner = _unwrapped(model)
    out: Dict[str, Any] = {"state": {}, "param_groups": []}
    for optim in _optims(optimizers):
        _init_optim_state(optim)
        one = full_optim_state_dict(inner, optim)
        out["state"].update(one["state"])
        out["param_groups"].extend(one["param_groups"])
    if options.full_state_dict:
        out["state"] = _full(out["state"])
    elif _fsdp1(inner):
        out["state"] = _sharded_optim_state(inner, out["state"])
    return _offload(out) if options.cpu_offload else out


def _sharded_optim_state(model: nn.Module, state: Dict[str, Any]) -> Dict[str, Any]:
    """An FSDP1 model's full optimizer state (by name) with each per-element tensor (of its
    parameter's shape) a DTensor chunked on dim 0, as the model's sharded state dict is."""
    from minitorch.distributed.fsdp import FullyShardedDataParallel, StateDictType

    mesh = _fsdp1_mesh(model)
    with FullyShardedDataParallel.state_dict_type(model, StateDictType.FULL_STATE_DICT):
        shapes = {name: tuple(v.shape) for name, v in model.state_dict().items()}
    return {name: {k: (_sharded(v, mesh) if isinstance(v, minitorch.Tensor) and v.dim()
                       and tuple(v.shape) == shapes.get(name) else v) for k, v in st.items()}
            for name, st in state.items()}


def get_state_dict(model: nn.Module, optimizers, *, submodules: Any = None,
                   options: Optional[StateDictOptions] = None) -> Tuple[Dict[str, Any], Dict[str, Any]]:
    """(the model's state, its optimizers' state), keyed by the parameters' names."""
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def _as_layout(value: Any, like: Any) -> Any:
    """value in like's form: laid out as like when like is a DTensor (a full tensor chunked, a
    DTensor redistributed by copy_), the full tensor when like is a plain one."""
    from minitorch.distributed.tensor import DTensor

    if isinstance(like, DTensor) and isinstance(value, minitorch.Tensor) and not isinstance(value, DTensor):
        from minitorch.distributed.tensor import distribute_tensor

        return distribute_tensor(value.to(like.to_local().device), like.device_mesh, like.placements,
                                 src_data_rank=None)
    if isinstance(value, DTensor) and not isinstance(like, DTensor):
        return value.full_tensor()
    return value


def set_model_state_dict(model: nn.Module, model_state_dict: Dict[str, Any], *,
                         options: Optional[StateDictOptions] = None):
    """Loads model_state_dict (sharded or full, whatever the model's layout) into the model."""
    options = options or StateDictOptions()
    inner = _unwrapped(model)
    if _fsdp1(inner):  # loaded whole (FULL_STATE_DICT), each rank keeping its shard
        return inner.load_state_dict({k: _full(v) for k, v in model_state_dict.items()}, strict=options.strict)
    own = {**dict(inner.named_parameters()), **dict(inner.named_buffers())}
    return inner.load_state_dict({k: _as_layout(v, own.get(k)) for k, v in model_state_dict.items()},
                                 strict=options.strict)


def set_optimizer_state_dict(model: nn.Module, optimizers, optim_state_dict: Dict[str, Any], *,
                             options: Optional[StateDictOptions] = None) -> None:
    from minitorch.distributed.fsdp._optim_utils import _numbered, _owners, sharded_optim_state_dict

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
        params = {n: p for p in _numbered(optim) for n in owners[id(p)][2]}
        state = {}
        for k, v in optim_state_dict["state"].items():
            if k in mine:  # FSDP1's state is split from the full one; a DTensor parameter's is laid out as it
                like = params[k] if owners[id(params[k])][0] is None else None
                state[k] = {key: (_as_layout(x, like) if isinstance(x, minitorch.Tensor) and x.dim() else _full(x))
                            for key, x in v.items()}
        full = {"state": state, "param_groups": groups}
        optim.load_state_dict(sharded_optim_state_dict(inner, optim, full))


def set_state_dict(model: nn.Module, optimizers, *, model_state_dict: Dict[str, Any],
                   optim_state_dict: Dict[str, Any], options: Optional[StateDictOptions] = None):
    """Loads both; returns the model's load_state_dict result (missing and unexpected keys)."""
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
