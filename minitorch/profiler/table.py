"""key_averages().table(): PyTorch's profiler table, column for column (autograd/profiler_util.py)."""
from __future__ import annotations

import math
from typing import Optional

_WIDTH = 12  # every column but Name and Input Shapes
_SPACING = 2


def format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_share(us: float, total: float) -> str:
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


def format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def flops_unit(smallest: int):
    """(scale, header) of the FLOPs column: the unit of the smallest count (PyTorch's)."""
    names = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"]
    level = int(max(0.0, min(math.log10(smallest) / 3, float(len(names) - 1))))
    return 10.0 ** (-3 * level), names[level]


def trim_path(path: str, width: int) -> str:
    if len(path) > width:
        path = path[len(path) - width:]
        if len(path) > 3:
            path = "..." + path[3:]
    return path


def build_table(events, sort_by: Optional[str], row_limit: int, max_name_width: int, max_shapes_width: int,
                header: Optional[str], profile_memory: bool, use_device: Optional[str],
                max_src_width: int = 75) -> str:
    if len(events) == 0:
        return ""
    has_device_time = any(e.self_device_time_total > 0 for e in events)
    has_device_mem = any(e.self_device_memory_usage > 0 for e in events)
    has_shapes = any(e.input_shapes for e in events)
    stacks = [e.stack for e in events if getattr(e, "stack", None)]
    src_width = min(max(len(f) for st in stacks for f in st) + 4, max_src_width) if stacks else 0
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    name_width = min(max(len(e.key) for e in events) + 4, max_name_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_width)
    dev = (use_device or "None").upper()
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_device_time:
        headers += [f"Self {dev}", f"Self {dev} %", f"{dev} total", f"{dev} time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            headers += [f"{dev} Mem", f"Self {dev} Mem"]
    headers.append("# of Calls")
    counted = [e.flops for e in events if getattr(e, "flops", 0) > 0]
    if counted:
        flops_scale, flops_name = flops_unit(min(counted))
        headers.append(f"Total {flops_name}")
    widths = [name_width] + [_WIDTH] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    if stacks:
        headers.append("Source Location")
        widths.append(src_width)
    row_format = "".join("{: " + ("<" if stacks and k == len(widths) - 1 else ">") + str(w) + "}" + " " * _SPACING
                         for k, w in enumerate(widths))
    sep = "".join("-" * w + " " * _SPACING for w in widths)
    line_length = sum(w + _SPACING for w in widths) - _SPACING

    self_cpu_total = sum(e.self_cpu_time_total for e in events)
    # PyTorch's total counts the GPU events only: an op's device time is its kernels' again
    self_dev_total = sum(e.self_device_time_total for e in events
                         if getattr(e, "device_type", "CPU") != "CPU" and not getattr(e, "is_user_annotation", False))
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    lines += [sep, row_format.format(*headers), sep]
    for e in events[:row_limit]:
        name = e.key
        if len(name) >= max_name_width - 3:
            name = name[: max_name_width - 3] + "..."
        row = [name, format_share(e.self_cpu_time_total, self_cpu_total), format_time(e.self_cpu_time_total),
               format_share(e.cpu_time_total, self_cpu_total), format_time(e.cpu_time_total),
               format_time(e.cpu_time)]
        if has_device_time:
            row += [format_time(e.self_device_time_total), format_share(e.self_device_time_total, self_dev_total),
                    format_time(e.device_time_total), format_time(e.device_time)]
        if profile_memory:
            row += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                row += [format_memory(e.device_memory_usage), format_memory(e.self_device_memory_usage)]
        row.append(e.count)
        if counted:
            row.append(f"{e.flops * flops_scale:8.3f}" if e.flops > 0 else "--")
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim_path(e.stack[0], src_width) if e.stack else "")
        lines.append(row_format.format(*row))
        if stacks:
            for frame in e.stack[1:]:
                lines.append(row_format.format(*([""] * (len(headers) - 1) + [trim_path(frame, src_width)])))
            lines.append(row_format.format(*([""] * len(headers))))
    lines += [sep, f"Self CPU time total: {format_time(self_cpu_total)}"]
    if has_device_time:
        lines.append(f"Self {dev} time total: {format_time(self_dev_total)}")
    return "\n".join(lines) + "\n"
