"""ZeroRedundancyOptimizer (ZeRO stage 1, as torch.distributed.optim's): each rank keeps the state
of one shard of the parameters only, steps that shard with a local optimizer of the given class,
then every rank broadcasts the shard it updated, so all replicas end the step equal.

The shards come from PyTorch's sorted-greedy partition (largest parameter first, each to the rank
with the fewest elements so far; a parameter is never split), so the same model is sharded the
same way as under PyTorch. With parameters_as_bucket_view=True each rank's shard is packed into
one flat bucket and the parameters' .data become views of it: one broadcast per rank instead of
one per parameter. overlap_with_ddp=True (the step run inside DDP's communication hook) is not
supported here and is refused at construction.
"""
from __future__ import annotations

from itertools import chain
from typing import Any, Callable, Dict, List, Optional

import minitorch
import minitorch.distributed as dist
from minitorch.distributed.algorithms.join import Join, JoinHook, Joinable
from minitorch.optim.optimizer import Optimizer

__all__ = ["ZeroRedundancyOptimizer"]


def _to_cpu(value: Any) -> Any:
    """value with every tensor in it copied to the CPU (a consolidated state lives there)."""
    if isinstance(value, minitorch.Tensor):
        return value.cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cpu(v) for v in value)
    return value


def _sync_param_groups(src: List[Dict[str, Any]], dst: List[Dict[str, Any]]) -> None:
    """Copies every option but "params" of each group of src onto the same group of dst (so an
    lr set on the wrapper, by hand or by a scheduler, reaches the local optimizer and back)."""
    for src_group, dst_group in zip(src, dst):
        for key, value in src_group.items():
            if key != "params":
                dst_group[key] = value


class _ZeROJoinHook(JoinHook):
    """On a joined rank, each iteration's step: this rank's shard is stepped (without gradients,
    so unchanged) and broadcast, matching the others' broadcasts."""

    def __init__(self, zero: "ZeroRedundancyOptimizer") -> None:
        self.zero = zero

    def main_hook(self) -> None:
        self.zero.step()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wraps optimizer_class, sharding its state across the ranks of process_group."""

    def __init__(self, params: Any, optimizer_class: type, process_group: Any = None,
                 parameters_as_bucket_view: bool = False, overlap_with_ddp: bool = False, **defaults: Any) -> None:
        if overlap_with_ddp:
            raise NotImplementedError("minitorch's ZeroRedundancyOptimizer does not support overlap_with_ddp=True; "
                                      "call step() after backward() instead")
        params = self._verified_params(params)
        self._initialized = False
        Optimizer.__init__(self, params, defaults)
        Joinable.__init__(self)
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        self._partition: List[List[Dict[str, Any]]] = []
        self._default_device = self._all_params[0].device
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        _sync_param_groups(self.optim.param_groups, self.param_groups)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._buckets: List[minitorch.Tensor] = []
        self._build_param_buckets()
        self._all_state_dicts: List[Dict[str, Any]] = []
        self._initialized = True

    def _verified_params(self, params: Any) -> list:
        """params as a list (of tensors or of groups), its parameters in self._all_params."""
        if isinstance(params, minitorch.Tensor):
            raise TypeError(f"`params` argument should be an iterable of Tensors, but got {minitorch.typename(params)}")
        try:
            all_params = list(params)
        except TypeError as e:
            raise TypeError(f"`params` argument should be an iterable of Tensors or dicts, but got "
                            f"{minitorch.typename(params)}") from e
        if not all_params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if all(isinstance(p, minitorch.Tensor) for p in all_params):
            self._all_params = all_params
        elif all(isinstance(p, dict) for p in all_params):
            if any("params" not in g for g in all_params):
                raise ValueError("Each parameter group passed-in via `params` must have a 'params' key mapping to "
                                 "the parameters in the group")
            self._all_params = [p for g in all_params for p in g["params"]]
        else:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        first = minitorch.typename(self._all_params[0])
        for p in self._all_params[1:]:
            if minitorch.typename(p) != first:
                raise ValueError("ZeroRedundancyOptimizer only supports using the same dense type for all "
                                 f"parameters but got both {first} and {minitorch.typename(p)}")
        return all_params

    # ---- the partition ---------------------------------------------------------------------------

    def _partition_parameters(self) -> List[List[Dict[str, Any]]]:
        """For each rank, its param groups: each group's parameters, largest first, go one by one to
        the rank holding the fewest elements so far (the first such rank on a tie)."""
        if not self._partition:
            self._partition = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                per_rank: List[list] = [[] for _ in range(self.world_size)]
                for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    rank = sizes.index(min(sizes))
                    per_rank[rank].append(p)
                    sizes[rank] += p.numel()
                for rank, shard in enumerate(per_rank):
                    self._partition[rank].append({**group, "params": shard})
        return self._partition

    def add_param_group(self, param_group: Dict[str, Any]) -> None:
        """Adds a group to every rank's partition (call it on all ranks); the parameters of the
        earlier groups keep their ranks, so the local optimizer keeps its state."""
        super().add_param_group(param_group)
        if getattr(self, "_initialized", False):
            self._partition = []
            mine = self._partition_parameters()[self.rank]
            if len(mine) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(mine[-1])
            if self.parameters_as_bucket_view:
                self._build_param_buckets()

    def _build_param_buckets(self) -> None:
        """With parameters_as_bucket_view: one flat bucket per rank holding its trainable shard,
        each parameter's .data a view into it."""
        self._buckets = []
        if not self.parameters_as_bucket_view:
            return
        for groups in self._partition_parameters():
            shard = [p for g in groups for p in g["params"] if p.requires_grad]
            bucket = minitorch.empty(sum(p.numel() for p in shard), dtype=self._all_params[0].dtype,
                                     device=self._default_device)
            offset = 0
            for p in shard:
                view = bucket[offset:offset + p.numel()].view_as(p.data)
                view.copy_(p.data)
                p.data = view
                offset += p.numel()
            self._buckets.append(bucket)

    # ---- the step --------------------------------------------------------------------------------

    def _sync_params(self) -> None:
        """Every rank broadcasts the shard it updated (its bucket, or its parameters one by one)."""
        handles = []
        for rank in range(self.world_size):
            src = dist.get_global_rank(self.process_group, rank)
            if self.parameters_as_bucket_view:
                tensors = [self._buckets[rank]]
            else:
                tensors = [p.data for g in self._partition_parameters()[rank] for p in g["params"]]
            handles.extend(dist.broadcast(t, src=src, group=self.process_group, async_op=True) for t in tensors)
        for h in handles:
            h.wait()

    def step(self, closure: Optional[Callable[[], float]] = None, **kwargs: Any) -> Optional[float]:
        """The local optimizer's step on this rank's shard, then every shard to every rank."""
        Join.notify_join_context(self)
        _sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = self.optim.step(**kwargs) if closure is None else self.optim.step(closure=closure, **kwargs)
        _sync_param_groups(self.optim.param_groups, self.param_groups)
        self._sync_params()
        return loss

    def join_hook(self, **kwargs: Any) -> JoinHook:
        return _ZeROJoinHook(self)

    @property
    def join_device(self) -> minitorch.device:
        return self._default_device

    @property
    def join_process_group(self) -> Any:
        return self.process_group

    # ---- state dicts -----------------------------------------------------------------------------

    def consolidate_state_dict(self, to: int = 0) -> None:
        """Gathers every rank's local optimizer state on rank `to` (call it on all ranks), for
        state_dict() there."""
        _sync_param_groups(self.param_groups, self.optim.param_groups)
        local = _to_cpu(self.optim.state_dict())
        gathered: Optional[List[Any]] = [None] * self.world_size if self.rank == to else None
        dst = dist.get_global_rank(self.process_group, to)
        dist.gather_object(local, gathered, dst=dst, group=self.process_group)
        self._all_state_dicts = gathered if self.rank == to else []

    def state_dict(self) -> Dict[str, Any]:
        """The whole optimizer's state, with PyTorch's global parameter indices, as last
        consolidated on this rank."""
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. Please call "
                               f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you meant to "
                               "save the global state.")
        state_dict = super().state_dict()
        index_of = {id(p): i for i, p in enumerate(chain.from_iterable(g["params"] for g in self.param_groups))}
        for rank, local in enumerate(self._all_state_dicts):
            for local_group, group in zip(local["param_groups"], self._partition_parameters()[rank]):
                for local_index, p in zip(local_group["params"], group["params"]):
                    if local_index in local["state"]:
                        state_dict["state"][index_of[id(p)]] = local["state"][local_index]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Loads a state_dict() of the whole optimizer: this rank's shard goes to the local
        optimizer, the options to both."""
        params = list(chain.from_iterable(g["params"] for g in self.param_groups))
        mine = {id(p) for g in self._partition_parameters()[self.rank] for p in g["params"]}
        local_state = {}
        for index, value in state_dict["state"].items():
            if id(params[index]) in mine:
                local_state[params[index]] = value
        super().load_state_dict({"state": {}, "param_groups": state_dict["param_groups"]})
        _sync_param_groups(self.param_groups, self.optim.param_groups)
        local_index = {id(p): i for i, p in enumerate(chain.from_iterable(g["params"] for g in self.optim.param_groups))}
        self.optim.load_state_dict({
            "state": {local_index[id(p)]: v for p, v in local_state.items()},
            "param_groups": [{**{k: v for k, v in g.items() if k != "params"},
                              "params": [local_index[id(p)] for p in g["params"]]} for g in self.optim.param_groups],
        })
