"""Adagrad, Adadelta, Adamax, NAdam and RAdam against torch.optim: a small model with the same
initial weights (copied via state_dict) trained for 25 steps under both libraries, parameters
compared after every step (float64 and float32), with every option that changes the update,
param groups with different options, a state_dict round trip mid-training (PyTorch's keys, and a
PyTorch state_dict loaded into minitorch), argument errors, repr; one configuration each on the
emulated CUDA device (MINITORCH_CUDA_EMU=1).

Tolerances: float64 rtol 1e-9, float32 rtol 1e-4: 25 steps of a model whose gradients differ by
ulps between the libraries' matrix products (NAdam's mu_product is a float32 tensor in both, as
PyTorch keeps it, so both round it alike).
"""
import copy

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

STEPS = 25
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-9, atol=1e-11)}

CASES = [
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.5}),
    ("Adagrad", {"lr": 0.05, "eps": 1e-3, "maximize": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "weight_decay": 0.05, "initial_accumulator_value": 0.1,
                 "eps": 1e-6, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5}),
    ("Adadelta", {"rho": 0.95, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.1, "maximize": True}),
    ("Adadelta", {"lr": 0.3, "rho": 0.8, "eps": 1e-5, "weight_decay": 0.01, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.5, 0.8)}),
    ("Adamax", {"lr": 0.01, "eps": 1e-3, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "maximize": True}),
    ("Adamax", {"lr": 0.02, "betas": (0.8, 0.99), "eps": 1e-4, "weight_decay": 0.05, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "betas": (0.8, 0.9)}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.1, "eps": 1e-3}),
    ("NAdam", {"lr": 0.01, "maximize": True, "weight_decay": 0.05, "momentum_decay": 0.01}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.5, 0.6)}),  # rho_t > 5 from the third step on
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "betas": (0.9, 0.8)}),
    ("RAdam", {"lr": 0.01, "eps": 1e-3, "maximize": True, "betas": (0.7, 0.7)}),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def tol(name, dtype):
    return TOL[dtype]


def models(dtype, seed=0):
    """The same small model under both libraries, minitorch's weights loaded from PyTorch's."""
    torch.manual_seed(seed)
    tm = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3)).to(getattr(torch, dtype))
    mm = minitorch.nn.Sequential(minitorch.nn.Linear(5, 4), minitorch.nn.Tanh(), minitorch.nn.Linear(4, 3))
    mm.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return mm.to(getattr(minitorch, dtype)), tm


def data(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((8, 5)).astype(dtype), rng.standard_normal((8, 3)).astype(dtype)


def train_step(lib, model, opt, x, y, closure=False):
    def loss_fn():
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(lib.tensor(x, device=device_of(model))),
                                          lib.tensor(y, device=device_of(model)))
        loss.backward()
        return loss
    if closure:
        return opt.step(loss_fn)
    loss_fn()
    opt.step()


def device_of(model):
    return next(iter(model.parameters())).device


def assert_params(mm, tm, tol_):
    for (mn, mp), (tn, tp) in zip(mm.named_parameters(), tm.named_parameters()):
        assert mn == tn
        assert str(mp.dtype).split(".")[-1] == str(tp.dtype).split(".")[-1]
        np.testing.assert_allclose(mp.detach().cpu().numpy(), tp.detach().numpy(), **tol_, err_msg=mn)


def assert_state(mopt, topt, tol_, loaded=False):
    """The state dicts alike; after load_state_dict, NAdam's mu_product has the parameter's dtype
    (PyTorch's load_state_dict casts every state tensor but "step" so)."""
    msd, tsd = mopt.state_dict(), topt.state_dict()
    assert msd["param_groups"] == tsd["param_groups"]
    assert sorted(msd["state"]) == sorted(tsd["state"])
    for k, ts in tsd["state"].items():
        ms = msd["state"][k]
        assert sorted(ms) == sorted(ts)
        for key, tv in ts.items():
            mv = ms[key]
            assert isinstance(mv, minitorch.Tensor)
            if not (loaded and key == "mu_product"):
                assert str(mv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
            assert tuple(mv.shape) == tuple(tv.shape), key
            np.testing.assert_allclose(mv.cpu().numpy(), tv.numpy(), **tol_, err_msg=key)


def run(name, kwargs, dtype, steps=STEPS, groups=None):
    mm, tm = models(dtype)
    if groups is None:
        mopt = getattr(minitorch.optim, name)(mm.parameters(), **kwargs)
        topt = getattr(torch.optim, name)(tm.parameters(), **kwargs)
    else:
        mopt = getattr(minitorch.optim, name)(
            [dict(params=list(mm[i].parameters()), **o) for i, o in groups], **kwargs)
        topt = getattr(torch.optim, name)(
            [dict(params=list(tm[i].parameters()), **o) for i, o in groups], **kwargs)
    x, y = data(dtype)
    for _ in range(steps):
        train_step(minitorch, mm, mopt, x, y)
        train_step(torch, tm, topt, x, y)
        assert_params(mm, tm, tol(name, dtype))
    return mm, tm, mopt, topt


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=IDS)
def test_training_matches_torch(name, kwargs, dtype):
    mm, tm, mopt, topt = run(name, kwargs, dtype)
    assert_state(mopt, topt, tol(name, dtype))
    assert repr(mopt) == repr(topt)


GROUP_CASES = [
    ("Adagrad", {"lr": 0.1}, [(0, {"lr_decay": 0.1, "weight_decay": 0.1}), (2, {"eps": 1e-4, "maximize": True})]),
    ("Adadelta", {}, [(0, {"rho": 0.5}), (2, {"lr": 0.1, "weight_decay": 0.2})]),
    ("Adamax", {"lr": 0.01}, [(0, {"betas": (0.5, 0.9)}), (2, {"weight_decay": 0.1, "maximize": True})]),
    ("NAdam", {"lr": 0.01}, [(0, {"momentum_decay": 0.05}),
                             (2, {"weight_decay": 0.1, "decoupled_weight_decay": True})]),
    ("RAdam", {"lr": 0.01}, [(0, {"betas": (0.6, 0.7), "weight_decay": 0.1}),
                             (2, {"decoupled_weight_decay": True, "weight_decay": 0.3})]),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kwargs,groups", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_param_groups_match_torch(name, kwargs, groups, dtype):
    mm, tm, mopt, topt = run(name, kwargs, dtype, groups=groups)
    assert_state(mopt, topt, tol(name, dtype))
    assert repr(mopt) == repr(topt)


ROUND_TRIP = [CASES[4], CASES[9], CASES[14], CASES[18], CASES[24]]


@pytest.mark.parametrize("name,kwargs", ROUND_TRIP, ids=[c[0] for c in ROUND_TRIP])
def test_state_dict_round_trip(name, kwargs):
    """10 steps; then a new minitorch optimizer loads minitorch's state dict, another loads
    PyTorch's (converted tensor by tensor); 15 more steps on each copy match PyTorch's run (the
    first also minitorch's uninterrupted run, exactly)."""
    dtype = "float64"
    mm, tm, mopt, topt = run(name, kwargs, dtype, steps=10)
    assert_state(mopt, topt, tol(name, dtype))
    msd = copy.deepcopy(mopt.state_dict())
    tsd = topt.state_dict()
    from_torch = {
        "param_groups": copy.deepcopy(tsd["param_groups"]),
        "state": {k: {key: minitorch.tensor(v.numpy()) for key, v in s.items()} for k, s in tsd["state"].items()},
    }
    copies = []
    for sd in (msd, from_torch):
        m2 = copy.deepcopy(mm)
        o2 = getattr(minitorch.optim, name)(m2.parameters(), lr=123.0)
        o2.load_state_dict(sd)
        assert o2.param_groups[0]["lr"] == kwargs.get("lr", mopt.defaults["lr"])
        copies.append((m2, o2))
    x, y = data(dtype)
    for _ in range(15):
        train_step(minitorch, mm, mopt, x, y)
        train_step(torch, tm, topt, x, y)
        for m2, o2 in copies:
            train_step(minitorch, m2, o2, x, y)
            assert_params(m2, tm, tol(name, dtype))
    for m2, o2 in copies:
        assert_state(o2, topt, tol(name, dtype), loaded=True)
        assert o2.state[next(iter(m2.parameters()))]["step"].dtype == minitorch.float32
    # the copy that loaded minitorch's own state dict continues bit for bit (but NAdam's, whose
    # mu_product became float64 on loading, as PyTorch's does)
    for p, p2 in zip(mm.parameters(), copies[0][0].parameters()):
        if name == "NAdam":
            np.testing.assert_allclose(p.detach().numpy(), p2.detach().numpy(), rtol=1e-6, atol=1e-9)
        else:
            np.testing.assert_array_equal(p.detach().numpy(), p2.detach().numpy())


@pytest.mark.parametrize("name", ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_defaults_repr_and_closure(name):
    mm, tm = models("float64")
    mopt = getattr(minitorch.optim, name)(mm.parameters())
    topt = getattr(torch.optim, name)(tm.parameters())
    assert repr(mopt) == repr(topt)
    assert mopt.defaults == topt.defaults
    # Adagrad makes its state when built, the others on their first step
    assert sorted(mopt.state_dict()["state"]) == sorted(topt.state_dict()["state"])
    x, y = data("float64")
    for _ in range(3):
        ml = train_step(minitorch, mm, mopt, x, y, closure=True)
        tl = train_step(torch, tm, topt, x, y, closure=True)
        np.testing.assert_allclose(ml.item(), tl.item(), rtol=1e-12)
    assert_params(mm, tm, TOL["float64"])
    # the step count is a float32 tensor on the CPU, as PyTorch's single-tensor optimizers keep it
    mstep = mopt.state[next(iter(mm.parameters()))]["step"]
    assert mstep.dtype == minitorch.float32 and mstep.item() == 3.0 and mstep.device.type == "cpu"


def test_params_without_grad_are_skipped():
    for name in ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]:
        mm, tm = models("float64")
        mopt = getattr(minitorch.optim, name)(mm.parameters(), lr=0.01)
        topt = getattr(torch.optim, name)(tm.parameters(), lr=0.01)
        x, y = data("float64")
        for k in range(4):
            for lib, model, opt in ((minitorch, mm, mopt), (torch, tm, topt)):
                train_step(lib, model, opt, x, y)
                model[2].bias.grad = None  # some steps: one parameter without a gradient
                if k % 2:
                    opt.step()
        assert_params(mm, tm, TOL["float64"])
        assert_state(mopt, topt, TOL["float64"])


BAD = [
    ("Adagrad", {"lr": -1.0}),
    ("Adagrad", {"lr_decay": -0.1}),
    ("Adagrad", {"weight_decay": -1}),
    ("Adagrad", {"initial_accumulator_value": -0.5}),
    ("Adagrad", {"eps": -1e-10}),
    ("Adadelta", {"lr": -1.0}),
    ("Adadelta", {"rho": 1.5}),
    ("Adadelta", {"rho": -0.1}),
    ("Adadelta", {"eps": -1.0}),
    ("Adadelta", {"weight_decay": -1.0}),
    ("Adamax", {"lr": -0.1}),
    ("Adamax", {"eps": -1.0}),
    ("Adamax", {"betas": (1.0, 0.9)}),
    ("Adamax", {"betas": (0.9, -0.1)}),
    ("Adamax", {"weight_decay": -1}),
    ("NAdam", {"lr": -1}),
    ("NAdam", {"eps": -1.0}),
    ("NAdam", {"betas": (1.5, 0.9)}),
    ("NAdam", {"betas": (0.9, 1.0)}),
    ("NAdam", {"weight_decay": -0.1}),
    ("NAdam", {"momentum_decay": -0.004}),
    ("RAdam", {"lr": -1.0}),
    ("RAdam", {"eps": -1e-8}),
    ("RAdam", {"betas": (-0.1, 0.9)}),
    ("RAdam", {"betas": (0.9, 2.0)}),
    ("RAdam", {"weight_decay": -1}),
    ("RAdam", {"lr": -1.0, "eps": -1.0}),  # the first failing check wins, as in PyTorch
    ("Adagrad", {"eps": -1.0, "lr_decay": -1.0}),
]


@pytest.mark.parametrize("name,kwargs", BAD, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD)])
def test_errors_match_torch(name, kwargs):
    with pytest.raises(Exception) as t_err:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(type(t_err.value)) as m_err:
        getattr(minitorch.optim, name)([minitorch.zeros(2, requires_grad=True)], **kwargs)
    assert str(m_err.value) == str(t_err.value)


@pytest.mark.parametrize("name", ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_empty_and_tensor_params_errors(name):
    for arg in ([], minitorch.zeros(2)):
        targ = [] if isinstance(arg, list) else torch.zeros(2)
        with pytest.raises(Exception) as t_err:
            getattr(torch.optim, name)(targ)
        with pytest.raises(type(t_err.value)):
            getattr(minitorch.optim, name)(arg)


CUDA_CASES = [CASES[4], CASES[9], CASES[14], CASES[20], CASES[24]]


@pytest.mark.parametrize("name,kwargs", CUDA_CASES, ids=[c[0] for c in CUDA_CASES])
def test_cuda_matches_torch(name, kwargs):
    """Parameters on 'cuda' (the emulated device under MINITORCH_CUDA_EMU=1) against PyTorch on
    the CPU; the state stays on the parameters' device, the step count on the CPU."""
    if not minitorch.cuda.is_available():
        pytest.skip("CUDA is not available (run with MINITORCH_CUDA_EMU=1)")
    dtype = "float64"
    mm, tm = models(dtype)
    mm = mm.to("cuda")
    mopt = getattr(minitorch.optim, name)(mm.parameters(), **kwargs)
    topt = getattr(torch.optim, name)(tm.parameters(), **kwargs)
    x, y = data(dtype)
    for k in range(STEPS):
        train_step(minitorch, mm, mopt, x, y)
        train_step(torch, tm, topt, x, y)
        assert_params(mm, tm, tol(name, dtype))
        if k == 10:  # a state_dict round trip on the device
            o2 = getattr(minitorch.optim, name)(mm.parameters())
            o2.load_state_dict(copy.deepcopy(mopt.state_dict()))
            mopt = o2
    for p in mm.parameters():
        assert mopt.state[p]["step"].device.type == "cpu"
        state = mopt.state[p]
        assert all(v.device.type == "cuda" for key, v in state.items() if key != "step")
    assert_state(mopt, topt, tol(name, dtype), loaded=True)


# ---- LBFGS ----------------------------------------------------------------------------------------

LBFGS_CASES = [
    {},
    {"lr": 0.5, "max_iter": 5},
    {"max_iter": 7, "history_size": 2},
    {"lr": 0.1, "max_iter": 4, "max_eval": 3},
    {"line_search_fn": "strong_wolfe"},
    {"line_search_fn": "strong_wolfe", "max_iter": 5, "history_size": 3},
    {"line_search_fn": "strong_wolfe", "lr": 0.5, "max_eval": 8},
    {"tolerance_change": 1e-3, "tolerance_grad": 1e-4},
    {"line_search_fn": "strong_wolfe", "tolerance_change": 1e-4},
]


def lbfgs_closure(lib, model, opt, x, y):
    def closure():
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(lib.tensor(x, device=device_of(model))),
                                          lib.tensor(y, device=device_of(model)))
        loss.backward()
        return loss
    return closure


def run_lbfgs(kwargs, dtype, steps, mm=None):
    mm_, tm = models(dtype)
    mm = mm_ if mm is None else mm
    mopt, topt = minitorch.optim.LBFGS(mm.parameters(), **kwargs), torch.optim.LBFGS(tm.parameters(), **kwargs)
    x, y = data(dtype)
    for _ in range(steps):
        ml = mopt.step(lbfgs_closure(minitorch, mm, mopt, x, y))
        tl = topt.step(lbfgs_closure(torch, tm, topt, x, y))
        np.testing.assert_allclose(ml.item(), tl.item(), **(dict(rtol=1e-7) if dtype == "float64"
                                                             else dict(rtol=1e-3, atol=1e-5)))
        assert_params(mm, tm, dict(rtol=1e-7, atol=1e-9) if dtype == "float64" else dict(rtol=1e-2, atol=1e-3))
    return mm, tm, mopt, topt


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kwargs", LBFGS_CASES, ids=[str(i) for i in range(len(LBFGS_CASES))])
def test_lbfgs_matches_torch(kwargs, dtype):
    """Three steps (up to max_iter iterations each); float64 rtol 1e-7 after some 60 iterations
    with line searches; float32 rtol 1e-2, atol 1e-3 (the quasi-Newton updates amplify the ulps by
    which the libraries' float32 gradients differ: some 4e-3 on one weight after 60 iterations),
    and the float32 losses, near 1e-3 by then, within 1e-5 (2.7e-6 apart once the float32 sums
    over leading dims took float32 blocks, as PyTorch's cascade does)."""
    mm, tm, mopt, topt = run_lbfgs(kwargs, dtype, steps=3)
    assert repr(mopt) == repr(topt) and mopt.defaults == topt.defaults
    mstate, tstate = mopt.state_dict()["state"], topt.state_dict()["state"]
    assert sorted(mstate) == sorted(tstate) == [0]
    assert sorted(mstate[0]) == sorted(tstate[0])
    for key in ("func_evals", "n_iter"):
        assert mstate[0][key] == tstate[0][key], key
    assert len(mstate[0]["old_dirs"]) == len(tstate[0]["old_dirs"])


def test_lbfgs_state_dict_round_trip():
    dtype = "float64"
    kwargs = {"line_search_fn": "strong_wolfe", "max_iter": 4, "history_size": 5}
    mm, tm, mopt, topt = run_lbfgs(kwargs, dtype, steps=2)
    m2 = copy.deepcopy(mm)
    o2 = minitorch.optim.LBFGS(m2.parameters(), **kwargs)
    o2.load_state_dict(copy.deepcopy(mopt.state_dict()))
    x, y = data(dtype)
    for _ in range(2):
        mopt.step(lbfgs_closure(minitorch, mm, mopt, x, y))
        o2.step(lbfgs_closure(minitorch, m2, o2, x, y))
        topt.step(lbfgs_closure(torch, tm, topt, x, y))
        assert_params(m2, tm, dict(rtol=1e-7, atol=1e-9))
    for p, p2 in zip(mm.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), p2.detach().numpy())


def test_lbfgs_already_optimal_returns_at_once():
    mm, tm, mopt, topt = run_lbfgs({"tolerance_grad": 1e3}, "float64", steps=1)
    assert mopt.state_dict()["state"][0] == {"func_evals": 1, "n_iter": 0}


def test_lbfgs_errors():
    for kwargs in ({"lr": -1.0},):
        with pytest.raises(ValueError) as t_err:
            torch.optim.LBFGS([torch.zeros(2, requires_grad=True)], **kwargs)
        with pytest.raises(ValueError, match=str(t_err.value)):
            minitorch.optim.LBFGS([minitorch.zeros(2, requires_grad=True)], **kwargs)
    with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
        minitorch.optim.LBFGS([{"params": [minitorch.zeros(2, requires_grad=True)]},
                               {"params": [minitorch.zeros(2, requires_grad=True)]}])
    mm, _ = models("float64")
    opt = minitorch.optim.LBFGS(mm.parameters(), line_search_fn="wolfe")
    x, y = data("float64")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(lbfgs_closure(minitorch, mm, opt, x, y))


def test_lbfgs_cuda_matches_torch():
    if not minitorch.cuda.is_available():
        pytest.skip("CUDA is not available (run with MINITORCH_CUDA_EMU=1)")
    mm, _ = models("float64")
    run_lbfgs({"line_search_fn": "strong_wolfe", "max_iter": 5}, "float64", steps=3, mm=mm.to("cuda"))


@pytest.mark.parametrize("name", ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_add_param_group_matches_torch(name):
    """A group added after some steps (Adagrad makes its state then too, as PyTorch does)."""
    mm, tm = models("float64")
    mopt = getattr(minitorch.optim, name)(mm[0].parameters(), lr=0.01)
    topt = getattr(torch.optim, name)(tm[0].parameters(), lr=0.01)
    x, y = data("float64")
    for k in range(6):
        if k == 2:
            mopt.add_param_group({"params": list(mm[2].parameters()), "lr": 0.05, "weight_decay": 0.1})
            topt.add_param_group({"params": list(tm[2].parameters()), "lr": 0.05, "weight_decay": 0.1})
            assert sorted(mopt.state_dict()["state"]) == sorted(topt.state_dict()["state"])
        train_step(minitorch, mm, mopt, x, y)
        train_step(torch, tm, topt, x, y)
        assert_params(mm, tm, TOL["float64"])
    assert_state(mopt, topt, TOL["float64"])


@pytest.mark.parametrize("lr", [0.01, [0.01], "float64"], ids=["0d", "1elem", "0d-float64"])
@pytest.mark.parametrize("name", ["Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"])
def test_tensor_lr_matches_torch(name, lr):
    """lr given as a one-element tensor: the step sizes are computed in its dtype, as PyTorch's."""
    mlr = minitorch.tensor(0.01, dtype=minitorch.float64) if lr == "float64" else minitorch.tensor(lr)
    tlr = torch.tensor(0.01, dtype=torch.float64) if lr == "float64" else torch.tensor(lr)
    mm, tm = models("float64")
    mopt = getattr(minitorch.optim, name)(mm.parameters(), lr=mlr, weight_decay=0.1)
    topt = getattr(torch.optim, name)(tm.parameters(), lr=tlr, weight_decay=0.1)
    x, y = data("float64")
    for _ in range(5):
        train_step(minitorch, mm, mopt, x, y)
        train_step(torch, tm, topt, x, y)
        assert_params(mm, tm, TOL["float64"])
    with pytest.raises(ValueError, match="Tensor lr must be 1-element"):
        getattr(minitorch.optim, name)(mm.parameters(), lr=minitorch.tensor([0.1, 0.2]))
