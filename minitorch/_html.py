"""HTML for Jupyter: tensors, modules and the profiler's tables (their `_repr_html_`).

Only display: the text forms (repr, print, table()) stay PyTorch's. A tensor shows its values as a
table when it is small (read with one tolist(), formatted by _tensor_str's formatter, so the
notation matches print) and a one-line summary when it is not. The profiler's tables are read back
from their text, split at the columns of the dashed rule under the header, so this file need not
follow each change to the text layout.
"""
from __future__ import annotations

from html import escape
from typing import Any, List, Optional, Tuple

MAX_CELLS = 100  # tensors with more elements than this show a summary, not values
# one small style sheet per output; cells default to right-aligned numbers, class l is text
_STYLE = ("<style>.mt-t{border-collapse:collapse;font:12px monospace}"
          ".mt-t td,.mt-t th{padding:1px 8px;border:1px solid #ddd;text-align:right}"
          ".mt-t .l{text-align:left}.mt-t th{color:#666}.mt-n{font:12px monospace;color:#555}</style>")
_TABLE = 'class="mt-t"'
_LAYER_COLOR = {"Python": "#fff2b3", "Op": "#dbe9f6", "Kernel": "#d9f0d3", "Library": "#e8dff5",
                "Runtime": "#fde0dd", "Mem": "#eeeeee"}


def _td(text: str, align: str = "right", extra: str = "", tag: str = "td") -> str:
    cls = ' class="l"' if align == "left" else ""
    style = f' style="{extra}"' if extra else ""
    return f"<{tag}{cls}{style}>{escape(text)}</{tag}>"


# ---- tensors ---------------------------------------------------------------------------------

def _summary(t: Any) -> str:
    from minitorch._tensor_str import _grad_suffix

    parts = [f"shape {tuple(t.shape)}", str(t.dtype).replace("minitorch.", ""), str(t.device)]
    grad = _grad_suffix(t)
    if grad:
        parts.append(grad)
    return "tensor · " + " · ".join(parts)


def _rows(values: Any, dim: int, index: Tuple[int, ...]) -> List[Tuple[Tuple[int, ...], list]]:
    """The nested lists of a tensor of dim >= 1 as (leading index, last-dim row) pairs."""
    if dim == 1:
        return [(index, values)]
    return [r for i, v in enumerate(values) for r in _rows(v, dim - 1, index + (i,))]


def tensor_html(t: Any) -> str:
    from minitorch._tensor_str import _flatten, _Formatter

    head = f'{_STYLE}<div class="mt-n">{escape(_summary(t))}</div>'
    n = t.numel()
    if n == 0 or n > MAX_CELLS:
        why = "empty" if n == 0 else f"{n:,} elements; print(t) shows a summary of the values"
        return f'<div class="minitorch-tensor">{head}<div class="mt-n">{escape(why)}</div></div>'
    values = t.tolist()
    fmt = _Formatter(_flatten(values, t.dim(), []), bool(t.dtype.is_floating_point))
    rows = [((), [values])] if t.dim() == 0 else _rows(values, t.dim(), ())
    labelled = t.dim() >= 2
    body = []
    for index, row in rows:
        label = _td(", ".join(map(str, index)), tag="th") if labelled else ""
        body.append("<tr>" + label + "".join(_td(fmt._plain(v)) for v in row) + "</tr>")
    return f'<div class="minitorch-tensor">{head}<table {_TABLE}>{"".join(body)}</table></div>'


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
    return (f'<div class="minitorch-module">{_STYLE}<table {_TABLE}>{"".join(body)}</table>'
            f'<div class="mt-n">{escape(foot)}</div></div>')


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
        return f"<pre>{escape(text)}</pre>"
    out = [_STYLE] + [f'<div class="mt-n">{escape(l)}</div>' for l in before if l.strip() and set(l) != {"="}]
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
    return '<div class="minitorch-profile">' + "".join(out) + "</div>"


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
