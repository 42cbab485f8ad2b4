"""torch.profiler's API on minitorch's C events: profile, record_function, schedule, ProfilerActivity."""
from __future__ import annotations

import contextlib
import copy
import warnings
from enum import Enum
from typing import Callable, Iterable, List, Optional

from .. import _C
from . import events as _events
from .journey import article_view, journey_view


class ProfilerActivity(Enum):
    CPU = 0
    CUDA = 1


class ProfilerAction(Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def _cuda_available() -> bool:
    try:
        from .. import cuda
    except ImportError:
        return False
    return bool(getattr(cuda, "is_available", lambda: False)())


def supported_activities() -> set:
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if _cuda_available() else set())


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0
             ) -> Callable[[int], ProfilerAction]:
    """Step number -> action: skip_first steps, then cycles of wait, warmup, active steps (repeat of them,
    0 = forever); the last active step of a cycle hands its recording to on_trace_ready."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError("Invalid profiler schedule arguments")

    def schedule_fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def tensorboard_trace_handler(dir_name: str, worker_name: Optional[str] = None, use_gzip: bool = False,
                              use_python_export: bool = False) -> Callable[["profile"], None]:
    """An on_trace_ready callback that writes each finished recording's Chrome trace into dir_name
    as PyTorch names it, "<worker_name>.<time in ns>.pt.trace.json[.gz]", worker_name defaulting to
    "<host name>_<pid>" (TensorBoard's profiler plugin reads such a folder)."""
    import gzip
    import os
    import shutil
    import socket
    import time

    def handler(prof: "profile") -> None:
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        path = os.path.join(dir_name, f"{worker}.{time.time_ns()}.pt.trace.json")
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)

    return handler


class record_function(contextlib.ContextDecorator):
    """A user range: `with record_function("name"):` or `@record_function("name")`; recorded as a
    user_annotation event around whatever runs inside, nothing when no profiler records."""

    def __init__(self, name: str, args: Optional[str] = None) -> None:
        self.name = name
        self.args = args
        self._open = False

    def _recreate_cm(self):
        return copy.copy(self)  # a decorated function may recurse: each call its own range

    def __enter__(self) -> "record_function":
        self._open = _C._trace_enabled()
        if self._open:
            _C._trace_enter(self.name, "user_annotation")
        return self

    def __exit__(self, *exc) -> bool:
        if self._open:
            _C._trace_exit()
            self._open = False
        return False


class profile:
    """Records minitorch's C events (Python ranges, ops, kernels, library calls, allocations) while active.

    Without a schedule, everything between start and stop is one recording; with one, `step()` moves
    through its wait / warmup / active steps and each finished cycle goes to `on_trace_ready(prof)`.
    """

    def __init__(self, *, activities: Optional[Iterable[ProfilerActivity]] = None,
                 schedule: Optional[Callable[[int], ProfilerAction]] = None,
                 on_trace_ready: Optional[Callable[["profile"], None]] = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False) -> None:
        self.activities = set(activities) if activities is not None else supported_activities()
        if ProfilerActivity.CUDA in self.activities and not _cuda_available():
            warnings.warn("CUDA is not available, disabling CUDA profiling")
            self.activities.discard(ProfilerActivity.CUDA)
        self.use_device = "cuda" if ProfilerActivity.CUDA in self.activities else None
        self.schedule = schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack  # Op events carry the Python stack (file(line): function)
        self.with_flops = with_flops  # the ops PyTorch counts carry their FLOPs (events.op_flops)
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._recording = False
        self._step_open = False
        self._functions: List[_events.FunctionEvent] = []
        self._memory: List[_events.MemoryEvent] = []

    # the recording itself
    def _begin(self) -> None:
        _C._trace_start(record_shapes=self.record_shapes, profile_memory=self.profile_memory,
                        with_stack=self.with_stack, cuda=self.use_device == "cuda", with_flops=self.with_flops)
        self._recording = True

    def _end(self, keep: bool) -> None:
        raw = _C._trace_stop()
        gpu = _C._trace_gpu_events()
        self._recording = False
        if keep:
            self._functions, self._memory = _events.build(raw, gpu, self.with_flops)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)

    def _transit(self, prev: ProfilerAction, cur: ProfilerAction) -> None:
        A = ProfilerAction
        if prev == A.RECORD_AND_SAVE or (cur == A.NONE and prev != A.NONE):
            if self._recording:
                self._end(keep=prev != A.WARMUP)
        elif prev == A.WARMUP and cur in (A.RECORD, A.RECORD_AND_SAVE):
            self._end(keep=False)  # warm-up steps are run, not kept
        if cur != A.NONE and not self._recording:
            self._begin()

    def _open_step(self) -> None:
        if self.record_steps and self._recording:
            _C._trace_enter(f"ProfilerStep#{self.step_num}", "user_annotation")
            self._step_open = True

    def _close_step(self) -> None:
        if self._step_open:
            _C._trace_exit()
            self._step_open = False

    def start(self) -> None:
        self.step_num = 0
        self.current_action = self.schedule(0) if self.schedule else ProfilerAction.RECORD
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self) -> None:
        self._close_step()
        self._transit(self.current_action, ProfilerAction.NONE)
        self.current_action = ProfilerAction.NONE

    def step(self) -> None:
        """Marks the end of a training step; with a schedule, moves to the next step's action."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD
        self._transit(prev, self.current_action)
        self._open_step()

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc) -> bool:
        self.stop()
        return False

    # the views of the last recording
    def events(self) -> _events.EventList:
        """Every range recorded (Python, Op, Kernel, Library), in start order per thread."""
        return _events.EventList(self._functions, self.use_device, self.profile_memory)

    def memory_events(self) -> List[_events.MemoryEvent]:
        """Mem::alloc / Mem::free, when profile_memory."""
        return list(self._memory)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> _events.EventList:
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path: str) -> None:
        _events.chrome_trace(self._functions, self._memory, path)

    def journey(self, call: Optional[str] = None, gpu: bool = False, *, width: Optional[int] = None) -> str:
        """The seed article's view: the layered table, then the tree of one call (the first top-level
        range, or the first named `call`) from the Python module down to the kernels.

        With `width`, every line fits in that many columns (long cells and tree lines wrap; a CPU-only
        recording leaves out the GPU column) and the result is plain text; without, one line per row,
        a str that notebooks show as an HTML table."""
        from .._html import Journey  # a str that notebooks show as an HTML table

        text = journey_view(self._functions, self._memory, call, self.use_device, width)
        return Journey(text) if width is None else text

    def article_table(self, *, width: Optional[int] = None) -> str:
        """The seed article's table of the same recording: one row per event as it happened (Event,
        Description, CPU time, GPU time, Device type), from `Op::to`'s `Runtime::Memcpy` to the
        final `Runtime::DeviceSynchronize` on a GPU. With `width`, every line fits in it."""
        return article_view(self._functions, self._memory, self.use_device, width)
