"""Jupyter's HTML for tensors, modules and the profiler's tables, read back with html.parser."""
import re
from html.parser import HTMLParser

import pytest

import minitorch
from minitorch import nn
from minitorch.profiler import profile


class Tables(HTMLParser):
    """Every table's rows as lists of cell texts, the texts of div/pre blocks, and tag counts."""

    def __init__(self, text):
        super().__init__()
        self.tables, self.blocks, self.stack, self.cell = [], [], [], None
        self.feed(text)
        self.close()
        assert not self.stack, f"unclosed tags {self.stack}"

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "meta"):
            return
        self.stack.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th", "pre") or (tag == "div" and dict(attrs).get("class") == "mt-n"):
            self.cell = ""

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack}"
        self.stack.pop()
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell)
            self.cell = None
        elif tag in ("pre", "div") and self.cell is not None:
            self.blocks.append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None and "style" not in self.stack:
            self.cell += data


def seed():
    minitorch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), minitorch.randn(1, 4)


def test_small_tensor_is_a_table_of_its_printed_values():
    t = minitorch.tensor([[1.5, -2.0, 3.25], [0.0, 0.25, 7.0]])
    repr_before = repr(t)
    p = Tables(t._repr_html_())
    assert p.blocks[0] == "tensor · shape (2, 3) · float32 · cpu"
    assert p.tables == [[["0", "1.5000", "-2.0000", "3.2500"], ["1", "0.0000", "0.2500", "7.0000"]]]
    assert repr(t) == repr_before and repr(t).startswith("tensor([[")  # the text form is PyTorch's
    # a transposed view shows its own values, integers and booleans print as they do in repr
    assert Tables(t.t()._repr_html_()).tables[0][0] == ["0", "1.5000", "0.0000"]
    assert Tables(minitorch.tensor([3, 10, -4])._repr_html_()).tables == [[["3", "10", "-4"]]]
    assert Tables(minitorch.tensor([True, False])._repr_html_()).tables == [[["True", "False"]]]
    assert Tables(minitorch.tensor(2.0)._repr_html_()).tables == [[["2."]]]
    cube = Tables(minitorch.arange(8).reshape(2, 2, 2)._repr_html_())
    assert cube.tables == [[["0, 0", "0", "1"], ["0, 1", "2", "3"], ["1, 0", "4", "5"], ["1, 1", "6", "7"]]]


def printed(t):
    """The numbers and `...` of print(t), in reading order."""
    text = repr(t)
    return re.findall(r"\.\.\.|-?(?:inf|nan|\d+\.?\d*(?:e[+-]\d+)?)|True|False", text[:text.rindex("]") + 1])


def kept(n, summarised, edge):
    """The indices print shows along a dimension of length n: all, or `edge` at each end around '...'."""
    if not summarised or n <= 2 * edge:
        return list(range(n))
    return [*range(edge), "...", *range(n - edge, n)]


def expected_rows(shape, summarised, edge, prefix=()):
    """The row labels of the HTML table, worked out from the shape alone."""
    if len(shape) == 1:
        return [prefix]
    rows = []
    for i in kept(shape[0], summarised, edge):
        rows += [prefix + ("...",)] if i == "..." else expected_rows(shape[1:], summarised, edge, prefix + (i,))
    return rows


def check_shown_as_print(t):
    from minitorch._tensor_str import PRINT_OPTS

    p = Tables(t._repr_html_())
    (table,) = p.tables
    shape, edge = tuple(t.shape), PRINT_OPTS.edgeitems
    summarised = t.numel() > PRINT_OPTS.threshold
    labelled = len(shape) >= 2
    cells = [c for row in table for c in (row[1:] if labelled else row)]
    # the same values and elisions, in the same order, as print; one '...' per cell of a skipped row
    columns = kept(shape[-1], summarised, edge) if edge else ["..."]
    assert [c for c in cells if c != "..."] == [v for v in printed(t) if v != "..."]
    assert all(len(row) == len(columns) + labelled for row in table)
    for row in table:
        values = row[1:] if labelled else row
        if labelled and row[0].endswith("..."):
            assert set(values) == {"..."}
        else:
            assert [v == "..." for v in values] == [c == "..." for c in columns]
    if labelled:
        want = expected_rows(shape, summarised, edge) if edge else [("...",)]
        assert [r[0] for r in table] == [", ".join(map(str, w)) for w in want]
    note = [b for b in p.blocks if "elements; as print(t)" in b]
    assert note == ([f"{t.numel():,} elements; as print(t), {edge} at each end of each dimension "
                     "(set_printoptions: threshold, edgeitems)"] if summarised else [])
    return table


def test_large_tensor_is_summarised_as_print_does():
    from minitorch._tensor_str import printoptions

    minitorch.manual_seed(0)
    model, _ = seed()
    big = model[0](minitorch.randn(300, 4))  # 2400 elements, over print's threshold of 1000
    table = check_shown_as_print(big)
    assert [r[0] for r in table] == ["0", "1", "2", "...", "297", "298", "299"]
    assert len(table[0]) == 1 + 7  # the label, then 3, ..., 3 of the 8 columns
    head = "tensor · shape (300, 8) · float32 · cpu · grad_fn=<AddmmBackward0>"
    assert Tables(big._repr_html_()).blocks[0] == head
    for t in (minitorch.arange(2000.0).reshape(40, 50), minitorch.arange(1500).reshape(30, 50),
              minitorch.randn(2000), minitorch.randn(3, 5, 100), minitorch.randn(10, 10, 11),
              minitorch.randn(2, 700).t(), minitorch.randn(12, 9)):  # the last, 108 elements, shows them all
        check_shown_as_print(t)
    assert len(check_shown_as_print(minitorch.randn(12, 9))) == 12
    with printoptions(threshold=50, edgeitems=2):
        assert len(check_shown_as_print(minitorch.randn(6, 10))) == 5
        check_shown_as_print(minitorch.randn(60))
    with printoptions(threshold=50, edgeitems=0):
        assert check_shown_as_print(minitorch.randn(6, 10)) == [["...", "..."]]


def test_empty_tensor_and_grad_suffixes():
    model, _ = seed()
    w = Tables(model[0].weight._repr_html_())
    assert w.blocks[0] == "tensor · shape (8, 4) · float32 · cpu · requires_grad=True"
    assert len(w.tables[0]) == 8 and len(w.tables[0][0]) == 5
    assert Tables(minitorch.zeros(0, 3)._repr_html_()).blocks[1] == "empty"


def test_dtype_device_and_size_html():
    from minitorch._html import dtype_html, size_html

    def text(html):
        p = Tables(html)
        return p.blocks, re.sub(r"<style>.*?</style>|<[^>]+>", "", html)

    assert text(dtype_html(minitorch.float32))[1] == "minitorch.float32 floating point, 4 bytes"
    assert text(dtype_html(minitorch.int64))[1] == "minitorch.int64 integer, 8 bytes"
    assert text(dtype_html(minitorch.bool))[1] == "minitorch.bool boolean, 1 byte"
    assert text(size_html(minitorch.zeros(2, 3).shape))[1] == "minitorch.Size([2, 3]) 2 dims, 6 elements"
    assert text(size_html(minitorch.zeros(()).shape))[1] == "minitorch.Size([]) 0 dims, 1 element"
    assert text(minitorch.device("cpu")._repr_html_())[1] == "device(type=&#x27;cpu&#x27;) CPU memory"
    assert text(minitorch.device("cuda:1")._repr_html_())[1].endswith(") CUDA device 1")
    assert text(minitorch.device("cuda")._repr_html_())[1].endswith(") the current CUDA device")


def test_dtype_and_size_have_repr_html():
    from minitorch._html import dtype_html, size_html

    assert minitorch.float64._repr_html_() == dtype_html(minitorch.float64)
    shape = minitorch.zeros(4, 5).shape
    assert shape._repr_html_() == size_html(shape)


def test_every_style_rule_is_scoped():
    """Each selector of every output's style sheet starts with the doubled root class, which outranks
    JupyterLab's `:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td` (0,2,1)."""
    model, x = seed()
    with profile() as prof:
        model(x)
    outputs = [minitorch.ones(2)._repr_html_(), model._repr_html_(), prof.journey()._repr_html_(),
               prof.key_averages()._repr_html_(), minitorch.device("cpu")._repr_html_()]
    for html in outputs:
        assert html.startswith('<div class="minitorch-') and ' mt-html">' in html.split("<style>")[0]
        for sheet in re.findall(r"<style>(.*?)</style>", html):
            selectors = [sel.strip() for rule in re.findall(r"([^{}]+)\{", sheet) for sel in rule.split(",")]
            assert selectors and all(sel.startswith(".mt-html.mt-html") for sel in selectors), selectors


def test_module_tree_with_parameter_shapes_and_counts():
    model, _ = seed()
    p = Tables(model._repr_html_())
    assert p.tables == [[
        ["Module", "Parameters", "# params"],
        ["Sequential", "", "58"],
        ["0: Linear(in_features=4, out_features=8, bias=True)", "weight (8, 4), bias (8,)", "40"],
        ["1: ReLU", "", "0"],
        ["2: Linear(in_features=8, out_features=2, bias=True)", "weight (2, 8), bias (2,)", "18"],
    ]]
    assert p.blocks == ["58 parameters (58 trainable)"]
    model[0].weight.requires_grad_(False)
    assert Tables(model._repr_html_()).blocks == ["58 parameters (26 trainable)"]


def test_journey_and_key_averages_tables():
    model, x = seed()
    with profile(record_shapes=True, profile_memory=True) as prof:
        model(x)
    journey = prof.journey()
    assert isinstance(journey, str) and str(journey).startswith("Event")  # print() shows the text as before
    p = Tables(journey._repr_html_())
    (table,) = p.tables
    assert table[0] == ["Event", "Layer", "What it is", "CPU time", "GPU time", "Device"]
    text_rows = str(journey).split("\n\n")[0].split("\n")[2:]
    assert [r[0] for r in table[1:]] == [line.split("  ")[0].strip() or line.split()[0] for line in text_rows]
    layers = [r[1] for r in table[1:]]
    assert layers[:3] == ["Python", "Python", "Op"] and {"Kernel", "Library", "Mem"} <= set(layers)
    assert any(r[0] == "Library::cblas_sgemv" and r[3].endswith(" us") for r in table)
    assert p.blocks[-1].startswith("The tree of Python::Sequential")
    assert "└─ Library::cblas_sgemv" in p.blocks[-1]

    averages = prof.key_averages()
    for html in (averages._repr_html_(), averages.table(sort_by="cpu_time_total", header="seed")._repr_html_()):
        q = Tables(html)
        (table,) = q.tables
        assert table[0][:3] == ["Name", "Self CPU %", "Self CPU"] and table[0][-1] == "# of Calls"
        assert sorted(r[0] for r in table[1:]) == sorted(e.key for e in averages)
        assert {r[0]: int(r[-1]) for r in table[1:]}["Op::addmm"] == 2
        assert q.blocks[-1].startswith("Self CPU time total:")
    assert q.blocks[0] == "seed"


def test_graph_html_in_a_notebook_is_a_scoped_fragment():
    model, x = seed()
    g = minitorch.viz.trace(model, x)
    first, second = g._repr_html_(), g._repr_html_()
    for html in (first, second):
        p = Tables(html)  # well-formed
        assert html.startswith('<div id="mtviz-') and "<html" not in html and html.count("<script>") == 1
        root = html.split('"')[1]
        assert f"document.getElementById('{root}')" in html and "document.querySelectorAll" not in html
    assert first.split('"')[1] != second.split('"')[1]  # two outputs of one page never share an id
