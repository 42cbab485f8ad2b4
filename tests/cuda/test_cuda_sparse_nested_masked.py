"""Sparse CSR and COO softmax, nested tensors and torch.masked on the CUDA device against the CPU:
each is a composite of device ops (repeat_interleave, bincount, scatter_reduce, pad, masked_fill,
...), so the results and gradients must come out on the device equal to the CPU's, and no index
or mask tensor may be left on the CPU."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

RNG = np.random.default_rng(20)
X = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((4, 5)).astype(np.float32)
MASK = np.array([[True, False, True, True], [True, True, True, False], [False, True, False, True]])


def sparse_results(device):
    x = minitorch.tensor(X * (np.abs(X) > 0.5), device=device, requires_grad=True)
    b = minitorch.tensor(B, device=device, requires_grad=True)
    csr = x.to_sparse_csr()
    assert csr.crow_indices().device.type == device and csr.col_indices().device.type == device
    product = csr @ b
    soft = minitorch.sparse.softmax(x.to_sparse(), 1).to_dense()
    square = minitorch.sparse.mm(x.to_sparse(), x.t().to_sparse())
    scaled = (x.to_sparse() * b[:3, :4]).to_dense()
    (product.sum() + (soft * soft).sum() + square.to_dense().sum() + scaled.sum()).backward()
    return [product, soft, csr.to_sparse_csc().row_indices(), square.indices(), square.values(), scaled, x.grad,
            b.grad]


def nested_results(device):
    parts = [minitorch.tensor(RNG.standard_normal((n, 4)).astype(np.float32), device=device, requires_grad=True)
             for n in (2, 4, 1)]
    nt = minitorch.nested.as_nested_tensor(parts)
    linear = minitorch.nn.Linear(4, 6).to(device)
    out = minitorch.nested.to_padded_tensor(linear(nt).softmax(-1) * 2, -1.0)
    out.sum().backward()
    with minitorch.no_grad():
        attn = minitorch.nn.MultiheadAttention(4, 2, batch_first=True).to(device).eval()
        plain = minitorch.nested.nested_tensor([p.detach() for p in parts])
        attended = minitorch.nested.to_padded_tensor(attn(plain, plain, plain)[0], 0.0)
    return [out, attended] + [p.grad for p in parts]


def masked_results(device):
    x = minitorch.tensor(X, device=device, requires_grad=True)
    m = minitorch.tensor(MASK, device=device)
    outs = [minitorch.masked.sum(x, 1, mask=m), minitorch.masked.amax(x, 0, mask=m),
            minitorch.masked.var(x, 1, mask=m), minitorch.masked.softmax(x, 1, mask=m),
            minitorch.masked.masked_tensor(x, m).mean(1).get_data()]
    sum(o.sum() for o in outs).backward()
    return outs + [x.grad]


@pytest.mark.parametrize("results", [sparse_results, nested_results, masked_results])
def test_on_cuda_matches_the_cpu(results):
    state = RNG.bit_generator.state
    minitorch.manual_seed(0)
    on_cpu = results("cpu")
    RNG.bit_generator.state = state
    minitorch.manual_seed(0)
    on_cuda = results("cuda")
    assert_same(tuple(on_cuda), tuple(on_cpu), rtol=1e-5, atol=1e-5)
