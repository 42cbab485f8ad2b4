"""nn.utils.parametrize, parametrizations.weight_norm/spectral_norm and the legacy
weight_norm/spectral_norm against PyTorch's: the same state dict keys and values, outputs and
gradients of every parameter, after the same seed (minitorch's generator is PyTorch's, so the
power-iteration vectors start equal too)."""
import numpy as np
import pytest

import minitorch
from helpers import torch

X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, A):
            return A / 2

    return Scale()


SETUPS = {
    "symmetric": lambda lib, m: lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib)),
    "chained": lambda lib, m: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _symmetric(lib)), "weight", _scale(lib)),
    "weight_norm": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m),
    "weight_norm_dim1": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=1),
    "weight_norm_none": lambda lib, m: lib.nn.utils.parametrizations.weight_norm(m, dim=None),
    "spectral_norm": lambda lib, m: lib.nn.utils.parametrizations.spectral_norm(m),
    "legacy_weight_norm": lambda lib, m: lib.nn.utils.weight_norm(m),
    "legacy_weight_norm_dim1": lambda lib, m: lib.nn.utils.weight_norm(m, dim=1),
    "legacy_spectral_norm": lambda lib, m: lib.nn.utils.spectral_norm(m, n_power_iterations=2),
    "bias": lambda lib, m: lib.nn.utils.parametrize.register_parametrization(m, "bias", _scale(lib)),
}


def _run(lib, setup, steps=3):
    """A Linear(3, 3) made after manual_seed(0), parametrized, trained `steps` forwards and
    backwards (training mode: spectral norm iterates); the outputs, state dict and gradients."""
    import warnings

    lib.manual_seed(0)
    m = lib.nn.Linear(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        m = SETUPS[setup](lib, m)
    outs = []
    for _ in range(steps):
        m.zero_grad()
        y = m(lib.tensor(X))
        (y.pow(2).sum()).backward()
        outs.append(y.detach().numpy().copy())
    state = {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}
    grads = {k: p.grad.numpy().copy() for k, p in m.named_parameters()}
    return m, outs, state, grads


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_as_torch(setup):
    m, outs, state, grads = _run(minitorch, setup)
    assert all(np.isfinite(o).all() for o in outs)
    if torch is None:
        return
    tm, touts, tstate, tgrads = _run(torch, setup)
    assert type(m).__name__ == type(tm).__name__
    assert list(state) == list(tstate)
    assert list(grads) == list(tgrads)
    for a, b in zip(outs, touts):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    for k in state:
        np.testing.assert_allclose(state[k], tstate[k], rtol=1e-5, atol=1e-6, err_msg=k)
    for k in grads:
        np.testing.assert_allclose(grads[k], tgrads[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_load_state_dict_from_torch():
    if torch is None:
        pytest.skip("PyTorch not installed")
    tm = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 2))
    m = minitorch.nn.utils.parametrizations.weight_norm(minitorch.nn.Linear(3, 2))
    m.load_state_dict({k: minitorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(m(minitorch.tensor(X)).detach().numpy(), tm(torch.tensor(X)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_assignment_cached_and_remove():
    P = minitorch.nn.utils.parametrize
    m = P.register_parametrization(minitorch.nn.Linear(3, 3), "weight", _symmetric(minitorch))
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
    assert P.type_before_parametrizations(m) is minitorch.nn.Linear
    A = minitorch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    m.weight = A  # through right_inverse
    np.testing.assert_array_equal(m.weight.detach().numpy(), A.numpy())
    with P.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight
    P.remove_parametrizations(m, "weight")
    assert type(m) is minitorch.nn.Linear and isinstance(m.weight, minitorch.nn.Parameter)
    np.testing.assert_array_equal(m.weight.detach().numpy(), A.numpy())
    assert list(m.state_dict()) == ["weight", "bias"] or set(m.state_dict()) == {"weight", "bias"}
    m2 = P.register_parametrization(minitorch.nn.Linear(3, 3), "weight", _scale(minitorch))
    orig = m2.parametrizations.weight.original.detach().clone()
    P.remove_parametrizations(m2, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(m2.weight.detach().numpy(), orig.numpy())


def test_legacy_remove_restores_weight():
    m = minitorch.nn.Linear(3, 2)
    w = m.weight.detach().clone()
    with pytest.warns(FutureWarning):
        minitorch.nn.utils.weight_norm(m)
    minitorch.nn.utils.remove_weight_norm(m)
    np.testing.assert_allclose(m.weight.detach().numpy(), w.numpy(), rtol=1e-6)
    assert set(m.state_dict()) == {"weight", "bias"}
    minitorch.nn.utils.spectral_norm(m)
    m.eval()
    y = m(minitorch.tensor(X))
    minitorch.nn.utils.remove_spectral_norm(m)
    np.testing.assert_allclose(m(minitorch.tensor(X)).detach().numpy(), y.detach().numpy(), rtol=1e-5)


ERRORS = {
    "missing": lambda lib: lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(2, 2), "w", _scale(lib)),
    "shape": lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.Linear(3, 2), "weight", type("T", (lib.nn.Module,), {"forward": lambda self, x: x.t()})()),
    "remove_missing": lambda lib: lib.nn.utils.parametrize.remove_parametrizations(lib.nn.Linear(2, 2), "weight"),
    "wn_twice": lambda lib: lib.nn.utils.weight_norm(lib.nn.utils.weight_norm(lib.nn.Linear(2, 2))),
    "remove_wn_missing": lambda lib: lib.nn.utils.remove_weight_norm(lib.nn.Linear(2, 2)),
    "sn_iterations": lambda lib: lib.nn.utils.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0),
    "sn_dim": lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), dim=3),
    "sn_name": lambda lib: lib.nn.utils.parametrizations.spectral_norm(lib.nn.Linear(2, 2), name="w"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_as_torch(name):
    import warnings

    msgs = []
    for lib in (minitorch,) if torch is None else (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as e:
                ERRORS[name](lib)
        msgs.append((type(e.value), str(e.value).replace("minitorch.", "torch.")))
    assert len(set(msgs)) == 1, msgs
