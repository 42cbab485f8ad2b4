"""FullyShardedDataParallel (FSDP1), as PyTorch's: a module whose parameters are flattened and
sharded across the ranks of a process group, each rank keeping 1/world of them (and so of their
gradients and optimizer state).

A wrapped module is one unit; auto_wrap_policy makes units of submodules first (bottom-up), so
that only one unit's full parameters need exist at a time. Each unit's forward all-gathers its
full parameters (_flat_param.py) and, under FULL_SHARD, frees them afterwards: the tensors that
backward saved from them are kept as views to gather again (saved-tensor hooks set by the root
unit). Backward reduce-scatters each unit's gradient as soon as it is complete (the all-gather's
backward), averaged over the ranks, as DDP's all-reduce averages it. The optimizer runs on the
shards (model.parameters()). state_dict() under FULL_STATE_DICT (the default) gathers the full
parameters under their original names, SHARDED_STATE_DICT the same as DTensors sharded on dim 0,
LOCAL_STATE_DICT each unit's local flat shard; summon_full_params gives them for a while.
CPUOffload(offload_params=True) keeps the shards (so the gradients and the optimizer step) on the
CPU, the gathered parameters on the module's device; ignored_modules stay whole and unsharded;
param_init_fn materializes the modules that have meta-device parameters (to_empty and
reset_parameters without it).
backward_prefetch, forward_prefetch and limit_all_gathers (schedules of the communication) are
accepted and change nothing: a unit gathers when its forward starts and when backward needs it.
"""
from __future__ import annotations

import contextlib
import math
from collections import OrderedDict
from typing import Any, Callable, Dict, Generator, Iterable, Iterator, List, Optional, Tuple

import minitorch
from minitorch import distributed as dist
from minitorch import nn
from minitorch.distributed.fsdp._flat_param import (FLAT_PARAM, FlatParamHandle, _ParamInfo, full_params,
                                                    saved_full_views)
from minitorch.distributed.fsdp.api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig,
                                            FullStateDictConfig, LocalStateDictConfig, MixedPrecision,
                                            OptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy,
                                            StateDictConfig, StateDictSettings, StateDictType)
from minitorch.distributed.fsdp.wrap import _as_policy, _recursive_wrap

__all__ = ["FullyShardedDataParallel"]

FSDP_WRAPPED_MODULE = "_fsdp_wrapped_module"
FSDP_PREFIX = FSDP_WRAPPED_MODULE + "."


def _clean(name: str) -> str:
    return name.replace(FSDP_PREFIX, "")


def _own_params(module: nn.Module, units: type = None, ignored=frozenset()):
    """The parameters of module's subtree outside nested units (FSDP instances, or instances of
    `units`) and outside ignored (ids of modules and parameters): (submodule, name, fqn, param)
    each, and the aliases of a parameter registered twice."""
    units = units or FullyShardedDataParallel
    found, aliases, seen = [], [], {}

    def walk(mod: nn.Module, prefix: str) -> None:
        if id(mod) in ignored:
            return
        for name, p in mod._parameters.items():
            if p is None or id(p) in ignored:
                continue
            if id(p) in seen:
                aliases.append((mod, name, seen[id(p)]))
                continue
            seen[id(p)] = len(found)
            found.append((mod, name, prefix + name, p))
        for cname, child in mod._modules.items():
            if child is not None and not isinstance(child, units):
                walk(child, prefix + cname + ".")

    walk(module, "")
    return found, aliases


def _check_flattenable(found, use_orig_params: bool) -> None:
    dtype, rg, device = None, None, None
    for _, _, _, p in found:
        if not p.is_floating_point():
            raise ValueError("Cannot flatten integer dtype tensors")
        if dtype is not None and p.dtype != dtype:
            raise ValueError(f"Must flatten tensors with uniform dtype but got {dtype} and {p.dtype}")
        if not use_orig_params and rg is not None and p.requires_grad != rg:
            raise ValueError("Must flatten tensors with uniform `requires_grad` when `use_orig_params=False`")
        if device is not None and p.device != device:
            raise ValueError(f"Must flatten tensors on the same device but got both {device} and {p.device}")
        dtype, rg, device = p.dtype, p.requires_grad, p.device


def _handle_of(module: nn.Module, own, pg, sharded: bool, use_orig_params: bool,
               replicate_pg=None, offload: bool = False) -> Optional[FlatParamHandle]:
    """The flat parameter of module's own parameters (own: _own_params'), None when it has none."""
    found, aliases = own
    if not found:
        return None
    _check_flattenable(found, use_orig_params)
    infos, offset = [], 0
    for mod, name, fqn, p in found:
        infos.append(_ParamInfo(mod, name, fqn, tuple(p.shape), offset, p.numel(), p.requires_grad))
        offset += p.numel()
    return FlatParamHandle(module, infos, [f[3] for f in found], aliases, pg, sharded, use_orig_params, replicate_pg,
                           offload)


class FullyShardedDataParallel(nn.Module):
    """Shards module's parameters across process_group's ranks (the world by default)."""

    def __init__(self, module: nn.Module, process_group: Any = None,
                 sharding_strategy: Optional[ShardingStrategy] = None, cpu_offload: Optional[CPUOffload] = None,
                 auto_wrap_policy: Optional[Callable] = None,
                 backward_prefetch: Optional[BackwardPrefetch] = BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision: Optional[MixedPrecision] = None, ignored_modules: Optional[Iterable] = None,
                 param_init_fn: Optional[Callable] = None, device_id: Any = None, sync_module_states: bool = False,
                 forward_prefetch: bool = False, limit_all_gathers: bool = True, use_orig_params: bool = False,
                 ignored_states: Any = None, device_mesh: Any = None) -> None:
        super().__init__()
        if isinstance(module, FullyShardedDataParallel):
            raise ValueError("FSDP auto wrapping requires modules to not already have FSDP applied but found "
                             f"the root module in\n{module}")
        if ignored_modules is not None and ignored_states is not None:
            raise ValueError("Cannot pass both ignored_modules and ignored_states at the same time. Please just "
                             "pass ignored_states.")
        ignored_list = list(ignored_modules if ignored_modules is not None else ignored_states or ())
        ignored = _ignored(module, ignored_list)
        _materialize(module, param_init_fn, ignored, device_id)
        offload = cpu_offload is not None and cpu_offload.offload_params
        strategy = ShardingStrategy.FULL_SHARD if sharding_strategy is None else sharding_strategy
        pg, replicate_pg = self._groups(process_group, device_mesh)
        if device_id is not None:
            module = module.to(minitorch.device(device_id) if not isinstance(device_id, int)
                               else minitorch.device("cuda", device_id))
        if sync_module_states:
            _broadcast_state(module, pg)
        kwargs = dict(process_group=(pg, replicate_pg) if replicate_pg is not None else pg,
                      sharding_strategy=strategy, use_orig_params=use_orig_params, mixed_precision=mixed_precision,
                      cpu_offload=cpu_offload, ignored_states=ignored_list or None)
        if auto_wrap_policy is not None:
            wrap_policy = _as_policy(auto_wrap_policy)

            def policy(module: nn.Module, recurse: bool, nonwrapped_numel: int) -> bool:
                return id(module) not in ignored and wrap_policy(module=module, recurse=recurse,
                                                                 nonwrapped_numel=nonwrapped_numel)

            for name, sub in module.named_modules():
                if isinstance(sub, FullyShardedDataParallel):
                    raise ValueError("FSDP auto wrapping requires modules to not already have FSDP applied but "
                                     f"found {name} in\n{module}")
            _recursive_wrap(module, policy, lambda m: FullyShardedDataParallel(m, **kwargs), only_wrap_children=True)
        self.add_module(FSDP_WRAPPED_MODULE, module)
        self.sharding_strategy = strategy
        self.process_group = pg
        self.rank, self.world_size = pg.rank(), pg.size()
        self._use_orig_params = use_orig_params
        self._is_root: Optional[bool] = None  # decided at the first forward: no FSDP above it
        self._in_forward = False
        self._summoned = False
        self._state_dict_type = StateDictType.FULL_STATE_DICT
        self._state_dict_config: StateDictConfig = FullStateDictConfig()
        self._optim_state_dict_config: OptimStateDictConfig = FullOptimStateDictConfig()
        for sub in module.modules():
            if isinstance(sub, FullyShardedDataParallel):
                sub._is_root = False
        self._handle = _handle_of(module, _own_params(module, ignored=ignored), pg,
                                  strategy != ShardingStrategy.NO_SHARD, use_orig_params, replicate_pg, offload)
        self.cpu_offload = cpu_offload or CPUOffload()
        self.mixed_precision = mixed_precision
        if mixed_precision is not None:
            _mixed_precision(self, mixed_precision)

    @staticmethod
    def _groups(process_group, device_mesh) -> Tuple[Any, Any]:
        """(the group that shards, the group that replicates under HYBRID_SHARD or None)."""
        if device_mesh is not None:
            if process_group is not None:
                raise ValueError("Cannot pass both process_group and device_mesh at the same time. Please just "
                                 "pass only one of them.")
            if device_mesh.ndim == 2:
                return device_mesh.get_group(1), device_mesh.get_group(0)
            return device_mesh.get_group(), None
        if isinstance(process_group, tuple):
            return process_group
        # without a mesh, HYBRID_SHARD shards within the node (this machine: the world) and
        # replicates across nodes (there is one)
        return (dist._require_init() if process_group is None else process_group), None

    # ---- the wrapped module ----

    @property
    def module(self) -> nn.Module:
        return self._modules[FSDP_WRAPPED_MODULE]

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            modules = self.__dict__.get("_modules", {})
            if FSDP_WRAPPED_MODULE not in modules:
                raise
            return getattr(modules[FSDP_WRAPPED_MODULE], name)

    def __getitem__(self, key: int) -> Any:
        return self._modules[FSDP_WRAPPED_MODULE].__getitem__(key)

    def named_parameters(self, *args: Any, **kwargs: Any) -> Iterator[Tuple[str, nn.Parameter]]:
        for name, p in super().named_parameters(*args, **kwargs):
            yield _clean(name), p

    def named_buffers(self, *args: Any, **kwargs: Any) -> Iterator[Tuple[str, Any]]:
        for name, b in super().named_buffers(*args, **kwargs):
            yield _clean(name), b

    def _units(self) -> List["FullyShardedDataParallel"]:
        return [m for m in self.modules() if isinstance(m, FullyShardedDataParallel)]

    def _handles(self) -> List[FlatParamHandle]:
        return [u._handle for u in self._units() if u._handle is not None]

    def _lazy_init(self) -> None:
        if self._is_root is None:
            self._is_root = True
            for u in self._units():
                if u._handle is not None:
                    u._handle.reshard_after_forward = (u is not self and
                                                       u.sharding_strategy == ShardingStrategy.FULL_SHARD)

    # ---- forward ----

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        self._lazy_init()
        mp = self.mixed_precision
        if mp is not None and mp.param_dtype is not None and (
                mp.cast_forward_inputs or (self._is_root and mp.cast_root_forward_inputs)):
            args, kwargs = _cast_floats((args, kwargs), mp.param_dtype)
        hooks = (saved_full_views(self._handles()) if self._is_root and minitorch.is_grad_enabled()
                 else contextlib.nullcontext())
        handle = self._handle
        with hooks:
            self._in_forward = True
            try:
                if handle is not None:
                    handle.unshard()
                out = self._modules[FSDP_WRAPPED_MODULE](*args, **kwargs)
            finally:
                self._in_forward = False
                if handle is not None and (handle.reshard_after_forward or handle.full is None
                                           or not handle.full.requires_grad):
                    handle.reshard()
        return out

    @contextlib.contextmanager
    def no_sync(self) -> Generator:
        """Gradient accumulation: inside, backward keeps each unit's full gradient on this rank
        unreduced (the shards' .grad stay as they were); the first backward after it reduces
        them together with its own. On the root only."""
        self._lazy_init()
        if not self._is_root:
            raise AssertionError("`no_sync()` on inner FSDP instances is not supported. Please call `no_sync()` "
                                 "on root FSDP module.")
        handles = self._handles()
        for h in handles:
            h.no_sync = True
        try:
            yield
        finally:
            for h in handles:
                h.no_sync = False

    # ---- full parameters ----

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module: nn.Module, recurse: bool = True, writeback: bool = True,
                           rank0_only: bool = False, offload_to_cpu: bool = False,
                           with_grads: bool = False) -> Generator:
        """The full parameters, under their original names and shapes, inside the context (every
        rank calls it); with writeback, changes made to them are kept in the shards at its end."""
        if with_grads:
            raise NotImplementedError(f"with_grads={with_grads}, is not supported by minitorch's FSDP")
        if writeback and rank0_only:
            raise NotImplementedError("writeback=True and rank0_only=True is not supported yet")
        units = [m for m in (module.modules() if recurse else [module]) if isinstance(m, FullyShardedDataParallel)]
        for u in units:
            if u._in_forward:
                raise AssertionError("Cannot manually unshard parameters during forward/backward")
            if u._summoned:
                raise AssertionError("Cannot manually unshard parameters when already unsharding parameters")
        try:
            for u in units:
                u._summoned = True
            with full_params([u._handle for u in units if u._handle is not None], writeback):
                yield
        finally:
            for u in units:
                u._summoned = False

    # ---- gradient clipping ----

    def clip_grad_norm_(self, max_norm: float, norm_type: float = 2.0):
        """Clips the gradients of all units by their total norm over every rank's shards; returns
        that norm (every rank calls it)."""
        self._lazy_init()
        if not self._is_root:
            raise RuntimeError("`clip_grad_norm_()` should only be called on the root FSDP instance")
        norm_type = float(norm_type)
        sharded, replicated = [], []
        for h in self._handles():
            g = h.local_grad()
            if g is not None:
                (sharded if h.sharded else replicated).append(g.detach())
        device = self._handles()[0].device if self._handles() else minitorch.device("cpu")
        dtype = sharded[0].dtype if sharded else replicated[0].dtype if replicated else minitorch.float32
        local = minitorch.tensor(_local_norm(sharded, norm_type), dtype=minitorch.float64)
        if math.isinf(norm_type):
            dist.all_reduce(local, op=dist.ReduceOp.MAX, group=self.process_group)
            total = max(float(local), _local_norm(replicated, norm_type))
        else:
            dist.all_reduce(local, op=dist.ReduceOp.SUM, group=self.process_group)
            total = (float(local) + _local_norm(replicated, norm_type)) ** (1.0 / norm_type)
        coef = max_norm / (total + 1e-6)
        if coef < 1.0:
            with minitorch.no_grad():
                for p in self.parameters():
                    if p.grad is not None:
                        p.grad.mul_(coef)
        return minitorch.tensor(total, dtype=dtype, device=device)

    # ---- state_dict ----

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module: nn.Module, state_dict_type: StateDictType,
                        state_dict_config: Optional[StateDictConfig] = None,
                        optim_state_dict_config: Optional[OptimStateDictConfig] = None) -> Generator:
        """Sets what state_dict() and load_state_dict() of every unit in module do, inside the context."""
        prev = FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config,
                                                            optim_state_dict_config)
        try:
            yield
        finally:
            FullyShardedDataParallel.set_state_dict_type(module, prev.state_dict_type, prev.state_dict_config,
                                                         prev.optim_state_dict_config)

    @staticmethod
    def set_state_dict_type(module: nn.Module, state_dict_type: StateDictType,
                            state_dict_config: Optional[StateDictConfig] = None,
                            optim_state_dict_config: Optional[OptimStateDictConfig] = None) -> StateDictSettings:
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        prev = FullyShardedDataParallel.get_state_dict_type(module)
        for u in units:
            u._state_dict_type = state_dict_type
            u._state_dict_config = state_dict_config or _CONFIGS[state_dict_type]()
            u._optim_state_dict_config = optim_state_dict_config or FullOptimStateDictConfig()
        return prev

    @staticmethod
    def get_state_dict_type(module: nn.Module) -> StateDictSettings:
        units = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        if not units:
            raise ValueError("No FSDP instance in the module")
        u = units[0]
        return StateDictSettings(u._state_dict_type, u._state_dict_config, u._optim_state_dict_config)

    def state_dict(self, *args: Any, destination: Optional[Dict[str, Any]] = None, prefix: str = "",
                   keep_vars: bool = False) -> Dict[str, Any]:
        """FULL_STATE_DICT: the full parameters and the buffers under their original names (copies;
        on the CPU with offload_to_cpu; on rank 0 only, the others getting {}, with rank0_only);
        SHARDED_STATE_DICT: the parameters as DTensors sharded on dim 0 over the process group;
        LOCAL_STATE_DICT: each unit's local flat shard (`<unit>._flat_param`) and the buffers."""
        if self._summoned or destination is not None:  # a unit inside its root's state_dict
            return super().state_dict(*args, destination=destination, prefix=prefix, keep_vars=keep_vars)
        if self._state_dict_type == StateDictType.LOCAL_STATE_DICT:
            return self._local_state_dict(prefix)
        if self._state_dict_type == StateDictType.SHARDED_STATE_DICT:
            return self._sharded_state_dict(prefix)
        cfg = self._state_dict_config
        with FullyShardedDataParallel.summon_full_params(self, writeback=False):
            raw = super().state_dict(*args, prefix=prefix, keep_vars=False)
        out = type(raw)()
        if getattr(cfg, "rank0_only", False) and dist.get_rank(self.process_group) != 0:
            return out
        for k, v in raw.items():
            if k.rsplit(".", 1)[-1] == FLAT_PARAM:
                continue
            if isinstance(v, minitorch.Tensor):
                v = v.cpu().clone() if cfg.offload_to_cpu else v.clone()
            out[_clean(k)] = v
        return out

    def _sharded_state_dict(self, prefix: str) -> Dict[str, Any]:
        """The parameters as DTensors chunked on dim 0, each rank's rows from the flat shards
        that hold them (_shard_utils: no full gather), in the full state dict's order; buffers
        and ignored parameters as the module has them (the latter chunked where they are)."""
        from minitorch.distributed.checkpoint.state_dict import _fsdp1_mesh, _sharded
        from minitorch.distributed.fsdp._shard_utils import sharded_params

        mesh = _fsdp1_mesh(self)
        units = [u for u in self._units() if u._handle is not None]
        by_module: Dict[int, list] = {}
        for u in units:
            for info, dt in sharded_params(u._handle, mesh):
                by_module.setdefault(id(info.module), []).append((info.name, dt))
        out: Dict[str, Any] = OrderedDict()
        for name, mod in self.named_modules():
            head = prefix + (_clean(name + ".") if name else "")
            for pname, dt in by_module.get(id(mod), []):
                out[head + pname] = dt
            for pname, p in mod._parameters.items():
                if p is not None and pname != FLAT_PARAM and not getattr(p, "_fsdp_flattened", False):
                    out[head + pname] = _sharded(p.detach().clone(), mesh)
            for bname, b in mod._buffers.items():
                if b is not None and bname not in mod._non_persistent_buffers_set:
                    out[head + bname] = b.detach().clone()
        return out

    def _local_state_dict(self, prefix: str) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for name, m in self.named_modules():
            if isinstance(m, FullyShardedDataParallel) and m._handle is not None:
                key = prefix + (_clean(name) + "." if _clean(name) else "") + FLAT_PARAM
                out[key] = m._handle.local_shard().detach().clone()
        for name, b in nn.Module.named_buffers(self):
            out[prefix + _clean(name)] = b.detach().clone()
        return out

    def _load_local_state_dict(self, state_dict, strict: bool):
        units = {(_clean(name) + "." if _clean(name) else "") + FLAT_PARAM: m
                 for name, m in self.named_modules() if isinstance(m, FullyShardedDataParallel) and m._handle}
        buffers = {_clean(name): b for name, b in nn.Module.named_buffers(self)}
        missing = [k for k in [*units, *buffers] if k not in state_dict]
        unexpected = [k for k in state_dict if k not in units and k not in buffers]
        if strict and (missing or unexpected):
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}: missing keys {missing}, "
                               f"unexpected keys {unexpected}")
        with minitorch.no_grad():
            for key, unit in units.items():
                if key in state_dict:
                    unit._handle.load_local(state_dict[key])
            for key, b in buffers.items():
                if key in state_dict:
                    b.copy_(state_dict[key])
        return nn.modules.module._IncompatibleKeys(missing, unexpected)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """FULL_STATE_DICT: each rank keeps its shard of the full parameters given;
        SHARDED_STATE_DICT: the same from DTensors (gathered); LOCAL_STATE_DICT: the flat shards."""
        if self._state_dict_type == StateDictType.LOCAL_STATE_DICT:
            return self._load_local_state_dict(state_dict, strict)
        if self._state_dict_type == StateDictType.SHARDED_STATE_DICT:
            from minitorch.distributed.checkpoint.state_dict import _full

            state_dict = {k: _full(v) for k, v in state_dict.items()}
        with FullyShardedDataParallel.summon_full_params(self, writeback=True):
            own = nn.Module.state_dict(self, keep_vars=True)
            flat = {k: v.detach() for k, v in own.items() if k.rsplit(".", 1)[-1] == FLAT_PARAM}
            real = {_clean(k): k for k in own if k not in flat}
            # the shards are written from the full parameters at the end: they load themselves
            renamed = {**{real.get(k, k): v for k, v in state_dict.items()}, **flat}
            return super().load_state_dict(renamed, strict=strict, assign=False)

    # ---- optimizer state ----

    @staticmethod
    def optim_state_dict(model: nn.Module, optim, optim_state_dict: Optional[Dict] = None,
                         group: Any = None) -> Dict[str, Any]:
        """optim's state with each shard's state gathered and split into the original parameters,
        keyed by their names (every rank calls it); under SHARDED_STATE_DICT each per-element
        tensor is a DTensor chunked on dim 0."""
        from minitorch.distributed.checkpoint.state_dict import _sharded_optim_state
        from minitorch.distributed.fsdp._optim_utils import full_optim_state_dict

        full = full_optim_state_dict(model, optim, optim_state_dict)
        if FullyShardedDataParallel.get_state_dict_type(model).state_dict_type == StateDictType.SHARDED_STATE_DICT:
            full["state"] = _sharded_optim_state(model, full["state"])
        return full

    @staticmethod
    def optim_state_dict_to_load(model: nn.Module, optim, optim_state_dict: Dict[str, Any],
                                 is_named_optimizer: bool = False, load_directly: bool = False,
                                 group: Any = None) -> Dict[str, Any]:
        """The inverse of optim_state_dict (full or sharded): optim's own state_dict (this rank's
        shards), to load."""
        from minitorch.distributed.checkpoint.state_dict import _full
        from minitorch.distributed.fsdp._optim_utils import sharded_optim_state_dict

        optim_state_dict = {**optim_state_dict, "state": _full(optim_state_dict["state"])}
        sd = sharded_optim_state_dict(model, optim, optim_state_dict)
        if load_directly:
            optim.load_state_dict(sd)
        return sd

    @staticmethod
    def full_optim_state_dict(model: nn.Module, optim, optim_input: Any = None, rank0_only: bool = True,
                              group: Any = None) -> Dict[str, Any]:
        """The older API: optim_state_dict's result on rank 0 ({} on the others unless
        rank0_only=False); every rank calls it."""
        full = FullyShardedDataParallel.optim_state_dict(model, optim)
        return {} if rank0_only and dist.get_rank() != 0 else full


_CONFIGS = {StateDictType.FULL_STATE_DICT: FullStateDictConfig, StateDictType.LOCAL_STATE_DICT: LocalStateDictConfig,
            StateDictType.SHARDED_STATE_DICT: ShardedStateDictConfig}


def _ignored(module: nn.Module, states: Optional[Iterable]) -> frozenset:
    """The ids of the ignored modules (with their submodules) and parameters."""
    out = set()
    for s in states or ():
        if isinstance(s, FullyShardedDataParallel):
            raise ValueError("`ignored_modules` should not include FSDP modules")
        if isinstance(s, nn.Module):
            for m in s.modules():
                out.add(id(m))
                out.update(id(p) for p in m.parameters(recurse=False))
        else:
            out.add(id(s))
    return frozenset(out)


def _materialize(module: nn.Module, param_init_fn: Optional[Callable], ignored: frozenset, device_id: Any) -> None:
    """The modules with meta-device parameters or buffers of their own (but ignored ones), in
    breadth-first order, given param_init_fn(module); without it, moved to device_id (else the
    CPU) and reset_parameters()."""
    if param_init_fn is not None and not callable(param_init_fn):
        raise ValueError(f"Expected {param_init_fn} to be callable but got {type(param_init_fn)}")
    todo, queue = [], [module]
    while queue:
        m = queue.pop(0)
        if id(m) in ignored:
            continue
        own = [*m.parameters(recurse=False), *m.buffers(recurse=False)]
        if any(t.device.type == "meta" for t in own):
            todo.append(m)
        queue.extend(m.children())
    for m in todo:
        if param_init_fn is not None:
            param_init_fn(m)
        else:
            device = (minitorch.device("cuda", device_id) if isinstance(device_id, int)
                      else minitorch.device(device_id) if device_id is not None else minitorch.device("cpu"))
            m.to_empty(device=device, recurse=False)
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()


def _mixed_precision(unit: FullyShardedDataParallel, mp: MixedPrecision) -> None:
    """The unit computes in mp.param_dtype, reduces gradients in mp.reduce_dtype (param_dtype when
    not given, as PyTorch's) and keeps its own buffers in mp.buffer_dtype; the shards (what the
    optimizer steps) stay in their dtype."""
    if unit._handle is not None:
        unit._handle.param_dtype = mp.param_dtype
        unit._handle.reduce_dtype = mp.reduce_dtype if mp.reduce_dtype is not None else mp.param_dtype
    if mp.buffer_dtype is not None:
        for mod in unit.module.modules():  # nested units' too (they cast them to the same dtype)
            for name, b in mod._buffers.items():
                if b is not None and b.is_floating_point():
                    mod._buffers[name] = b.to(mp.buffer_dtype)


def _cast_floats(obj: Any, dtype) -> Any:
    """obj (nested tuples, lists, dicts) with its floating-point tensors in dtype."""
    if isinstance(obj, minitorch.Tensor):
        return obj.to(dtype) if obj.is_floating_point() else obj
    if isinstance(obj, (list, tuple)):
        return type(obj)(_cast_floats(o, dtype) for o in obj)
    if isinstance(obj, dict):
        return {k: _cast_floats(v, dtype) for k, v in obj.items()}
    return obj


def _local_norm(grads: List, norm_type: float) -> float:
    """max |g| (norm_type inf), else sum |g|^p over the gradients, in float64."""
    if not grads:
        return 0.0
    if math.isinf(norm_type):
        return max(float(g.abs().max()) if g.numel() else 0.0 for g in grads)
    return sum(float((g.double().abs() ** norm_type).sum()) for g in grads)


def _broadcast_state(module: nn.Module, pg) -> None:
    """sync_module_states: every rank starts from the group's first rank's parameters and buffers."""
    src = pg._ranks[0]
    with minitorch.no_grad():
        for t in [*module.parameters(), *module.buffers()]:
            if t.is_contiguous():
                dist.broadcast(t.data, src=src, group=pg)
            else:
                tmp = t.contiguous()
                dist.broadcast(tmp, src=src, group=pg)
                t.copy_(tmp)
