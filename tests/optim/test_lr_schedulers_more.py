"""The rest of torch.optim.lr_scheduler: each scheduler's learning rates (and OneCycleLR's
momenta) over many steps next to PyTorch's, from the same optimizer set-up; state_dict round
trips in the middle of a schedule; PyTorch's errors."""
import math
import warnings

import pytest

import minitorch

torch = pytest.importorskip("torch")

STEPS = 60


def setup(lib, opt="SGD"):
    p, q = lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(1))
    groups = [{"params": [p]}, {"params": [q], "lr": 0.5}]
    if opt == "SGD":
        optimizer = lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    else:
        optimizer = lib.optim.Adam(groups, lr=0.1)
    return optimizer, (p, q)


def step_params(lib, opt, params):
    for p in params:
        p.grad = lib.ones(p.shape)
    opt.step()


class Scale:
    """A callable object: LambdaLR keeps its __dict__ in the state dict."""

    def __init__(self, k):
        self.k = k

    def __call__(self, epoch):
        return self.k ** epoch


def make(lib, name, opt):
    S = lib.optim.lr_scheduler
    if name == "LambdaLR":
        return S.LambdaLR(opt, lambda e: 1 / (1 + e))
    if name == "LambdaLR-list":
        return S.LambdaLR(opt, [lambda e: 0.9 ** e, Scale(0.95)])
    if name == "MultiplicativeLR":
        return S.MultiplicativeLR(opt, lambda e: 0.97)
    if name == "MultiStepLR":
        return S.MultiStepLR(opt, milestones=[5, 12, 12, 40], gamma=0.5)
    if name == "ExponentialLR":
        return S.ExponentialLR(opt, gamma=0.93)
    if name == "ConstantLR":
        return S.ConstantLR(opt, factor=0.25, total_iters=7)
    if name == "LinearLR":
        return S.LinearLR(opt, start_factor=0.1, end_factor=0.8, total_iters=13)
    if name == "PolynomialLR":
        return S.PolynomialLR(opt, total_iters=25, power=2.0)
    if name == "CosineAnnealingWarmRestarts":
        return S.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2, eta_min=0.001)
    if name == "CosineAnnealingWarmRestarts-1":
        return S.CosineAnnealingWarmRestarts(opt, T_0=7)
    if name == "OneCycleLR":
        return S.OneCycleLR(opt, max_lr=[1.0, 0.3], total_steps=STEPS + 1)
    if name == "OneCycleLR-3":
        return S.OneCycleLR(opt, max_lr=0.8, epochs=6, steps_per_epoch=11, pct_start=0.25,
                            anneal_strategy="linear", three_phase=True, div_factor=10.0)
    if name == "SequentialLR":
        warm = S.LinearLR(opt, start_factor=0.01, total_iters=10)
        cos = S.CosineAnnealingLR(opt, T_max=20, eta_min=0.001)
        exp = S.ExponentialLR(opt, gamma=0.9)
        return S.SequentialLR(opt, [warm, cos, exp], milestones=[10, 30])
    if name == "ChainedScheduler":
        return S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=4), S.ExponentialLR(opt, gamma=0.95)])
    raise ValueError(name)


NAMES = ["LambdaLR", "LambdaLR-list", "MultiplicativeLR", "MultiStepLR", "ExponentialLR", "ConstantLR", "LinearLR",
         "PolynomialLR", "CosineAnnealingWarmRestarts", "CosineAnnealingWarmRestarts-1", "OneCycleLR",
         "OneCycleLR-3", "SequentialLR", "ChainedScheduler"]


def run(lib, name, opt_name, steps=STEPS, swap_at=None):
    """Group lrs (and momenta) after construction and each of `steps` steps; with swap_at, the
    scheduler is rebuilt from its state_dict (and the optimizer's) at that step."""
    opt, params = setup(lib, opt_name)
    sched = make(lib, name, opt)
    seq = []

    def record():
        lrs = sched.get_last_lr()
        assert [float(g["lr"]) for g in opt.param_groups] == [float(x) for x in lrs]
        moms = [g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups]
        seq.append([float(x) for x in lrs] + moms)

    record()
    for k in range(steps):
        step_params(lib, opt, params)
        sched.step()
        record()
        if swap_at == k:
            sd, osd = sched.state_dict(), opt.state_dict()
            opt, params2 = setup(lib, opt_name)
            for a, b in zip(params2, params):
                a.data = b.detach().clone()
            params = params2
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sched = make(lib, name, opt)
            sched.load_state_dict(sd)
            opt.load_state_dict(osd)
    return seq


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("name", NAMES)
def test_lr_sequence_matches_torch(name, opt_name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stepping in the right order warns about nothing
        mine = run(minitorch, name, opt_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = run(torch, name, opt_name)
    assert len(mine) == len(theirs) == STEPS + 1
    for k, (a, b) in enumerate(zip(mine, theirs)):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), f"step {k}"


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_mid_schedule(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        straight = run(minitorch, name, "SGD")
        swapped = run(minitorch, name, "SGD", swap_at=17)
        theirs = run(torch, name, "SGD", swap_at=17)
    rows_close(swapped, straight)
    rows_close(swapped, theirs)


def test_state_dict_keys_match_torch():
    for name in NAMES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = make(minitorch, name, setup(minitorch)[0])
            t = make(torch, name, setup(torch)[0])
        sd, tsd = s.state_dict(), t.state_dict()
        assert sorted(sd) == sorted(tsd), name
        if "lr_lambdas" in sd:
            assert sd["lr_lambdas"] == tsd["lr_lambdas"]
        if "_schedulers" in sd:
            assert [sorted(x) for x in sd["_schedulers"]] == [sorted(x) for x in tsd["_schedulers"]]


@pytest.mark.parametrize("kwargs", [
    {},
    {"mode": "max", "factor": 0.5, "patience": 2, "threshold_mode": "abs", "threshold": 0.05},
    {"patience": 1, "cooldown": 3, "min_lr": [0.02, 0.1], "factor": 0.3},
    {"patience": 0, "min_lr": 0.04, "eps": 0.01},
])
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    metrics = [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.8, 0.85, 0.86, 0.87, 0.7, 0.7, 0.71, 0.72, 0.73, 0.74] * 3
    seqs = []
    for lib in (minitorch, torch):
        opt, params = setup(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seq = [sched.get_last_lr()]
        for k, m in enumerate(metrics):
            step_params(lib, opt, params)
            sched.step(lib.tensor(m) if k % 2 else m)
            seq.append(sched.get_last_lr() + [sched.num_bad_epochs, sched.cooldown_counter, sched.best])
            if k == 20:  # a round trip mid-way
                sd = sched.state_dict()
                sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt)
                sched.load_state_dict(sd)
        seqs.append(seq)
    rows_close(seqs[0], seqs[1])


def test_warm_restarts_fractional_epochs_match_torch():
    epochs = [0, 0.5, 1.2, 3.7, 4.99, 5.0, 6.3, 14.9, 15.0, 16.5, 40.25, 2.0]
    seqs = []
    for lib in (minitorch, torch):
        opt, params = setup(lib)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=5, T_mult=2, eta_min=0.01)
        seq = []
        for e in epochs:
            step_params(lib, opt, params)
            sched.step(e)
            seq.append(sched.get_last_lr() + [sched.T_cur, sched.T_i, sched.last_epoch])
        seqs.append(seq)
    rows_close(seqs[0], seqs[1])


@pytest.mark.parametrize("name", ["MultiStepLR", "ExponentialLR", "ConstantLR", "LinearLR", "PolynomialLR"])
def test_epoch_argument_closed_form_matches_torch(name):
    epochs = [3, 4, 9, 2, 15, 16, 30, 1]
    seqs = []
    for lib in (minitorch, torch):
        opt, params = setup(lib)
        sched = make(lib, name, opt)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                step_params(lib, opt, params)
                sched.step(e)
                seq.append(sched.get_last_lr())
        seqs.append(seq)
    rows_close(seqs[0], seqs[1])


def rows_close(a, b):
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        assert x == pytest.approx(y, rel=1e-12, abs=1e-15), f"step {k}"


def errors_alike(fn):
    with pytest.raises(Exception) as e:
        fn(minitorch)
    with pytest.raises(Exception) as te:
        fn(torch)
    assert type(e.value) is type(te.value)
    assert str(e.value).replace("minitorch", "torch") == str(te.value)


def test_errors_match_torch():
    S = lambda lib: lib.optim.lr_scheduler  # noqa: E731
    errors_alike(lambda lib: S(lib).ConstantLR(setup(lib)[0], factor=2.0))
    errors_alike(lambda lib: S(lib).LinearLR(setup(lib)[0], start_factor=0))
    errors_alike(lambda lib: S(lib).LinearLR(setup(lib)[0], end_factor=1.5))
    errors_alike(lambda lib: S(lib).LambdaLR(setup(lib)[0], [lambda e: 1.0]))
    errors_alike(lambda lib: S(lib).MultiplicativeLR(setup(lib)[0], 3))
    errors_alike(lambda lib: S(lib).CosineAnnealingWarmRestarts(setup(lib)[0], T_0=0))
    errors_alike(lambda lib: S(lib).CosineAnnealingWarmRestarts(setup(lib)[0], T_0=3, T_mult=0))
    errors_alike(lambda lib: S(lib).CosineAnnealingWarmRestarts(setup(lib)[0], T_0=3).step(-1))
    errors_alike(lambda lib: S(lib).ReduceLROnPlateau(setup(lib)[0], factor=1.0))
    errors_alike(lambda lib: S(lib).ReduceLROnPlateau(setup(lib)[0], mode="avg"))
    errors_alike(lambda lib: S(lib).ReduceLROnPlateau(setup(lib)[0], threshold_mode="x"))
    errors_alike(lambda lib: S(lib).ReduceLROnPlateau(setup(lib)[0], min_lr=[0.1]))
    errors_alike(lambda lib: S(lib).OneCycleLR(setup(lib)[0], max_lr=1.0))
    errors_alike(lambda lib: S(lib).OneCycleLR(setup(lib)[0], max_lr=1.0, total_steps=-2))
    errors_alike(lambda lib: S(lib).OneCycleLR(setup(lib)[0], max_lr=1.0, total_steps=10, pct_start=1))
    errors_alike(lambda lib: S(lib).OneCycleLR(setup(lib)[0], max_lr=1.0, total_steps=10, anneal_strategy="x"))
    errors_alike(lambda lib: S(lib).OneCycleLR(setup(lib)[0], max_lr=[1.0], total_steps=10))

    def overrun(lib):
        opt, params = setup(lib)
        sched = S(lib).OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(4):
            step_params(lib, opt, params)
            sched.step()

    errors_alike(overrun)

    def sequential(lib, milestones=(3,), plateau=False, other=False):
        opt = setup(lib)[0]
        a = S(lib).ExponentialLR(setup(lib)[0] if other else opt, 0.9)
        b = S(lib).ReduceLROnPlateau(opt) if plateau else S(lib).StepLR(opt, 2)
        return S(lib).SequentialLR(opt, [a, b], milestones=list(milestones))

    errors_alike(lambda lib: sequential(lib, milestones=(3, 4)))
    errors_alike(lambda lib: sequential(lib, plateau=True))
    errors_alike(lambda lib: S(lib).SequentialLR(setup(lib)[0], [], milestones=[]))
    errors_alike(lambda lib: S(lib).ChainedScheduler([]))
    errors_alike(lambda lib: S(lib).ChainedScheduler([S(lib).ReduceLROnPlateau(setup(lib)[0])]))
