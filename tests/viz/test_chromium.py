"""The HTML graph of the seed network in headless Chromium: it renders, and a click on a module works.

Skipped where no Chromium is on PATH (Debian's `chromium`, `chromium-browser` or `google-chrome`).
Screenshots are kept as artifacts in $MINITORCH_TEST_ARTIFACTS, else tests/artifacts/ (git-ignored).
The click is scripted in a test-only copy of the page: an onload hook clicks a module box twice,
hovers an edge, and writes what the page showed after each step into the DOM, which --dump-dom returns.
"""
import json
import os
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

import minitorch
from minitorch import nn

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
