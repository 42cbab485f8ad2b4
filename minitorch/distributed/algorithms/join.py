"""torch.distributed.algorithms.join: the Join context manager for training on uneven inputs.

Inside `with Join([joinables]):` each rank runs its own number of iterations. A rank that runs
out of inputs "joins": on leaving the block it keeps answering the others' collectives until every
rank has joined. Each iteration of a rank not yet joined begins with Join.notify_join_context
(called by the first joinable, DDP's forward for instance), an all-reduce of a 1; a joined rank
all-reduces a 0 in the same place, and while the sum is not 0 it runs each joinable's
JoinHook.main_hook, which issues the collectives that the iteration of the others does (DDP's
gradient all-reduces with zero gradients, ZeroRedundancyOptimizer's step). When the sum is 0,
every rank runs the post_hook(is_last_joiner) of each joinable (DDP copies the model of the last
rank to join to all). With throw_on_early_termination=True, the first rank to join makes every
rank raise instead.
"""
from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from typing import Any, List, NamedTuple

import minitorch
import minitorch.distributed as dist

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """What a joinable does on a joined rank: main_hook once per iteration of the ranks still
    training, post_hook once when all have joined."""

    def main_hook(self) -> None:
        """Matches the collectives of one training iteration of the ranks not joined yet."""

    def post_hook(self, is_last_joiner: bool) -> None:
        """Runs once every rank has joined; is_last_joiner says whether this rank joined last."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config() -> "_JoinConfig":
        return _JoinConfig(enable=False, throw_on_early_termination=False, is_first_joinable=False)


class Joinable(ABC):
    """A class whose instances may be passed to Join: it gives its JoinHook, and the device and
    process group of the context's all-reduces."""

    @abstractmethod
    def __init__(self) -> None:
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs: Any) -> JoinHook:
        ...

    @property
    @abstractmethod
    def join_device(self) -> minitorch.device:
        ...

    @property
    @abstractmethod
    def join_process_group(self) -> Any:
        ...


_WARN_THRESHOLD = 1000  # shadowed iterations after which a joined rank warns that the others may hang


class Join:
    """Context manager over joinables (one process group): see the module's docstring. kwargs go to
    each joinable's join_hook (DDP's divide_by_initial_world_size, for one)."""

    def __init__(self, joinables: List[Joinable], enable: bool = True, throw_on_early_termination: bool = False,
                 **kwargs: Any) -> None:
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [joinable.join_hook(**kwargs) for joinable in self._joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for k, joinable in enumerate(self._joinables):
            joinable._join_config = _JoinConfig(enable=enable, throw_on_early_termination=throw_on_early_termination,
                                                is_first_joinable=k == 0)
        groups = {id(j.join_process_group) for j in self._joinables}
        if len(groups) > 1:
            raise ValueError("Using join context manager with multiple process groups")
        self._process_group = self._joinables[0].join_process_group
        self._device = self._joinables[0].join_device
        self._rank = dist.get_rank(self._process_group)

    def __enter__(self) -> None:
        ...

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if not self._enable or exc_type:
            return  # an exception propagates as it is
        all_joined, is_last_joiner, shadowed = False, True, 0
        while not all_joined:
            if shadowed > _WARN_THRESHOLD:
                warnings.warn(f"Detected uneven input skew of greater than {_WARN_THRESHOLD}. This means that rank "
                              f"{self._rank} has at least {_WARN_THRESHOLD} fewer inputs than other currently-active "
                              "ranks. This level of skew could lead to performance degradation during training.")
            if self._nonjoined_count() == 0:
                all_joined = True
            else:
                if self._throw_on_early_termination:
                    self._notify_procs_to_terminate()
                for hook in self._join_hooks:
                    hook.main_hook()
                is_last_joiner = False
                shadowed += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)
        for joinable in self._joinables:
            joinable._join_config = _JoinConfig.construct_disabled_join_config()

    def _nonjoined_count(self) -> float:
        """The joined rank's side of notify_join_context's all-reduce: the ranks not joined yet."""
        count = minitorch.zeros(1, device=self._device)
        dist.all_reduce(count, group=self._process_group)
        return count.item()

    def _notify_procs_to_terminate(self) -> None:
        ones = minitorch.ones(1, device=self._device)
        dist.all_reduce(ones, group=self._process_group)
        raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")

    @staticmethod
    def notify_join_context(joinable: Joinable):
        """Called by a joinable at the start of each iteration: on a rank not joined, the first
        joinable of an enabled context all-reduces a 1 (asynchronously; the Work is returned) and,
        with throw_on_early_termination, raises when a rank has joined. None otherwise."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the ``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        ones = minitorch.ones(1, device=joinable.join_device)
        work = dist.all_reduce(ones, group=joinable.join_process_group, async_op=True)
        if config.throw_on_early_termination:
            zeros = minitorch.zeros(1, device=joinable.join_device)
            dist.all_reduce(zeros, group=joinable.join_process_group)
            if zeros.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across all ranks.")
        return work
