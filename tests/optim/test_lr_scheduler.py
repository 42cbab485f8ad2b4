"""StepLR and CosineAnnealingLR: the learning rates of 30 steps, next to torch.optim.lr_scheduler's
(and, where PyTorch is absent, next to the closed forms)."""
import math
import warnings

import pytest

import minitorch

SCHEDULERS = [
    ("StepLR", {"step_size": 3}),
    ("StepLR", {"step_size": 4, "gamma": 0.5}),
    ("CosineAnnealingLR", {"T_max": 10}),
    ("CosineAnnealingLR", {"T_max": 7, "eta_min": 0.01}),
]


def lr_sequence(lib, name, kwargs, steps=30, epochs=None):
    """The lrs of two parameter groups over `steps` optimizer + scheduler steps."""
    p, q = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
    opt = lib.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.5}], lr=0.1, momentum=0.9)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    seq = [sched.get_last_lr()]
    for k in range(steps):
        p.grad, q.grad = lib.ones(2), lib.ones(1)
        opt.step()
        if epochs is None:
            sched.step()
        else:
            sched.step(epochs[k])
        seq.append(sched.get_last_lr())
        assert [g["lr"] for g in opt.param_groups] == seq[-1]
    return seq, sched, p


@pytest.mark.parametrize("name,kwargs", SCHEDULERS)
def test_lrs_match_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the right order warns about nothing
        mine, sched, p = lr_sequence(minitorch, name, kwargs)
    theirs, tsched, tp = lr_sequence(torch, name, kwargs)
    for a, b in zip(mine, theirs):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
    assert sched.last_epoch == tsched.last_epoch == 30
    assert p.detach().numpy() == pytest.approx(tp.detach().numpy(), rel=1e-5)
    assert sorted(sched.state_dict()) == sorted(tsched.state_dict())


@pytest.mark.parametrize("name,kwargs", SCHEDULERS)
def test_epoch_argument_uses_the_closed_form_like_torch(name, kwargs):
    torch = pytest.importorskip("torch")
    epochs = [3, 4, 9, 2, 15, 16]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine = lr_sequence(minitorch, name, kwargs, steps=len(epochs), epochs=epochs)[0]
        theirs = lr_sequence(torch, name, kwargs, steps=len(epochs), epochs=epochs)[0]
    for a, b in zip(mine, theirs):
        assert a == pytest.approx(b, rel=1e-12)


def test_cosine_follows_the_closed_form():
    p = minitorch.nn.Parameter(minitorch.ones(1))
    opt = minitorch.optim.SGD([p], lr=1.0)
    sched = minitorch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=0.1)
    for t in range(1, 17):
        opt.step()
        sched.step()
        expected = 0.1 + 0.9 * (1 + math.cos(math.pi * t / 8)) / 2
        assert sched.get_last_lr()[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_step_lr_decays_every_step_size():
    opt = minitorch.optim.Adam([minitorch.nn.Parameter(minitorch.ones(1))], lr=1.0)
    sched = minitorch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    lrs = []
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr()[0])
    assert lrs == [1.0, 0.5, 0.5, 0.25, 0.25, 0.125]


def test_state_dict_round_trip_and_resume():
    def make():
        opt = minitorch.optim.SGD([minitorch.nn.Parameter(minitorch.ones(1))], lr=0.3)
        return opt, minitorch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=0.01)

    opt, sched = make()
    for _ in range(4):
        opt.step()
        sched.step()
    saved_sched, saved_opt = sched.state_dict(), opt.state_dict()
    assert "optimizer" not in saved_sched and saved_sched["last_epoch"] == 4
    opt2, sched2 = make()
    sched2.load_state_dict(saved_sched)
    opt2.load_state_dict(saved_opt)
    for _ in range(5):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched2.get_last_lr() == sched.get_last_lr()


def test_resume_with_last_epoch_matches_torch():
    torch = pytest.importorskip("torch")
    seqs = []
    for lib in (minitorch, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(1))], lr=0.2)
        opt.param_groups[0]["initial_lr"] = 0.2
        sched = lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10, last_epoch=4)
        seq = [sched.get_last_lr()[0]]
        for _ in range(8):
            opt.step()
            sched.step()
            seq.append(sched.get_last_lr()[0])
        seqs.append(seq)
    assert seqs[0] == pytest.approx(seqs[1], rel=1e-12)


def test_warnings_and_errors_like_torch():
    opt = minitorch.optim.SGD([minitorch.nn.Parameter(minitorch.ones(1))], lr=0.1)
    sched = minitorch.optim.lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with pytest.raises(TypeError, match="is not an Optimizer"):
        minitorch.optim.lr_scheduler.StepLR(object(), step_size=1)
    fresh = minitorch.optim.SGD([minitorch.nn.Parameter(minitorch.ones(1))], lr=0.1)
    with pytest.raises(KeyError, match="initial_lr"):
        minitorch.optim.lr_scheduler.StepLR(fresh, step_size=1, last_epoch=3)
