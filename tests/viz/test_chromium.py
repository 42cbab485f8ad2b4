"""Our HTML in headless Chromium: the graph renders and its module boxes collapse, and the notebook
outputs (tensors, modules, the journey, dtype, device, Size) keep their layout under JupyterLab's styles.

Skipped where no Chromium is on PATH (Debian's `chromium`, `chromium-browser` or `google-chrome`).
Screenshots are kept as artifacts in $MINITORCH_TEST_ARTIFACTS, else tests/artifacts/ (git-ignored).
Interaction and measurement are scripted in test-only pages: an onload hook clicks, hovers or reads
element positions (getBoundingClientRect, Range rects of text) and writes what it found as JSON into
the DOM, which --dump-dom returns.
"""
import html as html_lib
import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

import minitorch
from minitorch import _html, nn

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium, chromium-browser or google-chrome on PATH")
ARTIFACTS = Path(os.environ.get("MINITORCH_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "artifacts")

_PROBE = """<script>
window.addEventListener('load', function () {
  var roots = document.querySelectorAll('div.mt-graph'), root = roots[roots.length - 1];
  function shown(id, r) {
    return getComputedStyle((r || root).querySelector('[id="' + id + '"]')).display !== 'none';
  }
  var box = Array.prototype.find.call(root.querySelectorAll('g.module'),
                                      function (m) { return m.dataset.name === '0: Linear'; });
  var state = {before: [shown('LINEAR'), shown('RELU')]};
  box.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  state.collapsed = [shown('LINEAR'), shown('RELU'), box.classList.contains('collapsed')];
  state.others = Array.prototype.map.call(roots, function (r) { return shown('LINEAR', r); });
  if (location.hash !== '#collapse') {
    box.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  }
  state.expanded = [shown('LINEAR'), shown('RELU'), box.classList.contains('collapsed')];
  root.querySelector('g.edge').dispatchEvent(new MouseEvent('mouseenter'));
  state.hover = root.querySelector('.mt-info').textContent;
  var out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify(state);
  document.body.appendChild(out);
});
</script>"""


def chromium(*args: str) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--window-size=800,900", *args]
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # the sanitizer run preloads ASan
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True, env=env)


def read_png(path: Path):
    """(width, height, rows of RGB triples) of an 8-bit RGB or RGBA PNG, decoded with zlib alone."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (n,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and color in (2, 6)
    bpp = 3 if color == 2 else 4
    raw, stride, prev, rows = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the scanline filter (PNG spec, section 9)
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    graph = minitorch.viz.trace(model, minitorch.randn(1, 4))
    ops = {n.module: n.id for n in graph.nodes if n.kind == "op"}
    path = tmp_path_factory.mktemp("graph") / "seed_graph.html"
    graph.save(str(path))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # a notebook's page: two graphs' _repr_html_ side by side, each with its own scoped script
    both = path.with_name("notebook.html")
    both.write_text(f"<!DOCTYPE html><html><body>{graph._repr_html_()}{graph._repr_html_()}</body></html>")
    return path, ops[("", "0")], ops[("", "1")]


def test_graph_is_visible_in_a_screenshot(page):
    page, _, _ = page
    shot = ARTIFACTS / "seed_graph.png"
    shot.unlink(missing_ok=True)
    chromium(f"--screenshot={shot}", page.as_uri())
    width, height, rows = read_png(shot)
    assert (width, height) == (800, 900)
    counts = {}
    for row in rows[::2]:
        for px in row[::2]:
            counts[px] = counts.get(px, 0) + 1
    total = sum(counts.values())
    ink = total - counts.get((255, 255, 255), 0)
    assert ink > 0.05 * total, f"only {ink} of {total} sampled pixels are not white"
    # the node fills of _render.FILL: ops, the input and output, parameters
    for name, rgb in (("op", (0xdb, 0xe9, 0xf6)), ("input", (0xff, 0xf2, 0xb3)), ("param", (0xd9, 0xf0, 0xd3))):
        assert counts.get(rgb, 0) > 200, f"no {name} box in the screenshot"


def probe(page, linear, relu, suffix=""):
    """The state the probe script recorded after clicking Linear 0's box (in the page's last graph)."""
    out = page.with_name("probe_" + page.name)
    script = _PROBE.replace("LINEAR", linear).replace("RELU", relu)  # the ops of Linear 0 and of ReLU
    out.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    dom = chromium("--virtual-time-budget=2000", "--dump-dom", out.as_uri() + suffix).stdout
    return out, json.loads(dom.split('<pre id="probe">')[1].split("</pre>")[0].replace("&quot;", '"'))


def test_click_on_a_module_collapses_and_expands_it(page):
    page, linear, relu = page
    out, state = probe(page, linear, relu)
    assert state["before"] == [True, True]
    assert state["collapsed"] == [False, True, True]  # Linear 0's op hidden, ReLU's still shown
    assert state["expanded"] == [True, True, False]
    assert state["hover"] == "tensor (1, 4) float32 cpu"
    shot = ARTIFACTS / "seed_graph_collapsed.png"
    shot.unlink(missing_ok=True)
    chromium(f"--screenshot={shot}", out.as_uri() + "#collapse")
    assert shot.stat().st_size > 1000


def test_graphs_in_one_notebook_page_are_independent(page):
    page, linear, relu = page
    _, state = probe(page.with_name("notebook.html"), linear, relu)
    assert state["collapsed"] == [False, True, True] and state["others"] == [True, False]
    assert state["expanded"] == [True, True, False] and state["hover"] == "tensor (1, 4) float32 cpu"


def write_page(path: Path, body: str, head: str = "", onload: str = "") -> Path:
    """A page of `body` that runs the function body `onload` once it has loaded."""
    script = f"<script>window.addEventListener('load', function () {{ {onload} }});</script>" if onload else ""
    path.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8">{head}</head><body>{body}{script}</body></html>',
                    encoding="utf-8")
    return path


def run_js(path: Path, body: str, js: str, head: str = ""):
    """What the function body `js` returns (as JSON) once a page of `body` has loaded in Chromium."""
    write_page(path, body, head, "var res; try { res = (function () {" + js + "})(); }"
               " catch (e) { res = {error: String(e) + ' ' + e.stack}; }"
               " var out = document.createElement('pre'); out.id = 'probe'; out.textContent = JSON.stringify(res);"
               " document.body.appendChild(out);")
    dom = chromium("--virtual-time-budget=2000", "--dump-dom", path.as_uri()).stdout
    res = json.loads(html_lib.unescape(dom.split('<pre id="probe">')[1].split("</pre>")[0]))
    assert not (isinstance(res, dict) and "error" in res), res.get("error")
    return res


# ---- notebook outputs under JupyterLab's styles ----------------------------------------------

# The rules of JupyterLab 4's rendered-HTML style sheet (packages/rendermime/style/base.css) that reach
# tables, pre and svg, with its CSS variables replaced by values of the light theme. Rendered outputs sit
# in `.jp-ThemedContainer .jp-OutputArea-output.jp-RenderedHTMLCommon`.
JUPYTERLAB_CSS = """<style>
.jp-RenderedHTMLCommon { color: rgba(0,0,0,.87); font-family: system-ui, sans-serif; font-size: 14px;
  line-height: 1.6; padding-right: 20px; }
.jp-ThemedContainer .jp-RenderedHTMLCommon > pre { margin: 1.5em 2em; }
.jp-ThemedContainer .jp-RenderedHTMLCommon pre, .jp-ThemedContainer .jp-RenderedHTMLCommon code {
  border: 0; background-color: white; color: rgba(0,0,0,.87); font-family: monospace; font-size: inherit;
  line-height: 1.3077; padding: 0; white-space: pre-wrap; }
.jp-RenderedHTMLCommon table { border-collapse: collapse; border-spacing: 0; border: none; color: rgba(0,0,0,.87);
  font-size: 12px; table-layout: fixed; margin-left: auto; margin-bottom: 1em; margin-right: auto; }
.jp-RenderedHTMLCommon thead { border-bottom: 1px solid #bdbdbd; vertical-align: bottom; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th, .jp-RenderedHTMLCommon tr { vertical-align: middle;
  padding: 0.5em; line-height: normal; white-space: normal; max-width: none; border: none; }
:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon td, :not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon th,
:not(.jp-RenderedMarkdown).jp-RenderedHTMLCommon tr { text-align: right; }
.jp-RenderedHTMLCommon th { font-weight: bold; }
.jp-RenderedHTMLCommon tbody tr:nth-child(odd) { background: white; }
.jp-RenderedHTMLCommon tbody tr:nth-child(even) { background: #f5f5f5; }
.jp-RenderedHTMLCommon tbody tr:hover { background: rgba(66, 165, 245, 0.2); }
.jp-RenderedHTMLCommon p { text-align: left; margin: 0; margin-bottom: 1em; }
.jp-RenderedHTMLCommon img, .jp-RenderedHTMLCommon svg { max-width: 100%; height: auto; }
.jp-RenderedHTMLCommon > *:last-child { margin-bottom: 0.5em; }
</style>"""
WIDTH = 760  # the output area's width, in both pages


def in_jupyterlab(html: str) -> str:
    return ('<div class="jp-ThemedContainer"><div class="jp-OutputArea-output jp-RenderedHTMLCommon jp-RenderedHTML" '
            f'style="width:{WIDTH}px">{html}</div></div>')


# for each output (a div.out): every table cell's text offset from the cell's left and right edges, each
# pre's lines (where the first letter of each is drawn), the table's offset from the output's left edge
_MEASURE = """
function text(el) {
  var r = document.createRange(); r.selectNodeContents(el); return r.getBoundingClientRect();
}
return Array.prototype.map.call(document.querySelectorAll('div.out'), function (out) {
  var o = out.getBoundingClientRect();
  return {
    tables: Array.prototype.map.call(out.querySelectorAll('table'), function (t) {
      return {left: t.getBoundingClientRect().left - o.left,
              rows: Array.prototype.map.call(t.rows, function (tr) {
                return {background: getComputedStyle(tr).backgroundColor,
                        cells: Array.prototype.map.call(tr.cells, function (c) {
                          var b = c.getBoundingClientRect(), x = text(c);
                          return {text: c.textContent, left: x.left - b.left, right: b.right - x.right,
                                  align: getComputedStyle(c).textAlign, cls: c.className};
                        })};
              })};
    }),
    pres: Array.prototype.map.call(out.querySelectorAll('pre'), function (p) {
      var node = p.firstChild, b = p.getBoundingClientRect(), at = 0;
      return {whiteSpace: getComputedStyle(p).whiteSpace, lines: p.textContent.split('\\n').map(function (line) {
        var k = line.search(/[A-Za-z]/), r = document.createRange(), res = null;
        if (k >= 0) {
          r.setStart(node, at + k); r.setEnd(node, at + k + 1);
          var c = r.getBoundingClientRect(); res = [k, c.left - b.left, c.top - b.top];
        }
        at += line.length + 1;
        return res;
      }).filter(Boolean)};
    }),
    scrollers: Array.prototype.map.call(out.querySelectorAll('.mt-s'), function (s) {
      return [s.clientWidth, s.scrollWidth];
    }),
    values: Array.prototype.map.call(out.querySelectorAll('span.mt-v'), function (s) {
      var r = s.getBoundingClientRect();
      return {text: s.textContent, top: r.top, height: r.height, font: getComputedStyle(s).fontFamily};
    })
  };
});
"""


@pytest.fixture(scope="module")
def outputs():
    """The outputs whose layout is checked, each as (name, HTML), and the depth of each journey row."""
    minitorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    x = minitorch.randn(1, 4)
    with minitorch.profiler.profile(record_shapes=True) as prof:
        model(x)
    journey = prof.journey()
    rows = str(journey).split("\n\n")[0].split("\n")[2:]
    depths = [len(r) - len(r.lstrip()) for r in rows]
    items = [("journey", journey._repr_html_()), ("module", model._repr_html_()),
             ("big tensor", model[0](minitorch.randn(300, 4))._repr_html_()),
             ("wide tensor", minitorch.randn(1000)._repr_html_()),
             ("dtype", _html.dtype_html(minitorch.float32)), ("device", minitorch.device("cpu")._repr_html_()),
             ("size", _html.size_html(minitorch.zeros(2, 3).shape))]
    return items, depths


def test_outputs_keep_their_layout_under_jupyterlab_styles(outputs, tmp_path):
    items, depths = outputs
    bare = "".join(f'<div class="out" style="width:{WIDTH}px">{h}</div>' for _, h in items)
    lab = "".join(f'<div class="out">{in_jupyterlab(h)}</div>' for _, h in items)
    measured = run_js(tmp_path / "jupyterlab.html", bare + lab, _MEASURE, JUPYTERLAB_CSS)
    assert len(measured) == 2 * len(items)
    plain, styled = dict(zip((n for n, _ in items), measured)), dict(zip((n for n, _ in items), measured[len(items):]))
    for name, _ in items:
        a, b = plain[name], styled[name]
        # tables start at the output's left edge (JupyterLab centres tables), cells' text where it was
        for ta, tb in zip(a["tables"], b["tables"]):
            assert abs(tb["left"]) < 0.5 and abs(ta["left"]) < 0.5, (name, tb["left"])
            for ra, rb in zip(ta["rows"], tb["rows"]):
                for ca, cb in zip(ra["cells"], rb["cells"]):
                    assert ca["text"] == cb["text"]
                    assert cb["align"] == ("left" if cb["cls"] == "l" else "right"), (name, cb)
                    assert abs(ca["left"] - cb["left"]) < 0.5 and abs(ca["right"] - cb["right"]) < 0.5, (name, ca, cb)
                    if cb["cls"] != "l" and cb["text"]:
                        assert 8 <= cb["right"] <= 10, (name, cb)  # right-aligned: 8px padding, 1px border
        for pa, pb in zip(a["pres"], b["pres"]):
            assert pb["whiteSpace"] == "pre" and pa["lines"] == pb["lines"]
        assert [len(t["rows"]) for t in a["tables"]] == [len(t["rows"]) for t in b["tables"]]

    # the journey: the Event column indented 6px a level from the same left margin, left-aligned
    (journey,) = styled["journey"]["tables"]
    events = [r["cells"][0] for r in journey["rows"][1:]]
    assert len(events) == len(depths) and max(depths) >= 8
    base = events[depths.index(0)]["left"]
    assert 8 <= base <= 10
    for cell, depth in zip(events, depths):
        assert abs(cell["left"] - (base + 6 * depth)) < 0.5, (cell, depth)
    layers = {r["cells"][1]["text"]: r["background"] for r in journey["rows"][1:]}
    assert layers["Kernel"] == "rgb(217, 240, 211)" and layers["Library"] == "rgb(232, 223, 245)"
    # the call tree below it: one line each (no wrapping), every line's first letter where the text put it
    (tree,) = styled["journey"]["pres"]
    tops = [y for _, _, y in tree["lines"]]
    steps = {round(b - a, 1) for a, b in zip(tops, tops[1:])}
    assert len(tree["lines"]) > 20 and len(steps) == 1 and steps.pop() > 0
    # the module tree: names indented by depth (18px a level)
    (module,) = styled["module"]["tables"]
    names = [r["cells"][0]["left"] for r in module["rows"][1:]]
    assert all(abs(x - (names[0] + 18 * d)) < 0.5 for x, d in zip(names, (0, 1, 1, 1)))

    # a tensor over print's threshold: 3 rows, a row of '...', 3 rows; 3 columns, '...', 3 columns
    (big,) = styled["big tensor"]["tables"]
    assert [r["cells"][0]["text"] for r in big["rows"]] == ["0", "1", "2", "...", "297", "298", "299"]
    assert [c["text"] for c in big["rows"][0]["cells"]][4] == "..." and len(big["rows"][0]["cells"]) == 8
    # 1000 values in one row scroll inside the output instead of widening it
    ((client, scroll),) = styled["wide tensor"]["scrollers"]
    assert client <= WIDTH and scroll > 2 * WIDTH

    # dtype, device and Size: the repr and a detail, on one line, in a monospace font
    for name, want in (("dtype", ["minitorch.float32", "floating point, 4 bytes"]),
                       ("device", ["device(type='cpu')", "CPU memory"]),
                       ("size", ["minitorch.Size([2, 3])", "2 dims, 6 elements"])):
        spans = styled[name]["values"]
        assert [s["text"] for s in spans] == want
        assert abs(spans[0]["top"] - spans[1]["top"]) < 1 and spans[0]["height"] < 20
        assert all("monospace" in s["font"] for s in spans)


# ---- the graph: collapsing a module redraws the edges to its box -----------------------------

# test_layout's Residual: the input enters the module at two ops (a's linear and the mul), so two
# edges go in.
from test_layout import Residual  # noqa: E402


# after each click (by module name), what is shown and where: node and module boxes, edge routes
_CLICKS = """
var root = document.querySelector('div.mt-graph');
function shown(el) {
  for (; el && el !== root; el = el.parentNode) { if (getComputedStyle(el).display === 'none') { return false; } }
  return true;
}
function rect(g) {
  var r = g.querySelector('rect');
  return ['x', 'y', 'width', 'height'].map(function (a) { return +r.getAttribute(a); });
}
function points(l) {
  return l.getAttribute('points').trim().split(/\\s+/).map(function (p) { return p.split(',').map(Number); });
}
function named(name) {
  return Array.prototype.find.call(root.querySelectorAll('g.module'), function (g) { return g.dataset.name === name; });
}
function snap() {
  return {
    nodes: Array.prototype.map.call(root.querySelectorAll('g.node'), function (n) {
      return {id: n.id, shown: shown(n), box: rect(n),
              modules: Array.prototype.filter.call(n.classList, function (c) { return c.slice(0, 3) === 'in-'; })
                                      .map(function (c) { return c.slice(3); })};
    }),
    modules: Array.prototype.map.call(root.querySelectorAll('g.module'), function (m) {
      var t = m.querySelector('text');
      return {id: m.id, name: m.dataset.name, shown: shown(m), collapsed: m.classList.contains('collapsed'),
              box: rect(m), label: [+t.getAttribute('x'), +t.getAttribute('y')]};
    }),
    edges: Array.prototype.map.call(root.querySelectorAll('g.edge'), function (e) {
      var t = e.querySelector('text');
      return {src: e.dataset.src, dst: e.dataset.dst, shown: shown(e),
              routes: Array.prototype.map.call(e.querySelectorAll('polyline'), points),
              label: t ? [+t.getAttribute('x'), +t.getAttribute('y')] : null};
    })
  };
}
var states = [snap()];
CLICKS.forEach(function (name) {
  named(name).dispatchEvent(new MouseEvent('click', {bubbles: true}));
  states.push(snap());
});
return states;
"""


def near(p, q):
    return abs(p[0] - q[0]) <= 0.1 and abs(p[1] - q[1]) <= 0.1  # the page writes one decimal


def check_edges_end_at_shown_boxes(state):
    """Every shown edge runs from the bottom centre of a shown box to the top centre of one: its node's,
    or, when a collapsed module hides the node, that module's box; an edge is hidden only inside one."""
    nodes = {n["id"]: n for n in state["nodes"]}
    mods = {m["id"]: m for m in state["modules"]}
    for n in state["nodes"]:
        assert n["shown"] == (not any(mods[m]["collapsed"] for m in n["modules"]))

    def box(n):
        if n["shown"]:
            return n["box"]
        (m,) = [mods[m] for m in n["modules"] if mods[m]["collapsed"] and mods[m]["shown"]]
        return m["box"]

    attached = {}
    for e in state["edges"]:
        src, dst = nodes[e["src"]], nodes[e["dst"]]
        if not e["shown"]:
            assert any(mods[m]["collapsed"] for m in set(src["modules"]) & set(dst["modules"])), e
            continue
        (x0, y0, w0, h0), (x1, y1, w1, _) = box(src), box(dst)
        route = e["routes"][0]
        assert e["routes"][1] == route  # the wide, invisible hover line follows the drawn one
        assert near(route[0], (x0 + w0 / 2, y0 + h0)) and near(route[-1], (x1 + w1 / 2, y1)), (e, box(src), box(dst))
        if e["label"]:
            (ax, ay), (bx, by) = route[0], route[1]
            assert near(e["label"], ((ax + bx) / 2 + 4, (ay + by) / 2 + 4))
        for end, n in (("out", src), ("in", dst)):
            if not n["shown"]:
                attached.setdefault(tuple(box(n)), {"in": 0, "out": 0})[end] += 1
    return attached


def test_collapsing_a_module_redraws_its_edges_to_the_collapsed_box(tmp_path):
    minitorch.manual_seed(0)
    graph = minitorch.viz.trace(nn.Sequential(Residual(), nn.Linear(4, 2)), minitorch.randn(1, 4))
    clicks = ["0.a: Linear", "0: Residual", "0: Residual", "0.a: Linear"]
    page = in_jupyterlab(graph._repr_html_())  # JupyterLab scales the svg; its coordinates stay
    states = run_js(tmp_path / "collapse.html", page, _CLICKS.replace("CLICKS", json.dumps(clicks)), JUPYTERLAB_CSS)
    first, a_closed, both_closed, a_still_closed, last = states
    assert check_edges_end_at_shown_boxes(first) == {}
    assert last == first  # expanding restores every box, label and route

    def module(state, name):
        return next(m for m in state["modules"] if m["name"] == name)

    frame = module(first, "0: Residual")["box"]
    for state, name, ins in ((a_closed, "0.a: Linear", 1), (both_closed, "0: Residual", 2),
                             (a_still_closed, "0.a: Linear", 1)):
        attached = check_edges_end_at_shown_boxes(state)
        m = module(state, name)
        assert m["collapsed"] and m["shown"] and m["box"][3] == 31  # one line of text, padded like a node
        x, y, w, h = m["box"]
        assert near(m["label"], (x + w / 2, y + h / 2 + 4))
        assert attached == {tuple(m["box"]): {"in": ins, "out": 1}}
    # the outer box takes both edges from the input (into a's linear and into the mul) and the add's
    x, y, w, h = module(both_closed, "0: Residual")["box"]
    assert frame[0] <= x and x + w <= frame[0] + frame[2] and frame[1] <= y and y + h <= frame[1] + frame[3]
    ins = [e for e in both_closed["edges"] if e["shown"] and near(e["routes"][0][-1], (x + w / 2, y))]
    assert sorted(e["src"] for e in ins) == ["input0", "input0"]
    assert a_still_closed == a_closed  # the inner box stays collapsed while the outer one opens and closes
    # an artifact to look at: the page with Residual collapsed
    shot = ARTIFACTS / "residual_collapsed.png"
    shot.unlink(missing_ok=True)
    click = _CLICKS.split("var states")[0] + "named('0: Residual').dispatchEvent(new MouseEvent('click'));"
    collapsed = write_page(tmp_path / "collapsed.html", page, JUPYTERLAB_CSS, click)
    chromium(f"--screenshot={shot}", "--virtual-time-budget=2000", collapsed.as_uri())
    assert shot.stat().st_size > 1000
