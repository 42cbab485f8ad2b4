"""FSDP2's fully_shard(module): shards module's own parameters (those not in a submodule that
fully_shard was applied to before) in place, as FSDP1's use_orig_params=True does (each parameter
stays registered under its name as this rank's 1-D piece of it: PyTorch's are DTensors of the full
shape, which minitorch has not), and gives module's class the FSDPModule methods (its class becomes
FSDP<Name>). Forward hooks gather a module's parameters before its forward and free them after it
(reshard_after_forward; never for the root, the outermost module whose forward runs); backward
reduce-scatters each module's gradient as FSDP1's units do (_flat_param.py)."""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional

import minitorch
from minitorch import distributed as dist
from minitorch import nn
from minitorch.distributed.fsdp._flat_param import FlatParamHandle, full_params, saved_full_views

__all__ = ["FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy", "fully_shard"]


@dataclass
class MixedPrecisionPolicy:
    param_dtype: Optional[Any] = None
    reduce_dtype: Optional[Any] = None
    output_dtype: Optional[Any] = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    pass


class FSDPModule:
    """What fully_shard adds to a module's class."""

    def _fsdp_handles(self) -> List[FlatParamHandle]:
        return [m._fsdp_handle for m in self.modules() if isinstance(m, FSDPModule) and m._fsdp_handle is not None]

    def reshard(self) -> None:
        """Frees the full parameters gathered by unshard()."""
        if self._fsdp_handle is not None:
            self._fsdp_handle.reshard()

    def unshard(self, async_op: bool = False) -> None:
        """Gathers the full parameters now (the next forward uses them)."""
        if self._fsdp_handle is not None:
            with minitorch.no_grad():
                self._fsdp_handle.unshard()

    def set_requires_gradient_sync(self, requires_gradient_sync: bool, *, recurse: bool = True) -> None:
        """False: backward keeps the gradients unreduced (gradient accumulation), as FSDP1's no_sync."""
        for m in (self.modules() if recurse else [self]):
            if isinstance(m, FSDPModule) and m._fsdp_handle is not None:
                m._fsdp_handle.no_sync = not requires_gradient_sync

    def set_reshard_after_forward(self, reshard_after_forward: bool, recurse: bool = True) -> None:
        for m in (self.modules() if recurse else [self]):
            if isinstance(m, FSDPModule):
                m._fsdp_reshard_after_forward = reshard_after_forward

    @contextlib.contextmanager
    def _full_state(self, writeback: bool = False) -> Iterator[None]:
        """Inside: the full parameters registered under their names (distributed.checkpoint's
        get_model_state_dict and set_model_state_dict; every rank calls it)."""
        with full_params(self._fsdp_handles(), writeback):
            yield


_classes: Dict[type, type] = {}
_root_forward: List[Any] = []  # the root module's saved-tensor hooks while its forward runs


def _pre_forward(module: nn.Module, args: Any) -> None:
    if not _root_forward:  # the outermost: the root, which sets the saved-tensor hooks for all
        handles = module._fsdp_handles()
        for m in module.modules():
            if isinstance(m, FSDPModule) and m._fsdp_handle is not None:
                m._fsdp_handle.reshard_after_forward = m is not module and m._fsdp_reshard_after_forward
        hooks = saved_full_views(handles) if minitorch.is_grad_enabled() else contextlib.nullcontext()
        hooks.__enter__()
        _root_forward.append((module, hooks))
    if module._fsdp_handle is not None:
        module._fsdp_handle.unshard()


def _post_forward(module: nn.Module, args: Any, output: Any) -> None:
    h = module._fsdp_handle
    if h is not None and (h.reshard_after_forward or h.full is None or not h.full.requires_grad):
        h.reshard()
    if _root_forward and _root_forward[-1][0] is module:
        _root_forward.pop()[1].__exit__(None, None, None)


def fully_shard(module: nn.Module, *, mesh: Any = None, reshard_after_forward: bool = True,
                shard_placement_fn: Any = None, mp_policy: MixedPrecisionPolicy = MixedPrecisionPolicy(),
                offload_policy: OffloadPolicy = OffloadPolicy(), ignored_params: Any = None) -> nn.Module:
    """Shards module's own parameters over mesh (a 1-D DeviceMesh, or 2-D: replicated along the
    first dimension, sharded along the second; the world by default); returns module."""
    from minitorch.distributed.fsdp.fully_sharded_data_parallel import _handle_of, _own_params

    if isinstance(module, FSDPModule):
        raise ValueError(f"fully_shard was applied to this module already: {type(module).__name__}")
    if mp_policy.param_dtype is not None or mp_policy.reduce_dtype is not None or ignored_params:
        raise NotImplementedError("minitorch's fully_shard has no mixed precision nor ignored_params")
    if mesh is None:
        pg, replicate = dist._require_init(), None
    elif mesh.ndim == 2:
        pg, replicate = mesh.get_group(1), mesh.get_group(0)
    else:
        pg, replicate = mesh.get_group(), None
    handle = _handle_of(module, _own_params(module, FSDPModule), pg, True, True, replicate)
    cls = type(module)
    if cls not in _classes:
        _classes[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
    module.__class__ = _classes[cls]
    module._fsdp_handle = handle
    module._fsdp_reshard_after_forward = reshard_after_forward
    module.register_forward_pre_hook(_pre_forward)
    module.register_forward_hook(_post_forward, always_call=True)
    return module
