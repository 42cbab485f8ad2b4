"""Text form of a tensor: the output of PyTorch's repr, with `minitorch.` in place of `torch.`.

`_str(t)` follows PyTorch 2.x's torch/_tensor_str.py rule for rule: one formatter picks one
notation (integer-valued `1.`, fixed `1.2346`, or scientific `1.2346e-05`) and one width for every
element shown, rows wrap at `linewidth`, tensors over `threshold` elements are summarised to
`edgeitems` at each end of each dimension, and the suffixes (device, dtype, grad) break lines as
PyTorch's do. It reads values only through `t.tolist()` on the few pieces that are shown, so a huge
tensor prints as fast as a small one. It relies on the duck-typed surface alone (shape, dim(),
numel(), dtype, device, requires_grad, grad_fn, tolist(), integer and slice indexing) and imports
nothing from minitorch, so it can be tested before the C core exists.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import sys
from typing import Any, Iterator


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()

# The named presets of set_printoptions(profile=...), as PyTorch defines them.
_PROFILES: dict[str, dict[str, Any]] = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Set the options for printing tensors (PyTorch's semantics).

    A profile ("default", "short" or "full") is applied first and the other arguments override it;
    arguments left as None keep their current value, except `sci_mode`, which is always set:
    None there means "choose the notation automatically", as in PyTorch.
    """
    for name, value in _PROFILES.get(profile or "", {}).items():  # an unknown name does nothing
        setattr(PRINT_OPTS, name, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments that set_printoptions() accepts."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs: Any) -> Iterator[None]:
    """Change the print options inside a `with` block only."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Skipped:
    """Stands in a gathered nested list for the elided middle of a summarised dimension."""

    __slots__ = ()


_SKIPPED = _Skipped()


def _gather_summary(t: Any, edge: int) -> Any:
    """The values a summarised tensor shows, as nested lists with _SKIPPED where `...` goes.

    Mirrors PyTorch's get_summarized_data: a dimension longer than 2 * edge keeps only its first
    and last `edge` entries. Pieces with nothing to elide are read with one tolist() call.
    """
    dim = t.dim()
    if dim == 0:
        return t.tolist()
    if edge == 0:  # PyTorch shows no element at all, just `[...]`
        return [_SKIPPED]
    n = t.shape[0]
    if max(t.shape) <= 2 * edge:
        return t.tolist()
    if dim == 1:
        return t[:edge].tolist() + [_SKIPPED] + t[n - edge :].tolist()
    if n > 2 * edge:
        rows: list[int | None] = [*range(edge), None, *range(n - edge, n)]
    else:
        rows = list(range(n))
    return [_SKIPPED if i is None else _gather_summary(t[i], edge) for i in rows]


def _flatten(node: Any, dim: int, out: list) -> list:
    """Append the scalars of a gathered nested list (skipping _SKIPPED) to `out`."""
    if dim == 0:
        out.append(node)
    elif dim == 1:
        out.extend(v for v in node if v is not _SKIPPED)
    else:
        for child in node:
            if child is not _SKIPPED:
                _flatten(child, dim - 1, out)
    return out


class _Formatter:
    """One notation and one width for every element shown (PyTorch's _Formatter).

    Only the nonzero finite values decide: if all are integers they print as `12.`; scientific
    notation is used when they span more than 1000x, exceed 1e8, or go below 1e-4 (or when
    sci_mode forces it); otherwise fixed notation with `precision` decimals.
    """

    def __init__(self, values: list, floating: bool) -> None:
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            self.max_width = max([1, *(len(str(v)) for v in values)])
            return
        finite = [v for v in values if math.isfinite(v) and v != 0]
        if not finite:  # PyTorch ignores a forced sci_mode here too
            return
        self.int_mode = all(v == math.ceil(v) for v in finite)
        smallest = min(abs(v) for v in finite)
        largest = max(abs(v) for v in finite)
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or smallest < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        # nan, inf and zeros do not widen the column (PyTorch measures nonzero finite values only)
        self.max_width = max(len(self._plain(v)) for v in finite)

    def _plain(self, value: Any) -> str:
        """`value` in the chosen notation, unpadded."""
        if not self.floating:
            return str(value)
        if self.sci_mode:
            return f"{value:.{PRINT_OPTS.precision}e}"
        if self.int_mode:
            return f"{value:.0f}" + ("." if math.isfinite(value) else "")
        return f"{value:.{PRINT_OPTS.precision}f}"

    def format(self, value: Any) -> str:
        """`value` right-aligned to the common width."""
        text = self._plain(value)
        return " " * (self.max_width - len(text)) + text


class _ComplexFormatter:
    """Complex values as PyTorch prints them: the real part padded to the real parts' width, then
    the imaginary part unpadded with its sign (`+` added unless it has one) and `j`, so the
    elements of a row need not be of one width: `-4.4226-10.8451j,  1.0834+0.1668j`."""

    def __init__(self, values: list) -> None:
        self.re = _Formatter([v.real for v in values], True)
        self.im = _Formatter([v.imag for v in values], True)
        # for wrapping rows: the real column, the imaginary parts' widest and its `j`
        self.max_width = self.re.max_width + self.im.max_width + 1

    def format(self, value: Any) -> str:
        imag = self.im._plain(value.imag) + "j"
        return self.re.format(value.real) + (imag if imag[0] in "+-" else "+" + imag)


def _render_row(row: list, indent: int, fmt: _Formatter) -> str:
    """A 1-D row, wrapped to linewidth; continuation lines align under the first element."""
    # Each element takes its width plus ", "; `indent` columns are already used on the left.
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    # The elision marker counts as one element; PyTorch drops its leading space when
    # edgeitems is 0, since nothing stands beside it.
    gap = "..." if PRINT_OPTS.edgeitems == 0 else " ..."
    items = [gap if v is _SKIPPED else fmt.format(v) for v in row]
    lines = [", ".join(items[i : i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _render(node: Any, dim: int, indent: int, fmt: _Formatter) -> str:
    """Nested brackets; slices of a k-D block are separated by k-1 newlines (blank lines)."""
    if dim == 0:
        return fmt.format(node)
    if dim == 1:
        return _render_row(node, indent, fmt)
    parts = ["..." if c is _SKIPPED else _render(c, dim - 1, indent + 1, fmt) for c in node]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(parts) + "]"


def _shown(t: Any) -> tuple[Any, _Formatter]:
    """The values print shows (nested lists, _SKIPPED where `...` goes) and their formatter.

    Every element when there are at most `threshold`, else the summary. The HTML display
    (minitorch/_html.py) shows these same values.
    """
    if t.numel() > PRINT_OPTS.threshold:
        values = _gather_summary(t, PRINT_OPTS.edgeitems)
    else:
        values = t.tolist()
    flat = _flatten(values, t.dim(), [])
    if getattr(t.dtype, "is_complex", False):
        return values, _ComplexFormatter(flat)
    return values, _Formatter(flat, bool(t.dtype.is_floating_point))


def _tensor_str(t: Any, indent: int) -> str:
    """The bracketed values of a non-empty tensor whose text starts `indent` columns in."""
    values, fmt = _shown(t)
    return _render(values, t.dim(), indent, fmt)


def _add_suffixes(text: str, suffixes: list[str], indent: int, force_newline: bool = False) -> str:
    """Append `, suffix` items, moving one to a new line when it would pass linewidth (the first
    one always with force_newline, as a sparse COO tensor's size goes under its values)."""
    parts = [text]
    # PyTorch's measure of the last line: on a single line it counts two more than its length
    # (rfind gives -1). Kept as is, since it decides where the line breaks.
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            force_newline = False
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _default_dtype_name() -> str:
    """Name of the default floating dtype, which repr leaves unprinted."""
    # Follows minitorch.get_default_dtype() once the package has one (looked up lazily, so this
    # module needs no import of minitorch); float32 until then, as in PyTorch.
    get = getattr(sys.modules.get("minitorch"), "get_default_dtype", None)
    return str(get()).rsplit(".", 1)[-1] if callable(get) else "float32"


def _default_complex_name(default_dtype: str) -> str:
    """The complex dtype of the default float's parts: not shown, as the default float is not."""
    return "complex128" if default_dtype == "float64" else "complex64"


def _grad_suffix(t: Any) -> str | None:
    """`grad_fn=<Name>` for a non-leaf, `requires_grad=True` for a leaf that needs grad."""
    try:
        grad_fn = getattr(t, "grad_fn", None)
    except RuntimeError:  # PyTorch prints this when the graph cannot be read
        return "grad_fn=<Invalid>"
    if grad_fn is not None:
        name = getattr(grad_fn, "name", None)
        name = name() if callable(name) else type(grad_fn).__name__
        return f"grad_fn=<{name.rsplit('::', 1)[-1]}>"
    if getattr(t, "requires_grad", False):
        return "requires_grad=True"
    return None


def _values(t: Any, indent: int, suffixes: list[str]) -> str:
    """The bracketed values; for a tensor with no memory (a wrapper subclass's, whose values
    its __torch_dispatch__ keeps), "..." and its shape, as for a meta tensor."""
    try:
        return _tensor_str(t, indent)
    except RuntimeError as e:
        if "doesn't have storage" not in str(e):
            raise
        suffixes.insert(0, f"size={tuple(t.shape)}")
        return "..."


def _str(self: Any, *, tensor_contents: str | None = None) -> str:
    """repr(tensor) as PyTorch writes it, with `minitorch.` dtypes.

    `tensor_contents`, when given, replaces the bracketed values (the suffixes still follow).
    """
    prefix = "tensor("
    indent = len(prefix)
    suffixes: list[str] = []
    if self.device.type != "cpu":
        suffixes.append(f"device='{self.device}'")
    dtype_name = str(self.dtype).rsplit(".", 1)[-1]
    default_dtype = _default_dtype_name()
    if self.device.type == "meta":
        # No values to show: the shape always, the dtype unless the default (int64 too).
        suffixes.append(f"size={tuple(self.shape)}")
        if dtype_name != default_dtype:
            suffixes.append(f"dtype={self.dtype}")
        body = "..." if tensor_contents is None else tensor_contents
    elif self.numel() == 0:
        # Nothing shows the shape or dtype, so both are printed (the shape unless it is (0,)).
        if self.dim() != 1:
            suffixes.append(f"size={tuple(self.shape)}")
        if dtype_name != default_dtype:
            suffixes.append(f"dtype={self.dtype}")
        body = "[]" if tensor_contents is None else tensor_contents
    else:
        if not PRINT_OPTS.edgeitems:  # no element is shown, so the shape is
            suffixes.append(f"size={tuple(self.shape)}")
        # int64 and bool are recognisable from the values themselves
        if dtype_name not in (default_dtype, _default_complex_name(default_dtype), "int64", "bool"):
            suffixes.append(f"dtype={self.dtype}")
        body = _values(self, indent, suffixes) if tensor_contents is None else tensor_contents
    grad = _grad_suffix(self)
    if grad is not None:
        suffixes.append(grad)
    return _add_suffixes(prefix + body, suffixes, indent)
