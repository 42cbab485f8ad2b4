"""The journey of one call: what ran, layer by layer, read off the C trace.

The plainest view of the profiler's events (minitorch.profiler has the full one): the Python modules,
the ops at each dispatcher entry (with the dispatch key that ran), the kernels, and the library
calls under them (OpenBLAS's cblas_sgemv ...), nested, with wall-clock time at each level.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List

from . import _C


@dataclass
class Event:
    depth: int
    layer: str   # Python, Op, Kernel, Library
    name: str    # "addmm", or a module's class: "Linear"
    detail: str  # dispatch key, the library, or "nn.Module"
    us: float

    @property
    def label(self) -> str:
        return f"{self.layer}::{self.name}"


def record(fn: Callable, *args, **kwargs):
    """Runs fn(*args, **kwargs) with the journey trace on; returns (result, events)."""
    _C._trace_start()
    try:
        result = fn(*args, **kwargs)
    finally:
        events = [Event(*e[:5]) for e in _C._trace_stop()]
    return result, events


def format_tree(events: List[Event]) -> str:
    """One line per event, indented by nesting: label, [key or library], time."""
    width = max((2 * e.depth + len(e.label) for e in events), default=0) + 2
    lines = []
    for e in events:
        left = "  " * e.depth + e.label
        lines.append(f"{left:<{width}} {('[' + e.detail + ']') if e.detail else '':<30} {e.us:9.1f} us")
    return "\n".join(lines)
