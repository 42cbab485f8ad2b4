"""embedding(max_norm=) and embedding_bag(max_norm=): the rows of weight that the input names,
whose norm_type-norm exceeds max_norm, are rescaled in place to max_norm / (norm + 1e-7) before the
lookup, outside autograd (word2vec-style programs pass max_norm to nn.Embedding);
torch.embedding_renorm_ itself, with PyTorch's checks and messages."""
import numpy as np
import pytest

import minitorch
from helpers import torch

RNG = np.random.default_rng(7)


def renormed(w, idx, max_norm, p):
    """NumPy's: each distinct row named by idx scaled when its p-norm exceeds max_norm."""
    w = w.copy()
    for i in np.unique(idx):
        norm = np.linalg.norm(w[i], ord=p)
        if norm > max_norm:
            w[i] *= max_norm / (norm + 1e-7)
    return w


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding_renorm_matches_numpy(norm_type, index_dtype):
    w = RNG.standard_normal((6, 4)) * 2
    w[2] *= 0.01  # a row under max_norm stays as it is
    idx = np.array([[0, 2, 5], [5, 0, 1]])
    ours = minitorch.tensor(w)
    out = minitorch.embedding_renorm_(ours, minitorch.tensor(idx.astype(index_dtype)), 1.5, norm_type)
    assert out is ours and ours._version == 1
    np.testing.assert_allclose(ours.numpy(), renormed(w, idx, 1.5, norm_type), rtol=1e-12)
    np.testing.assert_array_equal(ours.numpy()[[3, 4]], w[[3, 4]])


def test_embedding_renorm_on_a_transposed_weight_and_empty_indices():
    w = RNG.standard_normal((4, 5))
    ours = minitorch.tensor(w.T.copy()).t()  # (4, 5) laid out column-major
    minitorch.embedding_renorm_(ours, minitorch.tensor([3, 3, 1]), 0.5, 2.0)
    np.testing.assert_allclose(ours.numpy(), renormed(w, [3, 1], 0.5, 2), rtol=1e-12)
    before = ours.numpy().copy()
    minitorch.embedding_renorm_(ours, minitorch.tensor([], dtype=minitorch.int64), 0.5, 2.0)
    np.testing.assert_array_equal(ours.numpy(), before)


@pytest.mark.skipif(torch is None, reason="compares with PyTorch")
@pytest.mark.parametrize("module", ["Embedding", "EmbeddingBag"])
def test_max_norm_lookup_and_gradient_match_torch(module):
    w = RNG.standard_normal((7, 3)).astype(np.float32) * 3
    idx = np.array([[1, 4, 4, 6], [0, 1, 2, 2]])
    results = []
    for lib in (minitorch, torch):
        layer = getattr(lib.nn, module)(7, 3, max_norm=1.0, norm_type=2.0)
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w))
        out = layer(lib.tensor(idx))
        (out * lib.arange(out.numel()).view(out.shape)).sum().backward()
        results.append((out.detach().numpy(), layer.weight.detach().numpy(), layer.weight.grad.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-7)
    assert np.linalg.norm(results[0][1][[0, 1, 2, 4, 6]], axis=1).max() <= 1.0 + 1e-6
    np.testing.assert_array_equal(results[0][1][[3, 5]], w[[3, 5]])


def test_max_norm_functional_keeps_nan_rows_and_autograd():
    w = minitorch.tensor([[3.0, 4.0], [float("nan"), 1.0], [0.1, 0.1]], requires_grad=True)
    out = minitorch.nn.functional.embedding(minitorch.tensor([0, 1, 2]), w, max_norm=1.0)
    # the NaN row's norm is NaN: not above max_norm, so left as it is (PyTorch's comparison)
    np.testing.assert_allclose(w.detach().numpy()[0], [0.6, 0.8], rtol=1e-6)
    assert np.isnan(w.detach().numpy()[1, 0]) and w.detach().numpy()[1, 1] == 1.0
    out.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((3, 2)))


@pytest.mark.parametrize("args, match", [
    ((minitorch.zeros(3), minitorch.tensor([0])), "Expected 2-dimensional tensor, but got 1-dimensional tensor for "
                                                   "argument #1 'self'"),
    ((minitorch.zeros(3, 2), minitorch.tensor([0.0])), "Expected tensor for argument #2 'indices' to have one of the "
                                                       "following scalar types: Long, Int; but got torch.FloatTensor"),
])
def test_embedding_renorm_errors(args, match):
    with pytest.raises(RuntimeError, match=match):
        minitorch.embedding_renorm_(*args, 1.0, 2.0)
    if torch is not None:
        with pytest.raises(RuntimeError, match=match):
            torch.embedding_renorm_(*[torch.tensor(a.numpy()) for a in args], 1.0, 2.0)


def test_embedding_renorm_refuses_a_leaf_that_requires_grad():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        minitorch.embedding_renorm_(minitorch.ones(2, 2, requires_grad=True), minitorch.tensor([0]), 1.0, 2.0)
