"""Profiler events and PyTorch's views of them: events(), key_averages().table(), the Chrome trace.

Built in Python from the tuples minitorch._C._trace_stop returns (the C side only records). Names
carry their layer as the journey writes them: Python::Linear, Op::addmm, Kernel::mt_cpu_addmm,
Library::cblas_sgemv; a record_function range keeps the user's name, as in PyTorch.
"""
from __future__ import annotations

import ast
import json
import os
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, List, Optional

_DEVICE_TYPES = ("cpu", "cuda")


def _parse_list(text: str) -> list:
    if not text:
        return []
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):  # a list cut short in C ends in "..."
        return [text]


@dataclass(eq=False)
class MemoryEvent:
    """Mem::alloc or Mem::free: bytes > 0 for an allocation, < 0 for a free (PyTorch's sign)."""

    name: str
    bytes: int
    ptr: int
    device: str
    pool: str
    cache: int  # 1: a cache served it, 0: a real allocation, -1: an allocator without a cache
    thread: int
    time_ns: int
    cpu_parent: Optional["FunctionEvent"] = None

    @property
    def layer(self) -> str:
        return "Mem"


@dataclass(eq=False)
class FunctionEvent:
    """One range: a Python module call or record_function, an op, a kernel or a library call on the
    CPU; or, with device_type "CUDA", a kernel or copy on the GPU (thread = its stream)."""

    id: int
    name: str
    layer: str    # Python, Op, Library, Runtime, Kernel
    detail: str   # dispatch key, library, "nn.Module" or "user_annotation"; "memcpy" for a GPU copy
    thread: int
    depth: int
    start_ns: int
    end_ns: int
    input_shapes: list = field(default_factory=list)
    input_dtypes: list = field(default_factory=list)
    device_type: str = "CPU"
    device_index: int = -1
    correlation: int = 0  # ties a Runtime/Library event to the GPU work it started
    cpu_parent: Optional["FunctionEvent"] = None
    cpu_children: List["FunctionEvent"] = field(default_factory=list)
    memory: List[MemoryEvent] = field(default_factory=list)  # Mem events directly inside
    kernels: List["FunctionEvent"] = field(default_factory=list)  # GPU work this op launched itself
    launch: Optional["FunctionEvent"] = None  # a GPU event's Runtime/Library event
    stack: list = field(default_factory=list)
    count: int = 1
    flops: int = 0  # with_flops: the op's floating-point operations as PyTorch counts them (op_flops)
    bytes: int = 0  # a Comm:: range: the bytes of this rank's message (distributed._comm_event)

    @property
    def key(self) -> str:
        return self.name

    @property
    def is_user_annotation(self) -> bool:
        return self.detail == "user_annotation"

    @property
    def on_device(self) -> bool:
        return self.device_type != "CPU"

    @property
    def time_range(self):
        return (self.start_ns / 1e3, self.end_ns / 1e3)

    @property
    def cpu_time_total(self) -> float:
        """Wall time of the range, us (0 for GPU work)."""
        return 0.0 if self.on_device else (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self) -> float:
        """Its time less its children's, us."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count

    @property
    def device_time_total(self) -> float:
        """us on the GPU: a GPU event's duration; for a CPU event, the GPU work it and its children
        launched (PyTorch's)."""
        if self.on_device:
            return (self.end_ns - self.start_ns) / 1e3
        return self.self_device_time_total + sum(c.device_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        if self.on_device:
            return (self.end_ns - self.start_ns) / 1e3
        return sum(k.device_time_total for k in self.kernels)

    @property
    def self_cpu_memory_usage(self) -> int:
        return sum(m.bytes for m in self.memory if m.device == "cpu")

    @property
    def cpu_memory_usage(self) -> int:
        return self.self_cpu_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_device_memory_usage(self) -> int:
        return sum(m.bytes for m in self.memory if m.device != "cpu")

    @property
    def device_memory_usage(self) -> int:
        return self.self_device_memory_usage + sum(c.device_memory_usage for c in self.cpu_children)

    def __repr__(self) -> str:
        return (f"<FunctionEvent name={self.name} device_type={self.device_type} thread={self.thread} "
                f"cpu_time={self.cpu_time_total:.3f}us device_time={self.device_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


_GPU_KINDS = ("kernel", "memcpy", "memset")


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= int(x)
    return p


def op_flops(name: str, shapes: list, flop_args: str) -> int:
    """The floating-point operations of an op as PyTorch's profiler counts them (with_flops): a
    product's 2 * M * N * K (mm, addmm; times the batch for bmm, baddbmm), conv2d's 2 * N * Hout *
    Wout * Kh * Kw * Cin * Cout / groups (the output size from its stride, padding and dilation,
    recorded for it), mul's and add's one per element of the first input; 0 for other ops."""
    try:
        if name in ("mm", "addmm"):
            a, b = shapes[-2], shapes[-1]
            return 2 * a[0] * a[1] * b[1]
        if name in ("bmm", "baddbmm"):
            a, b = shapes[-2], shapes[-1]
            return 2 * a[0] * a[1] * a[2] * b[2]
        if name in ("mul", "add"):
            return _prod(shapes[0])
        if name == "conv2d" and flop_args:
            stride, padding, dilation, groups = ast.literal_eval(flop_args)
            (n, cin, h, w), (cout, _, kh, kw) = shapes[0], shapes[1]
            pairs = [(list(v) * 2)[:2] if len(v) == 1 else list(v) for v in (stride, padding, dilation)]
            (sh, sw), (ph, pw), (dh, dw) = pairs
            hout = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
            wout = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
            return 2 * n * hout * wout * kh * kw * cin * cout // groups
    except (IndexError, ValueError, TypeError, SyntaxError):
        return 0  # inputs not of the counted form (a 0-dim mul, a batched conv2d input of 3 dims)
    return 0


def build(raw: list, gpu_raw: list = (), with_flops: bool = False):
    """Turns _C._trace_stop()'s tuples (and _C._trace_gpu_events()') into (function events, memory
    events): CPU parents linked, each GPU event to the Runtime or Library event that started it, and
    its time counted in the op around that (as PyTorch counts a kernel in the op that launched it)."""
    functions: List[FunctionEvent] = []
    memory: List[MemoryEvent] = []
    open_by_thread: Dict[int, List[FunctionEvent]] = {}
    by_corr: Dict[int, FunctionEvent] = {}
    for (depth, layer, name, detail, _, start, end, tid, shapes, dtypes, nbytes, ptr, dev_type, dev_index,
         cache, corr, stack_text, flop_args) in raw:
        stack = open_by_thread.setdefault(tid, [])
        del stack[depth:]
        parent = stack[-1] if stack else None
        if layer == "Mem":
            device = _DEVICE_TYPES[dev_type] + ("" if dev_type == 0 else f":{dev_index}")
            m = MemoryEvent(f"Mem::{name}", nbytes, ptr, device, detail, cache, tid, start, parent)
            memory.append(m)
            if parent is not None:
                parent.memory.append(m)
            continue
        label = name if detail == "user_annotation" else f"{layer}::{name}"
        e = FunctionEvent(len(functions), label, layer, detail, tid, depth, start, end,
                          _parse_list(shapes), _parse_list(dtypes), correlation=corr, cpu_parent=parent,
                          stack=stack_text.split("\n") if stack_text else [], bytes=nbytes)
        if with_flops and layer == "Op":
            e.flops = op_flops(name, e.input_shapes, flop_args)
        if parent is not None:
            parent.cpu_children.append(e)
        if corr:
            by_corr[corr] = e
        stack.append(e)
        functions.append(e)
    for kind, name, device, stream, corr, start, end in gpu_raw:
        what = _GPU_KINDS[kind] if 0 <= kind < len(_GPU_KINDS) else "kernel"
        label = f"Kernel::{name}" if what == "kernel" else name
        e = FunctionEvent(len(functions), label, "Kernel", what, stream, 0, start, end, device_type="CUDA",
                          device_index=device, correlation=corr, launch=by_corr.get(corr))
        owner = e.launch
        while owner is not None and owner.layer != "Op":
            owner = owner.cpu_parent
        owner = owner or e.launch
        if owner is not None:
            owner.kernels.append(e)
        functions.append(e)
    return functions, memory


@dataclass(eq=False)
class FunctionEventAvg:
    """A row of key_averages(): the events of one name (and input shapes, stack, device), summed."""

    key: str
    input_shapes: list
    device_type: str = "CPU"
    stack: list = field(default_factory=list)
    count: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0
    device_time_total: float = 0.0
    self_device_time_total: float = 0.0
    cpu_memory_usage: int = 0
    self_cpu_memory_usage: int = 0
    device_memory_usage: int = 0
    self_device_memory_usage: int = 0
    flops: int = 0

    def add(self, e: FunctionEvent) -> None:
        self.count += 1
        for attr in ("cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total",
                     "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage",
                     "self_device_memory_usage", "flops"):
            setattr(self, attr, getattr(self, attr) + getattr(e, attr))

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        return self.device_time_total / self.count if self.count else 0.0

    # PyTorch's older names for the device columns
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)


class EventList(list):
    """A list of events with PyTorch's EventList methods."""

    def __init__(self, items=(), use_device: Optional[str] = None, profile_memory: bool = False):
        super().__init__(items)
        self.use_device = use_device
        self.profile_memory = profile_memory

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> "EventList":
        rows: "OrderedDict[tuple, FunctionEventAvg]" = OrderedDict()
        for e in self:
            k = (e.key, e.device_type) + ((str(e.input_shapes),) if group_by_input_shape else ()) \
                + (tuple(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else ())
            if k not in rows:
                rows[k] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape else [], e.device_type,
                                           list(e.stack[:group_by_stack_n]) if group_by_stack_n > 0 else [])
            rows[k].add(e)
        return EventList(rows.values(), self.use_device, self.profile_memory)

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: Optional[str] = None,
              top_level_events_only: bool = False) -> str:
        from .._html import Table  # a str that notebooks show as an HTML table
        from .table import build_table

        return Table(build_table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width, header,
                                 self.profile_memory, self.use_device, max_src_column_width))

    def __str__(self) -> str:
        return str(self.table())

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)


def chrome_trace(functions: List[FunctionEvent], memory: List[MemoryEvent], path: str) -> None:
    """Writes Chrome's trace-event JSON (Perfetto and chrome://tracing open it), in PyTorch's layout:
    CPU events on (process, thread); GPU work on its own track (pid = device, tid = stream), with a
    flow arrow (cat "ac2g", id = correlation id) from each Runtime/Library event to the work it started."""
    starts = [e.start_ns for e in functions] + [m.time_ns for m in memory]
    base = min(starts, default=0)
    pid = os.getpid()
    cats = {"Op": "cpu_op", "Kernel": "kernel", "Library": "cpu_op", "Runtime": "cuda_runtime"}
    cpu = [e for e in functions if not e.on_device]
    gpu = [e for e in functions if e.on_device]

    def us(ns: int) -> float:
        return (ns - base) / 1e3

    out = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}}]
    for tid in sorted({e.thread for e in cpu} | {m.thread for m in memory}):
        out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                    "args": {"name": f"thread {tid} (python)"}})
    for dev in sorted({e.device_index for e in gpu}):
        out.append({"ph": "M", "name": "process_name", "pid": dev, "tid": 0, "args": {"name": f"GPU {dev}"}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": dev, "tid": 0,
                    "args": {"sort_index": 0x1000000 + dev}})
        for stream in sorted({e.thread for e in gpu if e.device_index == dev}):
            out.append({"ph": "M", "name": "thread_name", "pid": dev, "tid": stream,
                        "args": {"name": f"stream {stream}"}})
    for e in cpu:
        cat = "user_annotation" if e.is_user_annotation else \
            "python_function" if e.layer == "Python" else cats.get(e.layer, "cpu_op")
        args = {"Layer": e.layer, "Detail": e.detail}
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
            args["Input type"] = e.input_dtypes
        if e.correlation:
            args["correlation"] = e.correlation
        if e.stack:
            args["Call stack"] = ";".join(e.stack)
        if e.bytes:
            args["Bytes"] = e.bytes
        out.append({"ph": "X", "cat": cat, "name": e.name, "pid": pid, "tid": e.thread,
                    "ts": us(e.start_ns), "dur": (e.end_ns - e.start_ns) / 1e3, "args": args})
    flows_started = set()
    for e in gpu:
        cat = "kernel" if e.detail == "kernel" else f"gpu_{e.detail}"
        out.append({"ph": "X", "cat": cat, "name": e.name, "pid": e.device_index, "tid": e.thread,
                    "ts": us(e.start_ns), "dur": (e.end_ns - e.start_ns) / 1e3,
                    "args": {"device": e.device_index, "stream": e.thread, "correlation": e.correlation}})
        if e.launch is None:
            continue
        if e.correlation not in flows_started:
            flows_started.add(e.correlation)
            out.append({"ph": "s", "id": e.correlation, "pid": pid, "tid": e.launch.thread,
                        "ts": us(e.launch.start_ns), "cat": "ac2g", "name": "ac2g"})
        out.append({"ph": "f", "id": e.correlation, "pid": e.device_index, "tid": e.thread,
                    "ts": us(e.start_ns), "cat": "ac2g", "name": "ac2g", "bp": "e"})
    total = 0
    for m in memory:
        total += m.bytes
        dev_type, _, dev_index = m.device.partition(":")
        out.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": pid,
                    "tid": m.thread, "ts": (m.time_ns - base) / 1e3,
                    "args": {"Bytes": m.bytes, "Addr": m.ptr, "Total Allocated": total,
                             "Device Type": _DEVICE_TYPES.index(dev_type),
                             "Device Id": int(dev_index) if dev_index else -1, "Pool": m.pool}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": base,
                   "traceEvents": out}, f)
