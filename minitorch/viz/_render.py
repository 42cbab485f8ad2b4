"""Drawing a Graph: Graphviz source, an SVG from our own small layered layout, and one HTML page.

The layout needs no Graphviz (Sugiyama's scheme, small): nodes go on layers by longest path from the
sources, an edge that skips layers passes a dummy node in each layer it crosses, nodes are ordered
in each layer by the mean position of their neighbours (sweeps down and up) and placed as near
their neighbours as the order allows, and edges are polylines through their dummies, labelled with
the tensor's shape. Module groups are boxes around the nodes they ran, outer boxes
padded more than inner ones. With `dot` installed, to_svg(use_dot=True) lets Graphviz draw it.
The HTML is the SVG with a small script scoped to its own <div>, so a notebook page can hold several.
A click on a module box collapses it to a node-sized box (at the top of its lowest node) and redraws
every edge with an end inside it to that box; a second click restores the frame and the routes.
"""
from __future__ import annotations

import shutil
import subprocess
import uuid
from typing import Dict, List, Tuple
from xml.sax.saxutils import escape, quoteattr

FILL = {"op": "#dbe9f6", "input": "#fff2b3", "output": "#fff2b3", "param": "#d9f0d3",
        "const": "#eeeeee", "module": "#fbd9b5", "grad_fn": "#dbe9f6", "leaf": "#d9f0d3"}
CHAR_W, LINE_H, PAD, GAP_X, GAP_Y = 7.2, 15, 8, 40, 46


def _mkey(path: Tuple[str, ...]) -> str:
    return "/".join(path) or "."


def to_dot(g) -> str:
    lines = [f"digraph {quoteattr(g.title or 'graph')} {{",
             '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9];']
    def node_line(n, indent):
        label = n.label.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'{indent}"{n.id}" [label="{label}", fillcolor="{FILL.get(n.kind, "#ffffff")}"];'

    def emit(path: Tuple[str, ...], indent: str) -> None:
        for n in g.nodes:
            if n.module == path:
                lines.append(node_line(n, indent))
        for child in sorted(p for p in g.modules if len(p) == len(path) + 1 and p[: len(path)] == path):
            qual, cls = g.modules[child]
            lines.append(f'{indent}subgraph "cluster_{_mkey(child)}" {{')
            lines.append(f'{indent}  label="{qual + ": " if qual else ""}{cls}"; style="rounded,dashed";')
            emit(child, indent + "  ")
            lines.append(f"{indent}}}")

    emit((), "  ")
    # nodes whose module is not in the tree (collapsed away) still need a line
    known = set(g.modules) | {()}
    for n in g.nodes:
        if n.module not in known:
            lines.append(node_line(n, "  "))
    for e in g.edges:
        lab = f' [label="{e.label}"]' if e.label else ""
        lines.append(f'  "{e.src}" -> "{e.dst}"{lab};')
    lines.append("}")
    return "\n".join(lines) + "\n"


Box = Tuple[float, float, float, float]  # x, y (top-left corner), width, height
DUMMY_W = 12  # the slot an edge takes in each layer it passes through


def _layout(g) -> Tuple[Dict[str, Box], List[List[Tuple[float, float]]], float, float]:
    """{node id: box}, each edge's route (points from the source's bottom to the target's top) and the
    drawing's width and height. Sugiyama's scheme: longest-path layers; an edge that skips layers gets a
    dummy node in each layer it crosses, so the ordering makes room for it and it never runs through a
    node's box; barycenter ordering, sweeping down and up."""
    ids = [n.id for n in g.nodes]
    preds: Dict[str, List[str]] = {i: [] for i in ids}
    succs: Dict[str, List[str]] = {i: [] for i in ids}
    for e in g.edges:
        preds[e.dst].append(e.src)
        succs[e.src].append(e.dst)
    # longest-path layering (Kahn's order; the graph is a DAG)
    indeg = {i: len(preds[i]) for i in ids}
    layer = {i: 0 for i in ids}
    ready = [i for i in ids if indeg[i] == 0]
    while ready:
        i = ready.pop(0)
        for j in succs[i]:
            layer[j] = max(layer[j], layer[i] + 1)
            indeg[j] -= 1
            if indeg[j] == 0:
                ready.append(j)
    for i in ids:  # a parameter sits just above the op that reads it, inside that op's module box
        if not preds[i] and succs[i] and g.node(i).kind != "input":
            layer[i] = min(layer[j] for j in succs[i]) - 1
    # the same graph with each long edge split into a chain through dummy nodes
    up: Dict[str, List[str]] = {i: [] for i in ids}
    down: Dict[str, List[str]] = {i: [] for i in ids}
    chains: List[List[str]] = []
    dummies = set()
    for k, e in enumerate(g.edges):
        chain = [e.src]
        for lay in range(layer[e.src] + 1, layer[e.dst]):
            d = f"dummy {k} {lay}"  # a space: no node id has one
            layer[d], up[d], down[d] = lay, [], []
            dummies.add(d)
            chain.append(d)
        chain.append(e.dst)
        for a, b in zip(chain, chain[1:]):
            up[b].append(a)
            down[a].append(b)
        chains.append(chain)
    nlayers = max(layer.values(), default=-1) + 1
    layers: List[List[str]] = [[] for _ in range(nlayers)]
    for i in up:  # real nodes in graph order, then dummies in edge order
        layers[layer[i]].append(i)
    pos = {i: float(k) for lay in layers for k, i in enumerate(lay)}

    def sweep(order: List[List[str]], near: Dict[str, List[str]]) -> None:
        for lay in order:
            lay.sort(key=lambda i: sum(pos[p] for p in near[i]) / len(near[i]) if near[i] else pos[i])
            for k, i in enumerate(lay):
                pos[i] = float(k)

    for _ in range(2):
        sweep(layers[1:], up)
        sweep(layers[-2::-1], down)
    sweep(layers[1:], up)
    size = {i: (DUMMY_W, 0.0) for i in dummies}
    for n in g.nodes:
        text = n.label.split("\n")
        size[n.id] = (max(len(t) for t in text) * CHAR_W + 2 * PAD, len(text) * LINE_H + 2 * PAD)
    depth = max((len(p) for p in g.modules), default=0)
    margin = 20 + 14 * depth
    # x: each node as near the mean centre of its neighbours as its row's order and gaps allow,
    # sweeping down then up, so that chains of dummies run straight and edges stay short
    centre: Dict[str, float] = {}
    for lay in layers:
        x = 0.0
        for i in lay:
            centre[i] = x + size[i][0] / 2
            x += size[i][0] + GAP_X
    for _ in range(4):
        for order, near in ((layers[1:], up), (layers[-2::-1], down)):
            for lay in order:
                want = [sum(centre[j] for j in near[i]) / len(near[i]) if near[i] else centre[i] for i in lay]
                centre.update(zip(lay, _pack([size[i][0] for i in lay], want)))
    left = min((centre[i] - size[i][0] / 2 for i in centre), default=0.0)
    right = max((centre[i] + size[i][0] / 2 for i in centre), default=0.0)
    width = right - left + 2 * margin
    boxes: Dict[str, Box] = {}
    y = margin + 10
    for lay in layers:
        h = max(size[i][1] for i in lay)
        for i in lay:
            x = centre[i] - size[i][0] / 2 - left + margin
            # a dummy spans the whole row, so its edge runs straight down through it
            boxes[i] = (x, y, DUMMY_W, h) if i in dummies else (x, y + (h - size[i][1]) / 2, *size[i])
        y += h + GAP_Y + 6 * depth
    routes = []
    for chain in chains:
        x0, y0, w0, h0 = boxes[chain[0]]
        points = [(x0 + w0 / 2, y0 + h0)]
        for d in chain[1:-1]:
            x, y1, w, h = boxes[d]
            points += [(x + w / 2, y1), (x + w / 2, y1 + h)]
        x1, y1, w1, _ = boxes[chain[-1]]
        routes.append(points + [(x1 + w1 / 2, y1)])
    return {i: boxes[i] for i in ids}, routes, width, y + margin - GAP_Y


def _pack(widths: List[float], want: List[float]) -> List[float]:
    """Centres for boxes of these widths, kept in order GAP_X apart, as near the wanted centres as can be:
    overlapping neighbours merge into a block placed at the mean of its members' wishes."""
    blocks: List[List[float]] = []  # [first index, last index, left edge]
    for k, (w, c) in enumerate(zip(widths, want)):
        blocks.append([k, k, c - w / 2])
        while len(blocks) > 1:
            a, b = blocks[-2], blocks[-1]
            if a[2] + sum(widths[a[0]:a[1] + 1]) + GAP_X * (a[1] - a[0] + 1) <= b[2]:
                break
            first, last = a[0], b[1]
            offsets = [sum(widths[first:j]) + GAP_X * (j - first) for j in range(first, last + 1)]
            lefts = [want[j] - widths[j] / 2 - off for j, off in zip(range(first, last + 1), offsets)]
            blocks[-2:] = [[first, last, sum(lefts) / len(lefts)]]
    out = []
    for first, last, x in blocks:
        for j in range(first, last + 1):
            out.append(x + widths[j] / 2)
            x += widths[j] + GAP_X
    return out


def _inside(path: Tuple[str, ...], module: Tuple[str, ...]) -> bool:
    return len(module) >= len(path) and module[: len(path)] == path


def to_svg(g, use_dot: bool = False) -> str:
    if use_dot and shutil.which("dot"):
        done = subprocess.run(["dot", "-Tsvg"], input=g.to_dot(), capture_output=True, text=True, check=True)
        return done.stdout[done.stdout.find("<svg"):]
    boxes, routes, width, height = _layout(g)
    mods = {n.id: n.module for n in g.nodes}
    mid = {p: f"m{k}" for k, p in enumerate(sorted(g.modules, key=len))}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
           f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="Helvetica, Arial, sans-serif" font-size="11">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>',
           f"<title>{escape(g.title)}</title>"]

    def classes(paths_ok) -> str:
        return " ".join(f"in-{mid[p]}" for p in g.modules if paths_ok(p))

    for p in sorted(g.modules, key=len):  # outer boxes first, so inner ones are drawn above them
        members = [boxes[n.id] for n in g.nodes if _inside(p, n.module)]
        if not members:
            continue
        pad = 8 + 12 * (max(len(q) for q in g.modules) - len(p))
        x0 = min(b[0] for b in members) - pad
        y0 = min(b[1] for b in members) - pad - 12
        x1 = max(b[0] + b[2] for b in members) + pad
        y1 = max(b[1] + b[3] for b in members) + pad
        qual, cls = g.modules[p]
        name = f"{qual}: {cls}" if qual else cls
        # collapsed (a click in the HTML), the module is a node-sized box at the top of its lowest member
        ax, ay, aw, ah = max(members, key=lambda b: b[1] + b[3])
        cw = len(name) * CHAR_W + 2 * PAD
        box = f"{ax + aw / 2 - cw / 2:.1f},{ay:.1f},{cw:.1f},{LINE_H + 2 * PAD:.1f}"
        out.append(f'<g class="module {classes(lambda q: len(q) < len(p) and _inside(q, p))}" '
                   f'id="{mid[p]}" data-name={quoteattr(name)} data-depth="{len(p)}" data-box="{box}">'
                   f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{x1 - x0:.1f}" height="{y1 - y0:.1f}" rx="8" '
                   f'fill="#fafafa" fill-opacity="0.4" stroke="#999" stroke-dasharray="4 3"/>'
                   f'<text x="{x0 + 6:.1f}" y="{y0 + 13:.1f}" fill="#555">{escape(name)}</text></g>')
    for e, route in zip(g.edges, routes):
        both = classes(lambda q: _inside(q, mods[e.src]) and _inside(q, mods[e.dst]))
        tip = f"{e.label} {e.dtype} {e.device}".strip() or f"{e.src} -> {e.dst}"
        points = " ".join(f"{x:.1f},{y:.1f}" for x, y in route)
        out.append(f'<g class="edge {both}" data-shape={quoteattr(tip)} data-src={quoteattr(e.src)} '
                   f'data-dst={quoteattr(e.dst)}><title>{escape(tip)}</title>'
                   f'<polyline points="{points}" fill="none" stroke="#555" stroke-width="1.2" '
                   f'marker-end="url(#arrow)"/>'
                   f'<polyline points="{points}" fill="none" stroke="transparent" stroke-width="8"/>')
        if e.label:  # beside the first segment, which leaves the source
            (ax, ay), (bx, by) = route[0], route[1]
            out.append(f'<text x="{(ax + bx) / 2 + 4:.1f}" y="{(ay + by) / 2 + 4:.1f}" fill="#333" '
                       f'font-size="9">{escape(e.label)}</text>')
        out.append("</g>")
    for n in g.nodes:
        x, y, w, h = boxes[n.id]
        tip = n.name + (f" [{n.key}] {n.kernel}" if n.kind == "op" else "")
        if n.parts:
            tip += " = " + ", ".join("  " * (d - 1) + op for d, op, _ in n.parts)
        out.append(f'<g class="node {n.kind} {classes(lambda q: _inside(q, n.module))}" id={quoteattr(n.id)}>'
                   f"<title>{escape(tip)}</title>"
                   f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" rx="5" '
                   f'fill="{FILL.get(n.kind, "#fff")}" stroke="#444"/>')
        for k, line in enumerate(n.label.split("\n")):
            bold = ' font-weight="bold"' if k == 0 else ""
            out.append(f'<text x="{x + w / 2:.1f}" y="{y + PAD + LINE_H * (k + 1) - 4:.1f}" '
                       f'text-anchor="middle"{bold}>{escape(line)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


_SCRIPT = """
(function (root) {
  var info = root.querySelector('.mt-info'), modules = {}, nodes = {};
  function nums(s) { return s.split(/[ ,]+/).filter(Boolean).map(Number); }
  function pairs(p) { var out = []; for (var i = 0; i < p.length; i += 2) { out.push([p[i], p[i + 1]]); } return out; }
  root.querySelectorAll('g.node').forEach(function (n) { nodes[n.id] = n; });
  root.querySelectorAll('g.module').forEach(function (m) {
    var r = m.querySelector('rect'), t = m.querySelector('text');
    modules[m.id] = m;
    m.mtFrame = ['x', 'y', 'width', 'height'].map(function (a) { return +r.getAttribute(a); });
    m.mtLabel = [t.getAttribute('x'), t.getAttribute('y')];
    m.mtBox = nums(m.dataset.box);
  });
  root.querySelectorAll('g.edge').forEach(function (e) {
    var t = e.querySelector('text');
    e.mtPoints = e.querySelector('polyline').getAttribute('points');
    e.mtRoute = pairs(nums(e.mtPoints));
    e.mtLabel = t && [t.getAttribute('x'), t.getAttribute('y')];
  });
  // where an end of an edge is drawn: the outermost collapsed module that holds its node, else the node
  function holder(id) {
    var best = null;
    (nodes[id] ? nodes[id].classList : []).forEach(function (c) {
      var m = c.slice(0, 3) === 'in-' && modules[c.slice(3)];
      if (m && m.classList.contains('collapsed') && (!best || +m.dataset.depth < +best.dataset.depth)) { best = m; }
    });
    return best;
  }
  function inside(p, b) { return p[0] >= b[0] && p[0] <= b[0] + b[2] && p[1] >= b[1] && p[1] <= b[1] + b[3]; }
  function drawModule(m) {  // open: the dashed frame around its nodes; collapsed: a node-sized box
    var closed = m.classList.contains('collapsed'), b = closed ? m.mtBox : m.mtFrame;
    var r = m.querySelector('rect'), t = m.querySelector('text');
    ['x', 'y', 'width', 'height'].forEach(function (a, k) { r.setAttribute(a, b[k]); });
    r.setAttribute('fill', closed ? '#fbd9b5' : '#fafafa');
    r.setAttribute('fill-opacity', closed ? '1' : '0.4');
    r.setAttribute('stroke', closed ? '#444' : '#999');
    r.setAttribute('stroke-dasharray', closed ? 'none' : '4 3');
    t.setAttribute('x', closed ? b[0] + b[2] / 2 : m.mtLabel[0]);
    t.setAttribute('y', closed ? b[1] + b[3] / 2 + 4 : m.mtLabel[1]);
    t.setAttribute('text-anchor', closed ? 'middle' : 'start');
  }
  // an edge from the bottom of its source's box to the top of its target's, either of which may be a
  // collapsed module; the bends it made inside a collapsed module's frame go with that module's nodes
  function drawEdge(e) {
    var s = holder(e.dataset.src), d = holder(e.dataset.dst), p = e.mtRoute;
    var bends = p.slice(1, -1).filter(function (q) {
      return !(s && inside(q, s.mtFrame)) && !(d && inside(q, d.mtFrame));
    });
    var pts = [s ? [s.mtBox[0] + s.mtBox[2] / 2, s.mtBox[1] + s.mtBox[3]] : p[0]].concat(
      bends, [d ? [d.mtBox[0] + d.mtBox[2] / 2, d.mtBox[1]] : p[p.length - 1]]);
    var text = pts.map(function (q) { return q[0].toFixed(1) + ',' + q[1].toFixed(1); }).join(' ');
    var label = e.querySelector('text'), at = [((pts[0][0] + pts[1][0]) / 2 + 4).toFixed(1),
                                               ((pts[0][1] + pts[1][1]) / 2 + 4).toFixed(1)];
    if (!s && !d) { text = e.mtPoints; at = e.mtLabel; }  // as drawn at first, to the digit
    e.querySelectorAll('polyline').forEach(function (l) { l.setAttribute('points', text); });
    if (label) { label.setAttribute('x', at[0]); label.setAttribute('y', at[1]); }
  }
  root.querySelectorAll('g.module').forEach(function (m) {
    m.style.cursor = 'pointer';
    m.addEventListener('click', function (ev) {
      ev.stopPropagation();
      var closed = m.classList.toggle('collapsed');
      root.querySelectorAll('.in-' + m.id).forEach(function (el) {
        var n = (el.dataset.hiddenBy || '').split(' ').filter(Boolean);
        n = closed ? n.concat([m.id]) : n.filter(function (x) { return x !== m.id; });
        el.dataset.hiddenBy = n.join(' ');
        el.style.display = n.length ? 'none' : '';
      });
      drawModule(m);
      root.querySelectorAll('g.edge').forEach(drawEdge);
    });
  });
  root.querySelectorAll('g.edge').forEach(function (e) {
    e.addEventListener('mouseenter', function () { info.textContent = 'tensor ' + e.dataset.shape; });
    e.addEventListener('mouseleave', function () { info.textContent = ''; });
  });
})(document.getElementById(ROOT));
"""


def to_html_fragment(g, root: str = "") -> str:
    """The graph as a <div> with its own script, scoped to that div: several can share a page (Jupyter)."""
    root = root or f"mtviz-{uuid.uuid4().hex[:12]}"  # unique even across kernel restarts in one page
    return (f'<div id="{root}" class="mt-graph"><style>#{root} .mt-info{{height:1.4em;color:#333;'
            f'font-family:Helvetica,Arial,sans-serif}}#{root} g.edge:hover polyline:first-of-type{{stroke:#d62728}}</style>'
            f'<div class="mt-info"></div>\n{to_svg(g)}<script>{_SCRIPT.replace("ROOT", repr(root))}</script></div>\n')


def to_html(g) -> str:
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{escape(g.title or 'graph')}</title>"
            "<style>body{font-family:Helvetica,Arial,sans-serif;margin:16px}</style></head>\n<body>"
            f"<h3>{escape(g.title)}</h3><p>Click a module box to collapse or expand it; hover an edge "
            "for its tensor.</p>\n" + to_html_fragment(g, "graph") + "</body></html>\n")
