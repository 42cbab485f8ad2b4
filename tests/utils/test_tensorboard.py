"""minitorch.utils.tensorboard: the event files are read back by a small reader written here (the
TFRecord framing with both CRCs checked, protobuf fields decoded by number), by TensorBoard's own
EventAccumulator where the tensorboard package is installed, and compared with the files
PyTorch's SummaryWriter writes where both are."""
import os
import socket
import struct
import zlib

import numpy as np
import pytest

import minitorch
from helpers import to_layout
from minitorch.utils.tensorboard import SummaryWriter
from minitorch.utils.tensorboard.summary import default_bins


# ---- the reader ----------------------------------------------------------------------------

def crc32c_bitwise(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    crc = crc32c_bitwise(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    """The data of each record, after checking its length and both masked CRC32Cs."""
    buf = open(path, "rb").read()
    out, pos = [], 0
    while pos < len(buf):
        (n,) = struct.unpack_from("<Q", buf, pos)
        assert struct.unpack_from("<I", buf, pos + 8)[0] == masked(buf[pos:pos + 8])
        data = buf[pos + 12:pos + 12 + n]
        assert len(data) == n
        assert struct.unpack_from("<I", buf, pos + 12 + n)[0] == masked(data)
        out.append(data)
        pos += 16 + n
    return out


def fields(buf: bytes) -> dict:
    """{field number: [values]}: varints as ints, fixed64/fixed32 as 8/4 raw bytes, LEN as bytes."""
    out, pos = {}, 0

    def varint():
        nonlocal pos
        n = shift = 0
        while True:
            b = buf[pos]
            pos += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return n

    while pos < len(buf):
        key = varint()
        num, wire = key >> 3, key & 7
        if wire == 0:
            v = varint()
        elif wire == 1:
            v, pos = buf[pos:pos + 8], pos + 8
        elif wire == 5:
            v, pos = buf[pos:pos + 4], pos + 4
        else:
            assert wire == 2, wire
            n = varint()
            v, pos = buf[pos:pos + n], pos + n
        out.setdefault(num, []).append(v)
    return out


def one(f, num, default=None):
    return f.get(num, [default])[0]


def dbl(raw):
    return struct.unpack("<d", raw)[0] if raw is not None else 0.0


def int64(n):
    return n - (1 << 64) if n >= 1 << 63 else n


def event_files(logdir):
    return sorted(os.path.join(logdir, f) for f in os.listdir(logdir) if f.startswith("events.out.tfevents."))


def events(logdir):
    """Each event as (wall_time, step, fields), all files of logdir in order."""
    out = []
    for path in event_files(logdir):
        for data in records(path):
            f = fields(data)
            out.append((dbl(one(f, 1)), int64(one(f, 2, 0)), f))
    return out


def values(logdir):
    """(step, Summary.Value fields) of each summary value."""
    return [(step, fields(v)) for _, step, f in events(logdir) if 5 in f for v in fields(f[5][0]).get(1, [])]


def tag(v):
    return v[1][0].decode()


def plugin(v):
    pd = fields(fields(v[9][0])[1][0])
    return pd[1][0].decode(), one(pd, 2, b"")


def packed_doubles(raw):
    return list(struct.unpack(f"<{len(raw) // 8}d", raw)) if raw else []


def decode_png(data):
    """An 8-bit RGB(A) PNG without interlace whose rows use filter 0, as ours are."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (n,) = struct.unpack_from(">I", data, pos)
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        assert struct.unpack_from(">I", data, pos + 8 + n)[0] == zlib.crc32(kind + body)
        chunks[kind] = chunks.get(kind, b"") + body
        pos += 12 + n
    w, h, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    c = {2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(h, 1 + w * c)
    assert depth == 8 and (rows[:, 0] == 0).all()
    return rows[:, 1:].reshape(h, w, c)


# ---- files, scalars ------------------------------------------------------------------------

def test_crc32c_check_value():
    from minitorch.utils.tensorboard import _proto
    assert crc32c_bitwise(b"123456789") == 0xE3069283 == _proto.crc32c(b"123456789")


def test_event_file_opens_with_file_version(tmp_path):
    w = SummaryWriter(str(tmp_path), filename_suffix=".v2")
    w.close()
    (path,) = event_files(tmp_path)
    name = os.path.basename(path).split(".")
    assert name[3].isdigit() and len(name[3]) == 10 and path.endswith(f".{os.getpid()}.{name[-2]}.v2")
    assert socket.gethostname() in os.path.basename(path)
    ((wall, step, f),) = events(tmp_path)
    assert f[3] == [b"brain.Event:2"] and step == 0 and abs(wall - __import__("time").time()) < 60
    assert w.get_logdir() == str(tmp_path)


def test_default_log_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_lr0.1") as w:
        logdir = w.get_logdir()
    parent, name = os.path.split(logdir)
    assert parent == "runs" and name.endswith("_" + socket.gethostname() + "_lr0.1")
    __import__("datetime").datetime.strptime(name[:14], "%b%d_%H-%M-%S")
    assert len(event_files(tmp_path / logdir)) == 1


@pytest.mark.parametrize("make", [float, np.float64, np.float32, lambda x: np.array([[x]]),
                                  lambda x: minitorch.tensor(x), lambda x: minitorch.tensor([x], dtype=minitorch.float64),
                                  lambda x: to_layout(np.full((1, 3), x, np.float32), "sliced")[:, 1]])
def test_add_scalar_values_and_steps(tmp_path, make):
    xs = [0.0, 1.5, -2.25, float("inf"), float("nan"), 1e-3]
    steps = [0, 1, 7, 2 ** 40, -3, 5]
    with SummaryWriter(str(tmp_path)) as w:
        for x, s in zip(xs, steps):
            w.add_scalar("loss/train", make(x), s, walltime=1000.0 + s)
    got = [(step, tag(v), struct.unpack("<f", v[2][0])[0]) for step, v in values(tmp_path)]
    assert [g[:2] for g in got] == [(s, "loss/train") for s in steps]
    np.testing.assert_array_equal([g[2] for g in got], np.float32(xs))  # simple_value is a float32
    walls = [wall for wall, _, f in events(tmp_path) if 5 in f]
    assert walls == [1000.0 + s for s in steps]


def test_add_scalar_new_style_and_errors(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_scalar("a", 0.1, 1, new_style=True)
        w.add_scalar("b", 0.1, 2, new_style=True, double_precision=True)
        with pytest.raises(AssertionError, match="one element"):
            w.add_scalar("c", np.ones(2), 3)
        with pytest.raises(NotImplementedError, match="numpy array or torch tensor"):
            w.add_scalar("c", [1.0], 3)
    (_, a), (_, b) = values(tmp_path)
    ta, tb = fields(a[8][0]), fields(b[8][0])
    assert plugin(a) == ("scalars", b"") and ta[1] == [1] and struct.unpack("<f", ta[5][0])[0] == np.float32(0.1)
    assert tb[1] == [2] and struct.unpack("<d", tb[6][0])[0] == 0.1 and 2 not in a


def test_add_scalars_one_run_per_tag(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        for i in range(3):
            w.add_scalars("run/14h", {"xsinx": i * np.sin(i), "xcosx": minitorch.tensor(float(i))}, i)
    assert len(events(tmp_path)) == 1  # the main file holds only its file_version event
    for sub, want in [("run_14h_xsinx", [i * np.sin(i) for i in range(3)]), ("run_14h_xcosx", [0, 1, 2])]:
        got = values(tmp_path / sub)
        assert [(s, tag(v)) for s, v in got] == [(i, "run/14h") for i in range(3)]
        np.testing.assert_allclose([struct.unpack("<f", v[2][0])[0] for _, v in got], want, rtol=1e-6)


# ---- histograms ----------------------------------------------------------------------------

def histo(v):
    h = fields(v[5][0])
    return ({k: dbl(one(h, n)) for n, k in enumerate(["min", "max", "num", "sum", "sum_squares"], 1)},
            packed_doubles(one(h, 6)), packed_doubles(one(h, 7)))


@pytest.mark.parametrize("bins,max_bins", [("tensorflow", None), (10, None), ("auto", None), (50, 7),
                                           (np.linspace(-4, 4, 9), None)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_add_histogram(tmp_path, bins, max_bins, layout):
    a = np.random.default_rng(0).standard_normal((40, 25)).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_histogram("w", to_layout(a, layout), 3, bins=bins, max_bins=max_bins)
    ((step, v),) = values(tmp_path)
    stats, limits, counts = histo(v)
    x = a.astype(np.float64).reshape(-1)
    assert step == 3 and tag(v) == "w"
    np.testing.assert_allclose([stats[k] for k in ["min", "max", "num", "sum", "sum_squares"]],
                               [x.min(), x.max(), x.size, x.sum(), x @ x], rtol=1e-12)
    # each bucket holds the values in [previous limit, its limit) (the last one closed), the first
    # bucket is empty and ends where the first value's bucket begins, the last holds the largest
    assert counts[0] == 0 and counts[1] > 0 and counts[-1] > 0 and sum(counts) == x.size
    assert limits[0] <= x.min() < limits[1] and limits[-2] <= x.max() <= limits[-1]
    for lo, hi, c in zip(limits[:-1], limits[1:-1], counts[1:-1]):
        assert c == np.count_nonzero((x >= lo) & (x < hi))
    if max_bins is not None:
        # 50 buckets merged 7 by 7 (50 // max_bins, as PyTorch), so 8, and the empty one before
        edges = np.histogram_bin_edges(x, 50)[::7]
        assert len(counts) <= 9 and set(limits[:-1]) <= set(edges)
    if isinstance(bins, str) and bins == "tensorflow":
        assert set(limits) <= set(default_bins())


def test_tensorflow_bins():
    edges = np.array(default_bins())
    assert edges[len(edges) // 2] == 0 and (np.diff(edges) > 0).all() and edges[-1] >= 1e20 / 1.1
    np.testing.assert_allclose(edges[len(edges) // 2 + 2:] / edges[len(edges) // 2 + 1:-1], 1.1)
    np.testing.assert_array_equal(edges[:len(edges) // 2], -edges[:len(edges) // 2:-1])
    assert edges[len(edges) // 2 + 1] == 1e-12


def test_add_histogram_errors_and_constant(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        with pytest.raises(ValueError, match="no element"):
            w.add_histogram("e", minitorch.zeros(0))
        w.add_histogram("c", np.full(5, 2.0), 1)
    ((_, v),) = values(tmp_path)
    stats, limits, counts = histo(v)
    assert stats["min"] == stats["max"] == 2.0 and sum(counts) == 5 and limits[-2] <= 2.0 <= limits[-1]


# ---- images --------------------------------------------------------------------------------

def image_of(v):
    im = fields(v[4][0])
    return one(im, 1, 0), one(im, 2, 0), one(im, 3, 0), decode_png(im[4][0])


@pytest.mark.parametrize("fmt,shape", [("CHW", (3, 5, 7)), ("HWC", (5, 7, 3)), ("HW", (5, 7)), ("CHW", (1, 5, 7)),
                                       ("HWC", (5, 7, 4)), ("WHC", (7, 5, 3))])
def test_add_image_layouts(tmp_path, fmt, shape):
    a = np.random.default_rng(1).uniform(-0.2, 1.2, shape).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_image("img", to_layout(a, "transposed"), 2, dataformats=fmt)
    ((step, v),) = values(tmp_path)
    h, wd, c, pixels = image_of(v)
    hwc = a.transpose([fmt.find(k) for k in "HWC"]) if len(fmt) == 3 else a[:, :, None]
    if hwc.shape[2] == 1:
        hwc = np.repeat(hwc, 3, 2)
    want = (hwc * 255).clip(0, 255).astype(np.uint8)
    assert (step, h, wd, c) == (2, 5, 7, want.shape[2])
    np.testing.assert_array_equal(pixels, want)


def test_add_images_grid_and_uint8(tmp_path):
    a = np.random.default_rng(2).integers(0, 256, (10, 1, 3, 4), dtype=np.uint8)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_images("batch", a, 0)
        w.add_images("nhwc", minitorch.tensor(a.transpose(0, 2, 3, 1).astype(np.float32) / 255), 1,
                     dataformats="NHWC")
        with pytest.raises(AssertionError, match="size of input tensor and input format are different"):
            w.add_image("bad", np.zeros((2, 2)), 0)
    (_, v), (_, v2) = values(tmp_path)
    h, wd, c, pixels = image_of(v)
    assert (h, wd, c) == (6, 32, 3)  # 8 columns, 2 rows
    for i in range(10):
        y, x = divmod(i, 8)
        np.testing.assert_array_equal(pixels[3 * y:3 * y + 3, 4 * x:4 * x + 4], np.repeat(a[i, 0][:, :, None], 3, 2))
    assert (pixels[3:, 8:] == 0).all()
    assert np.abs(image_of(v2)[3].astype(int) - pixels).max() <= 1  # float [0, 1] scaled back by 255


def test_add_figure(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    fig = plt.figure(figsize=(2, 1), dpi=50)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(str(tmp_path)) as w:
        w.add_figure("fig", fig, 4)
    ((step, v),) = values(tmp_path)
    h, wd, c, pixels = image_of(v)
    assert (step, h, wd, c) == (4, 50, 100, 3) and pixels.min() < 128 < pixels.max()


# ---- text, PR curves, hparams, embeddings, graphs --------------------------------------------

def test_add_text(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_text("notes", "héllo **world**", 9)
    ((step, v),) = values(tmp_path)
    t = fields(v[8][0])
    assert (step, tag(v), plugin(v)) == (9, "notes/text_summary", ("text", b""))
    assert t[1] == [7] and t[8] == ["héllo **world**".encode()] and fields(fields(t[2][0])[2][0]) == {1: [1]}


def test_add_pr_curve(tmp_path):
    rng = np.random.default_rng(3)
    labels, preds = rng.integers(0, 2, 200), rng.random(200)
    weights = rng.random(200)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_pr_curve("pr", minitorch.tensor(labels), minitorch.tensor(preds), 1, num_thresholds=11)
        w.add_pr_curve("prw", labels, preds, 2, num_thresholds=500, weights=weights)
    (_, v), (_, vw) = values(tmp_path)
    for val, n, wts in [(v, 11, np.ones(200)), (vw, 127, weights)]:
        name, content = plugin(val)
        assert name == "pr_curves" and fields(content) == {2: [n]}
        t = fields(val[8][0])
        assert [one(fields(d), 1) for d in fields(t[2][0])[2]] == [6, n]
        got = np.array(struct.unpack(f"<{6 * n}f", t[5][0])).reshape(6, n)
        bucket = np.floor(preds * (n - 1))
        tp = np.array([np.sum(wts * labels * (bucket >= i)) for i in range(n)])
        fp = np.array([np.sum(wts * (1 - labels) * (bucket >= i)) for i in range(n)])
        want = [tp, fp, fp[0] - fp, tp[0] - tp, tp / np.maximum(1e-7, tp + fp), tp / np.maximum(1e-7, tp[0])]
        np.testing.assert_allclose(got, np.array(want), rtol=1e-5, atol=1e-5)


def test_add_hparams(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_hparams({"lr": 0.1, "bsize": 16, "opt": "adam", "skip": None, "t": minitorch.tensor([2.5])},
                      {"hparam/accuracy": 0.75}, hparam_domain_discrete={"opt": ["adam", "sgd"]}, run_name="r1")
        with pytest.raises(TypeError, match="hparam_dict and metric_dict should be dictionary"):
            w.add_hparams([("lr", 1)], {})
        with pytest.raises(TypeError, match=r"hparam_domain_discrete\[lr\] should be a list"):
            w.add_hparams({"lr": 0.1}, {}, hparam_domain_discrete={"lr": ["x"]})
        with pytest.raises(ValueError, match="value should be one of"):
            w.add_hparams({"lr": object()}, {})
    got = values(tmp_path / "r1")
    assert [tag(v) for _, v in got] == ["_hparams_/experiment", "_hparams_/session_start_info",
                                        "_hparams_/session_end_info", "hparam/accuracy"]
    content = [fields(plugin(v)[1]) for _, v in got[:3]]
    assert all(plugin(v)[0] == "hparams" for _, v in got[:3])
    exp = fields(content[0][2][0])
    infos = [fields(i) for i in exp[4]]
    assert [(i[1][0].decode(), i[4][0]) for i in infos] == [("lr", 3), ("bsize", 3), ("opt", 1), ("t", 3)]
    assert [fields(x)[3][0] for x in fields(infos[2][5][0])[1]] == [b"adam", b"sgd"]
    assert [fields(fields(m)[1][0])[2][0] for m in exp[5]] == [b"hparam/accuracy"]
    start = {fields(e)[1][0].decode(): fields(fields(e)[2][0]) for e in fields(content[1][3][0])[1]}
    assert dbl(start["lr"][2][0]) == 0.1 and dbl(start["bsize"][2][0]) == 16 and start["opt"][3] == [b"adam"]
    assert dbl(start["t"][2][0]) == 2.5 and "skip" not in start
    assert fields(content[2][4][0]) == {1: [1]}
    assert struct.unpack("<f", got[3][1][2][0])[0] == 0.75


def test_add_embedding(tmp_path):
    mat = np.arange(12, dtype=np.float32).reshape(4, 3) / 8
    imgs = np.random.default_rng(4).random((4, 3, 2, 5)).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_embedding(minitorch.tensor(mat), metadata=["a", "b", "c", 1], label_img=minitorch.tensor(imgs))
        w.add_embedding(mat, metadata=[["x", 1]] * 4, metadata_header=["name", "n"], global_step=7, tag="t/2")
        with pytest.raises(AssertionError, match="#labels should equal"):
            w.add_embedding(mat, metadata=["a"], global_step=8)
    d = tmp_path / "00000" / "default"
    rows = [line.split("\t") for line in (d / "tensors.tsv").read_text().splitlines()]
    np.testing.assert_array_equal(np.array(rows, dtype=np.float64), mat)
    assert (d / "metadata.tsv").read_text() == "a\nb\nc\n1\n"
    assert (tmp_path / "00007" / "t%2f2" / "metadata.tsv").read_text() == "name\tn\n" + "x\t1\n" * 4
    sprite = decode_png((d / "sprite.png").read_bytes())
    assert sprite.shape == (10, 10, 3)  # 2 columns of 5-wide images on a square canvas
    np.testing.assert_array_equal(sprite[2:4, 5:10], (imgs[3].transpose(1, 2, 0) * 255).clip(0, 255).astype(np.uint8))
    config = (tmp_path / "projector_config.pbtxt").read_text()
    assert config.count("embeddings {") == 2 and 'tensor_name: "t/2:00007"' in config
    assert 'image_path: "00000/default/sprite.png"\n    single_image_dim: 5\n    single_image_dim: 2' in config


class Net(minitorch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = minitorch.nn.Linear(4, 3)
        self.fc2 = minitorch.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc2(minitorch.relu(self.fc1(x)))


def graph_nodes(logdir):
    ((_, _, f),) = [e for e in events(logdir) if 4 in e[2]]
    g = fields(f[4][0])
    assert fields(g[4][0]) == {1: [22]}
    return {fields(n)[1][0].decode(): fields(n) for n in g[1]}


def test_add_graph(tmp_path):
    with SummaryWriter(str(tmp_path)) as w:
        w.add_graph(Net(), minitorch.randn(2, 4))
    nodes = graph_nodes(tmp_path)
    ops = {name: n[2][0].decode() for name, n in nodes.items()}
    assert ops["input/input0"] == "IO Node" and ops["Net/Linear[fc1]/weight"] == "prim::GetAttr"
    (fc1,) = [k for k, op in ops.items() if k.startswith("Net/Linear[fc1]/") and op.startswith("aten::")]
    (relu,) = [k for k, op in ops.items() if op == "aten::relu"]
    (fc2,) = [k for k, op in ops.items() if k.startswith("Net/Linear[fc2]/") and op.startswith("aten::")]
    assert [i.decode() for i in nodes[fc1][3]] == ["input/input0", "Net/Linear[fc1]/weight", "Net/Linear[fc1]/bias"]
    assert [i.decode() for i in nodes[relu][3]] == [fc1] and [i.decode() for i in nodes["output/output0"][3]] == [fc2]
    attr = fields(nodes[fc2][5][0])
    assert attr[1] == [b"_output_shapes"]
    (shape,) = fields(fields(attr[2][0])[1][0])[7]
    assert [one(fields(d), 1) for d in fields(shape)[2]] == [2, 2]


# ---- queueing, purge, close ----------------------------------------------------------------

def test_queue_flush_close_and_reopen(tmp_path):
    w = SummaryWriter(str(tmp_path), max_queue=3, flush_secs=3600)
    w.add_scalar("x", 1.0, 1)
    w.add_scalar("x", 2.0, 2)
    assert len(values(tmp_path)) == 0  # still queued
    w.add_scalar("x", 3.0, 3)  # the third fills the queue
    assert [s for s, _ in values(tmp_path)] == [1, 2, 3]
    w.add_scalar("x", 4.0, 4)
    w.flush()
    assert [s for s, _ in values(tmp_path)] == [1, 2, 3, 4]
    w.close()
    w.close()  # a second close does nothing
    w.add_scalar("x", 5.0, 5)  # a new file after close
    w.flush()
    assert len(event_files(tmp_path)) == 2 and [s for s, _ in values(tmp_path)][-1] == 5
    w.close()


def test_flush_secs_timer(tmp_path):
    import time
    w = SummaryWriter(str(tmp_path), flush_secs=0.05)
    w.add_scalar("x", 1.0, 1)
    deadline = time.time() + 10
    while not values(tmp_path) and time.time() < deadline:
        time.sleep(0.02)
    assert [s for s, _ in values(tmp_path)] == [1]
    w.close()


def test_purge_step(tmp_path):
    with SummaryWriter(str(tmp_path), purge_step=42) as w:
        w.add_scalar("x", 1.0, 42)
    evs = events(tmp_path)
    assert [(s, sorted(f)) for _, s, f in evs[1:3]] == [(42, [1, 2, 3]), (42, [1, 2, 7])]
    assert fields(evs[2][2][7][0]) == {1: [1]}  # SessionLog.START


# ---- TensorBoard's reader and PyTorch's writer ----------------------------------------------

@pytest.fixture
def accumulator():
    if os.environ.get("MINITORCH_SANITIZE_RUN") == "1":
        pytest.skip("protobuf's C extension is not ours to check under the sanitizers")
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")

    def load(logdir):
        acc = ea.EventAccumulator(str(logdir), size_guidance={"scalars": 0, "histograms": 0, "images": 0,
                                                              "tensors": 0})
        return acc.Reload()
    return load


def test_tensorboard_reads_our_files(tmp_path, accumulator):
    a = np.random.default_rng(5).standard_normal(300)
    with SummaryWriter(str(tmp_path)) as w:
        for i in range(4):
            w.add_scalar("loss", 1.0 / (i + 1), i)
        w.add_histogram("h", a, 2)
        w.add_image("img", np.random.default_rng(6).random((3, 4, 6)), 3)
        w.add_text("t", "hi", 1)
        w.add_pr_curve("pr", np.array([0, 1, 1]), np.array([0.2, 0.9, 0.4]), 0)
        w.add_graph(Net(), minitorch.randn(1, 4))
    acc = accumulator(tmp_path)
    assert [(e.step, e.value) for e in acc.Scalars("loss")] == [(i, np.float32(1 / (i + 1))) for i in range(4)]
    (h,) = acc.Histograms("h")
    assert h.step == 2 and h.histogram_value.num == 300 and np.isclose(h.histogram_value.sum, a.sum())
    (im,) = acc.Images("img")
    assert (im.step, im.width, im.height) == (3, 6, 4)
    assert acc.Tensors("t/text_summary")[0].tensor_proto.string_val == [b"hi"]
    pr = acc.Tensors("pr")[0].tensor_proto
    assert [d.size for d in pr.tensor_shape.dim] == [6, 127]
    assert any(n.op == "aten::relu" for n in acc.Graph().node)


def torch_writer():
    if os.environ.get("MINITORCH_SANITIZE_RUN") == "1":
        pytest.skip("PyTorch is not loaded in the sanitizer run")
    torch = pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    return torch, TorchWriter


def test_scalar_bytes_equal_pytorchs(tmp_path):
    torch, TorchWriter = torch_writer()
    cases = [("loss", 0.5, 3), ("a/b", float("nan"), 0), ("x", -1e30, 2 ** 33), ("y", 0.0, -1)]
    for name, writer, make in [("ours", SummaryWriter, float), ("theirs", TorchWriter, torch.tensor)]:
        with writer(str(tmp_path / name)) as w:
            for t, x, s in cases:
                w.add_scalar(t, make(x), s, walltime=1234.5)
            w.add_scalar("new", make(0.25), 1, walltime=1.0, new_style=True)
            w.add_scalar("dbl", make(0.25), 1, walltime=1.0, new_style=True, double_precision=True)
    ours, theirs = (records(event_files(tmp_path / n)[0]) for n in ("ours", "theirs"))
    assert len(ours) == len(theirs) == len(cases) + 3
    assert ours[1:] == theirs[1:]
    strip = {k: v for k, v in fields(theirs[0]).items() if k in (2, 3)}
    assert {k: v for k, v in fields(ours[0]).items() if k in (2, 3)} == strip


def test_histogram_image_pr_hparams_match_pytorchs(tmp_path):
    torch, TorchWriter = torch_writer()
    from PIL import Image
    import io
    a = np.random.default_rng(7).standard_normal(500)
    img = np.random.default_rng(8).random((5, 3, 4, 6)).astype(np.float32)
    labels, preds = np.random.default_rng(9).integers(0, 2, 50), np.random.default_rng(10).random(50)
    for name, writer in [("ours", SummaryWriter), ("theirs", TorchWriter)]:
        with writer(str(tmp_path / name)) as w:
            w.add_histogram("h", a, 1, walltime=2.0)
            w.add_histogram("h8", a, 1, bins=30, max_bins=8, walltime=2.0)
            w.add_images("im", img, 2, walltime=2.0)
            w.add_pr_curve("pr", labels, preds, 3, num_thresholds=20, walltime=2.0)
            w.add_text("t", "words", 4, walltime=2.0)
            w.add_hparams({"lr": 0.1, "n": 3, "s": "adam"}, {"acc": 0.5}, run_name="hp",
                          hparam_domain_discrete={"n": [1, 3]})
    ours, theirs = values(tmp_path / "ours"), values(tmp_path / "theirs")
    for (s1, v1), (s2, v2) in zip(ours, theirs):
        assert s1 == s2 and tag(v1) == tag(v2)
        if 4 in v1:
            o, t = image_of(v1), fields(v2[4][0])
            assert o[:3] == (one(t, 1), one(t, 2), one(t, 3))
            np.testing.assert_array_equal(o[3], np.asarray(Image.open(io.BytesIO(t[4][0]))))
        else:
            assert v1 == v2
    assert len(ours) == len(theirs) == 5
    hp_ours, hp_theirs = values(tmp_path / "ours" / "hp"), values(tmp_path / "theirs" / "hp")
    assert len(hp_ours) == len(hp_theirs) == 4

    def start_info(v):  # SessionStartInfo.hparams is a map: protobuf writes its entries in any order
        return sorted(fields(fields(plugin(v)[1])[3][0])[1])
    assert start_info(hp_ours[1][1]) == start_info(hp_theirs[1][1])
    assert [hp_ours[i][1] for i in (0, 2, 3)] == [hp_theirs[i][1] for i in (0, 2, 3)]


# ---- audio, video, mesh --------------------------------------------------------------------

def read_events(logdir):
    ea_mod = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    ea = ea_mod.EventAccumulator(str(logdir), size_guidance={"audio": 0, "tensors": 0})
    ea.Reload()
    return ea


def test_add_audio(tmp_path, capsys):
    import io
    import wave

    rng = np.random.default_rng(5)
    snd = rng.uniform(-1.3, 1.3, (1, 300)).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_audio("clip", minitorch.tensor(snd), 3, sample_rate=8000)
        w.add_audio("quiet", snd[0] / 2, 4)
    assert capsys.readouterr().out == "warning: audio amplitude out of range, auto clipped.\n"
    (s1, v1), (s2, v2) = values(tmp_path)
    for (step, v), want_step, x, rate in [((s1, v1), 3, snd.clip(-1, 1), 8000), ((s2, v2), 4, snd / 2, 44100)]:
        a = fields(v[6][0])
        assert (step, struct.unpack("<f", a[1][0])[0], a[2], a[3], a[5]) == (want_step, rate, [1], [300], [b"audio/wav"])
        with wave.open(io.BytesIO(a[4][0])) as wav:
            assert (wav.getnchannels(), wav.getsampwidth(), wav.getframerate()) == (1, 2, rate)
            pcm = np.frombuffer(wav.readframes(wav.getnframes()), "<i2")
        np.testing.assert_array_equal(pcm, (x.reshape(-1) * 32767).astype(np.int16))
    ea = read_events(tmp_path)
    assert sorted(ea.Tags()["audio"]) == ["clip", "quiet"]
    (ev,) = ea.Audio("clip")
    assert (ev.step, ev.sample_rate, ev.length_frames, ev.content_type) == (3, 8000, 300, "audio/wav")
    with pytest.raises(AssertionError, match="input tensor should be 1 dimensional."):
        SummaryWriter(str(tmp_path / "bad")).add_audio("x", np.zeros((2, 5)))


def test_add_video_without_moviepy_is_pytorchs(tmp_path, capsys):
    try:
        import moviepy  # noqa: F401
        pytest.skip("moviepy installed: the GIF path runs")
    except ImportError:
        pass
    vid = np.random.default_rng(6).uniform(0, 1, (3, 4, 3, 8, 6)).astype(np.float32)
    with SummaryWriter(str(tmp_path)) as w:
        w.add_video("clip", minitorch.tensor(vid), 2, fps=5)
    assert capsys.readouterr().out == "add_video needs package moviepy\n"
    ((step, v),) = values(tmp_path)
    assert step == 2 and v == {1: [b"clip"]}  # PyTorch's Summary.Value(tag=tag, image=None)


@pytest.mark.parametrize("b, t, c", [(1, 2, 3), (3, 4, 3), (4, 1, 1), (5, 2, 3)])
def test_video_frames_tile_clips_like_pytorchs(b, t, c):
    from minitorch.utils.tensorboard.summary import _prepare_video

    v = np.random.default_rng(b).uniform(0, 1, (b, t, c, 4, 5))
    grid = _prepare_video(v)
    rows = 2 ** ((b.bit_length() - 1) // 2)
    cols = (2 ** (b - 1).bit_length() if b & (b - 1) else b) // rows
    assert grid.shape == (t, rows * 4, cols * 5, c)
    for k in range(b):  # clip k at row k // cols, column k % cols; the padding clips black
        r, q = divmod(k, cols)
        np.testing.assert_array_equal(grid[:, r * 4:(r + 1) * 4, q * 5:(q + 1) * 5], v[k].transpose(0, 2, 3, 1))
    assert grid[:, :, :, :].size == t * rows * 4 * cols * 5 * c


def test_add_mesh(tmp_path):
    rng = np.random.default_rng(7)
    verts = rng.standard_normal((1, 6, 3)).astype(np.float32)
    colors = rng.integers(0, 256, (1, 6, 3)).astype(np.int32)
    faces = rng.integers(0, 6, (1, 4, 3)).astype(np.int32)
    config = {"camera": {"cls": "PerspectiveCamera", "fov": 75}}
    with SummaryWriter(str(tmp_path)) as w:
        w.add_mesh("m", minitorch.tensor(verts), colors=minitorch.tensor(colors), faces=minitorch.tensor(faces),
                   config_dict=config, global_step=1)
        w.add_mesh("cloud", verts, global_step=2)
    vals = values(tmp_path)
    assert [(s, tag(v)) for s, v in vals] == [(1, "m_VERTEX"), (1, "m_FACE"), (1, "m_COLOR"), (2, "cloud_VERTEX")]
    for (_, v), kind, arr, comps, cfg in zip(vals, (1, 2, 3, 1), (verts, faces, colors, verts), (14, 14, 14, 2),
                                             ('{"camera": {"cls": "PerspectiveCamera", "fov": 75}}',) * 3 + ("{}",)):
        name, content = plugin(v)
        pd = fields(content)
        assert name == "mesh" and pd[3] == [kind] and pd[7] == [comps] and pd[5] == [cfg.encode()]
        assert list(pd[6][0]) == list(arr.shape)  # packed int32 shape (small values: one byte each)
        t = fields(v[8][0])
        np.testing.assert_array_equal(np.frombuffer(t[5][0], "<f4").reshape(arr.shape), arr.astype(np.float32))
    ea = read_events(tmp_path)
    assert sorted(ea.Tags()["tensors"]) == ["cloud_VERTEX", "m_COLOR", "m_FACE", "m_VERTEX"]
    with pytest.raises(ValueError, match="Tensor shape should be of shape BxNx3"):
        SummaryWriter(str(tmp_path / "bad")).add_mesh("x", verts[0])


def test_audio_and_mesh_summaries_are_pytorchs_bytes():
    torch = pytest.importorskip("torch")
    from torch.utils.tensorboard import summary as TS

    from minitorch.utils.tensorboard import summary as MS

    rng = np.random.default_rng(8)
    snd = rng.uniform(-1, 1, (1, 64)).astype(np.float32)
    assert MS.audio("a", minitorch.tensor(snd), 16000) == TS.audio("a", torch.tensor(snd), 16000).SerializeToString()
    v, f = rng.standard_normal((1, 5, 3)).astype(np.float32), rng.integers(0, 5, (1, 3, 3)).astype(np.int32)
    assert MS.mesh("m", minitorch.tensor(v), None, minitorch.tensor(f), {"a": 1}) == \
        TS.mesh("m", torch.tensor(v), None, torch.tensor(f), {"a": 1}).SerializeToString()
