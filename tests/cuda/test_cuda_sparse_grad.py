"""Sparse gradients on the CUDA device against the CPU: embedding(sparse=True) and
EmbeddingBag(sparse=True) give the weight a sparse .grad whose indices and values live on the
device, sums of them (sparse + sparse, dense + sparse) run there, and SparseAdam, SGD with
momentum and Adagrad step the same rows to the CPU's values."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)


def run(device):
    minitorch.manual_seed(0)
    emb = minitorch.nn.Embedding(8, 3, sparse=True, padding_idx=1).to(device)
    bag = minitorch.nn.EmbeddingBag(8, 3, mode="mean", sparse=True).to(device)
    opts = [minitorch.optim.SparseAdam([emb.weight], lr=0.1),
            minitorch.optim.SGD([bag.weight], lr=0.1, momentum=0.9)]
    rows = np.random.default_rng(5).integers(0, 8, (4, 5))
    seen = []
    for k in range(4):
        idx = minitorch.tensor(rows[k], device=device)
        for opt in opts:
            opt.zero_grad(set_to_none=False)
        (emb(idx) ** 2).sum().backward()
        (emb(idx[:2]) * 3).sum().backward()  # sparse + sparse
        bag(idx, minitorch.tensor([0, 2], device=device)).pow(2).sum().backward()
        g = emb.weight.grad
        assert g.is_sparse and g.device.type == device and g._indices().device.type == device
        seen += [g.to_dense(), bag.weight.grad.to_dense()]
        for opt in opts:
            opt.step()
    w = minitorch.ones(8, 3, device=device, requires_grad=True)
    ((w * w).sum() + minitorch.nn.functional.embedding(minitorch.tensor([2, 2], device=device), w,
                                                       sparse=True).sum()).backward()
    adagrad = minitorch.optim.Adagrad([emb.weight], lr=0.1)
    adagrad.step()
    return seen + [emb.weight, bag.weight, w.grad, opts[0].state[emb.weight]["exp_avg_sq"]]


def test_sparse_gradients_on_cuda_match_the_cpu():
    assert_same(tuple(run("cuda")), tuple(run("cpu")), rtol=1e-5, atol=1e-6)
