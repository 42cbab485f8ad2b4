"""embedding / embedding_bag / nn.Embedding with max_norm: the rows looked up are renormalised in
place (torch.embedding_renorm_), the lookup and the gradients as PyTorch's."""
import numpy as np
import pytest

import minitorch

RNG = np.random.default_rng(7)
W = (RNG.standard_normal((10, 4)) * 2).astype(np.float32)
IDX = np.array([[1, 3, 3], [9, 0, 1]])


def _renormed(w, idx, max_norm, p):
    """NumPy's reference: each row named, scaled by max_norm / (norm + 1e-7) where norm > max_norm."""
    out = w.astype(np.float64).copy()
    for r in np.unique(idx):
        n = np.linalg.norm(out[r], ord=p)
        if n > max_norm:
            out[r] *= max_norm / (n + 1e-7)
    return out


@pytest.mark.parametrize("p", [2.0, 1.0, float("inf"), 3.0])
def test_embedding_renorms_the_rows_it_looks_up(p):
    w = minitorch.tensor(W.copy(), requires_grad=True)
    out = minitorch.nn.functional.embedding(minitorch.tensor(IDX), w, max_norm=1.5, norm_type=p)
    want = _renormed(W, IDX, 1.5, p)
    np.testing.assert_allclose(w.detach().numpy(), want, rtol=2e-6)
    untouched = [r for r in range(10) if r not in IDX]
    np.testing.assert_array_equal(w.detach().numpy()[untouched], W[untouched])
    np.testing.assert_allclose(out.detach().numpy(), want[IDX], rtol=2e-6)
    assert w._version == 1  # changed in place once, outside autograd
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.bincount(IDX.ravel(), minlength=10)[:, None] * np.ones((1, 4)))


def test_embedding_max_norm_matches_torch():
    torch = pytest.importorskip("torch")
    for p in (2.0, 1.0):
        tw, mw = torch.tensor(W.copy(), requires_grad=True), minitorch.tensor(W.copy(), requires_grad=True)
        to = torch.nn.functional.embedding(torch.tensor(IDX), tw, max_norm=1.5, norm_type=p)
        mo = minitorch.nn.functional.embedding(minitorch.tensor(IDX), mw, max_norm=1.5, norm_type=p)
        # the row norm's float32 rounding may differ by an ulp or two from PyTorch's summation order
        np.testing.assert_allclose(mw.detach().numpy(), tw.detach().numpy(), rtol=1e-6, atol=0)
        np.testing.assert_allclose(mo.detach().numpy(), to.detach().numpy(), rtol=1e-6, atol=0)
        to.square().sum().backward()
        mo.square().sum().backward()
        np.testing.assert_allclose(mw.grad.numpy(), tw.grad.numpy(), rtol=1e-6)


def test_module_and_bag_and_top_level():
    torch = pytest.importorskip("torch")
    emb = minitorch.nn.Embedding(10, 4, max_norm=1.0)
    with minitorch.no_grad():
        emb.weight.copy_(minitorch.tensor(W))
    temb = torch.nn.Embedding(10, 4, max_norm=1.0)
    with torch.no_grad():
        temb.weight.copy_(torch.tensor(W))
    np.testing.assert_allclose(emb(minitorch.tensor([2, 5])).detach().numpy(),
                               temb(torch.tensor([2, 5])).detach().numpy(), rtol=1e-6)
    inp, off = np.array([1, 3, 3, 9, 0, 1]), np.array([0, 2])
    mw, tw = minitorch.tensor(W.copy()), torch.tensor(W.copy())
    mo = minitorch.nn.functional.embedding_bag(minitorch.tensor(inp), mw, minitorch.tensor(off), max_norm=1.0,
                                               norm_type=1.0, mode="mean")
    to = torch.nn.functional.embedding_bag(torch.tensor(inp), tw, torch.tensor(off), max_norm=1.0, norm_type=1.0,
                                           mode="mean")
    np.testing.assert_allclose(mo.numpy(), to.numpy(), rtol=1e-6)
    np.testing.assert_allclose(mw.numpy(), tw.numpy(), rtol=1e-6)
    w = minitorch.tensor(W.copy())
    assert minitorch.embedding_renorm_(w, minitorch.tensor([0]), 0.5, 2.0) is w
    np.testing.assert_allclose(np.linalg.norm(w.numpy()[0]), 0.5, rtol=1e-6)
