"""aten.nll_loss_forward and aten.nll_loss_backward as PyTorch's native functions: the forward
returns (output, total_weight), the backward takes total_weight and divides the mean's gradient by it."""
import numpy as np
import pytest

import minitorch

torch = pytest.importorskip("torch")


def pair(a):
    return minitorch.tensor(a), torch.tensor(a)


def same(mine, ref, atol=1e-12):
    assert tuple(mine.shape) == tuple(ref.shape)
    assert str(mine.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(mine.detach()), ref.detach().numpy(), atol=atol)


CASES = [((4, 3), [0, 2, 1, 2]), ((3,), 1)]


@pytest.mark.parametrize("shape,target", CASES)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore_index", [-100, 1])
def test_nll_loss_forward_and_backward(shape, target, reduction, weighted, ignore_index):
    rng = np.random.default_rng(0)
    (mx, tx), (mt, tt) = pair(rng.standard_normal(shape)), pair(np.array(target))
    mw, tw = pair(rng.random(3)) if weighted else (None, None)
    mo, mtot = minitorch.ops.aten.nll_loss_forward(mx, mt, mw, reduction, ignore_index)
    to, ttot = torch.ops.aten.nll_loss_forward(tx, tt, tw, reduction, ignore_index)
    same(mo, to)
    same(mtot, ttot)
    mg, tg = pair(rng.standard_normal(tuple(to.shape)))
    for mtotal, ttotal in ((mtot, ttot), pair(np.array(2.5))):  # its own total, and another
        same(minitorch.ops.aten.nll_loss_backward(mg, mx, mt, mw, reduction, ignore_index, mtotal),
             torch.ops.aten.nll_loss_backward(tg, tx, tt, tw, reduction, ignore_index, ttotal))


def test_nll_loss_forward_refuses_more_dims_as_torch():
    x, t = np.zeros((2, 3, 5)), np.zeros((2, 5), dtype=np.int64)
    with pytest.raises(RuntimeError) as ref:
        torch.ops.aten.nll_loss_forward(torch.tensor(x), torch.tensor(t), None, 1, -100)
    with pytest.raises(RuntimeError) as mine:
        minitorch.ops.aten.nll_loss_forward(minitorch.tensor(x), minitorch.tensor(t), None, 1, -100)
    assert str(mine.value) == str(ref.value)


def test_nll_loss_forward_float32_and_autograd():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    mx, tx = minitorch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mt, tt = pair(np.array([0, 3, 3, 1, 2]))
    mo, mtot = minitorch.ops.aten.nll_loss_forward(mx, mt, None, 1, -100)
    to, ttot = torch.ops.aten.nll_loss_forward(tx, tt, None, 1, -100)
    same(mo, to, 1e-6)
    same(mtot, ttot)
    assert mo.requires_grad and not mtot.requires_grad
    mo.backward()
    to.backward()
    same(mx.grad, tx.grad, 1e-6)


def test_nll_loss_backward_double_backward_with_total_weight():
    rng = np.random.default_rng(2)
    x, t = rng.standard_normal((4, 3)), np.array([0, 2, 1, 2])
    results = []
    for lib in (minitorch, torch):
        g = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)
        gx = lib.ops.aten.nll_loss_backward(g, lib.tensor(x), lib.tensor(t), None, 1, -100,
                                            lib.tensor(3.0, dtype=lib.float64))
        (gg,) = lib.autograd.grad(gx, g, lib.tensor(np.arange(12.0).reshape(4, 3)))
        results.append((gx, gg))
    same(results[0][0], results[1][0])
    same(results[0][1], results[1][1])


def test_nll_loss_backward_total_weight_errors():
    x, t, g = np.zeros((3, 4)), np.array([0, 1, 2]), np.array(1.0)
    for total, kind in ((np.array([5.0, 3.0]), RuntimeError), (np.array(5), RuntimeError)):
        with pytest.raises(kind) as ref:
            torch.ops.aten.nll_loss_backward(torch.tensor(g), torch.tensor(x), torch.tensor(t), None, 1, -100,
                                             torch.tensor(total))
        with pytest.raises(kind) as mine:
            minitorch.ops.aten.nll_loss_backward(minitorch.tensor(g), minitorch.tensor(x), minitorch.tensor(t), None, 1,
                                                 -100, minitorch.tensor(total))
        assert str(mine.value) == str(ref.value)
