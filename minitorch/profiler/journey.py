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
    """Events and memory events in time order, parents before their children."""
    items = [(e.start_ns, e.depth, 0, e) for e in functions]
    items += [(m.time_ns, (m.cpu_parent.depth + 1) if m.cpu_parent else 0, 1, m) for m in memory]
    items.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t[3] for t in items]


def _depth(x) -> int:
    return x.depth if hasattr(x, "depth") else ((x.cpu_parent.depth + 1) if x.cpu_parent else 0)


def journey_view(functions: List, memory: List, call: Optional[str] = None, use_device: Optional[str] = None
                 ) -> str:
    gpu_note = "-" if use_device is None else "0.0"
    rows = _rows(functions, memory)
    table = [("Event", "Layer", "What it is", "CPU time", "GPU time", "Device")]
    for x in rows:
        cpu = "" if x.layer == "Mem" else f"{x.cpu_time_total:.1f} us"
        device = x.device.upper() if x.layer == "Mem" else "CPU"
        name = ("  " * _depth(x)) + x.name
        table.append((name, x.layer, describe(x), cpu, gpu_note if x.layer != "Mem" else "", device))
    widths = [max(len(r[k]) for r in table) for k in range(6)]
    lines = []
    for i, r in enumerate(table):
        lines.append("  ".join(c.ljust(w) if k in (0, 1, 2) else c.rjust(w) for k, (c, w) in
                               enumerate(zip(r, widths))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))

    roots = [e for e in functions if e.cpu_parent is None and (call is None or e.name == call)]
    if call is not None and not roots:
        roots = [e for e in functions if e.name == call][:1]
    lines.append("")
    if roots:
        root = roots[0]
        lines.append(f"The tree of {root.name} (time at each level; self time in brackets):")
        lines.extend(_tree(root, "", True, memory))
    return "\n".join(lines)


def _tree(e, prefix: str, last: bool, memory) -> List[str]:
    head = "" if not prefix and last and e.cpu_parent is None else ("└─ " if last else "├─ ")
    out = [f"{prefix}{head}{e.name}  {e.cpu_time_total:.1f} us ({e.self_cpu_time_total:.1f} us)"
           + (f"  [{e.detail}]" if e.layer in ("Op", "Kernel", "Library") else "")]
    kids = sorted(list(e.cpu_children) + list(e.memory),
                  key=lambda x: x.start_ns if hasattr(x, "start_ns") else x.time_ns)
    inner = prefix + ("" if not head else ("   " if last else "│  "))
    for i, k in enumerate(kids):
        is_last = i == len(kids) - 1
        if hasattr(k, "start_ns"):
            out.extend(_tree(k, inner, is_last, memory))
        else:
            out.append(f"{inner}{'└─ ' if is_last else '├─ '}{k.name}  {describe(k)}")
    return out
