"""optim.SparseAdam against PyTorch: its checks, defaults and state_dict, and the RuntimeError
that a dense gradient gets from step() (its steps on sparse gradients: tests/ops/test_sparse_grad.py)."""
import pytest

import minitorch
from helpers import torch


def libs():
    return (minitorch,) if torch is None else (minitorch, torch)


@pytest.mark.parametrize("kw,words", [
    (dict(lr=0.0), "Invalid learning rate: 0.0"),
    (dict(lr=-1), "Invalid learning rate: -1"),
    (dict(eps=0.0), "Invalid epsilon value: 0.0"),
    (dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
])
def test_argument_errors(kw, words):
    for lib in libs():
        with pytest.raises(ValueError) as e:
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2))], **kw)
        assert str(e.value) == words


def test_complex_params_refused():
    for lib in libs():
        with pytest.raises(ValueError, match=r"Complex params at indices \[\[0, 1\]\]: SparseAdam does not support"):
            lib.optim.SparseAdam([lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2, dtype=lib.complex64))])


def test_dense_gradient_raises_and_state_dict():
    dicts = []
    for lib in libs():
        emb = lib.nn.Embedding(5, 3)
        other = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SparseAdam([{"params": [other]}, {"params": emb.parameters(), "lr": 0.1}])
        opt.step()  # no gradients yet: nothing to do
        emb(lib.tensor([1, 2, 1])).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients, please consider Adam"):
            opt.step()
        dicts.append(opt.state_dict())
    if torch is not None:
        assert dicts[0]["param_groups"] == dicts[1]["param_groups"] and dicts[0]["state"] == dicts[1]["state"] == {}


def test_closure_runs_with_grad_enabled():
    w = minitorch.nn.Parameter(minitorch.ones(2))
    opt = minitorch.optim.SparseAdam([w])
    seen = []
    assert opt.step(lambda: seen.append(minitorch.is_grad_enabled()) or 2.0) == 2.0
    assert seen == [True]
