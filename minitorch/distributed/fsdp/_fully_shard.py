"""FSDP2's fully_shard(module): shards module's own parameters (those not in a submodule that
fully_shard was applied to before) in place, each becoming a DTensor sharded on dim 0 over the
mesh and registered under its name (_fsdp_param_group.py), and gives module's class the
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
    """What unshard(async_op=True) gives: wait() for the all-gather (done already here)."""

    def wait(self) -> None:
        return None


class FSDPModule:
    """What fully_shard adds to a module's class."""

    def _fsdp_groups(self) -> List[FSDPParamGroup]:
        return [m._fsdp_group for m in self.modules() if isinstance(m, FSDPModule) and m._fsdp_group is not None]

    def reshard(self) -> None:
        """Frees the full parameters gathered by unshard()."""
        if self._fsdp_group is not None:
            self._fsdp_group.reshard()

    def unshard(self, async_op: bool = False) -> Optional["UnshardHandle"]:
        """Gathers the full parameters now (the next forward uses them); with async_op, a handle
        whose wait() returns at once (minitorch gathers synchronously)."""
        if self._fsdp_group is not None:
            with minitorch.no_grad():
                self._fsdp_group.unshard()
        return UnshardHandle() if async_op else None

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
    if shard_placement_fn is not None:
        from minitorch.distributed.tensor import Shard

        for _, _, fqn, p in found:
            placement = shard_placement_fn(p)
            if placement is not None and placement != Shard(0):
                raise NotImplementedError(f"minitorch's fully_shard shards on dim 0 only, got {placement} for {fqn}")
    kept = [f for f in found if id(f[3]) not in ignored]
    index = {id(f[3]): k for k, f in enumerate(kept)}
    aliases = [(m, n, index[id(found[i][3])]) for m, n, i in aliases if id(found[i][3]) in index]
    group = (FSDPParamGroup(kept, aliases, mesh, mp_policy, isinstance(offload_policy, CPUOffloadPolicy))
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

