"""minitorch.ctc_loss, the op under F.ctc_loss with PyTorch's reduction numbers, against torch."""
import numpy as np
import pytest

import minitorch


def _inputs(lib, lengths_as_tensors):
    rng = np.random.default_rng(1)
    lp = lib.tensor(rng.standard_normal((6, 2, 5)).astype("float32")).log_softmax(2).detach().requires_grad_()
    targets = lib.tensor([[1, 2, 2], [3, 1, 0]])
    il, tl = [6, 5], [3, 2]
    if lengths_as_tensors:
        il, tl = lib.tensor(il), lib.tensor(tl)
    return lp, targets, il, tl


@pytest.mark.parametrize("reduction", [None, 0, 1, 2, 7])
@pytest.mark.parametrize("as_tensors", [False, True])
def test_ctc_loss_toplevel_as_torch(reduction, as_tensors):
    torch = pytest.importorskip("torch")
    outs = []
    for lib in (minitorch, torch):
        lp, t, il, tl = _inputs(lib, as_tensors)
        args = (lp, t, il, tl) if reduction is None else (lp, t, il, tl, 0, reduction)
        loss = lib.ctc_loss(*args)
        loss.sum().backward()
        outs.append((loss.detach().numpy(), lp.grad.numpy()))
    assert outs[0][0].shape == outs[1][0].shape
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-5)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-4, atol=1e-6)


def test_ctc_loss_toplevel_reduction_must_be_int():
    torch = pytest.importorskip("torch")
    for lib in (minitorch, torch):
        with pytest.raises(TypeError, match="ctc_loss"):
            lib.ctc_loss(*_inputs(lib, False), 0, "mean")
