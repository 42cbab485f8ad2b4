"""Eager static quantization of a CNN against NumPy and PyTorch: module fusion (fuse_modules,
fuse_modules_qat, the folding of batch norms), the quantized Conv2d / ConvReLU2d / LinearReLU /
ReLU6 / QFunctional (integer sums and fbgemm's output stage: within one step of torch on the
same integers, and of a float64 NumPy reference), the quantized pooling ops, prepare / convert of
a small CNN, the FakeQuantize switches and saving a converted model."""
from __future__ import annotations

import copy
import io
import re

import numpy as np
import pytest

import minitorch
from helpers import as_numpy

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions",
                                        "ignore:torch.ao.quantization is deprecated:DeprecationWarning",
                                        "ignore:Please use quant_min and quant_max")


@pytest.fixture(autouse=True)
def fbgemm_engine():
    """torch computes with fbgemm, whose numerics minitorch's quantized modules follow."""
    old = torch.backends.quantized.engine
    torch.backends.quantized.engine = "fbgemm"
    yield
    torch.backends.quantized.engine = old


def _ints(q) -> np.ndarray:
    return np.asarray(q.int_repr().numpy() if isinstance(q, torch.Tensor) else as_numpy(q.int_repr()), dtype=np.int64)


def _within_one_step(got, want) -> None:
    """Same quantizer, and integers at most one apart (most of them equal)."""
    assert got.q_scale() == pytest.approx(want.q_scale(), rel=1e-6) and got.q_zero_point() == want.q_zero_point()
    g, w = _ints(got), _ints(want)
    assert g.shape == w.shape
    assert np.abs(g - w).max(initial=0) <= 1
    assert (g == w).mean() >= 0.97 if g.size else True


def _np_conv2d(x, w, stride, padding, dilation, groups):
    """x (N, C, H, W), w (O, C / groups, kH, kW), in float64."""
    x = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    ho, wo = (h - dilation * (kh - 1) - 1) // stride + 1, (wd - dilation * (kw - 1) - 1) // stride + 1
    og = o // groups
    out = np.zeros((n, o, ho, wo))
    for a in range(kh):
        for b in range(kw):
            patch = x[:, :, a * dilation:a * dilation + stride * (ho - 1) + 1:stride,
                      b * dilation:b * dilation + stride * (wo - 1) + 1:stride]
            for g in range(groups):
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch[:, g * cg:(g + 1) * cg],
                                                         w[g * og:(g + 1) * og, :, a, b])
    return out


def _np_requantize(acc, x_scale, w_scale, bias, out_scale, out_zp, relu, shape):
    """The output stage in float64 (fbgemm's is float32: within one step)."""
    ab = x_scale * np.asarray(w_scale, dtype=np.float64).reshape(shape)
    v = acc + (0 if bias is None else bias.reshape(shape) / ab)
    return np.clip(np.rint(v * ab / out_scale) + out_zp, out_zp if relu else 0, 255)


def _both_qweights(w: np.ndarray, per_channel: bool):
    """The same qint8 weight in both libraries: symmetric, per tensor or per output channel."""
    if per_channel:
        scales = np.abs(w).reshape(len(w), -1).max(1) / 127.5
        args = lambda lib: (lib.tensor(scales, dtype=lib.float64), lib.zeros(len(w), dtype=lib.int64), 0)  # noqa
        return [lib.quantize_per_channel(lib.tensor(w), *args(lib), lib.qint8) for lib in (minitorch, torch)]
    scale = float(np.abs(w).max() / 127.5)
    return [lib.quantize_per_tensor(lib.tensor(w), scale, 0, lib.qint8) for lib in (minitorch, torch)]


def _both_inputs(x: np.ndarray, scale: float = 0.02, zp: int = 100):
    return [lib.quantize_per_tensor(lib.tensor(x), scale, zp, lib.quint8) for lib in (minitorch, torch)]


CONVS = [  # in, out, kernel, stride, padding, dilation, groups, bias
    (3, 8, 3, 1, 1, 1, 1, True), (4, 6, 3, 2, 0, 1, 2, False), (6, 6, 3, 1, 2, 2, 6, True),
    (5, 7, 1, 1, 0, 1, 1, True), (2, 4, (2, 3), 1, 1, 1, 1, True),
]


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("cin,cout,k,stride,padding,dilation,groups,bias", CONVS)
def test_quantized_conv2d_as_torch_and_numpy(cin, cout, k, stride, padding, dilation, groups, bias, per_channel,
                                             relu):
    rng = np.random.default_rng(cin * 7 + cout)
    ks = k if isinstance(k, tuple) else (k, k)
    w = (rng.standard_normal((cout, cin // groups, *ks)) * 0.3).astype(np.float32)
    b = (rng.standard_normal(cout) * 0.5).astype(np.float32) if bias else None
    x = rng.uniform(-2, 2.5, (2, cin, 7, 8)).astype(np.float32)
    out_scale, out_zp = 0.05, 3 if relu else 120
    mods = []
    for lib, qw, qx in zip((minitorch, torch), _both_qweights(w, per_channel), _both_inputs(x)):
        cls = lib.ao.nn.intrinsic.quantized.ConvReLU2d if relu else lib.ao.nn.quantized.Conv2d
        m = cls(cin, cout, k, stride=stride, padding=padding, dilation=dilation, groups=groups, bias=bias)
        m.set_weight_bias(qw, None if b is None else lib.tensor(b))
        m.scale, m.zero_point = out_scale, out_zp
        mods.append((m, m(qx), qx, qw))
    (_, got, qx, qw), (_, want, _, _) = mods
    _within_one_step(got, want)
    w_scale = as_numpy(qw.q_per_channel_scales()) if per_channel else qw.q_scale()
    pad = padding if isinstance(padding, int) else padding[0]
    acc = _np_conv2d(_ints(qx) - 100.0, _ints(qw).astype(np.float64), stride, pad, dilation, groups)
    ref = _np_requantize(acc, 0.02, w_scale, b, out_scale, out_zp, relu, (1, -1, 1, 1))
    assert np.abs(_ints(got) - ref).max() <= 1


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("per_channel", [False, True])
def test_quantized_linear_relu_as_torch_and_numpy(per_channel, relu):
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((9, 12)) * 0.3).astype(np.float32)
    b = rng.standard_normal(9).astype(np.float32)
    x = rng.uniform(-2, 2.5, (2, 3, 12)).astype(np.float32)
    outs = []
    for lib, qw, qx in zip((minitorch, torch), _both_qweights(w, per_channel), _both_inputs(x)):
        cls = lib.ao.nn.intrinsic.quantized.LinearReLU if relu else lib.ao.nn.quantized.Linear
        m = cls(12, 9)
        m.set_weight_bias(qw, lib.tensor(b))
        m.scale, m.zero_point = 0.04, 7
        outs.append((m(qx), qx, qw))
    (got, qx, qw), (want, _, _) = outs
    _within_one_step(got, want)
    w_scale = as_numpy(qw.q_per_channel_scales()) if per_channel else qw.q_scale()
    acc = (_ints(qx) - 100.0) @ _ints(qw).T.astype(np.float64)
    assert np.abs(_ints(got) - _np_requantize(acc, 0.02, w_scale, b, 0.04, 7, relu, (1, 1, -1))).max() <= 1
    assert repr(minitorch.ao.nn.intrinsic.quantized.LinearReLU(2, 3)).startswith("QuantizedLinearReLU(in_features=2")


def test_quantized_conv2d_errors_and_repr():
    m = minitorch.ao.nn.quantized.Conv2d(3, 4, 3, stride=2, padding=1, bias=False)
    t = torch.ao.nn.quantized.Conv2d(3, 4, 3, stride=2, padding=1, bias=False)
    assert repr(m) == repr(t)
    g = minitorch.ao.nn.quantized.Conv2d(4, 4, 3, groups=2, dilation=2)
    assert repr(g) == repr(torch.ao.nn.quantized.Conv2d(4, 4, 3, groups=2, dilation=2))
    with pytest.raises(ValueError, match=r"Input shape must be `\(N, C, H, W\)`!"):
        m(minitorch.quantize_per_tensor(minitorch.zeros(3, 5, 5), 0.1, 0, minitorch.quint8))
    with pytest.raises(RuntimeError, match="Expected input data type to be quint8"):
        m(minitorch.zeros(1, 3, 5, 5))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        minitorch.ao.nn.quantized.Conv2d(3, 4, 3, groups=2)


@pytest.mark.parametrize("fn", [
    lambda lib, q: lib.nn.functional.max_pool2d(q, 2),
    lambda lib, q: lib.nn.functional.max_pool2d(q, 3, stride=2, padding=1),
    lambda lib, q: lib.nn.functional.avg_pool2d(q, 2),
    lambda lib, q: lib.nn.functional.adaptive_avg_pool2d(q, (2, 3)),
    lambda lib, q: lib.nn.functional.adaptive_avg_pool2d(q, 1),
    lambda lib, q: q.mean([2, 3]),
    lambda lib, q: lib.nn.functional.relu6(q),
    lambda lib, q: lib.nn.functional.hardtanh(q, -0.5, 1.0),
    lambda lib, q: lib.ao.nn.quantized.ReLU6()(q),
    lambda lib, q: lib.nn.functional.dropout(q, 0.5, training=False),
    lambda lib, q: lib.flatten(lib.nn.MaxPool2d(2)(q), 1),
])
def test_ops_on_quantized_activations_as_torch(fn):
    x = np.random.default_rng(4).uniform(-3, 9, (2, 3, 6, 7)).astype(np.float32)
    got, want = (fn(lib, q) for lib, q in zip((minitorch, torch), _both_inputs(x, 0.05, 60)))
    _within_one_step(got, want)


def test_qfunctional_as_torch():
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-2, 3, (2, 4, 5)).astype(np.float32), rng.uniform(-1, 2, (2, 4, 5)).astype(np.float32)
    qa, qb = _both_inputs(a, 0.03, 70), _both_inputs(b, 0.02, 50)
    for name, args in [("add", ()), ("add_relu", ()), ("mul", ()), ("cat", (1,))]:
        got_want = []
        for lib, x, y in zip((minitorch, torch), qa, qb):
            f = lib.ao.nn.quantized.QFunctional()
            f.scale, f.zero_point = 0.045, 90
            got_want.append(getattr(f, name)([x, y], *args) if name == "cat" else getattr(f, name)(x, y))
        _within_one_step(*got_want)
    f = minitorch.ao.nn.quantized.QFunctional()
    assert repr(f) == repr(torch.ao.nn.quantized.QFunctional()).replace("torch", "minitorch")
    with pytest.raises(RuntimeError, match="Functional is not intended to use the 'forward'"):
        f(qa[0])
    ff = minitorch.ao.nn.quantized.FloatFunctional()
    x = minitorch.tensor(a)
    assert minitorch.equal(ff.add(x, x), x + x) and minitorch.equal(ff.cat([x, x], 1), minitorch.cat([x, x], 1))
    assert minitorch.equal(ff.add_relu(x, x), (x + x).relu()) and minitorch.equal(ff.mul_scalar(x, 2.0), x * 2)


# ---- fusion ----

def _conv_bn_relu(lib, rng_seed: int = 0):
    """Conv2d, BatchNorm2d (with running statistics and affine parameters), ReLU, Linear,
    BatchNorm1d, ReLU, with the same weights in both libraries."""
    nn = lib.nn
    lib.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                      nn.Linear(4 * 5 * 5, 6), nn.BatchNorm1d(6), nn.ReLU())
    rng = np.random.default_rng(rng_seed)
    with lib.no_grad():
        for p in list(m.parameters()) + [m[1].running_mean, m[5].running_mean]:
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.5))
        for v in (m[1].running_var, m[5].running_var):
            v.copy_(lib.tensor(rng.uniform(0.5, 2.0, tuple(v.shape)).astype(np.float32)))
    return m


def test_fuse_modules_eval_folds_batch_norm_as_torch():
    x = np.random.default_rng(1).standard_normal((2, 3, 5, 5)).astype(np.float32)
    outs = []
    for lib in (minitorch, torch):
        m = _conv_bn_relu(lib).eval()
        want = m(lib.tensor(x))
        fused = lib.ao.quantization.fuse_modules(m, [["0", "1", "2"], ["4", "5"]])
        assert type(m[0]) is lib.nn.Conv2d  # not inplace: the original is kept
        assert type(fused[0]) is lib.ao.nn.intrinsic.ConvReLU2d and type(fused[4]) is lib.nn.Linear
        assert all(type(fused[i]) is lib.nn.Identity for i in (1, 2, 5))
        got = fused(lib.tensor(x))
        np.testing.assert_allclose(np.asarray(got.detach().numpy()), np.asarray(want.detach().numpy()),
                                   rtol=1e-5, atol=1e-5)
        outs.append((fused, got))
    (mf, mo), (tf, to) = outs
    np.testing.assert_allclose(as_numpy(mo.detach()), to.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(as_numpy(mf[0][0].weight.detach()), tf[0][0].weight.detach().numpy(), rtol=1e-6)
    np.testing.assert_allclose(as_numpy(mf[4].bias.detach()), tf[4].bias.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert repr(mf).replace("minitorch", "torch") == repr(tf)


def test_fuse_modules_qat_keeps_batch_norm_and_moves_hooks():
    m = _conv_bn_relu(minitorch).train()
    calls = []
    m[0].register_forward_pre_hook(lambda mod, inp: calls.append("pre"))
    m[2].register_forward_hook(lambda mod, inp, out: calls.append("post"))
    minitorch.ao.quantization.fuse_modules_qat(m, [["0", "1", "2"], ["4", "5"]], inplace=True)
    nni = minitorch.ao.nn.intrinsic
    assert type(m[0]) is nni.ConvBnReLU2d and type(m[4]) is nni.LinearBn1d
    assert m[1].training and type(m[1]) is minitorch.nn.Identity
    m(minitorch.randn(2, 3, 5, 5))
    assert calls == ["pre", "post"]
    assert not m[0][0]._forward_pre_hooks and not m[0][2]._forward_hooks
    t = minitorch.nn.Sequential(minitorch.nn.Conv2d(1, 1, 1), minitorch.nn.ReLU())
    minitorch.quantization.fuse_modules(t, ["0", "1"], inplace=True)
    assert type(t[0]) is nni.ConvReLU2d


def test_fuse_modules_errors_as_torch():
    for lib in (minitorch, torch):
        nn = lib.nn
        with pytest.raises(AssertionError, match="did not find fuser method for"):
            lib.ao.quantization.fuse_modules(nn.Sequential(nn.ReLU(), nn.Conv2d(1, 1, 1)), ["0", "1"])
        m = nn.Sequential(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2))
        m[1].eval()
        with pytest.raises(AssertionError, match="Conv and BN both must be in the same mode"):
            lib.ao.quantization.fuse_modules(m, ["0", "1"])
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            lib.ao.quantization.fuse_modules(m.train(), ["0", "1"])
        with pytest.raises(AssertionError, match="Incorrect types for input modules"):
            lib.ao.nn.intrinsic.ConvReLU2d(nn.ReLU(), nn.ReLU())


# ---- prepare, calibrate, convert ----

def _small_cnn(lib, width: int = 8):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant = lib.ao.quantization.QuantStub()
            self.conv1, self.bn1 = nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width)
            self.relu1 = nn.ReLU()
            self.conv2, self.relu2 = nn.Conv2d(width, width, 3, padding=1), nn.ReLU()
            self.skip_add = lib.ao.nn.quantized.FloatFunctional()
            self.pool = nn.MaxPool2d(2)
            self.fc, self.relu3 = nn.Linear(width * 3 * 3, 10), nn.ReLU()
            self.fc2 = nn.Linear(10, 4)
            self.dequant = lib.ao.quantization.DeQuantStub()

        def forward(self, x):
            x = self.relu1(self.bn1(self.conv1(self.quant(x))))
            x = self.pool(self.skip_add.add(x, self.relu2(self.conv2(x))))
            x = self.relu3(self.fc(x.reshape(x.shape[0], -1)))
            return self.dequant(self.fc2(x))

    lib.manual_seed(0)
    net = Net()
    rng = np.random.default_rng(7)
    with lib.no_grad():
        for name, p in net.state_dict().items():
            if p.dtype == lib.float32:
                v = rng.uniform(0.5, 1.5, tuple(p.shape)) if "running_var" in name else rng.standard_normal(
                    tuple(p.shape)) * 0.4
                p.copy_(lib.tensor(v.astype(np.float32)))
    return net.eval()


@pytest.mark.parametrize("backend", ["fbgemm", "qnnpack"])
def test_prepare_convert_small_cnn_as_torch(backend):
    data = np.random.default_rng(8).standard_normal((6, 3, 6, 6)).astype(np.float32)
    results = []
    for lib in (minitorch, torch):
        q = lib.ao.quantization
        net = _small_cnn(lib)
        float_out = net(lib.tensor(data))
        q.fuse_modules(net, [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["fc", "relu3"]], inplace=True)
        net.qconfig = q.get_default_qconfig(backend)
        q.prepare(net, inplace=True)
        assert type(net.skip_add.activation_post_process).__name__ == "HistogramObserver"
        assert hasattr(net.conv1, "activation_post_process") and not hasattr(net.conv1[0], "activation_post_process")
        net(lib.tensor(data[:4]))  # calibration
        net(lib.tensor(data[4:]))
        q.convert(net, inplace=True)
        results.append((net, net(lib.tensor(data)), float_out))
    (mn, mo, mf), (tn, to, tf) = results
    numbers = re.compile(r"\d+\.\d+")  # the scales, checked below to float32's precision
    assert numbers.sub("#", repr(mn).replace("minitorch.", "torch.")) == numbers.sub("#", repr(tn))
    for name in ("conv1", "conv2", "fc", "fc2", "skip_add"):
        a, b = getattr(mn, name), getattr(tn, name)
        assert a.scale == pytest.approx(b.scale, rel=1e-5) and a.zero_point == b.zero_point, name
        if name != "skip_add":
            assert np.abs(_ints(a.weight()) - _ints(b.weight())).max() <= 1
    step = tn.fc2.scale
    diff = np.abs(as_numpy(mo) - to.numpy())
    assert diff.max() <= 2.01 * step and diff.mean() <= 0.2 * step  # a step or two after five layers
    # quantization keeps the float model's answer to within a few steps
    assert np.abs(as_numpy(mo) - as_numpy(mf.detach())).max() < 12 * step


def test_converted_model_state_dict_round_trip_and_size():
    data = minitorch.tensor(np.random.default_rng(9).standard_normal((4, 3, 6, 6)).astype(np.float32))
    q = minitorch.ao.quantization

    def converted():
        net = _small_cnn(minitorch, 32)
        q.fuse_modules(net, [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["fc", "relu3"]], inplace=True)
        net.qconfig = q.get_default_qconfig("x86")
        return q.prepare(net)

    float_buf = io.BytesIO()
    minitorch.save(_small_cnn(minitorch, 32).state_dict(), float_buf)
    net = converted()
    net(data)
    net = q.convert(net)
    buf = io.BytesIO()
    minitorch.save(net.state_dict(), buf)
    assert {"conv1.weight", "conv1.bias", "conv1.scale", "conv1.zero_point", "skip_add.scale",
            "fc._packed_params._packed_params", "quant.scale"} <= set(net.state_dict())
    assert isinstance(net.state_dict()["conv1.weight"], minitorch.Tensor)
    assert net.state_dict()["conv1.weight"].dtype is minitorch.qint8
    fresh = q.convert(converted())
    buf.seek(0)
    fresh.load_state_dict(minitorch.load(buf))
    assert minitorch.equal(fresh(data), net(data))
    assert len(buf.getvalue()) < 0.4 * len(float_buf.getvalue())  # a byte a weight, not four


def test_fake_quant_switches_for_model_apply():
    q = minitorch.ao.quantization
    m = minitorch.nn.Sequential(q.FakeQuantize(), minitorch.nn.ReLU(), q.FakeQuantize())
    m.apply(q.disable_observer)
    assert [int(f.observer_enabled[0]) for f in (m[0], m[2])] == [0, 0]
    m.apply(q.disable_fake_quant)
    x = minitorch.randn(5)
    assert minitorch.equal(m[0](x), x)
    m.apply(q.enable_fake_quant)
    m.apply(q.enable_observer)
    assert [int(f.fake_quant_enabled[0]) + int(f.observer_enabled[0]) for f in (m[0], m[2])] == [2, 2]
    assert q.disable_observer.__name__ == "disable_observer"


# ---- quantization-aware training of the fused CNN ----

def _qat_run(lib, version: int, steps: int = 4):
    """fuse_modules_qat, prepare_qat with the x86 QAT qconfig (version 0: FakeQuantize; 1:
    FusedMovingAvgObsFakeQuantize), a few SGD steps, observers and batch norm statistics frozen
    for the last one, convert."""
    q = lib.ao.quantization
    rng = np.random.default_rng(10)
    data, target = lib.tensor(rng.standard_normal((8, 3, 6, 6)).astype(np.float32)), lib.tensor(rng.integers(0, 4, 8))
    net = _small_cnn(lib).train()
    q.fuse_modules_qat(net, [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["fc", "relu3"]], inplace=True)
    net.qconfig = q.get_default_qat_qconfig("x86", version=version)
    q.prepare_qat(net, inplace=True)
    types = [type(m).__name__ for m in net.modules()]
    opt = lib.optim.SGD(net.parameters(), lr=0.01)
    losses = []
    for step in range(steps):
        if step == steps - 1:
            net.apply(q.disable_observer)
            net.apply(lib.ao.nn.intrinsic.qat.freeze_bn_stats)
        opt.zero_grad()
        loss = lib.nn.functional.cross_entropy(net(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    frozen = (net.conv1.freeze_bn, net.conv1.bn.training, int(net.conv1.weight_fake_quant.observer_enabled[0]))
    qnet = q.convert(net.eval())
    return dict(types=types, losses=losses, frozen=frozen, out=qnet(data), qnet=qnet)


@pytest.mark.parametrize("version", [0, 1])
def test_quantization_aware_training_as_torch(version):
    got, want = _qat_run(minitorch, version), _qat_run(torch, version)
    assert got["types"] == want["types"]
    fake_quant = "FusedMovingAvgObsFakeQuantize" if version else "FakeQuantize"
    assert {"ConvBnReLU2d", "ConvReLU2d", "LinearReLU", fake_quant} <= set(got["types"])
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    assert got["frozen"] == want["frozen"] == (True, False, 0)
    assert repr(got["qnet"].fc2).replace("minitorch", "torch")[:60] == repr(want["qnet"].fc2)[:60]
    m, t = got["qnet"], want["qnet"]
    assert [x._get_name() for x in m.modules()] == [x._get_name() for x in t.modules()]
    for name in ("conv1", "conv2", "fc", "fc2"):
        a, b = getattr(m, name), getattr(t, name)
        assert a.scale == pytest.approx(b.scale, rel=1e-5) and a.zero_point == b.zero_point, name
        assert np.abs(_ints(a.weight()) - _ints(b.weight())).max() <= 1
    assert np.abs(as_numpy(got["out"]) - want["out"].numpy()).max() <= 1.01 * t.fc2.scale


def test_qat_conv_bn_forward_and_errors():
    nni, nniqat = minitorch.ao.nn.intrinsic, minitorch.ao.nn.intrinsic.qat
    qconfig = minitorch.ao.quantization.get_default_qat_qconfig("x86")
    with pytest.raises(AssertionError, match="qconfig must be provided for QAT module"):
        nniqat.ConvBn2d(3, 4, 3)
    float_mod = nni.ConvBn2d(minitorch.nn.Conv2d(3, 4, 3), minitorch.nn.BatchNorm2d(4))
    with pytest.raises(AssertionError, match="Input float module must have qconfig defined"):
        nniqat.ConvBn2d.from_float(float_mod)
    float_mod.qconfig = qconfig
    qat = nniqat.ConvBn2d.from_float(float_mod)
    assert qat.weight is float_mod[0].weight and qat.bn.running_var is float_mod[1].running_var
    # with fake quantization off, the forward is conv then batch norm, as the float modules'
    qat.apply(minitorch.ao.quantization.disable_fake_quant)
    x = minitorch.randn(2, 3, 6, 6)
    np.testing.assert_allclose(as_numpy(qat(x).detach()), as_numpy(float_mod(x).detach()), rtol=1e-5, atol=1e-5)
    qat.apply(nniqat.freeze_bn_stats)
    assert qat.freeze_bn and not qat.bn.training
    qat.apply(nniqat.update_bn_stats)
    assert not qat.freeze_bn and qat.bn.training


@pytest.mark.parametrize("qscheme,ch_axis", [("per_tensor_affine", None), ("per_tensor_symmetric", None),
                                             ("per_channel_symmetric", 0)])
def test_fused_moving_average_fake_quantize_as_torch(qscheme, ch_axis):
    """The fused module's scale and zero point (ChooseQuantizationParams, sparsity-preserving for
    symmetric schemes) and its output, step by step, as torch's."""
    rng = np.random.default_rng(11)
    xs = [(rng.standard_normal((4, 6)) * s + m).astype(np.float32) for s, m in [(1, 0.3), (2, -0.5), (0.5, 1)]]
    mods = []
    for lib in (minitorch, torch):
        q = lib.ao.quantization
        per_channel = ch_axis is not None
        observer = q.MovingAveragePerChannelMinMaxObserver if per_channel else q.MovingAverageMinMaxObserver
        dtype, (lo, hi) = (lib.qint8, (-128, 127)) if "symmetric" in qscheme else (lib.quint8, (0, 255))
        kwargs = {"ch_axis": ch_axis} if per_channel else {}
        mods.append(q.FusedMovingAvgObsFakeQuantize(observer=observer, quant_min=lo, quant_max=hi, dtype=dtype,
                                                    qscheme=getattr(lib, qscheme), **kwargs))
    for x in xs:
        got, want = mods[0](minitorch.tensor(x)), mods[1](torch.tensor(x))
        np.testing.assert_array_equal(as_numpy(mods[0].scale), mods[1].scale.numpy())
        np.testing.assert_array_equal(as_numpy(mods[0].zero_point), mods[1].zero_point.numpy())
        np.testing.assert_array_equal(as_numpy(got), want.numpy())
    assert repr(mods[0]).replace("minitorch", "torch") == repr(mods[1])


@pytest.mark.parametrize("make", [lambda nn: nn.Hardswish(), lambda nn: nn.LeakyReLU(0.2), lambda nn: nn.ELU(0.7),
                                  lambda nn: nn.ReLU6()])
def test_quantized_activation_modules_after_convert_as_torch(make):
    x = np.random.default_rng(12).uniform(-4, 7, (3, 4, 5)).astype(np.float32)
    results = []
    for lib in (minitorch, torch):
        q = lib.ao.quantization
        net = lib.nn.Sequential(q.QuantStub(), make(lib.nn), q.DeQuantStub()).eval()
        net.qconfig = q.default_qconfig
        q.prepare(net, inplace=True)
        net(lib.tensor(x))
        q.convert(net, inplace=True)
        results.append((net, net[0](lib.tensor(x)), net[1](net[0](lib.tensor(x)))))
    (mn, mq, mo), (tn, tq, to) = results
    assert repr(mn).replace("minitorch", "torch") == repr(tn)
    assert set(mn.state_dict()) == set(tn.state_dict())
    _within_one_step(mo, to)


def test_torch_saved_quantized_cnn_loads_into_minitorch(tmp_path):
    """A quantized CNN converted and saved by PyTorch loads into minitorch's converted model (its
    quantized conv weights, packed Linear parameters, scales and zero points), which then computes
    PyTorch's outputs within one step; and the other way round."""
    data = np.random.default_rng(13).standard_normal((4, 3, 6, 6)).astype(np.float32)
    nets = []
    for lib in (minitorch, torch):
        q = lib.ao.quantization
        net = _small_cnn(lib)
        q.fuse_modules(net, [["conv1", "bn1", "relu1"], ["conv2", "relu2"], ["fc", "relu3"]], inplace=True)
        net.qconfig = q.get_default_qconfig("x86")
        q.prepare(net, inplace=True)
        net(lib.tensor(data * (1.5 if lib is torch else 1.0)))  # different calibrations
        nets.append(q.convert(net))
    mnet, tnet = nets
    # minitorch's model, saved, loads into a copy of PyTorch's, which then computes as minitorch's
    minitorch.save(mnet.state_dict(), str(tmp_path / "minitorch.pt"))
    tcopy = copy.deepcopy(tnet)
    tcopy.load_state_dict(torch.load(tmp_path / "minitorch.pt"))
    assert tcopy.conv1.scale == mnet.conv1.scale and tcopy.conv1.scale != tnet.conv1.scale
    mine = mnet(minitorch.tensor(data))
    assert np.abs(tcopy(torch.tensor(data)).numpy() - as_numpy(mine)).max() <= 1.01 * mnet.fc2.scale
    # and PyTorch's into minitorch's
    torch.save(tnet.state_dict(), tmp_path / "torch.pt")
    mnet.load_state_dict(minitorch.load(str(tmp_path / "torch.pt")))
    assert mnet.conv1.scale == tnet.conv1.scale and mnet.fc2.zero_point == tnet.fc2.zero_point
    np.testing.assert_array_equal(_ints(mnet.conv2.weight()), _ints(tnet.conv2.weight()))
    got, want = mnet(minitorch.tensor(data)), tnet(torch.tensor(data))
    assert np.abs(as_numpy(got) - want.numpy()).max() <= 1.01 * tnet.fc2.scale


@pytest.mark.parametrize("fuse", [False, True])
def test_quantized_batch_norm_as_torch(fuse):
    """An unfused BatchNorm2d (or BatchNorm2d + ReLU fused to BNReLU2d) after an add: prepared,
    calibrated, converted to the quantized batch norm, as torch's."""
    x = np.random.default_rng(14).uniform(-2, 3, (2, 4, 5, 5)).astype(np.float32)
    rng = np.random.default_rng(15)
    stats = [rng.uniform(0.5, 1.5, 4), rng.standard_normal(4) * 0.3, rng.standard_normal(4) * 0.2,
             rng.uniform(0.5, 2.0, 4)]
    results = []
    for lib in (minitorch, torch):
        q = lib.ao.quantization
        net = lib.nn.Sequential(q.QuantStub(), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), q.DeQuantStub()).eval()
        with lib.no_grad():
            for t, v in zip((net[1].weight, net[1].bias, net[1].running_mean, net[1].running_var), stats):
                t.copy_(lib.tensor(v.astype(np.float32)))
        if fuse:
            q.fuse_modules(net, ["1", "2"], inplace=True)
        net.qconfig = q.default_qconfig
        q.prepare(net, inplace=True)
        net(lib.tensor(x))
        q.convert(net, inplace=True)
        qx = net[0](lib.tensor(x))
        results.append((net, net[2](net[1](qx))))
    (mn, mo), (tn, to) = results
    assert repr(mn).replace("minitorch", "torch") == repr(tn)
    assert list(mn.state_dict()) == list(tn.state_dict())
    _within_one_step(mo, to)


def test_quantized_pooling_against_numpy():
    """Max pooling takes the largest integer; average pooling the mean of the integers less the
    zero point, rounded half to even, plus the zero point (the input's quantizer kept)."""
    x = np.random.default_rng(16).uniform(-3, 9, (2, 3, 6, 8)).astype(np.float32)
    q = minitorch.quantize_per_tensor(minitorch.tensor(x), 0.05, 60, minitorch.quint8)
    ints = _ints(q).astype(np.float64)
    blocks = ints.reshape(2, 3, 3, 2, 4, 2)  # 2x2 windows
    F = minitorch.nn.functional
    np.testing.assert_array_equal(_ints(F.max_pool2d(q, 2)), blocks.max(axis=(3, 5)))
    np.testing.assert_array_equal(_ints(F.avg_pool2d(q, 2)), np.rint((blocks - 60).mean(axis=(3, 5))) + 60)
    np.testing.assert_array_equal(_ints(F.adaptive_avg_pool2d(q, 1))[..., 0, 0],
                                  np.rint((ints - 60).mean(axis=(2, 3))) + 60)
    out = F.avg_pool2d(q, 2)
    assert out.q_scale() == 0.05 and out.q_zero_point() == 60 and out.dtype is minitorch.quint8


@pytest.mark.parametrize("dtype", ["quint8", "qint8", "qint32"])
@pytest.mark.parametrize("shape,dim,keepdim,layout", [
    ((2, 3, 6, 7), [2, 3], False, "contiguous"),  # the integers' path: many means are ties of .5
    ((2, 3, 6, 7), (-1, -2), True, "contiguous"),
    ((4, 10), -1, False, "contiguous"),
    ((5, 8), None, False, "contiguous"),
    ((2, 3, 6, 7), [1], False, "contiguous"),  # not innermost: dequantize, mean, quantize
    ((2, 3, 6, 7), [2, 3], False, "transposed"),  # not contiguous: the same
])
def test_quantized_mean_rounds_as_torch(dtype, shape, dim, keepdim, layout):
    """PyTorch's quantized mean over the innermost dims of a contiguous tensor sums the integers
    and rounds their float32 mean half to even; elsewhere it dequantizes. Values on a grid of the
    scale make many means exact ties, where the two ways differ."""
    x = np.random.default_rng(4).uniform(-3, 9, shape).astype(np.float32)
    got, want = [lib.quantize_per_tensor(lib.tensor(x), 0.05, 60, getattr(lib, dtype)) for lib in (minitorch, torch)]
    if layout == "transposed":
        got, want = got.transpose(2, 3), want.transpose(2, 3)
    args = () if dim is None else (dim, keepdim)
    g, w = got.mean(*args), want.mean(*args)
    assert tuple(g.shape) == tuple(w.shape) and str(g.dtype).split(".")[-1] == str(w.dtype).split(".")[-1]
    np.testing.assert_array_equal(_ints(g), _ints(w))
    assert g.q_scale() == w.q_scale() and g.q_zero_point() == w.q_zero_point()
