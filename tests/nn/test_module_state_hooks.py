"""nn.Module's state_dict and load_state_dict hooks, get_extra_state/set_extra_state,
_save_to_state_dict/_load_from_state_dict overrides, set_submodule, to_empty, type,
share_memory and the legacy register_backward_hook, as PyTorch's (compared with it where the
behaviour is observable)."""
import numpy as np
import pytest

import minitorch
from helpers import torch

needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def net(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU(), m.nn.Sequential(m.nn.Linear(3, 1)))


@pytest.mark.parametrize("lib", ["minitorch", "torch"])
def test_state_dict_hooks_run_in_pytorch_order(lib):
    m = minitorch if lib == "minitorch" else pytest.importorskip("torch")
    model, calls = net(m), []
    model[2].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))

    def post(mod, sd, prefix, meta):
        calls.append(("post", prefix, sorted(sd), meta["version"]))
        sd[prefix + "extra"] = m.ones(1)

    handle = model.register_state_dict_post_hook(post)
    sd = model.state_dict(keep_vars=True)
    assert calls == [("pre", "2.", True), ("post", "", ["0.bias", "0.weight", "2.0.bias", "2.0.weight"], 1)]
    assert list(sd)[-1] == "extra"
    handle.remove()
    assert "extra" not in model.state_dict()
    model.register_state_dict_post_hook(lambda *a: {})
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        model.state_dict()


@pytest.mark.parametrize("lib", ["minitorch", "torch"])
def test_load_state_dict_hooks(lib):
    m = minitorch if lib == "minitorch" else pytest.importorskip("torch")
    model, seen = net(m), []
    sd = net(m).state_dict()

    def pre(mod, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
        seen.append(("pre", type(mod).__name__, prefix, strict, local_metadata.get("version")))
        state_dict[prefix + "0.weight"] = state_dict[prefix + "0.weight"] * 0 + 5  # renames/edits go here

    def post(mod, incompatible):
        seen.append(("post", list(incompatible.missing_keys), list(incompatible.unexpected_keys)))
        incompatible.unexpected_keys.clear()  # forgiven: strict then passes

    model[2].register_load_state_dict_pre_hook(pre)
    model.register_load_state_dict_post_hook(post)
    sd["bogus"] = m.ones(1)
    result = model.load_state_dict(sd)
    assert seen == [("pre", "Sequential", "2.", True, 1), ("post", [], ["bogus"])]
    assert (model[2][0].weight == 5).all()
    assert result.unexpected_keys == [] and result.missing_keys == []
    model.register_load_state_dict_post_hook(lambda mod, inc: 1)
    with pytest.raises(AssertionError, match="are not expected to return new values"):
        model.load_state_dict(net(m).state_dict())


class WithExtra(minitorch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = minitorch.nn.Linear(2, 2)
        self.step = 0

    def get_extra_state(self):
        return {"step": self.step}

    def set_extra_state(self, state):
        self.step = state["step"]


def test_extra_state_saved_and_loaded():
    a = WithExtra()
    a.step = 7
    sd = a.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"] and sd["_extra_state"] == {"step": 7}
    b = WithExtra()
    b.load_state_dict(sd)
    assert b.step == 7
    del sd["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict(sd)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        minitorch.nn.Linear(2, 2).load_state_dict({"weight": minitorch.ones(2, 2), "bias": minitorch.ones(2),
                                                   "_extra_state": 1})
    with pytest.raises(RuntimeError, match="Reached a code path in Module.get_extra_state"):
        minitorch.nn.Linear(1, 1).get_extra_state()


def test_overridden_save_and_load_from_state_dict():
    class Renamed(minitorch.nn.Linear):
        def _save_to_state_dict(self, destination, prefix, keep_vars):
            super()._save_to_state_dict(destination, prefix, keep_vars)
            destination[prefix + "w"] = destination.pop(prefix + "weight")

        def _load_from_state_dict(self, state_dict, prefix, *args):
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, *args)

    a = minitorch.nn.Sequential(Renamed(2, 2))
    sd = a.state_dict()
    assert list(sd) == ["0.bias", "0.w"]
    b = minitorch.nn.Sequential(Renamed(2, 2))
    b.load_state_dict(sd)
    np.testing.assert_array_equal(b[0].weight.detach().numpy(), a[0].weight.detach().numpy())


def test_zero_dim_parameter_loads_from_one_element_vector():
    m = minitorch.nn.Module()
    m.scale = minitorch.nn.Parameter(minitorch.tensor(1.0))
    m.load_state_dict({"scale": minitorch.tensor([3.0])})
    assert m.scale.item() == 3.0 and m.scale.shape == ()


def test_state_dict_positional_arguments_are_deprecated():
    model = minitorch.nn.Linear(2, 2)
    dest = {}
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        out = model.state_dict(dest, "pre.")
    assert out is dest and list(dest) == ["pre.weight", "pre.bias"]


@needs_torch
def test_set_submodule_as_pytorch():
    for m in (minitorch, torch):
        model = net(m)
        model.set_submodule("2.0", m.nn.Linear(3, 4))
        assert model[2][0].out_features == 4
        model.set_submodule("2.new", m.nn.Tanh())
        assert isinstance(model[2].new, m.nn.Tanh)
        model.set_submodule("1", m.nn.Identity(), strict=True)
        assert isinstance(model[1], m.nn.Identity)
        with pytest.raises(AttributeError, match="Sequential has no attribute `missing`"):
            model.set_submodule("2.missing", m.nn.Tanh(), strict=True)
        with pytest.raises(ValueError, match="Cannot set the submodule without a target name!"):
            model.set_submodule("", m.nn.Tanh())
        with pytest.raises(ValueError, match="`module` is not an nn.Module, found"):
            model.set_submodule("1", 3)
        with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
            model.set_submodule("0.weight", m.nn.Tanh())
        with pytest.raises(AttributeError, match="has no attribute `nope`"):
            model.set_submodule("nope.x", m.nn.Tanh())


def test_to_empty_type_and_share_memory():
    model = net(minitorch)
    model.register_buffer("count", minitorch.zeros(2, dtype=minitorch.int64))
    out = model.to_empty(device="cpu")
    assert out is model and model[0].weight.shape == (3, 2) and isinstance(model[0].weight, minitorch.nn.Parameter)
    only_top = model.to_empty(device="cpu", recurse=False)
    assert only_top is model and model.count.shape == (2,)
    model.type(minitorch.float64)
    assert model[0].weight.dtype == minitorch.float64 and model.count.dtype == minitorch.float64
    model.type(minitorch.FloatTensor)
    assert model[2][0].bias.dtype == minitorch.float32
    assert model.share_memory() is model


@pytest.mark.parametrize("lib", ["minitorch", "torch"])
def test_register_backward_hook_single_op_module(lib):
    m = minitorch if lib == "minitorch" else pytest.importorskip("torch")
    relu, seen = m.nn.ReLU(), []
    relu.register_backward_hook(lambda mod, gin, gout: seen.append((gin[0].tolist(), gout[0].tolist())))
    x = m.tensor([-1.0, 2.0], requires_grad=True)
    relu(x).sum().backward()
    assert seen == [([0.0, 1.0], [1.0, 1.0])]
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        relu.register_full_backward_hook(lambda *a: None)
    other = m.nn.ReLU()
    other.register_full_backward_hook(lambda *a: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        other.register_backward_hook(lambda *a: None)
