"""amp: autocast's switches, warnings and errors, and GradScaler's scale sequence, skipped steps,
parameters, errors and state dicts, against PyTorch's on the CPU."""
import pickle
import threading
import warnings

import numpy as np
import pytest

import minitorch
from helpers import torch


def _libs():
    return (minitorch,) if torch is None else (minitorch, torch)


def test_autocast_context_and_decorator():
    assert not minitorch.is_autocast_enabled("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with minitorch.autocast("cpu"):
            assert minitorch.is_autocast_enabled("cpu") and not minitorch.is_autocast_enabled()
            with minitorch.autocast("cpu", enabled=False):
                assert not minitorch.is_autocast_enabled("cpu")
            assert minitorch.is_autocast_enabled("cpu")
            x = minitorch.randn(2, 3)
            assert (x @ x.t()).dtype == minitorch.bfloat16  # the region's dtype (tests/core/test_autocast.py)
            seen = []
            t = threading.Thread(target=lambda: seen.append(minitorch.is_autocast_enabled("cpu")))
            t.start()
            t.join()
            assert seen == [False]  # per thread, as PyTorch's

        @minitorch.amp.autocast("cpu")
        def f():
            return minitorch.is_autocast_enabled("cpu")

        assert f() and not minitorch.is_autocast_enabled("cpu")
    assert minitorch.amp.autocast is minitorch.autocast


def test_autocast_says_nothing():
    # minitorch casts now: no notice that it does not
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with minitorch.autocast("cpu"):
            pass


@pytest.mark.parametrize("args", [(1,), ("xpu2",)])
def test_autocast_errors_as_torch(args):
    errors = []
    for lib in _libs():
        with pytest.raises((ValueError, RuntimeError)) as e:
            lib.autocast(*args)
        errors.append(type(e.value))
    assert len(set(errors)) == 1


def test_cuda_autocast_without_cuda_disables():
    if minitorch.cuda.is_available():
        pytest.skip("CUDA available")
    with pytest.warns(UserWarning, match="CUDA is not available or torch_xla is imported. Disabling autocast."):
        ctx = minitorch.autocast("cuda")
    with ctx:
        assert not minitorch.is_autocast_enabled("cuda")


@pytest.mark.parametrize("device", ["cuda", "cpu"])
def test_deprecated_spellings(device):
    for name in ("autocast", "GradScaler"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(getattr(minitorch, device).amp, name)()
        texts = [str(x.message) for x in w if x.category is FutureWarning]
        assert texts == [f"`torch.{device}.amp.{name}(args...)` is deprecated. Please use "
                         f"`torch.amp.{name}('{device}', args...)` instead."]


def _train(lib, steps, bad_steps, **scaler_kwargs):
    """A linear model trained with a GradScaler; on bad_steps the loss is inf. Returns the scale,
    growth tracker and weight after each step."""
    lib.manual_seed(0)
    w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32), requires_grad=True)
    x = lib.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **scaler_kwargs)
    out = []
    for i in range(steps):
        opt.zero_grad()
        loss = (x @ w.t()).pow(2).mean()
        if i in bad_steps:
            loss = loss * float("inf")
        scaler.scale(loss).backward()
        if i % 3 == 1:
            scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        out.append((scaler.get_scale(), scaler._get_growth_tracker(), w.detach().numpy().copy()))
    return out, scaler.state_dict()


@pytest.mark.parametrize("kwargs", [
    dict(init_scale=2.0**10, growth_interval=3),
    dict(init_scale=3.0, growth_factor=1.7, backoff_factor=0.3, growth_interval=2),
    # a grown scale past float32's range is not kept (the tracker still restarts)
    dict(init_scale=1e38, growth_factor=8.0, backoff_factor=0.9, growth_interval=1),
    dict(enabled=False),
])
def test_grad_scaler_sequence_as_torch(kwargs):
    got, got_state = _train(minitorch, 14, {2, 5, 6, 11}, **kwargs)
    if not kwargs.get("enabled", True):
        assert [g[0] for g in got] == [1.0] * 14 and got_state == {}
    if torch is None:
        return
    want, want_state = _train(torch, 14, {2, 5, 6, 11}, **kwargs)
    for (s, t, w), (ts, tt, tw) in zip(got, want):
        assert s == ts and t == tt
        np.testing.assert_allclose(w, tw, rtol=1e-5, atol=1e-6)
    assert got_state == want_state


def _misuse(lib, what):
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu")
    if what == "step_before_scale":
        scaler.step(opt)
    scaler.scale(w.sum()).backward()
    if what == "unscale_twice":
        scaler.unscale_(opt)
        scaler.unscale_(opt)
    if what == "unscale_after_step":
        scaler.step(opt)
        scaler.unscale_(opt)
    if what == "step_twice":
        scaler.step(opt)
        scaler.step(opt)
    if what == "closure":
        scaler.step(opt, closure=lambda: None)
    if what == "load_empty":
        scaler.load_state_dict({})
    if what == "bad_factor":
        lib.amp.GradScaler("cpu", growth_factor=1.0)


@pytest.mark.parametrize("what", ["step_before_scale", "unscale_twice", "unscale_after_step", "step_twice", "closure",
                                  "load_empty", "bad_factor"])
def test_grad_scaler_errors_as_torch(what):
    errors = []
    for lib in _libs():
        with pytest.raises((RuntimeError, AssertionError)) as e:
            _misuse(lib, what)
        errors.append((type(e.value), str(e.value)))
    assert len(set(errors)) == 1, errors


def test_grad_scaler_state_and_pickle():
    s = minitorch.amp.GradScaler("cpu", init_scale=8.0)
    loss = s.scale(minitorch.tensor(2.0))
    assert loss.item() == 16.0 and s.get_scale() == 8.0
    assert s.scale([minitorch.tensor(1.0), (minitorch.tensor(2.0),)])[1][0].item() == 16.0
    s2 = minitorch.amp.GradScaler("cpu")
    s2.load_state_dict(s.state_dict())
    assert s2.state_dict() == s.state_dict()
    s3 = pickle.loads(pickle.dumps(s))
    assert s3.get_scale() == 8.0 and s3._scale is None
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        s.scale(3.0)
    d = minitorch.amp.GradScaler("cpu", enabled=False)
    t = minitorch.tensor(2.0)
    assert d.scale(t) is t and d.get_scale() == 1.0 and not d.is_enabled()
