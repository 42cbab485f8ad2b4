"""Jupyter's HTML for tensors, modules and the profiler's tables, read back with html.parser."""
from html.parser import HTMLParser

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


def test_large_or_empty_tensor_is_a_summary_with_grad_fn():
    model, x = seed()
    big = model[0](minitorch.randn(30, 4))
    p = Tables(big._repr_html_())
    assert p.tables == []
    assert p.blocks == ["tensor · shape (30, 8) · float32 · cpu · grad_fn=<AddmmBackward0>",
                        "240 elements; print(t) shows a summary of the values"]
    w = Tables(model[0].weight._repr_html_())
    assert w.blocks[0] == "tensor · shape (8, 4) · float32 · cpu · requires_grad=True"
    assert len(w.tables[0]) == 8 and len(w.tables[0][0]) == 5
    assert Tables(minitorch.zeros(0, 3)._repr_html_()).blocks[1] == "empty"


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
