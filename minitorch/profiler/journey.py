"""prof.journey(): the seed article's walk down the stack, read off one recording.

A table with a row per event (Event, Layer, what it is in one line, CPU time, GPU time, device),
and the tree of one call from the Python module down to the kernels and library calls, with the
time spent at each level. Given a width, both fit it: the Event and "What it is" cells and the
tree's lines wrap (wrap() below), and a CPU-only recording drops its empty GPU column; without
one, each row is one line, the layout notebooks read back into an HTML table.
"""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

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
    if e.layer == "Python" and e.detail == "user_annotation" and e.name.startswith("Comm::"):
        # see distributed._comm_event (MPI or NCCL below); the bytes are this rank's message
        size = f", {e.bytes} B" if getattr(e, "bytes", 0) else ""
        return f"collective of minitorch.distributed: {e.name[6:]}{size}"
    key = e.detail if e.layer == "Python" else (f"Op/{e.detail}" if f"Op/{e.detail}" in _WHAT else e.layer)
    text = _WHAT.get(key, e.detail).format(detail=e.detail, short=e.name.split("::")[-1])
    if e.layer == "Op" and e.input_shapes:
        text += f", inputs {e.input_shapes}"
    return text


# where wrap() may break a line, best first: between fields (two or more spaces), between words,
# after a '::', these outside brackets; then at a space or before a bracket, inside them too; a word
# still too wide is cut
_BREAKS = (re.compile(r" {2,}"), re.compile(r" "), re.compile(r"(?<=::)"), re.compile(r" |(?=[(<\[])"))
_BOUND = 3  # the _BREAKS from this one on may fall inside brackets
_PAIRS = {"]": "[", ">": "<"}  # kept whole while they fit a line: [[1, 4], [8]], ew_kernel<float, float>
_EVENT_MIN = 16  # the narrowest Event column the table gives to a "What it is" that wraps anyway


def _bound(text: str) -> List[bool]:
    """Which characters of text lie inside a closed [...], <...> or `...` (a '<' that opens one is
    followed by a non-space, so '->' and 'a < b' open nothing)."""
    inside = [False] * len(text)
    stack: List[Tuple[str, int]] = []
    for i, c in enumerate(text):
        if c == "`" and stack and stack[-1][0] == "`":
            start = stack.pop()[1]
            inside[start:i] = [True] * (i - start)
        elif c in "[`" or (c == "<" and text[i + 1:i + 2] not in ("", " ")):
            stack.append((c, i))
        elif c in _PAIRS and stack and stack[-1][0] == _PAIRS[c]:
            start = stack.pop()[1]
            inside[start:i] = [True] * (i - start)
    return inside


def _pieces(text: str, level: int) -> List[Tuple[str, str]]:
    """(separator before it, piece) for text split at the _BREAKS[level], outside brackets unless
    the level is _BOUND or later."""
    inside = _bound(text) if level < _BOUND else [False] * len(text)
    out, sep, last = [], "", 0
    for m in _BREAKS[level].finditer(text):
        if m.start() == last and out:  # a space before a bracket: one break, not two
            sep, last = sep + m.group(), m.end()
        elif 0 < m.start() < len(text) and not inside[m.start()]:
            out.append((sep, text[last:m.start()]))
            sep, last = m.group(), m.end()
    out.append((sep, text[last:]))
    return out


def _wrap(text: str, first: int, rest: int) -> List[str]:
    """text as lines of at most `first` columns, then `rest`, broken greedily at the best _BREAKS."""
    lines = [""]

    def room() -> int:
        return max(1, first if len(lines) == 1 else rest)

    def put(piece: str, sep: str, level: int) -> None:
        cur = lines[-1]
        if len(cur) + (len(sep) if cur else 0) + len(piece) <= room():
            lines[-1] = cur + sep + piece if cur else piece
        elif cur and len(piece) <= max(1, rest):
            lines.append(piece)
        elif level < len(_BREAKS):
            for i, (s, p) in enumerate(_pieces(piece, level)):
                put(p, sep if i == 0 else s, level + 1)
        else:  # one word wider than a line: cut it, starting on the current line where it has room
            while piece:
                cur = lines[-1]
                take = room() - len(cur) - (len(sep) if cur else 0)
                if take <= 0:
                    lines.append("")
                    continue
                lines[-1] = (cur + sep if cur else "") + piece[:take]
                piece, sep = piece[take:], ""

    put(text.strip(), "", 0)
    return lines


def wrap(text: str, width: Optional[int], indent: str = "") -> List[str]:
    """One line of text as lines of at most width columns, each starting with the text's own leading
    spaces, those after the first with indent too; unchanged when width is None. Breaks fall between
    fields (two spaces apart), else between words, else after a '::', and inside [...], <...> or
    `...` only where that alone is wider than a line; a word wider than a line is cut."""
    if width is None:
        return [text]
    lead = text[:len(text) - len(text.lstrip())]  # kept, before every line
    lines = _wrap(text, width - len(lead), width - len(lead) - len(indent))
    return [lead + lines[0]] + [lead + indent + line for line in lines[1:]]


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


def journey_view(functions: List, memory: List, call: Optional[str] = None, use_device: Optional[str] = None,
                 width: Optional[int] = None) -> str:
    """The table and the tree as text; with a width, every line fits in it (see the module's doc)."""
    rows = _rows(functions, memory)
    below = _gpu_below(functions)
    table = [("Event", "Layer", "What it is", "CPU time", "GPU time", "Device")]
    depths = [0]
    for x in rows:
        on_gpu = getattr(x, "on_device", False)
        cpu = "" if x.layer == "Mem" or on_gpu else f"{x.cpu_time_total:.1f} us"
        device = x.device.upper() if x.layer == "Mem" else (f"CUDA:{x.device_index}" if on_gpu else "CPU")
        table.append((x.name, x.layer, describe(x), cpu, _gpu_time(x, use_device, below), device))
        depths.append(_depth(x))
    if width is not None and use_device is None:  # a CPU-only recording's GPU column says only "-"
        table = [r[:4] + r[5:] for r in table]
    lines = _render(table, depths, width, what=2)

    cpu_events = [e for e in functions if not e.on_device]
    roots = [e for e in cpu_events if e.cpu_parent is None and (call is None or e.name == call)]
    if call is not None and not roots:
        roots = [e for e in cpu_events if e.name == call][:1]
    lines.append("")
    if roots:
        root = roots[0]
        lines.extend(wrap(f"The tree of {root.name} (time at each level; self time in brackets"
                          + ("; GPU time after 'GPU'" if use_device else "") + "):", width))
        gpu = below if use_device else None
        lines.extend(_tree(root, "", True, memory, _launched(functions), gpu, width))
    return "\n".join(lines)


def _render(table, depths, width: Optional[int], what: int) -> List[str]:
    """The rows of table (its header first) as aligned lines: the columns up to `what` (the Event
    and the description, which wrap to fit width) left-aligned, the times and device after them
    right-aligned; the Event indented by depth."""
    cells = [[[("  " * d) + name]] + [[c] for c in r] for d, (name, *r) in zip(depths, table)]
    if width is not None:
        _fit(cells, depths, width, what)
    widths = [max(len(line) for r in cells for line in r[k]) for k in range(len(table[0]))]
    lines = []
    for i, r in enumerate(cells):
        for j in range(max(len(c) for c in r)):
            parts = [(c[j] if j < len(c) else "") for c in r]
            lines.append("  ".join(p.ljust(w) if k <= what else p.rjust(w) for k, (p, w) in
                                   enumerate(zip(parts, widths))).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def article_view(functions: List, memory: List, use_device: Optional[str] = None,
                 width: Optional[int] = None) -> str:
    """The seed article's table of the journey: one row per event in the order it happened (GPU work
    right after the call that started it), in the article's five columns: the event (Layer::name;
    GPU work by its kernel's or copy's name),
    what it is, its CPU time, the GPU time of the work it started, and the device type it ran on."""
    below = _gpu_below(functions)
    table = [("Event", "Description", "CPU time", "GPU time", "Device type")]
    for x in _rows(functions, memory):
        on_gpu = getattr(x, "on_device", False)
        cpu = "" if x.layer == "Mem" or on_gpu else f"{x.cpu_time_total:.1f} us"
        device = (x.device if x.layer == "Mem" else ("cuda" if on_gpu else "cpu")).split(":")[0].upper()
        table.append((x.name, describe(x), cpu, _gpu_time(x, use_device, below), device))
    return "\n".join(_render(table, [0] * len(table), width, what=1))


def _longest_word(text: str) -> int:
    """The widest piece of text that wrap() keeps whole while it can (see _BREAKS)."""
    pieces = [text]
    for level in range(_BOUND):
        pieces = [p for q in pieces for _, p in _pieces(q, level)]
    return max(len(p) for p in pieces)


def _fit(cells, depths, width: int, what_col: int = 2) -> None:
    """Narrows the Event (0) and "What it is" (what_col) columns of cells (rows of columns of lines) until a
    row fits in width, and wraps their text to them. Of the ways to share the room between the two,
    the one that cuts the fewest words (or breaks inside brackets), then the one with the fewest
    lines (a wrapped name counting one more), then the widest Event. A wrapped Event name goes on
    two columns further in."""
    natural = [max(len(r[k][0]) for r in cells) for k in range(len(cells[0]))]
    room = width - sum(w for k, w in enumerate(natural) if k not in (0, what_col)) - 2 * (len(natural) - 1)
    pads = ["  " * d for d in depths]
    names = [r[0][0][len(pad):] for pad, r in zip(pads, cells)]
    name_words = [(len(n), _longest_word(n)) for n in names]
    what_words = [_longest_word(r[what_col][0]) for r in cells]

    def layout(event: int, what: int):
        left = []
        for pad, name in zip(pads, names):
            lines = _wrap(name, event - len(pad), event - len(pad) - 2)
            left.append([pad + lines[0]] + [pad + "  " + line for line in lines[1:]])
        return left, [_wrap(r[what_col][0], what, what) for r in cells]

    lo = min(natural[0], max(_EVENT_MIN, room - natural[what_col]))
    best = None
    for event in range(lo, max(lo, min(natural[0], room - 1)) + 1):
        what = min(natural[what_col], max(room - event, 1))
        room_name = [event - len(pad) for pad in pads]
        cuts = (sum(n > w and word > w - 2 for (n, word), w in zip(name_words, room_name))
                + sum(word > what for word in what_words))
        left, right = layout(event, what)
        wrapped = sum(len(a) > 1 for a in left)  # a name read in two pieces costs a line more
        cost = (cuts, sum(max(len(a), len(b)) for a, b in zip(left, right)) + wrapped)
        if best is None or cost <= best[0]:
            best = (cost, left, right)
    for r, left, right in zip(cells, best[1], best[2]):
        r[0], r[what_col] = left, right


def _launched(functions):
    by_launch = {}
    for e in functions:
        if e.on_device and e.launch is not None:
            by_launch.setdefault(id(e.launch), []).append(e)
    return by_launch


def _lines(first: str, rest: str, text: str, width: Optional[int]) -> List[str]:
    """first + text, wrapped to width with its further lines starting with rest."""
    if width is None:
        return [first + text]
    body = _wrap(text, width - len(first), width - len(rest))
    return [first + body[0]] + [rest + line for line in body[1:]]


def _tree(e, prefix: str, last: bool, memory, launched=None, below=None, width: Optional[int] = None
          ) -> List[str]:
    launched = launched or {}
    head = "" if not prefix and last and e.cpu_parent is None else ("└─ " if last else "├─ ")
    gpu = f"  GPU {below[id(e)]:.1f} us" if below and below.get(id(e), 0) > 0 else ""
    kids = sorted(list(e.cpu_children) + list(e.memory) + launched.get(id(e), []),
                  key=lambda x: x.start_ns if hasattr(x, "start_ns") else x.time_ns)
    inner = prefix + ("" if not head else ("   " if last else "│  "))
    text = (f"{e.name}  {e.cpu_time_total:.1f} us ({e.self_cpu_time_total:.1f} us){gpu}"
            + (f"  [{e.detail}]" if e.layer in ("Op", "Kernel", "Library", "Runtime") else ""))
    out = _lines(prefix + head, inner + ("│  " if kids else "   "), text, width)
    for i, k in enumerate(kids):
        end = i == len(kids) - 1
        branch = "└─ " if end else "├─ "
        if getattr(k, "on_device", False):
            text = f"{k.name}  GPU {k.device_time_total:.1f} us  [CUDA:{k.device_index} stream {k.thread}]"
        elif hasattr(k, "start_ns"):
            out.extend(_tree(k, inner, end, memory, launched, below, width))
            continue
        else:
            text = f"{k.name}  {describe(k)}"
        out.extend(_lines(inner + branch, inner + ("   " if end else "│  ") + "   ", text, width))
    return out
