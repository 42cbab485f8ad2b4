"""torch.autograd.profiler: the legacy profiling interface (profile, record_function, emit_nvtx),
over minitorch.profiler's recorder. `profile` here takes the old arguments (use_cuda, use_device,
use_cpu, enabled) and keeps the recording as `function_events`, which table(), key_averages(),
total_average() and export_chrome_trace() read, as PyTorch's legacy profiler does."""
from __future__ import annotations

import warnings
from typing import Any, Optional

from .. import profiler as _profiler
from ..profiler.events import EventList, FunctionEventAvg
from ..profiler.profiler import ProfilerActivity, record_function

__all__ = ["profile", "record_function", "emit_nvtx", "EventList"]


class profile:
    """Records the ops, kernels and ranges run inside the block (nothing when enabled is False)."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: Optional[str] = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None, **unused: Any) -> None:
        self.enabled = enabled
        if not enabled:
            return
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use ``use_device = 'cuda'`` "
                          "instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device not in (None, "cuda"):
            raise AssertionError(f"{use_device} doesn't support profile.")
        activities = ({ProfilerActivity.CPU} if use_cpu else set()) | \
            ({ProfilerActivity.CUDA} if use_device == "cuda" else set())
        if not activities:
            raise AssertionError("No activities specified for the profiler")
        self.use_device = use_device
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.with_flops, self.with_modules = with_flops, with_modules
        self._recorder = _profiler.profile(activities=activities, record_shapes=record_shapes,
                                           profile_memory=profile_memory, with_stack=with_stack,
                                           with_flops=with_flops)
        self.function_events: Optional[EventList] = None
        self.entered = False

    def __enter__(self) -> "profile":
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._recorder.start()
        return self

    def __exit__(self, *exc: Any) -> bool:
        if not self.enabled:
            return False
        self._recorder.stop()
        self.function_events = self._recorder.events()
        return False

    def _finished(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def __repr__(self) -> str:
        return "<unfinished torch.autograd.profile>" if self.function_events is None else repr(self.function_events)

    def __str__(self) -> str:
        return "<unfinished torch.autograd.profile>" if self.function_events is None else str(self.function_events)

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: Optional[str] = None,
              top_level_events_only: bool = False) -> str:
        return self._finished().table(sort_by, row_limit, max_src_column_width, max_name_column_width,
                                      max_shapes_column_width, header, top_level_events_only)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n)

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one row (key "Total")."""
        total = FunctionEventAvg("Total", [])
        for event in self._finished():
            total.add(event)
        return total

    def export_chrome_trace(self, path: str) -> None:
        self._finished()
        self._recorder.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self) -> float:
        return self._finished().self_cpu_time_total


class emit_nvtx:
    """torch.autograd.profiler.emit_nvtx: every op inside the block as a named range for Nsight.
    minitorch has no NVTX library; its ops are ranges of minitorch's profiler already (as
    cuda.nvtx's ranges are), so the block synchronises the device on entry and exit, as
    PyTorch's does, and records nothing of its own."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled, self.record_shapes = enabled, record_shapes
        self.entered = False

    def __enter__(self) -> "emit_nvtx":
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("NVTX annotation context manager is not reentrant")
        self.entered = True
        from .. import cuda

        cuda.synchronize()
        return self

    def __exit__(self, *exc: Any) -> bool:
        if self.enabled:
            from .. import cuda

            cuda.synchronize()
        return False
