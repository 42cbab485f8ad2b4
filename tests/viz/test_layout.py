"""The built-in layered layout: no edge runs through a node's box, no two boxes overlap, routes join their ends."""
import pytest

import minitorch
from minitorch import nn
from minitorch.viz import _render


class Residual(nn.Module):
    """Edges that skip layers: the input reaches the add past three ops."""

    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return self.b(self.a(x).relu()).tanh() + x * 2


def graphs():
    minitorch.manual_seed(0)
    model, x = nn.Sequential(Residual(), nn.Linear(4, 2)), minitorch.randn(1, 4)
    seed = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    return {"residual": minitorch.viz.trace(model, x),
            "residual backward": minitorch.viz.backward_graph(model(x).sum(), dict(model.named_parameters())),
            "seed": minitorch.viz.trace(seed, x), "seed collapsed": minitorch.viz.trace(seed, x).collapse(1)}


def inside(point, box, margin=1.0):
    (px, py), (x, y, w, h) = point, box
    return x + margin < px < x + w - margin and y + margin < py < y + h - margin


@pytest.mark.parametrize("name", ["residual", "residual backward", "seed", "seed collapsed"])
def test_edges_avoid_node_boxes(name):
    g = graphs()[name]
    boxes, routes, width, height = _render._layout(g)
    assert len(routes) == len(g.edges)
    for e, route in zip(g.edges, routes):
        (x0, y0, w0, h0), (x1, y1, w1, _) = boxes[e.src], boxes[e.dst]
        assert route[0] == (x0 + w0 / 2, y0 + h0) and route[-1] == (x1 + w1 / 2, y1)
        others = [b for i, b in boxes.items() if i not in (e.src, e.dst)]
        for (ax, ay), (bx, by) in zip(route, route[1:]):
            for k in range(41):
                p = (ax + (bx - ax) * k / 40, ay + (by - ay) * k / 40)
                assert not any(inside(p, b) for b in others), f"{e.src} -> {e.dst} crosses a node at {p}"
    items = list(boxes.values())
    for k, a in enumerate(items):
        assert 0 <= a[0] and a[0] + a[2] <= width and 0 <= a[1] and a[1] + a[3] <= height
        for b in items[k + 1:]:
            apart = a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]
            assert apart, f"boxes {a} and {b} overlap"


def test_long_edge_is_routed_through_each_layer_it_skips():
    g = graphs()["residual"]
    boxes, routes, _, _ = _render._layout(g)
    (k, edge), = [(k, e) for k, e in enumerate(g.edges) if g.node(e.src).name == "mul"]
    assert g.node(edge.dst).name == "add"
    assert len(routes[k]) > 2  # bends at the dummy nodes between mul and add
    svg = g.to_svg()
    assert svg.count("<polyline") == 2 * len(g.edges)
