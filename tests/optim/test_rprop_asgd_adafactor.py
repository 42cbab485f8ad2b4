"""Rprop, ASGD and Adafactor against torch.optim, as test_optimizers_adaptive.py checks the others: the same
model trained 25 steps under both, parameters after every step and the state dicts (PyTorch's
keys and values) at the end, float64 and float32, every option; param groups; errors; repr."""
import pytest

import minitorch

torch = pytest.importorskip("torch")

from test_optimizers_adaptive import assert_state, run, tol  # noqa: E402  (tests/optim is on sys.path)

CASES = [
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5)}),
    ("Rprop", {"lr": 0.02, "step_sizes": (1e-3, 0.05), "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 1e-2, "alpha": 0.5, "t0": 5}),
    ("ASGD", {"lr": 0.02, "weight_decay": 0.1, "t0": 3, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-20, 1e-2), "d": 2.0}),
    ("Adafactor", {"lr": 0.02, "weight_decay": 0.1, "maximize": True}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_training_matches_torch(name, kwargs, dtype):
    mm, tm, mopt, topt = run(name, kwargs, dtype)
    assert_state(mopt, topt, tol(name, dtype))
    assert repr(mopt) == repr(topt)


@pytest.mark.parametrize("name,kwargs,groups", [
    ("Rprop", {"lr": 0.03}, [(0, {"etas": (0.4, 1.1)}), (2, {"maximize": True})]),
    ("ASGD", {"lr": 0.03}, [(0, {"t0": 2}), (2, {"weight_decay": 0.2, "lambd": 0.01})]),
])
def test_param_groups_match_torch(name, kwargs, groups):
    mm, tm, mopt, topt = run(name, kwargs, "float64", groups=groups)
    assert_state(mopt, topt, tol(name, "float64"))


@pytest.mark.parametrize("name,kwargs", [
    ("Rprop", {"lr": -1.0}), ("Rprop", {"etas": (1.5, 1.2)}), ("Rprop", {"etas": (0.5, 0.9)}),
    ("ASGD", {"lr": -0.1}), ("ASGD", {"weight_decay": -1.0}),
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}), ("Adafactor", {"eps": (-1.0, 1e-3)}),
    ("Adafactor", {"eps": (None, -1.0)}), ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -0.1}),
])
def test_errors_match_torch(name, kwargs):
    p = [minitorch.nn.Parameter(minitorch.zeros(2))]
    with pytest.raises(ValueError) as mine:
        getattr(minitorch.optim, name)(p, **kwargs)
    with pytest.raises(ValueError) as theirs:
        getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2))], **kwargs)
    assert str(mine.value) == str(theirs.value)
