"""nn.ParameterList, nn.ParameterDict and nn.Buffer as PyTorch's: registration (parameters(),
state_dict keys a PyTorch state_dict loads into), list and dict behaviour, reprs, errors."""
from collections import OrderedDict

import numpy as np
import pytest

import minitorch
from helpers import torch

nn = minitorch.nn
needs_torch = pytest.mark.skipif(torch is None, reason="compares with PyTorch")


def test_parameter_list_registers_and_indexes():
    pl = nn.ParameterList([nn.Parameter(minitorch.ones(2)), minitorch.zeros(3)])
    assert len(pl) == 2 and isinstance(pl[1], nn.Parameter)
    pl.append(minitorch.ones(1, 2))
    pl += [nn.Parameter(minitorch.ones(4))]
    pl.extend([minitorch.ones(5)])
    assert [tuple(p.shape) for p in pl] == [(2,), (3,), (1, 2), (4,), (5,)]
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2", "3", "4"]
    assert pl[-1] is pl[4]
    sub = pl[1:4:2]
    assert isinstance(sub, nn.ParameterList) and [tuple(p.shape) for p in sub] == [(3,), (4,)]
    pl[0] = minitorch.full((2,), 7.0)
    assert isinstance(pl[0], nn.Parameter) and pl[0].requires_grad
    pl.append("not a tensor")
    assert pl[5] == "not a tensor" and len(list(pl.parameters())) == 5
    with pytest.raises(IndexError, match="index 6 is out of range"):
        pl[6]
    with pytest.raises(TypeError, match="ParameterList.extend should be called with an iterable, but got Tensor"):
        pl.extend(minitorch.ones(2))
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        pl(1)
    assert "0" not in dir(pl)


@needs_torch
def test_parameter_list_repr_and_state_dict_as_pytorch():
    def build(m):
        m.manual_seed(0)
        return m.nn.ParameterList([m.nn.Parameter(m.randn(2, 3)), m.randn(4, dtype=m.float64), 5])

    mine, theirs = build(minitorch), build(torch)
    assert repr(mine).replace("minitorch.", "torch.") == repr(theirs)
    sd = {k: v.numpy() for k, v in theirs.state_dict().items()}
    assert list(mine.state_dict()) == list(sd)
    mine.load_state_dict({k: minitorch.tensor(v) for k, v in sd.items()})
    assert repr(nn.ParameterList()) == repr(torch.nn.ParameterList())


@needs_torch
def test_parameter_dict_as_pytorch():
    def build(m):
        return m.nn.ParameterDict({"b": m.nn.Parameter(m.ones(2)), "a": m.zeros(3, 1), "c": "x"})

    mine, theirs = build(minitorch), build(torch)
    assert list(mine.keys()) == list(theirs.keys()) == ["a", "b", "c"]  # a plain dict: sorted
    assert repr(mine).replace("minitorch.", "torch.") == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    mine.update(OrderedDict([("z", minitorch.ones(1)), ("y", minitorch.ones(1))]))
    theirs.update(OrderedDict([("z", torch.ones(1)), ("y", torch.ones(1))]))
    assert list(mine) == list(theirs)
    mine.update([("w", minitorch.ones(2))])
    assert isinstance(mine["w"], nn.Parameter) and "w" in mine and len(mine) == 6
    assert mine.pop("w").shape == (2,) and "w" not in mine and not hasattr(mine, "w")
    assert mine.popitem()[0] == "y"
    assert mine.get("nope", 3) == 3 and mine.setdefault("d", minitorch.ones(1)) is mine["d"]
    assert list(reversed(mine))[0] == "d"
    merged = mine | nn.ParameterDict({"e": minitorch.ones(1)})
    assert "e" in merged and "e" not in mine
    mine |= {"f": minitorch.ones(1)}
    assert "f" in mine
    assert list(mine.fromkeys(["p", "q"]).keys()) == ["p", "q"]
    copy = mine.copy()
    assert list(copy) == list(mine) and copy["a"] is mine["a"]
    del mine["a"]
    assert "a" not in mine and "a" not in dict(mine.named_parameters())
    mine.clear()
    assert len(mine) == 0 and list(mine.parameters()) == []


def test_parameter_dict_errors():
    pd = nn.ParameterDict()
    with pytest.raises(TypeError, match="cannot be used as a key as it is not a string"):
        pd[1] = minitorch.ones(1)
    with pytest.raises(TypeError, match="ParametersDict.update should be called with an iterable"):
        pd.update(3)
    with pytest.raises(ValueError, match="has length 3; 2 is required"):
        pd.update([("a", 1, 2)])
    with pytest.raises(RuntimeError, match="ParameterDict should not be called."):
        pd(1)


def test_parameter_containers_train_in_a_model():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(minitorch.ones(3, 3)) for _ in range(2)])
            self.bs = nn.ParameterDict({"out": nn.Parameter(minitorch.zeros(3))})

        def forward(self, x):
            for w in self.ws:
                x = x @ w
            return x + self.bs["out"]

    model = Model()
    assert [n for n, _ in model.named_parameters()] == ["ws.0", "ws.1", "bs.out"]
    model(minitorch.ones(2, 3)).sum().backward()
    np.testing.assert_array_equal(model.bs["out"].grad.numpy(), np.full(3, 2.0))
    assert model.ws[0].grad is not None


def test_buffer_registers_on_assignment():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.kept = nn.Buffer(minitorch.ones(2))
            self.temp = nn.Buffer(minitorch.zeros(1), persistent=False)
            self.plain = minitorch.ones(3)

    m = M()
    assert [n for n, _ in m.named_buffers()] == ["kept", "temp"]
    assert list(m.state_dict()) == ["kept"]
    assert isinstance(m.kept, nn.Buffer) and not isinstance(m.plain, nn.Buffer)
    assert type(m.kept) is minitorch.Tensor and m.kept.persistent
    m.kept = minitorch.full((2,), 3.0)  # a plain tensor into a buffer's slot stays a buffer
    assert list(m.state_dict()) == ["kept"] and m.state_dict()["kept"].numpy().tolist() == [3.0, 3.0]
    x = minitorch.ones(2, requires_grad=True)
    b = nn.Buffer(x * 2)
    assert b.requires_grad and b.grad_fn is None  # detached, requires_grad kept as PyTorch does
    assert nn.Buffer().shape == (0,)
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'kept'"):
        m.kept = 3


def test_sparse_tensor_is_a_buffer():
    """A sparse tensor is a Tensor to register_buffer and to assignment (openai/whisper keeps its
    alignment heads as `mask.to_sparse()` in a non-persistent buffer); _apply converts it."""
    m = nn.Linear(2, 2)
    heads = minitorch.zeros(2, 3, dtype=minitorch.bool)
    heads[1] = True
    m.register_buffer("heads", heads.to_sparse(), persistent=False)
    m.register_buffer("eye", minitorch.eye(2).to_sparse())
    assert [n for n, _ in m.named_buffers()] == ["heads", "eye"]
    assert list(m.state_dict()) == ["weight", "bias", "eye"]
    assert m.heads.indices().T.tolist() == [[1, 0], [1, 1], [1, 2]]
    m.double()
    assert m.eye.dtype == minitorch.float64 and m.heads.dtype == minitorch.bool and m.eye.is_sparse
    m.eye = minitorch.eye(3).to_sparse()  # a sparse tensor into a buffer's slot stays a buffer
    assert m._buffers["eye"].shape == (3, 3)
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'other'"):
        m.register_buffer("other", [1])
