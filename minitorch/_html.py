"""HTML for Jupyter: tensors, modules, dtypes, devices, sizes and the profiler's tables (their `_repr_html_`).

Only display: the text forms (repr, print, table()) stay PyTorch's. A tensor shows as a table the
values print shows, formatted by print's own formatter and summarised by print's own rule
(_tensor_str._shown: over `threshold` elements, `edgeitems` at each end of each dimension), so the
notation and the elided `...` match print. The profiler's tables are read back from their text,
split at the columns of the dashed rule under the header, so this file need not follow each change
to the text layout.

Every output is a `<div class="mt-html ...">` with its own style sheet, scoped to that class.
Notebook front ends style the HTML they render: JupyterLab's rendermime CSS right-aligns every cell
(`:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td`, specificity 0,2,1), pads cells by 0.5em,
centres tables and lets `pre` wrap; the classic notebook's `.rendered_html` does the same with
weaker selectors. Each of our rules starts `.mt-html.mt-html` (the class twice: specificity 0,2,0
before the rest of the selector), so it outranks theirs without !important; nesting depth is an
inline padding, which no style sheet outranks.
"""
from __future__ import annotations

from html import escape
from typing import Any, List, Optional, Tuple

_SCOPE = ".mt-html.mt-html"
_RULES = [  # (selectors, declarations); cells default to right-aligned numbers, class l is text
    ("", "text-align:left"),
    (".mt-s", "overflow-x:auto;max-width:100%"),
    (".mt-t", "border-collapse:collapse;border:none;margin:0;table-layout:auto;font:12px monospace;"
              "color:inherit"),
    (".mt-t tr", "background:none"),
    (".mt-t td,.mt-t th", "padding:1px 8px;border:1px solid #ddd;text-align:right;vertical-align:top;"
                          "white-space:nowrap;line-height:normal;max-width:none;font-weight:normal"),
    (".mt-t .l", "text-align:left"),
    (".mt-t td.l", "white-space:normal"),  # long text wraps; numbers and headers do not
    (".mt-t th", "color:#666"),
    (".mt-n", "font:12px monospace;color:#555;margin:0;padding:0;border:0;background:none;"
              "white-space:pre;text-align:left"),
    (".mt-v", "font:12px monospace"),
    (".mt-d", "color:#888"),
]
_STYLE = "<style>" + "".join(
    ",".join(f"{_SCOPE} {s}".rstrip() if s else _SCOPE for s in sel.split(",")) + "{" + decl + "}"
    for sel, decl in _RULES) + "</style>"
_TABLE = 'class="mt-t"'
_LAYER_COLOR = {"Python": "#fff2b3", "Op": "#dbe9f6", "Kernel": "#d9f0d3", "Library": "#e8dff5",
                "Runtime": "#fde0dd", "Mem": "#eeeeee"}


def _root(kind: str, body: str) -> str:
    """One output: the scoped style sheet and `body` inside `<div class="minitorch-<kind> mt-html">`."""
    return f'<div class="minitorch-{kind} mt-html">{_STYLE}{body}</div>'


def _td(text: str, align: str = "right", extra: str = "", tag: str = "td") -> str:
    cls = ' class="l"' if align == "left" else ""
    style = f' style="{extra}"' if extra else ""
    return f"<{tag}{cls}{style}>{escape(text)}</{tag}>"


# ---- dtype, device, Size ---------------------------------------------------------------------

def _value(kind: str, text: str, detail: str) -> str:
    """A one-line value: its repr, then a muted detail."""
    return _root(kind, f'<span class="mt-v">{escape(text)}</span> <span class="mt-v mt-d">{escape(detail)}</span>')


def dtype_html(dt: Any) -> str:
    kind = "floating point" if dt.is_floating_point else "boolean" if repr(dt) == "minitorch.bool" else "integer"
    size = dt.itemsize
    return _value("dtype", repr(dt), f"{kind}, {size} byte{'s' if size != 1 else ''}")


def device_html(d: Any) -> str:
    where = "CPU memory" if d.type == "cpu" else (
        "the current CUDA device" if d.index is None else f"CUDA device {d.index}")
    return _value("device", repr(d), where)


def size_html(s: Any) -> str:
    n = s.numel()
    return _value("size", repr(s), f"{len(s)} dim{'s' if len(s) != 1 else ''}, {n:,} element{'s' if n != 1 else ''}")


# ---- tensors ---------------------------------------------------------------------------------

def _summary(t: Any) -> str:
    from minitorch._tensor_str import _grad_suffix

    parts = [f"shape {tuple(t.shape)}", str(t.dtype).replace("minitorch.", ""), str(t.device)]
    grad = _grad_suffix(t)
    if grad:
        parts.append(grad)
    return "tensor · " + " · ".join(parts)


def _rows(values: Any, shape: Tuple[int, ...], index: Tuple[Any, ...]) -> List[Tuple[Tuple[Any, ...], Any]]:
    """The shown values of a tensor of dim >= 1 as table rows: (leading index, last-dim values) per
    row, and (index + ("...",), None) for a block print elides. A summarised dimension keeps its
    first and last entries, so the entry k of m after the `...` is index shape[0] - (m - k)."""
    from minitorch._tensor_str import _SKIPPED

    if len(shape) == 1:
        return [(index, values)]
    out: List[Tuple[Tuple[Any, ...], Any]] = []
    after = False
    for k, v in enumerate(values):
        if v is _SKIPPED:
            out.append((index + ("...",), None))
            after = True
        else:
            out.extend(_rows(v, shape[1:], index + (shape[0] - (len(values) - k) if after else k,)))
    return out


def tensor_html(t: Any) -> str:
    from minitorch._tensor_str import PRINT_OPTS, _SKIPPED, _shown

    head = f'<div class="mt-n">{escape(_summary(t))}</div>'
    n = t.numel()
    if n == 0:
        return _root("tensor", head + '<div class="mt-n">empty</div>')
    values, fmt = _shown(t)
    rows = [((), [values])] if t.dim() == 0 else _rows(values, tuple(t.shape), ())
    width = max([1, *(len(r) for _, r in rows if r is not None)])
    labelled = t.dim() >= 2
    body = []
    for index, row in rows:
        label = _td(", ".join(map(str, index)), tag="th") if labelled else ""
        cells = ["..."] * width if row is None else ["..." if v is _SKIPPED else fmt._plain(v) for v in row]
        body.append("<tr>" + label + "".join(map(_td, cells)) + "</tr>")
    if n > PRINT_OPTS.threshold:
        edge = PRINT_OPTS.edgeitems
        head += (f'<div class="mt-n">{n:,} elements; as print(t), {edge} at each end of each dimension '
                 f'(set_printoptions: threshold, edgeitems)</div>')
    return _root("tensor", f'{head}<div class="mt-s"><table {_TABLE}>{"".join(body)}</table></div>')


# ---- modules ---------------------------------------------------------------------------------

def module_html(m: Any) -> str:
    """The module tree: one row per submodule with its own parameters' shapes and its subtree's count."""
    rows = [_td(h, "left", tag="th") for h in ("Module", "Parameters", "# params")]
    body = ["<tr>" + "".join(rows) + "</tr>"]
    for qual, sub in m.named_modules():
        depth = 0 if not qual else qual.count(".") + 1
        name = (qual.rsplit(".", 1)[-1] + ": " if qual else "") + sub._get_name()
        extra = sub.extra_repr()
        if extra and "\n" not in extra:
            name += f"({extra})"
        own = ", ".join(f"{k} {tuple(p.shape)}" for k, p in sub.named_parameters(recurse=False))
        count = sum(p.numel() for p in sub.parameters())
        body.append("<tr>" + _td(name, "left", f"padding-left:{8 + 18 * depth}px") + _td(own, "left")
                    + _td(f"{count:,}") + "</tr>")
    params = list(m.parameters())
    total = sum(p.numel() for p in params)
    trainable = sum(p.numel() for p in params if p.requires_grad)
    foot = f"{total:,} parameters ({trainable:,} trainable)"
    return _root("module", f'<table {_TABLE}>{"".join(body)}</table><div class="mt-n">{escape(foot)}</div>')


# ---- profiler tables -------------------------------------------------------------------------

def _spans(rule: str) -> Optional[List[Tuple[int, int]]]:
    """The columns of a rule line such as `-----  ---  ----`, or None if the line is not one."""
    if not rule.strip() or set(rule.strip()) - {"-", " "}:
        return None
    spans, start = [], None
    for i, c in enumerate(rule + " "):
        if c == "-" and start is None:
            start = i
        elif c != "-" and start is not None:
            spans.append((start, i))
            start = None
    return spans


def _cells(line: str, spans: List[Tuple[int, int]]) -> List[str]:
    return [line[a:b] if k < len(spans) - 1 else line[a:] for k, (a, b) in enumerate(spans)]


def _split(text: str):
    """(lines before the header, header, rows, lines after the table, column spans) of a text table."""
    lines = text.split("\n")
    at = next((i for i, l in enumerate(lines) if _spans(l) and i + 1 < len(lines)), None)
    if at is None:
        return lines, None, [], [], []
    # journey: header above the rule; key_averages: rule, header, rule
    if not _spans(lines[at + 1]) and _spans(lines[at + 2] if at + 2 < len(lines) else ""):
        before, header, start = lines[:at], lines[at + 1], at + 3
    else:
        before, header, start = lines[:at - 1], lines[at - 1], at + 1
    spans = _spans(lines[at])
    end = next((i for i in range(start, len(lines)) if not lines[i].strip() or _spans(lines[i])), len(lines))
    return before, header, lines[start:end], lines[end:], spans


def table_html(text: str, layer_column: Optional[int] = None, indented: bool = False) -> str:
    """A fixed-width text table as an HTML table. With `indented`, the first column's leading spaces
    are nesting depth; with `layer_column`, rows are coloured by the layer that column names."""
    before, header, rows, after, spans = _split(text)
    if header is None:
        return _root("profile", f'<pre class="mt-n">{escape(text)}</pre>')
    out = [f'<div class="mt-n">{escape(l)}</div>' for l in before if l.strip() and set(l) != {"="}]
    head = "".join(_td(c.strip(), "left", tag="th") for c in _cells(header, spans))
    out.append(f"<table {_TABLE}><tr>{head}</tr>")
    for line in rows:
        cells = _cells(line, spans)
        layer = cells[layer_column].strip() if layer_column is not None else ""
        bg = f' style="background:{_LAYER_COLOR[layer]}"' if layer in _LAYER_COLOR else ""
        tds = []
        for k, c in enumerate(cells):
            text = c.strip()
            if k == 0 and indented:
                depth = len(c) - len(c.lstrip())
                tds.append(_td(text, "left", f"padding-left:{8 + 6 * depth}px"))
            else:
                tds.append(_td(text, "right" if text[:1].isdigit() or text[:1] in "-." else "left"))
        out.append(f"<tr{bg}>" + "".join(tds) + "</tr>")
    out.append("</table>")
    rest = "\n".join(l for l in after if not _spans(l)).strip("\n")
    if rest:
        out.append(f'<pre class="mt-n">{escape(rest)}</pre>')
    return _root("profile", "".join(out))


class Table(str):
    """The text of a profiler table (a str, as PyTorch returns) that notebooks show as HTML."""

    layer_column: Optional[int] = None
    indented = False

    def _repr_html_(self) -> str:
        return table_html(str(self), self.layer_column, self.indented)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(str(self))


class Journey(Table):
    """prof.journey(): the layered table, then the tree of one call."""

    layer_column = 1
    indented = True
