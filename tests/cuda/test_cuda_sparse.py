"""Sparse COO tensors (minitorch.sparse) on the CUDA device against the CPU: indices and values
move together, and the products, to_dense, coalesce and dense + sparse run on the device through
their ops (index_add, index_put_, unique) with the CPU's values and gradients; the index_select
of a row of an index matrix (a view with an offset) is read from its offset there too."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

IDX = [[2, 1, 0, 1, 2], [3, 2, 0, 2, 1]]
RNG = np.random.default_rng(19)


def run(device):
    values = minitorch.tensor([1.5, -2.0, 3.0, 0.5, 0.0], device=device, requires_grad=True)
    dense = minitorch.tensor(RNG.standard_normal((4, 6)), dtype=minitorch.float32, device=device)
    dense.requires_grad_(True)
    s = minitorch.sparse_coo_tensor(IDX, values, (3, 4))
    assert s.device.type == device and s._indices().device.type == device
    product = minitorch.spmm(s, dense)
    (product * product).sum().backward()
    left = minitorch.ones(2, 3, device=device) @ s
    c = s.coalesce()
    return [product, left, s.to_dense(), c.indices(), c.values(), minitorch.eye(3, 4, device=device) + s,
            values.grad, dense.grad, minitorch.tensor(np.eye(3), device=device).to_sparse().indices()]


def test_sparse_on_cuda_matches_the_cpu():
    state = RNG.bit_generator.state
    on_cpu = run("cpu")
    RNG.bit_generator.state = state
    on_cuda = run("cuda")
    assert_same(tuple(on_cuda), tuple(on_cpu), rtol=1e-6, atol=1e-6)


def test_index_select_of_an_offset_row_on_cuda():
    rows = minitorch.tensor([[0, 1, 0], [3, 4, 2]], device="cuda")
    x = minitorch.arange(10.0, device="cuda").view(5, 2)
    np.testing.assert_array_equal(x.index_select(0, rows[1]).cpu().numpy(), np.arange(10.0).reshape(5, 2)[[3, 4, 2]])
