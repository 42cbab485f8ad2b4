"""SGD, Adam, AdamW and RMSprop against torch.optim: the same parameters and hand-set gradients
(a new random one each step, some steps None), five steps, then parameters and state compared."""
import copy

import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), (), (0, 2)]
TOL = {"float32": dict(rtol=2e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-13)}

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.01, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "betas": (0.5, 0.6), "eps": 1e-3, "maximize": True}),
    ("Adam", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.05, "maximize": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "amsgrad": True, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.01, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"centered": True}),
    ("RMSprop", {"momentum": 0.9}),
    ("RMSprop", {"lr": 0.001, "centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"alpha": 0.9, "maximize": True}),
]


def grad_is_none(step, i):
    """Parameter 2 has no gradient on steps 0 and 3 (so its state starts a step late, and one
    step skips it); parameter 3 never has one."""
    return (i == 2 and step in (0, 3)) or i == 3


def make_params(lib, arrays, dtype, strided):
    dt = getattr(lib, dtype)
    params = []
    for k, a in enumerate(arrays):
        if strided and k == 0:
            # a non-contiguous parameter: the transpose of a contiguous (4, 3) tensor
            t = lib.tensor(np.ascontiguousarray(a.T), dtype=dt).t()
        else:
            t = lib.tensor(a, dtype=dt)
        params.append(lib.nn.Parameter(t))
    return params


def make_grad(lib, g, dtype, strided):
    dt = getattr(lib, dtype)
    if strided and g.ndim == 2:
        return lib.tensor(np.ascontiguousarray(g.T), dtype=dt).t()
    return lib.tensor(g, dtype=dt)


def build(lib, name, kwargs, params, groups):
    if groups is None:
        return getattr(lib.optim, name)(params, **kwargs)
    return getattr(lib.optim, name)([{"params": [params[i] for i in idx], **opts} for idx, opts in groups], **kwargs)


def run_both(name, kwargs, dtype, *, groups=None, strided=False, steps=5, seed=0):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s) for s in SHAPES]
    mps, tps = make_params(minitorch, arrays, dtype, strided), make_params(torch, arrays, dtype, strided)
    mopt, topt = build(minitorch, name, kwargs, mps, groups), build(torch, name, kwargs, tps, groups)
    for step in range(steps):
        for i, s in enumerate(SHAPES):
            if grad_is_none(step, i):
                mps[i].grad = tps[i].grad = None
                continue
            g = rng.standard_normal(s)
            mps[i].grad = make_grad(minitorch, g, dtype, strided)
            tps[i].grad = make_grad(torch, g, dtype, strided)
        mopt.step()
        topt.step()
    return mps, tps, mopt, topt


def assert_same(m, t, tol):
    assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(m.shape) == tuple(t.shape)
    np.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), **tol)


def assert_same_state(mps, tps, mopt, topt, tol):
    for mp, tp in zip(mps, tps):
        assert_same(mp, tp, tol)
        ms, ts = mopt.state.get(mp, {}), topt.state.get(tp, {})
        assert sorted(ms) == sorted(ts)
        for key in ts:
            assert_same(ms[key], ts[key], tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_matches_torch(name, kwargs, dtype):
    mps, tps, mopt, topt = run_both(name, kwargs, dtype)
    assert_same_state(mps, tps, mopt, topt, TOL[dtype])
    assert mps[3].grad is None and len(mopt.state.get(mps[3], {})) == 0


GROUP_CASES = [
    ("SGD", {"lr": 0.1, "momentum": 0.9}, [([0, 1], {"lr": 0.05}), ([2, 3], {"nesterov": True, "weight_decay": 0.1})]),
    ("Adam", {"lr": 0.01}, [([0], {"amsgrad": True}), ([1, 2, 3], {"betas": (0.8, 0.9), "weight_decay": 0.1})]),
    ("AdamW", {}, [([0, 2], {"lr": 0.1}), ([1, 3], {"weight_decay": 0.5})]),
    ("RMSprop", {}, [([1], {"centered": True}), ([0, 2, 3], {"momentum": 0.5, "lr": 0.001})]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs,groups", GROUP_CASES, ids=[c[0] for c in GROUP_CASES])
def test_param_groups_match_torch(name, kwargs, groups, dtype):
    mps, tps, mopt, topt = run_both(name, kwargs, dtype, groups=groups)
    assert_same_state(mps, tps, mopt, topt, TOL[dtype])
    assert repr(mopt) == repr(topt)


@pytest.mark.parametrize("name,kwargs", [c for c in CASES if c[1].get("momentum") or c[0] != "SGD"][::3])
def test_strided_params_and_grads(name, kwargs):
    mps, tps, mopt, topt = run_both(name, kwargs, "float64", strided=True)
    assert not mps[0].is_contiguous()
    assert_same_state(mps, tps, mopt, topt, TOL["float64"])


@pytest.mark.parametrize("name,kwargs", CASES[::2])
def test_repr_and_state_dict_structure_match_torch(name, kwargs):
    mps, tps, mopt, topt = run_both(name, kwargs, "float32", steps=2)
    assert repr(mopt) == repr(topt)
    msd, tsd = mopt.state_dict(), topt.state_dict()
    assert sorted(msd) == sorted(tsd) == ["param_groups", "state"]
    assert msd["param_groups"] == tsd["param_groups"]
    assert sorted(msd["state"]) == sorted(tsd["state"])
    for k in tsd["state"]:
        assert sorted(msd["state"][k]) == sorted(tsd["state"][k])


@pytest.mark.parametrize("name,kwargs", [CASES[1], CASES[10], CASES[12], CASES[17]])
def test_state_dict_round_trip(name, kwargs):
    """Three steps, a state dict, a new optimizer over copies of the parameters loads it, and two
    more steps on each: the same parameters as five uninterrupted steps (and as PyTorch)."""
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(5)]
    ps = make_params(minitorch, arrays, "float64", False)
    opt = getattr(minitorch.optim, name)(ps, **kwargs)
    tps = make_params(torch, arrays, "float64", False)
    topt = getattr(torch.optim, name)(tps, **kwargs)

    def step(params, optimizer, lib, k):
        for i, p in enumerate(params):
            p.grad = None if grad_is_none(k, i) else lib.tensor(grads[k][i], dtype=lib.float64)
        optimizer.step()

    for k in range(3):
        step(ps, opt, minitorch, k)
        step(tps, topt, torch, k)
    saved = copy.deepcopy(opt.state_dict())
    ps2 = [minitorch.nn.Parameter(p.detach().clone()) for p in ps]
    opt2 = getattr(minitorch.optim, name)(ps2, lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    for k in range(3, 5):
        step(ps, opt, minitorch, k)
        step(ps2, opt2, minitorch, k)
        step(tps, topt, torch, k)
    for p, p2, tp in zip(ps, ps2, tps):
        np.testing.assert_array_equal(p.detach().numpy(), p2.detach().numpy())
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), **TOL["float64"])
    assert_same_state(ps, tps, opt, topt, TOL["float64"])


BAD = [
    ("SGD", {"lr": -1}),
    ("SGD", {"momentum": -0.5}),
    ("SGD", {"weight_decay": -1e-3}),
    ("SGD", {"nesterov": True}),
    ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}),
    ("Adam", {"lr": -1}),
    ("Adam", {"eps": -1.0}),
    ("Adam", {"betas": (1.0, 0.999)}),
    ("Adam", {"betas": (0.9, -0.1)}),
    ("Adam", {"betas": (0, 0.9)}),
    ("Adam", {"weight_decay": -1}),
    ("AdamW", {"lr": -0.5}),
    ("AdamW", {"betas": (0.9, 1.5)}),
    ("RMSprop", {"lr": -1}),
    ("RMSprop", {"alpha": -0.1}),
    ("RMSprop", {"momentum": -1}),
    ("RMSprop", {"eps": -1e-8}),
    ("RMSprop", {"weight_decay": -2}),
]


def raise_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the class and message are what is checked
        return type(e), str(e)
    raise AssertionError("did not raise")


@pytest.mark.parametrize("name,kwargs", BAD)
def test_bad_arguments_raise_like_torch(name, kwargs):
    m = raise_of(lambda: getattr(minitorch.optim, name)([minitorch.nn.Parameter(minitorch.ones(2))], **kwargs))
    t = raise_of(lambda: getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(2))], **kwargs))
    assert m == t


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.optim.SGD([], lr=0.1),
        lambda lib: lib.optim.SGD(lib.nn.Parameter(lib.ones(2)), lr=0.1),
        lambda lib: lib.optim.SGD([1.0], lr=0.1),
        lambda lib: lib.optim.SGD([{"params": {lib.ones(1)}}], lr=0.1),
        lambda lib: lib.optim.Adam([{"params": [p := lib.ones(1)]}, {"params": [p]}]),
        lambda lib: lib.optim.SGD([lib.ones(1)]).add_param_group([lib.ones(1)]),
        lambda lib: lib.optim.SGD([lib.ones(1)]).load_state_dict(
            {"state": {}, "param_groups": [{"params": [0, 1]}]}
        ),
        lambda lib: lib.optim.SGD([lib.ones(1)]).load_state_dict({"state": {}, "param_groups": []}),
    ],
)
def test_bad_params_raise_like_torch(make):
    assert raise_of(lambda: make(minitorch))[0] is raise_of(lambda: make(torch))[0]
