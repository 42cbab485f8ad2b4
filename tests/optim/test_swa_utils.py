"""optim.swa_utils against PyTorch: AveragedModel (SWA mean, EMA through get_ema_multi_avg_fn and
get_ema_avg_fn, use_buffers), update_bn, and SWALR's learning rates (cos and linear), over a few
training steps with the same weights."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(26)


def model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def pair():
    m, t = model(minitorch), model(torch)
    m.load_state_dict({k: minitorch.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return m, t


def same_state(a, b, atol=1e-6):
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sb:
        np.testing.assert_allclose(sa[k].numpy().astype(np.float64), sb[k].numpy().astype(np.float64), atol=atol,
                                   err_msg=k)


@pytest.mark.parametrize("kind", ["swa", "ema_multi", "ema", "ema_buffers"])
def test_averaged_model_follows_pytorch(kind):
    (m, t) = pair()
    avg = {}
    for lib, net in ((minitorch, m), (torch, t)):
        su = lib.optim.swa_utils
        kw = {"swa": {}, "ema_multi": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.9)},
              "ema": {"avg_fn": su.get_ema_avg_fn(0.8)},
              "ema_buffers": {"multi_avg_fn": su.get_ema_multi_avg_fn(0.7), "use_buffers": True}}[kind]
        avg[lib.__name__] = su.AveragedModel(net, **kw)
    opts = [minitorch.optim.SGD(m.parameters(), lr=0.1), torch.optim.SGD(t.parameters(), lr=0.1)]
    for step in range(4):
        x = RNG.standard_normal((5, 3)).astype("float32")
        for (lib, net), opt in zip(((minitorch, m), (torch, t)), opts):
            opt.zero_grad()
            net(lib.tensor(x)).square().mean().backward()
            opt.step()
            avg[lib.__name__].update_parameters(net)
    same_state(avg["minitorch"], avg["torch"], atol=1e-5)
    assert int(avg["minitorch"].n_averaged) == 4
    x = RNG.standard_normal((5, 3)).astype("float32")
    np.testing.assert_allclose(avg["minitorch"](minitorch.tensor(x)).detach().numpy(),
                               avg["torch"](torch.tensor(x)).detach().numpy(), atol=1e-5)


def test_update_bn_recomputes_running_statistics():
    m, t = pair()
    data = [RNG.standard_normal((6, 3)).astype("float32") for _ in range(3)]
    m.eval()
    t.eval()
    minitorch.optim.swa_utils.update_bn([(minitorch.tensor(d), 0) for d in data], m)
    torch.optim.swa_utils.update_bn([(torch.tensor(d), 0) for d in data], t)
    same_state(m, t)
    assert not m.training and m[1].momentum == 0.1


@pytest.mark.parametrize("strategy,epochs", [("cos", 3), ("linear", 2), ("cos", 0)])
def test_swalr_learning_rates(strategy, epochs):
    lrs = {}
    for lib in (minitorch, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=epochs, anneal_strategy=strategy)
        seen = []
        for _ in range(5):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr()[0])
        lrs[lib.__name__] = seen
        assert set(sched.state_dict()) >= {"anneal_epochs", "_anneal_strategy"}
    np.testing.assert_allclose(lrs["minitorch"], lrs["torch"], rtol=1e-12)


def test_errors():
    su = minitorch.optim.swa_utils
    with pytest.raises(ValueError, match="Invalid decay value 2 provided"):
        su.get_ema_avg_fn(2)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn should be provided"):
        su.AveragedModel(minitorch.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(), multi_avg_fn=su.get_swa_multi_avg_fn())
    opt = minitorch.optim.SGD([minitorch.nn.Parameter(minitorch.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', instead got exp"):
        su.SWALR(opt, 0.01, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, got -1"):
        su.SWALR(opt, 0.01, anneal_epochs=-1)
