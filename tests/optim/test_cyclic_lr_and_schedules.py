"""CyclicLR against PyTorch (triangular, triangular2, exp_range, scale_fn by cycle and by iteration,
momentum cycled on SGD and beta1 cycled on Adam), and every scheduler's lr (and momentum) over 50
steps and its state_dict (keys, and a scheduler resumed from it) against PyTorch's."""
import math
import pickle

import numpy as np
import pytest

import minitorch
from helpers import torch

pytestmark = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def optimizer(lib, kind="sgd", groups=2):
    w = [lib.nn.Parameter(lib.ones(2)) for _ in range(groups)]
    params = [{"params": [p], "lr": 0.1 * (i + 1)} for i, p in enumerate(w)]
    if kind == "sgd":
        return lib.optim.SGD(params, lr=0.1, momentum=0.9)
    return lib.optim.Adam(params, lr=0.1, betas=(0.9, 0.99))


class Amplitude:
    """A callable object as scale_fn: its attributes travel in the state_dict."""

    def __init__(self):
        self.rate = 0.7

    def __call__(self, x):
        return self.rate ** x


def halving(x):
    return 0.5 ** x


SCHEDULES = {
    "cyclic_triangular": ("sgd", lambda L, o: L.CyclicLR(o, 0.01, [0.1, 0.2], step_size_up=4)),
    "cyclic_triangular2": ("sgd", lambda L, o: L.CyclicLR(o, [0.01, 0.02], 0.3, step_size_up=3, step_size_down=5,
                                                          mode="triangular2")),
    "cyclic_exp_range": ("sgd", lambda L, o: L.CyclicLR(o, 0.01, 0.1, step_size_up=5, mode="exp_range",
                                                        gamma=0.97, base_momentum=0.7, max_momentum=0.95)),
    "cyclic_scale_fn_cycle": ("sgd", lambda L, o: L.CyclicLR(o, 0.01, 0.1, 3, scale_fn=halving)),
    "cyclic_scale_fn_iterations": ("adam", lambda L, o: L.CyclicLR(o, 0.01, 0.1, 4, scale_fn=Amplitude(),
                                                                   scale_mode="iterations")),
    "cyclic_adam_betas": ("adam", lambda L, o: L.CyclicLR(o, 0.001, 0.01, 6, base_momentum=0.85,
                                                          max_momentum=0.95)),
    "cyclic_no_momentum": ("adam", lambda L, o: L.CyclicLR(o, 0.001, 0.01, 2, cycle_momentum=False)),
    "lambda": ("sgd", lambda L, o: L.LambdaLR(o, lambda e: 0.95 ** e)),
    "multiplicative": ("sgd", lambda L, o: L.MultiplicativeLR(o, lambda e: 0.97)),
    "step": ("sgd", lambda L, o: L.StepLR(o, 7, gamma=0.5)),
    "multistep": ("sgd", lambda L, o: L.MultiStepLR(o, [5, 12, 12, 30], gamma=0.3)),
    "constant": ("sgd", lambda L, o: L.ConstantLR(o, factor=0.25, total_iters=9)),
    "linear": ("sgd", lambda L, o: L.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=20)),
    "exponential": ("sgd", lambda L, o: L.ExponentialLR(o, 0.93)),
    "polynomial": ("sgd", lambda L, o: L.PolynomialLR(o, total_iters=30, power=1.7)),
    "cosine": ("sgd", lambda L, o: L.CosineAnnealingLR(o, T_max=13, eta_min=0.001)),
    "warm_restarts": ("sgd", lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=4, T_mult=2, eta_min=0.01)),
    "one_cycle": ("sgd", lambda L, o: L.OneCycleLR(o, max_lr=[0.5, 0.6], total_steps=60, pct_start=0.3)),
    "one_cycle_linear_adam": ("adam", lambda L, o: L.OneCycleLR(o, max_lr=0.4, epochs=5, steps_per_epoch=12,
                                                                anneal_strategy="linear", three_phase=True)),
    "sequential": ("sgd", lambda L, o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=4),
                                                          L.ExponentialLR(o, 0.9)], milestones=[6])),
    "chained": ("sgd", lambda L, o: L.ChainedScheduler([L.StepLR(o, 5, 0.5), L.ExponentialLR(o, 0.98)])),
    "plateau": ("sgd", lambda L, o: L.ReduceLROnPlateau(o, factor=0.5, patience=3, cooldown=2, min_lr=[0.01, 0.0])),
    "plateau_max_abs": ("adam", lambda L, o: L.ReduceLROnPlateau(o, mode="max", threshold=0.1, threshold_mode="abs",
                                                                 patience=1)),
    "swa_cos": ("sgd", lambda L, o: L.swa_lr(o, swa_lr=0.05, anneal_epochs=5)),
    "swa_linear": ("adam", lambda L, o: L.swa_lr(o, swa_lr=[0.3, 0.01], anneal_epochs=7, anneal_strategy="linear")),
}


def metric(i):
    """A loss that falls for 10 steps, then plateaus with noise below any threshold."""
    return 1.0 - 0.05 * min(i, 10) + 1e-9 * (i % 3)


class schedulers:
    """lib.optim.lr_scheduler, with swa_lr for swa_utils.SWALR."""

    def __init__(self, lib):
        self.lib = lib

    def __getattr__(self, name):
        if name == "swa_lr":
            return lambda o, **kw: self.lib.optim.swa_utils.SWALR(o, **kw)
        return getattr(self.lib.optim.lr_scheduler, name)


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def run(lib, name, steps=50, resume_at=None):
    kind, make = SCHEDULES[name]
    opt = optimizer(lib, kind)
    sched = make(schedulers(lib), opt)
    lrs, moms = [sched.get_last_lr()], [momenta(opt)]
    for i in range(steps):
        opt.step()
        sched.step(metric(i)) if name.startswith("plateau") else sched.step()
        lrs.append(sched.get_last_lr())
        moms.append(momenta(opt))
        if resume_at == i:
            state = pickle.loads(pickle.dumps(sched.state_dict())) if name != "chained" else sched.state_dict()
            opt_state = opt.state_dict()
            # the usual resume: build both, then load the optimizer's state and the scheduler's
            opt = optimizer(lib, kind)
            sched = make(schedulers(lib), opt)
            opt.load_state_dict(opt_state)
            sched.load_state_dict(state)
    return np.array(lrs, float), np.array(moms, float), sched


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_fifty_steps_same_as_torch(name):
    lrs, moms, mine = run(minitorch, name)
    t_lrs, t_moms, theirs = run(torch, name)
    np.testing.assert_allclose(lrs, t_lrs, rtol=1e-12, atol=0)
    np.testing.assert_allclose(moms, t_moms, rtol=1e-12, atol=0)
    assert sorted(mine.state_dict()) == sorted(theirs.state_dict())


@pytest.mark.parametrize("name", sorted(n for n in SCHEDULES if n != "chained"))
def test_resumed_from_state_dict(name):
    resumed, resumed_m, _ = run(minitorch, name, resume_at=20)
    t_resumed, t_resumed_m, _ = run(torch, name, resume_at=20)
    np.testing.assert_allclose(resumed, t_resumed, rtol=1e-12, atol=0)
    np.testing.assert_allclose(resumed_m, t_resumed_m, rtol=1e-12, atol=0)


def test_cyclic_state_dict_keeps_callable_objects_only():
    for lib in (minitorch, torch):
        opt = optimizer(lib)
        fn = Amplitude()
        sched = lib.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, scale_fn=fn)
        state = sched.state_dict()
        assert state["_scale_fn_custom"] == {"rate": 0.7} and "_scale_fn_ref" not in state
        fn.rate = 0.1
        sched.load_state_dict(state)
        assert fn.rate == 0.7
        plain = lib.optim.lr_scheduler.CyclicLR(optimizer(lib), 0.01, 0.1, scale_fn=halving)
        assert plain.state_dict()["_scale_fn_custom"] is None
        tri = lib.optim.lr_scheduler.CyclicLR(optimizer(lib), 0.01, 0.1, mode="exp_range", gamma=0.5)
        tri.load_state_dict(tri.state_dict())
        assert math.isclose(tri.scale_fn(3), 0.125)


def test_cyclic_errors():
    for lib in (minitorch, torch):
        with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
            lib.optim.lr_scheduler.CyclicLR(optimizer(lib), 0.01, 0.1, mode="sawtooth")
        w = lib.nn.Parameter(lib.ones(2))
        with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
            lib.optim.lr_scheduler.CyclicLR(lib.optim.Adagrad([w]), 0.01, 0.1)
        with pytest.raises(ValueError, match="max_lr must have the same length as optimizer.param_groups"):
            lib.optim.lr_scheduler.CyclicLR(optimizer(lib), 0.01, [0.1, 0.2, 0.3])
        with pytest.raises(TypeError, match="is not an Optimizer"):
            lib.optim.lr_scheduler.CyclicLR(object(), 0.01, 0.1)
