"""FSDP2's fully_shard(module): shards module's own parameters (those not in a submodule that
fully_shard was applied to before) in place, each becoming a DTensor sharded over the mesh on
dim 0 (or the dim shard_placement_fn gives it) and registered under its name (_fsdp_param_group.py), and gives module's class the
FSDPModule methods (its class becomes FSDP<Name>). Forward hooks gather a module's parameters
before its forward (in mp_policy.param_dtype, the inputs cast to it) and free them after it
(reshard_after_forward; never for the root, the outermost module whose forward runs); backward
reduce-scatters each module's gradient (in mp_policy.reduce_dtype) into the DTensors' gradients.
state_dict() gives the DTensors (a sharded state dict, as PyTorch's)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

import minitorch
from minitorch import nn
from minitorch.distributed.fsdp._flat_param import saved_full_views
from minitorch.distributed.fsdp._fsdp_param_group import FSDPParamGroup

__all__ = ["CPUOffloadPolicy", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "UnshardHandle", "fully_shard"]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """param_dtype: the dtype forward and backward compute in (the gathered parameters'; the
    floating-point inputs cast to it when cast_forward_inputs); reduce_dtype: the gradients'
    reduce-scatter's (param_dtype's when None); output_dtype: the forward outputs'."""

    param_dtype: Optional[Any] = None
    reduce_dtype: Optional[Any] = None
    output_dtype: Optional[Any] = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """No offloading."""


@dataclass
class CPUOffloadPolicy(OffloadPolicy):
    """The sharded parameters, their gradients and so the optimizer step on the CPU; the gathered
    parameters on the mesh's device."""

    pin_memory: bool = True


class UnshardHandle:
    """What unshard(async_op=True) gives: wait() finishes the all-gathers it issued (the
    modules' parameters are the full ones after it)."""

    def __init__(self, groups: Optional[List[FSDPParamGroup]] = None) -> None:
        self._groups = groups

    def wait(self) -> None:
        if self._groups is not None:
            for g in self._groups:
                g.wait_for_unshard()
            self._groups = None


class FSDPModule:
    """What fully_shard adds to a module's class."""

    def _fsdp_groups(self) -> List[FSDPParamGroup]:
        return [m._fsdp_group for m in self.modules() if isinstance(m, FSDPModule) and m._fsdp_group is not None]

    def reshard(self) -> None:
        """Frees the full parameters gathered by unshard()."""
        if self._fsdp_group is not None:
            self._fsdp_group.reshard()

    def unshard(self, async_op: bool = False) -> Optional["UnshardHandle"]:
        """Gathers the full parameters now; with async_op, issues the all-gather and returns a
        handle whose wait() finishes it (the next forward does, when nobody waited). The forward
        takes the gathered values without gathering again."""
        group = self._fsdp_group
        if group is None:
            return UnshardHandle() if async_op else None
        group.start_unshard()
        if async_op:
            return UnshardHandle([group])
        group.wait_for_unshard()
        return None

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *, recurse: bool = True) -> None:
        """False: backward keeps the gradients unreduced (gradient accumulation), until a backward
        with it True reduces them with its own."""
        for m in (self.modules() if recurse else [self]):
            if isinstance(m, FSDPModule) and m._fsdp_group is not None:
                m._fsdp_group.no_sync = not requires_gradient_sync

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True) -> None:
        for m in (self.modules() if recurse else [self]):
            if isinstance(m, FSDPModule):
                m._fsdp_reshard_after_forward = reshard_after_forward


_classes: Dict[type, type] = {}
_root_forward: List[Any] = []  # the root module's saved-tensor hooks while its forward runs


def _cast(obj: Any, dtype) -> Any:
    from minitorch.distributed.fsdp.fully_sharded_data_parallel import _cast_floats

    return obj if dtype is None else _cast_floats(obj, dtype)


def _pre_forward(module: nn.Module, args: Any) -> Any:
    if not _root_forward:  # the outermost: the root, which sets the saved-tensor hooks for all
        groups = module._fsdp_groups()
        for m in module.modules():
            if isinstance(m, FSDPModule) and m._fsdp_group is not None:
                m._fsdp_group.reshard_after_forward = m is not module and bool(m._fsdp_reshard_after_forward)
        hooks = saved_full_views(groups) if minitorch.is_grad_enabled() else contextlib.nullcontext()
        hooks.__enter__()
        _root_forward.append((module, hooks))
    if module._fsdp_group is not None:
        module._fsdp_group.unshard()
    mp = module._fsdp_mp_policy
    if mp.cast_forward_inputs and mp.param_dtype is not None:
        return _cast(args, mp.param_dtype)
    return None


def _post_forward(module: nn.Module, args: Any, output: Any) -> Any:
    g = module._fsdp_group
    if g is not None and (g.reshard_after_forward or g.full is None or not g.full.requires_grad):
        g.reshard()
    if _root_forward and _root_forward[-1][0] is module:
        _root_forward.pop()[1].__exit__(None, None, None)
    return _cast(output, module._fsdp_mp_policy.output_dtype)


def fully_shard(module: nn.Module, *, mesh: Any = None, reshard_after_forward: bool = True,
                shard_placement_fn: Any = None, mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),
                offload_policy: OffloadPolicy = OffloadPolicy(), ignored_params: Any = None) -> nn.Module:
    """Shards module's own parameters over mesh (a 1-D DeviceMesh, or 2-D: replicated along the
    first dimension, sharded along the second; the world by default); returns module."""
    from minitorch import distributed as dist
    from minitorch.distributed.device_mesh import init_device_mesh
    from minitorch.distributed.fsdp.fully_sharded_data_parallel import _own_params

    if isinstance(module, FSDPModule):
        raise ValueError(f"fully_shard was applied to this module already: {type(module).__name__}")
    if not isinstance(reshard_after_forward, bool):
        raise NotImplementedError("minitorch's fully_shard takes reshard_after_forward as a bool only")
    if mesh is None:
        world = dist._require_init().size()
        ref = next(module.parameters(), None)
        mesh = init_device_mesh(ref.device.type if ref is not None else "cpu", (world,))
    if mesh.ndim not in (1, 2):
        raise ValueError(f"fully_shard expects a 1D or 2D DeviceMesh but got {mesh}")
    found, aliases = _own_params(module, FSDPModule)
    ignored = {id(p) for p in (ignored_params or ())}
    kept = [f for f in found if id(f[3]) not in ignored]
    dims = [_shard_dim(p, shard_placement_fn, mesh) for _, _, _, p in kept]
    index = {id(f[3]): k for k, f in enumerate(kept)}
    aliases = [(m, n, index[id(found[i][3])]) for m, n, i in aliases if id(found[i][3]) in index]
    group = (FSDPParamGroup(kept, aliases, mesh, mp_policy, isinstance(offload_policy, CPUOffloadPolicy), dims)
             if kept else None)
    cls = type(module)
    if cls not in _classes:
        _classes[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    module.__class__ = _classes[cls]
    module._fsdp_group = group
    module._fsdp_mesh = mesh
    module._fsdp_mp_policy = mp_policy
    module._fsdp_reshard_after_forward = reshard_after_forward
    module.register_forward_pre_hook(_pre_forward)
    module.register_forward_hook(_post_forward, always_call=True)
    return module



def _shard_dim(param: Any, shard_placement_fn: Any, mesh: Any) -> int:
    """The dim param is sharded on: shard_placement_fn(param)'s Shard (Shard(0) when it gives
    None or there is none), checked as PyTorch's FSDPParam checks it."""
    from minitorch.distributed.tensor import Shard

    placement = shard_placement_fn(param) if shard_placement_fn is not None else None
    if placement is None:
        return 0
    if not isinstance(placement, Shard):
        raise AssertionError(f"Expected Shard, got {type(placement)}: {placement}")
    dim = placement.dim + param.dim() if placement.dim < 0 else placement.dim
    if not 0 <= dim < param.dim():
        raise AssertionError(f"Shard dim {dim} is invalid for {param.dim()}D tensor: {param.shape}")
    world = mesh.size(mesh.ndim - 1)
    if dim > 0 and param.shape[dim] % world != 0:
        raise NotImplementedError(f"FSDP does not support uneven sharding on dim {dim}: {param.shape} "
                                  f"(world size: {world})")
    return dim
