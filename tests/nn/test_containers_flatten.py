"""ModuleDict, Flatten and Unflatten: behaviour and repr as PyTorch's."""
import numpy as np
import pytest

import minitorch
from minitorch import nn


def torch_or_skip():
    return pytest.importorskip("torch")


def test_module_dict_registers_in_order():
    d = nn.ModuleDict({"a": nn.Linear(2, 3), "b": nn.ReLU()})
    d["c"] = nn.Linear(3, 1)
    assert list(d) == ["a", "b", "c"] and len(d) == 3 and "b" in d
    assert [n for n, _ in d.named_parameters()] == ["a.weight", "a.bias", "c.weight", "c.bias"]
    assert isinstance(d.pop("b"), nn.ReLU) and list(d.keys()) == ["a", "c"]
    d.update([("z", nn.Identity())])
    assert list(d) == ["a", "c", "z"]
    with pytest.raises(ValueError):
        d.update([("only-one",)])
    d.clear()
    assert len(d) == 0


def test_module_dict_repr_matches_pytorch():
    torch = torch_or_skip()
    ours = nn.ModuleDict({"enc": nn.Linear(4, 2), "act": nn.ReLU()})
    theirs = torch.nn.ModuleDict({"enc": torch.nn.Linear(4, 2), "act": torch.nn.ReLU()})
    assert repr(ours) == repr(theirs)


@pytest.mark.parametrize("args", [(), (0,), (1, 2), (0, -2)])
def test_flatten_matches_numpy_and_pytorch(args):
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    ours = nn.Flatten(*args)(minitorch.from_numpy(x))
    start, end = (list(args) + [1, -1][len(args):])[:2]
    end = end % 4
    expected = x.reshape(x.shape[:start] + (-1,) + x.shape[end + 1:])
    np.testing.assert_array_equal(ours.numpy(), expected)
    torch = torch_or_skip()
    assert repr(nn.Flatten(*args)) == repr(torch.nn.Flatten(*args))


@pytest.mark.parametrize("dim, sizes", [(1, (2, 5)), (-1, (5, 2)), (0, (1, 3))])
def test_unflatten(dim, sizes):
    x = minitorch.arange(30.0).reshape(3, 10)
    out = nn.Unflatten(dim, sizes)(x)
    expected = np.arange(30.0).reshape(3, 10)
    d = dim % 2
    expected = expected.reshape(expected.shape[:d] + sizes + expected.shape[d + 1:])
    np.testing.assert_array_equal(out.numpy(), expected)
    torch = torch_or_skip()
    assert repr(nn.Unflatten(dim, sizes)) == repr(torch.nn.Unflatten(dim, sizes))


def test_flatten_in_a_sequential():
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 2))
    assert model(minitorch.ones(5, 3, 4)).shape == (5, 2)


ACTIVATIONS = [("GELU", lambda x: 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2)))),
               ("SiLU", lambda x: x / (1 + np.exp(-x))), ("Tanh", np.tanh), ("Sigmoid", lambda x: 1 / (1 + np.exp(-x)))]


@pytest.mark.parametrize("name, ref", ACTIVATIONS)
def test_activation_modules(name, ref):
    x = np.linspace(-5, 5, 41)
    out = getattr(nn, name)()(minitorch.tensor(x))
    np.testing.assert_allclose(out.numpy(), ref(x), rtol=1e-12, atol=1e-12)
    torch = torch_or_skip()
    assert repr(getattr(nn, name)()) == repr(getattr(torch.nn, name)())
    with torch.no_grad():
        np.testing.assert_allclose(out.numpy(), getattr(torch.nn, name)()(torch.tensor(x)).numpy(), rtol=1e-12)


def test_functional_forms():
    x = minitorch.tensor([-1.0, 0.0, 2.0])
    F = nn.functional
    assert F.silu(x).tolist() == minitorch.silu(x).tolist()
    assert F.gelu(x).tolist() == minitorch.gelu(x).tolist()
    y = x.clone()
    assert F.silu(y, inplace=True) is y and y.tolist() == minitorch.silu(x).tolist()
    assert F.gelu(x, approximate="tanh").tolist() == minitorch.gelu(x, approximate="tanh").tolist()
    with pytest.raises(RuntimeError):
        F.gelu(x, approximate="erf")
