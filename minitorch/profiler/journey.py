"""prof.journey(): the seed article's walk down the stack, read off one recording.

A table with a row per event (Event, Layer, what it is in one line, CPU time, GPU time, device),
and the tree of one call from the Python module down to the kernels and library calls, with the
time spent at each level.
"""
from __future__ import annotations

from typing import List, Optional

_WHAT = {
    "nn.Module": "nn.Module.__call__: {short} runs forward()",
    "user_annotation": "record_function range",
    "Op": "dispatcher entry, ran the {detail} kernel",
    "Op/CompositeImplicitAutograd": "dispatcher entry, composite kernel (written in ops)",
    "Kernel": "{detail} kernel",
    "Library": "{detail} call",
    "Runtime": "CUDA runtime call",
}


def describe(e) -> str:
    if getattr(e, "on_device", False):
        what = {"kernel": "GPU kernel", "memcpy": "GPU copy", "memset": "GPU memset"}.get(e.detail, "GPU work")
        via = f", started by {e.launch.name}" if e.launch is not None else ""
        return f"{what} on cuda:{e.device_index} stream {e.thread}{via}"
    if e.layer == "Mem":
        verb = "allocates" if e.bytes >= 0 else "frees"
        hit = {1: ", cache hit", 0: ", cache miss"}.get(e.cache, "")
        return f"{e.pool} allocator {verb} {abs(e.bytes)} B on {e.device}{hit}"
    key = e.detail if e.layer == "Python" else (f"Op/{e.detail}" if f"Op/{e.detail}" in _WHAT else e.layer)
    text = _WHAT.get(key, e.detail).format(detail=e.detail, short=e.name.split("::")[-1])
    if e.layer == "Op" and e.input_shapes:
        text += f", inputs {e.input_shapes}"
    return text


def _rows(functions, memory):
    """Events and memory events in time order, parents before their children; GPU work right after
    the event that started it."""
    cpu = [e for e in functions if not e.on_device]
    items = [(e.start_ns, e.depth, 0, e) for e in cpu]
    items += [(m.time_ns, (m.cpu_parent.depth + 1) if m.cpu_parent else 0, 1, m) for m in memory]
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    started = {}
    orphans = []
    for e in functions:
        if e.on_device:
            (started.setdefault(id(e.launch), []) if e.launch is not None else orphans).append(e)
    rows = []
    for t in items:
        rows.append(t[3])
        rows.extend(started.get(id(t[3]), []))
    return rows + orphans


def _depth(x) -> int:
    if getattr(x, "on_device", False):
        return x.launch.depth + 1 if x.launch is not None else 0
    return x.depth if hasattr(x, "depth") else ((x.cpu_parent.depth + 1) if x.cpu_parent else 0)


def _gpu_below(functions) -> dict:
    """id(event) -> us of GPU work started inside it (by it or below it, at any depth): the journey's
    GPU time, down the launch chain (PyTorch's device_time_total stops at the op)."""
    below: dict = {}
    for e in functions:
        if e.on_device:
            below[id(e)] = e.device_time_total
            x = e.launch
            while x is not None:
                below[id(x)] = below.get(id(x), 0.0) + e.device_time_total
                x = x.cpu_parent
    return below


def _gpu_time(x, use_device, below) -> str:
    if x.layer == "Mem":
        return ""
    if use_device is None:
        return "-"
    return f"{below.get(id(x), 0.0):.1f} us"


def journey_view(functions: List, memory: List, call: Optional[str] = None, use_device: Optional[str] = None
                 ) -> str:
    rows = _rows(functions, memory)
    below = _gpu_below(functions)
    table = [("Event", "Layer", "What it is", "CPU time", "GPU time", "Device")]
    for x in rows:
        on_gpu = getattr(x, "on_device", False)
        cpu = "" if x.layer == "Mem" or on_gpu else f"{x.cpu_time_total:.1f} us"
        device = x.device.upper() if x.layer == "Mem" else (f"CUDA:{x.device_index}" if on_gpu else "CPU")
        name = ("  " * _depth(x)) + x.name
        table.append((name, x.layer, describe(x), cpu, _gpu_time(x, use_device, below), device))
    widths = [max(len(r[k]) for r in table) for k in range(6)]
    lines = []
    for i, r in enumerate(table):
        lines.append("  ".join(c.ljust(w) if k in (0, 1, 2) else c.rjust(w) for k, (c, w) in
                               enumerate(zip(r, widths))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))

    cpu_events = [e for e in functions if not e.on_device]
    roots = [e for e in cpu_events if e.cpu_parent is None and (call is None or e.name == call)]
    if call is not None and not roots:
        roots = [e for e in cpu_events if e.name == call][:1]
    lines.append("")
    if roots:
        root = roots[0]
        lines.append(f"The tree of {root.name} (time at each level; self time in brackets"
                     + ("; GPU time after 'GPU'" if use_device else "") + "):")
        lines.extend(_tree(root, "", True, memory, _launched(functions), below if use_device else None))
    return "\n".join(lines)


def _launched(functions):
    by_launch = {}
    for e in functions:
        if e.on_device and e.launch is not None:
            by_launch.setdefault(id(e.launch), []).append(e)
    return by_launch


def _tree(e, prefix: str, last: bool, memory, launched=None, below=None) -> List[str]:
    launched = launched or {}
    head = "" if not prefix and last and e.cpu_parent is None else ("└─ " if last else "├─ ")
    gpu = f"  GPU {below[id(e)]:.1f} us" if below and below.get(id(e), 0) > 0 else ""
    out = [f"{prefix}{head}{e.name}  {e.cpu_time_total:.1f} us ({e.self_cpu_time_total:.1f} us){gpu}"
           + (f"  [{e.detail}]" if e.layer in ("Op", "Kernel", "Library", "Runtime") else "")]
    kids = sorted(list(e.cpu_children) + list(e.memory) + launched.get(id(e), []),
                  key=lambda x: x.start_ns if hasattr(x, "start_ns") else x.time_ns)
    inner = prefix + ("" if not head else ("   " if last else "│  "))
    for i, k in enumerate(kids):
        branch = "└─ " if i == len(kids) - 1 else "├─ "
        if getattr(k, "on_device", False):
            out.append(f"{inner}{branch}{k.name}  GPU {k.device_time_total:.1f} us  "
                       f"[CUDA:{k.device_index} stream {k.thread}]")
        elif hasattr(k, "start_ns"):
            out.extend(_tree(k, inner, i == len(kids) - 1, memory, launched, below))
        else:
            out.append(f"{inner}{branch}{k.name}  {describe(k)}")
    return out
