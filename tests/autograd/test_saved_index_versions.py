"""The indices an indexing op's backward keeps are checked against their versions, as PyTorch
saves them as variables: a mask or index tensor changed in place after x[mask], x[mask] = v or
index_put_ raises PyTorch's 'modified by an inplace operation' error at backward, instead of
putting the gradient where the mask points now."""
import pytest

import minitorch


def _program(t, how, index_kind):
    x = t.arange(6.0, requires_grad=True)
    y = x * 1
    if index_kind == "mask":
        idx = t.tensor([True, False, True, False, True, False])
    else:
        idx = t.tensor([0, 2, 4])
    v = t.tensor([10.0, 20.0, 30.0], requires_grad=True)
    if how == "setitem":
        y[idx] = v
        out = y
    elif how == "getitem":
        out = y[idx] * t.tensor([1.0, 2.0, 3.0])
    else:
        out = y.index_put_((idx,), v)
    return x, v, out, idx


@pytest.mark.parametrize("index_kind", ["mask", "positions"])
@pytest.mark.parametrize("how", ["setitem", "getitem", "index_put_"])
def test_index_changed_in_place_raises_at_backward(how, index_kind):
    x, v, out, idx = _program(minitorch, how, index_kind)
    idx[1] = idx[0]  # the index moves
    with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                           "modified by an inplace operation"):
        out.sum().backward()


@pytest.mark.parametrize("index_kind", ["mask", "positions"])
@pytest.mark.parametrize("how", ["setitem", "getitem", "index_put_"])
def test_unchanged_index_gives_torchs_gradients(how, index_kind):
    x, v, out, _ = _program(minitorch, how, index_kind)
    out.sum().backward()
    torch = pytest.importorskip("torch")
    tx, tv, tout, _ = _program(torch, how, index_kind)
    tout.sum().backward()
    assert x.grad.tolist() == tx.grad.tolist()
    assert (v.grad is None) == (tv.grad is None)
    if v.grad is not None:
        assert v.grad.tolist() == tv.grad.tolist()
