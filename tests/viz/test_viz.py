"""minitorch.viz: traced graphs (Tracer dispatch key), the backward graph, and their renderings."""
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import minitorch
from minitorch import nn

SVG = "{http://www.w3.org/2000/svg}"


def seed():
    minitorch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)), minitorch.randn(1, 4)


def edges(g):
    return [(g.node(e.src).name, g.node(e.dst).name, e.shape) for e in g.edges]


def test_seed_network_graph_exactly():
    model, x = seed()
    g = minitorch.viz.trace(model, x)
    assert [(n.kind, n.name, n.module) for n in g.nodes] == [
        ("input", "input", ()),
        ("op", "linear", ("", "0")), ("param", "0.weight", ("", "0")), ("param", "0.bias", ("", "0")),
        ("op", "relu", ("", "1")),
        ("op", "linear", ("", "2")), ("param", "2.weight", ("", "2")), ("param", "2.bias", ("", "2")),
        ("output", "output", ()),
    ]
    assert edges(g) == [
        ("input", "linear", (1, 4)), ("0.weight", "linear", (8, 4)), ("0.bias", "linear", (8,)),
        ("linear", "relu", (1, 8)), ("relu", "linear", (1, 8)),
        ("2.weight", "linear", (2, 8)), ("2.bias", "linear", (2,)), ("linear", "output", (1, 2)),
    ]
    assert all(e.dtype == "float32" and e.device == "cpu" for e in g.edges)
    lin, relu = g.nodes[1], g.nodes[4]
    assert (lin.key, lin.kernel) == ("CompositeImplicitAutograd", "mt_composite_linear")
    # the composite's parts, with their nesting depth and the key that computed them
    assert lin.parts == [(1, "t", "CompositeImplicitAutograd"), (2, "transpose", "CompositeImplicitAutograd"),
                         (3, "as_strided", "CompositeImplicitAutograd"), (1, "addmm", "CPU")]
    assert relu.parts == [(1, "clamp_min", "CPU")]
    assert g.modules == {("",): ("", "Sequential"), ("", "0"): ("0", "Linear"), ("", "1"): ("1", "ReLU"),
                         ("", "2"): ("2", "Linear")}
    assert not minitorch._C._tracer_count()  # tracing is off again


def test_collapse_to_module_depth():
    model, x = seed()
    g = minitorch.viz.trace(model, x)
    c = g.collapse(1)
    assert [(n.kind, n.name) for n in c.nodes] == [("input", "input"), ("module", "0: Linear"),
                                                   ("module", "1: ReLU"), ("module", "2: Linear"),
                                                   ("output", "output")]
    assert edges(c) == [("input", "0: Linear", (1, 4)), ("0: Linear", "1: ReLU", (1, 8)),
                        ("1: ReLU", "2: Linear", (1, 8)), ("2: Linear", "output", (1, 2))]
    whole = g.collapse(0)
    assert [n.name for n in whole.nodes] == ["input", "Sequential", "output"]
    assert g.collapse(5).nodes == g.nodes


def test_trace_ops_of_a_backend_kernel_and_a_plain_function():
    x = minitorch.randn(3, 4)
    g = minitorch.viz.trace(lambda t: (t * 2).exp().sum(dim=1), x)
    assert [(n.name, n.key, n.kernel) for n in g.nodes if n.kind == "op"] == [
        ("mul", "CPU", "mt_cpu_mul"), ("exp", "CPU", "mt_cpu_exp"), ("sum", "CPU", "mt_cpu_sum")]
    assert edges(g)[-1] == ("sum", "output", (3,))


def test_small_cnn_graph():
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(64, 10))
    g = minitorch.viz.trace(model, minitorch.randn(2, 1, 8, 8))
    assert [(n.name, n.key) for n in g.nodes if n.kind == "op"] == [
        ("conv2d", "CPU"), ("relu", "CompositeImplicitAutograd"), ("max_pool2d", "CPU"),
        ("flatten", "CompositeImplicitAutograd"), ("linear", "CompositeImplicitAutograd")]
    assert [n.name for n in g.nodes if n.kind == "param"] == ["0.weight", "0.bias", "4.weight", "4.bias"]
    assert [(s, d, shape) for s, d, shape in edges(g) if s != "input" and "." not in s] == [
        ("conv2d", "relu", (2, 4, 8, 8)), ("relu", "max_pool2d", (2, 4, 8, 8)),
        ("max_pool2d", "flatten", (2, 4, 4, 4)), ("flatten", "linear", (2, 64)), ("linear", "output", (2, 10))]


def test_backward_graph_of_a_small_loss():
    minitorch.manual_seed(0)
    lin = nn.Linear(3, 2)
    loss = lin(minitorch.randn(4, 3)).relu().sum()
    g = minitorch.viz.backward_graph(loss, params=dict(lin.named_parameters()))
    names = {n.id: n for n in g.nodes}
    assert [n.name for n in g.nodes if n.kind == "grad_fn"] == ["SumBackward0", "ReluBackward0", "AddmmBackward0",
                                                               "TBackward0"]
    leaves = sorted((n.name, n.shape) for n in g.nodes if n.kind == "leaf")
    assert leaves == [("bias", (2,)), ("weight", (2, 3))]
    pairs = sorted((names[e.src].name, names[e.dst].name) for e in g.edges)
    assert pairs == sorted([("ReluBackward0", "SumBackward0"), ("AddmmBackward0", "ReluBackward0"),
                            ("bias", "AddmmBackward0"), ("TBackward0", "AddmmBackward0"),
                            ("weight", "TBackward0"), ("SumBackward0", "loss")])
    # without names, a leaf is AccumulateGrad with its variable's shape, as torchviz draws it
    plain = minitorch.viz.backward_graph(loss)
    assert sorted(n.shape for n in plain.nodes if n.name == "AccumulateGrad") == [(2,), (2, 3)]


def graphs():
    model, x = seed()
    g = minitorch.viz.trace(model, x)
    w = minitorch.randn(3, requires_grad=True)
    return [g, g.collapse(1), minitorch.viz.backward_graph((w * w).sum())]


def svg_texts(svg):
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    return " ".join(t.text or "" for t in root.iter(SVG + "text"))


@pytest.mark.parametrize("k", range(3))
def test_svg_well_formed_with_every_node(k):
    g = graphs()[k]
    svg = g.to_svg()
    text = svg_texts(svg)
    for n in g.nodes:
        assert n.name in text
    for e in g.edges:
        assert e.label in text
    assert g._repr_svg_() == svg


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.stack = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_html_self_contained_with_every_node(tmp_path):
    model, x = seed()
    g = minitorch.viz.trace(model, x)
    g.save(tmp_path / "g.html")
    g.save(tmp_path / "g.svg")
    g.save(tmp_path / "g.dot")
    html = (tmp_path / "g.html").read_text()
    p = _Collect()
    p.feed(html)
    p.close()
    tags = [t for t, _ in p.tags]
    assert tags.count("svg") == 1 and tags.count("script") == 1
    assert not any(a.get("src") or a.get("href") for _, a in p.tags)  # no network
    text = " ".join(p.text)
    for n in g.nodes:
        assert n.name in text
    assert sum(1 for t, a in p.tags if t == "g" and "module" in a.get("class", "").split()) == 4
    assert "addEventListener('click'" in html
    svg_texts((tmp_path / "g.svg").read_text())
    dot = (tmp_path / "g.dot").read_text()
    assert dot.startswith('digraph "Sequential" {') and 'subgraph "cluster_/0"' in dot
    assert '"op0" -> "op5" [label="(1, 8)"];' in dot
    with pytest.raises(ValueError):
        g.save(tmp_path / "g.png")


def test_tracing_is_off_after_an_error():
    def bad(t):
        return t @ minitorch.ones(5, 5)

    with pytest.raises(RuntimeError):
        minitorch.viz.trace(bad, minitorch.ones(2, 3))
    from minitorch.nn.modules import module
    assert module._viz_scope is None
    g = minitorch.viz.trace(lambda t: t + 1, minitorch.ones(2))
    assert [n.name for n in g.nodes] == ["input", "add", "output"]
