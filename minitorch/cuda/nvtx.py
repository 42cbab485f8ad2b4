"""torch.cuda.nvtx: named ranges around host code. minitorch has no NVTX library to mark them
for Nsight; they become the profiler's user ranges (as profiler.record_function's), so a
minitorch.profiler.profile that is recording shows them. Each thread keeps its own stack of open
ranges, as NVTX does."""
from __future__ import annotations

import contextlib
import itertools
import threading
from typing import Any, Dict

from . import _C_cuda

__all__ = ["range_push", "range_pop", "range_start", "range_end", "mark", "range"]

_local = threading.local()
_started: Dict[int, Any] = {}  # range_start's id -> its open range
_ids = itertools.count(1)
_lock = threading.Lock()


def _ranges():
    if _C_cuda is None:
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA build?")
    from ..profiler import record_function

    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack, record_function


def range_push(msg: str) -> int:
    """Opens a range named msg on this thread's stack; returns its depth (0 for the outermost)."""
    stack, record_function = _ranges()
    r = record_function(msg)
    r.__enter__()
    stack.append(r)
    return len(stack) - 1


def range_pop() -> int:
    """Closes this thread's innermost range; returns its depth, or -1 when none is open."""
    stack, _ = _ranges()
    if not stack:
        return -1
    stack.pop().__exit__(None, None, None)
    return len(stack)


def range_start(msg: str) -> int:
    """Opens a range that any thread may end: returns its id for range_end."""
    _, record_function = _ranges()
    r = record_function(msg)
    r.__enter__()
    with _lock:
        rid = next(_ids)
        _started[rid] = r
    return rid


def range_end(range_id: int) -> None:
    """Closes the range range_start opened with that id."""
    _ranges()
    with _lock:
        r = _started.pop(range_id, None)
    if r is not None:
        r.__exit__(None, None, None)


def mark(msg: str) -> None:
    """An instant: a range that opens and closes at once."""
    _, record_function = _ranges()
    with record_function(msg):
        pass


@contextlib.contextmanager
def range(msg: str, *args: Any, **kwargs: Any):
    """A range around the block (or decorated function), named msg.format(*args, **kwargs)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
