"""Fake quantization (fake_quantize_per_tensor/per_channel_affine with their straight-through
gradients, FakeQuantize) and eager static quantization (QuantStub, prepare, calibration, convert
to quantized Linear) against NumPy and PyTorch."""
from __future__ import annotations

import re

import numpy as np
import pytest

import minitorch
from helpers import as_numpy, check, same_as_torch

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions",
                                        "ignore:torch.ao.quantization is deprecated:DeprecationWarning")


def _grid(rng: np.random.Generator, shape, scale: float) -> np.ndarray:
    """Values on and next to the rounding ties, and some beyond the range."""
    x = (rng.integers(-400, 400, shape) * np.float32(scale) / 2).astype(np.float32)
    x.reshape(-1)[::3] = np.nextafter(x.reshape(-1)[::3], np.float32(np.inf))
    return x


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("scale,zp,qmin,qmax", [(0.1, 10, 0, 40), (0.037, 0, -128, 127), (0.25, 200, 0, 255)])
def test_fake_quantize_per_tensor_values_and_gradients(layout, scale, zp, qmin, qmax):
    x = _grid(np.random.default_rng(0), (5, 6), scale)
    fn = lambda lib, t: lib.fake_quantize_per_tensor_affine(t, scale, zp, qmin, qmax)  # noqa: E731
    same_as_torch(fn, [x], layout=layout, atol=0, rtol=0)

    def ref(a):  # float64: ties may land the other way than in float32, so within one step
        return (np.clip(np.rint(a / scale) + zp, qmin, qmax) - zp) * scale

    check(fn, ref, [x], layout=layout, atol=scale * 1.001, rtol=0)


def test_fake_quantize_with_tensor_qparams():
    x = _grid(np.random.default_rng(1), (4, 7), 0.05)
    same_as_torch(lambda lib, t: lib.fake_quantize_per_tensor_affine(
        t, lib.tensor(0.05), lib.tensor(3, dtype=lib.int32), -128, 127), [x], atol=0, rtol=0)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_fake_quantize_per_channel_values_and_gradients(axis):
    rng = np.random.default_rng(2)
    x = _grid(rng, (3, 4, 5), 0.1)
    n = x.shape[axis]
    scales = rng.uniform(0.02, 0.3, n).astype(np.float32)
    zps = rng.integers(-5, 5, n).astype(np.int32)

    def fn(lib, t):
        return lib.fake_quantize_per_channel_affine(t, lib.tensor(scales), lib.tensor(zps), axis, -128, 127)

    same_as_torch(fn, [x], layout="transposed", atol=0, rtol=0)


@pytest.mark.parametrize("fn", [
    lambda lib, t: lib.fake_quantize_per_tensor_affine(t, 0.1, 10, 50, 40),
    lambda lib, t: lib.fake_quantize_per_tensor_affine(t, 0.1, 60, 0, 40),
    lambda lib, t: lib.fake_quantize_per_channel_affine(t, lib.tensor([0.1, 0.2]), lib.tensor([0, 1], dtype=lib.int32),
                                                        1, -128, 127),
    lambda lib, t: lib.fake_quantize_per_channel_affine(t, lib.tensor([0.1, 0.2, 0.3]), lib.tensor([0, 1, 2]), 1,
                                                        -128, 127),
    lambda lib, t: lib.fake_quantize_per_channel_affine(t, lib.tensor([0.1, 0.2, 0.3]),
                                                        lib.tensor([0, 1, 2], dtype=lib.int32), -1, -128, 127),
], ids=["range", "zero-point", "channels", "long-zero-point", "negative-axis"])
def test_fake_quantize_errors_as_torch(fn):
    errors = []
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError) as e:
            fn(lib, lib.zeros(2, 3))
        errors.append(str(e.value))
    assert errors[0] == errors[1].split("\n")[0]


def test_fake_quantize_module_matches_torch_step_by_step():
    rng = np.random.default_rng(3)
    xs = [rng.normal(step, 1 + step, (6, 5)).astype(np.float32) for step in range(4)]
    mods = {lib: (lib.ao.quantization.default_fake_quant(), lib.ao.quantization.default_weight_fake_quant())
            for lib in (minitorch, torch)}
    for k, x in enumerate(xs):
        got = []
        for lib, (fq, wfq) in mods.items():
            if k == 3:
                fq.disable_observer()
                wfq.disable_fake_quant()
            t = lib.tensor(x, requires_grad=True)
            y = fq(t) + wfq(t)
            y.sum().backward()
            got.append((y.detach(), t.grad, fq.scale, fq.zero_point, wfq.scale))
        for m, t in zip(*got):
            np.testing.assert_array_equal(as_numpy(m), t.numpy())
    (mfq, _), (tfq, _) = mods.values()
    assert repr(mfq).replace("minitorch.", "torch.") == repr(tfq)


# ---- static quantization ----
# The float Linear's outputs, which the observers see, may differ from PyTorch's by an ulp (another
# BLAS), and with them a scale; so scales agree to float32 rounding and outputs within a quantum.

def _same_repr(got, want) -> None:
    def norm(text):
        return re.sub(r"\d+\.\d+(e-?\d+)?", lambda m: f"{float(m.group()):.5g}", text.replace("minitorch.", "torch."))

    assert norm(repr(got)) == norm(repr(want))


def _static_model(lib, qconfig):
    nn, q = lib.nn, lib.ao.quantization

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant, self.dequant = q.QuantStub(), q.DeQuantStub()
            self.fc1, self.relu, self.fc2 = nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)

        def forward(self, x):
            return self.dequant(self.fc2(self.relu(self.fc1(self.quant(x)))))

    m = M().eval()
    m.qconfig = q.get_default_qconfig(qconfig) if qconfig in ("x86", "fbgemm", "qnnpack") else getattr(q, qconfig)
    return m


@pytest.mark.parametrize("qconfig", ["default_qconfig", "default_per_channel_qconfig", "x86", "qnnpack"])
def test_static_quantization_as_torch(qconfig):
    rng = np.random.default_rng(4)
    tm, mm = _static_model(torch, qconfig), _static_model(minitorch, qconfig)
    mm.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tp, mp = torch.ao.quantization.prepare(tm), minitorch.ao.quantization.prepare(mm)
    assert type(mm.fc1) is minitorch.nn.Linear and not hasattr(mm.fc1, "activation_post_process")  # not inplace
    _same_repr(mp, tp)
    for _ in range(5):  # calibration
        x = rng.normal(size=(10, 8)).astype(np.float32)
        np.testing.assert_allclose(as_numpy(mp(minitorch.tensor(x))), tp(torch.tensor(x)).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)
    tq, mq = torch.ao.quantization.convert(tp), minitorch.ao.quantization.convert(mp)
    _same_repr(mq, tq)
    np.testing.assert_allclose(mq.fc1.scale, tq.fc1.scale, rtol=1e-6)
    assert mq.fc1.zero_point == tq.fc1.zero_point
    np.testing.assert_array_equal(as_numpy(mq.fc1.weight().int_repr()), tq.fc1.weight().int_repr().numpy())
    x = rng.normal(0, 2, size=(7, 8)).astype(np.float32)
    got, want = as_numpy(mq(minitorch.tensor(x))), tq(torch.tensor(x)).numpy()
    np.testing.assert_allclose(got, want, rtol=0, atol=tq.fc2.scale * 1.01)
    ints = [m.fc2(m.relu(m.fc1(m.quant(lib.tensor(x))))).int_repr() for m, lib in ((mq, minitorch), (tq, torch))]
    diff = np.abs(as_numpy(ints[0]).astype(int) - ints[1].numpy().astype(int))
    assert diff.max() <= 1 and (diff == 0).mean() > 0.9
    q_in = mq.quant(minitorch.tensor(x))
    out = mq.fc1(q_in)
    assert out.dtype is minitorch.quint8 and out.q_scale() == mq.fc1.scale


def test_quantize_and_quant_wrapper():
    rng = np.random.default_rng(5)
    data = [rng.normal(size=(4, 8)).astype(np.float32) for _ in range(3)]
    results = []
    for lib in (minitorch, torch):
        lib.manual_seed(0)
        q = lib.ao.quantization
        inner = lib.nn.Sequential(lib.nn.Linear(8, 3))
        inner.qconfig = q.default_qconfig
        model = q.QuantWrapper(inner).eval()

        def calibrate(m, batches):
            for b in batches:
                m(lib.tensor(b))

        quantized = q.quantize(model, calibrate, [data])
        assert type(model.quant) is q.QuantStub  # quantize copies the model
        results.append((quantized, quantized(lib.tensor(data[0]))))
    (mq, mout), (tq, tout) = results
    _same_repr(mq, tq)  # the same seeded initial weights
    np.testing.assert_allclose(as_numpy(mout), tout.numpy(), rtol=0, atol=tq.module[0].scale * 1.01)


@pytest.mark.parametrize("reduce_range", [False, True])
def test_histogram_observer_as_torch(reduce_range):
    # the histogram grows with the range seen (rescaled each time), then the L2 search picks the range
    rng = np.random.default_rng(6)
    for _ in range(3):
        xs = [rng.normal(rng.uniform(-1, 1), rng.uniform(0.5, 3), int(rng.integers(50, 400))).astype(np.float32)
              for _ in range(3)]
        got = []
        for lib in (minitorch, torch):
            obs = lib.ao.quantization.HistogramObserver(reduce_range=reduce_range)
            for x in xs:
                obs(lib.tensor(x))
            got.append((obs.calculate_qparams(), obs.min_val.item(), obs.max_val.item()))
        ((ms, mz), mmin, mmax), ((ts, tz), tmin, tmax) = got
        assert (mmin, mmax) == (tmin, tmax)
        np.testing.assert_array_equal(as_numpy(ms), ts.numpy())
        np.testing.assert_array_equal(as_numpy(mz), tz.numpy())


def test_static_quantized_state_dict_loads_both_ways():
    import io

    rng = np.random.default_rng(7)
    models = {}
    for lib in (minitorch, torch):
        m = _static_model(lib, "default_per_channel_qconfig")
        prepared = lib.ao.quantization.prepare(m)
        prepared(lib.tensor(rng.normal(size=(6, 8)).astype(np.float32)))
        models[lib] = lib.ao.quantization.convert(prepared)
    assert list(models[minitorch].state_dict()) == list(models[torch].state_dict())
    x = rng.normal(size=(4, 8)).astype(np.float32)
    for src, dst in ((torch, minitorch), (minitorch, torch)):
        buf = io.BytesIO()
        src.save(models[src].state_dict(), buf)
        buf.seek(0)
        models[dst].load_state_dict(dst.load(buf, weights_only=False))
    # both now hold the weights each other had: each maps x as the other did before
    got = models[minitorch](minitorch.tensor(x))
    want = models[torch](torch.tensor(x))
    np.testing.assert_allclose(as_numpy(got), want.numpy(), rtol=0, atol=models[torch].fc2.scale * 1.01)


def _qat_run(lib, qconfig, init, data):
    q = lib.ao.quantization
    model = _static_model(lib, "default_qconfig").train()
    model.qconfig = q.get_default_qat_qconfig("x86", 0) if qconfig == "x86" else q.default_qat_qconfig
    if init is not None:
        model.load_state_dict({k: lib.tensor(v) for k, v in init.items()})
    init = {k: as_numpy(v) if lib is minitorch else v.detach().numpy() for k, v in model.state_dict().items()}
    prepared = q.prepare_qat(model)
    assert type(prepared.fc1) is lib.nn.qat.Linear and hasattr(prepared.fc1, "activation_post_process")
    optimizer = lib.optim.SGD(prepared.parameters(), lr=0.05)
    losses = []
    for x, y in data:
        loss = ((prepared(lib.tensor(x)) - lib.tensor(y)) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    prepared.eval()
    return init, losses, q.convert(prepared)


@pytest.mark.parametrize("qconfig", ["default_qat_qconfig", "x86"])
def test_quantization_aware_training_as_torch(qconfig):
    # Fake quantization turns an ulp of difference in a float Linear's output (another BLAS) into
    # a step of the grid now and then: the runs agree to a percent of the loss and a few quanta.
    rng = np.random.default_rng(8)
    data = [(rng.normal(size=(10, 8)).astype(np.float32), rng.normal(size=(10, 4)).astype(np.float32))
            for _ in range(5)]
    init, t_losses, tq = _qat_run(torch, qconfig, None, data)
    _, m_losses, mq = _qat_run(minitorch, qconfig, init, data)
    np.testing.assert_allclose(m_losses, t_losses, rtol=1e-2)
    _same_repr(mq, tq)
    x = rng.normal(size=(6, 8)).astype(np.float32)
    np.testing.assert_allclose(as_numpy(mq(minitorch.tensor(x))), tq(torch.tensor(x)).numpy(), rtol=0,
                               atol=4 * tq.fc2.scale)
