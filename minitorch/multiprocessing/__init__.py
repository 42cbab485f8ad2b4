"""minitorch.multiprocessing: Python's multiprocessing with tensors that can be shared between
processes, as torch.multiprocessing: everything multiprocessing has, tensors registered with its
pickler (a tensor in shared memory, after share_memory_() or Module.share_memory(), reaches the
other process as the same memory: see reductions.py), and spawn()."""
from __future__ import annotations

import multiprocessing
import os
from multiprocessing import *  # noqa: F401,F403

from .reductions import init_reductions
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes  # noqa: F401

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies", "spawn",
           "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException"]
__all__ += multiprocessing.__all__

_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy: str) -> None:
    """Only "file_descriptor" is supported on Linux ("file_system" is accepted and behaves the same)."""
    global _strategy
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy = new_strategy


def get_sharing_strategy() -> str:
    return _strategy


def get_all_sharing_strategies() -> set:
    return {"file_descriptor", "file_system"}




def _single_threaded_after_fork() -> None:
    """A forked child runs one thread: libgomp's pool (shared by our loops and OpenBLAS) does not
    survive fork, and a child's first parallel region after the parent ran one waits forever (as
    PyTorch's does). One thread never touches the pool; DataLoader workers did this already."""
    from .. import set_num_threads

    set_num_threads(1)


init_reductions()
os.register_at_fork(after_in_child=_single_threaded_after_fork)
