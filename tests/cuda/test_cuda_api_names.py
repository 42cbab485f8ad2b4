"""The composites the API audit added (minitorch/_api_names.py, sparse/_products.py, the block
layouts, nn/_grouped_mm.py) on the CUDA device: each result on the device and equal to the CPU's,
gradients included."""
import numpy as np
import pytest

import minitorch
from helpers import assert_same

if not minitorch.cuda.is_available():
    pytest.skip(f"CUDA is not available: {minitorch.cuda._unavailable_reason()}", allow_module_level=True)

F = minitorch.nn.functional
R = np.random.default_rng(23)


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 0.5])
def test_segment_reduce(reduce, initial):
    x = np.array([[1.0, 5.0, 5.0, 2.0, -1.0, 3.0], [0.5, 0.5, 2.0, -3.0, 4.0, 4.0]], dtype=np.float32)
    grads = []
    outs = []
    for dev in ("cpu", "cuda"):
        t = minitorch.tensor(x, device=dev, requires_grad=True)
        lengths = minitorch.tensor([[3, 0, 3], [2, 2, 2]], device=dev)
        out = minitorch.segment_reduce(t, reduce, lengths=lengths, axis=1, initial=initial)
        (out * minitorch.tensor(np.arange(6.0).reshape(2, 3), dtype=minitorch.float32, device=dev)).sum().backward()
        outs.append(out.detach())
        grads.append(t.grad)
    assert_same(outs[1], outs[0])
    assert_same(grads[1], grads[0])


def test_grouped_mm():
    a, b = R.standard_normal((8, 16)).astype(np.float32), R.standard_normal((2, 16, 32)).astype(np.float32)
    outs = [F.grouped_mm(minitorch.tensor(a, device=d), minitorch.tensor(b, device=d),
                         offs=minitorch.tensor([3, 7], dtype=minitorch.int32, device=d)) for d in ("cpu", "cuda")]
    assert_same(outs[1], outs[0], atol=1e-5)


def test_block_layouts_and_sparse_products():
    x = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 3.0, 4.0]],
                 dtype=np.float32)
    for kind in ("bsr", "bsc"):
        cpu = getattr(minitorch.tensor(x), f"to_sparse_{kind}")(2)
        dev = getattr(minitorch.tensor(x, device="cuda"), f"to_sparse_{kind}")(2)
        assert_same(dev.values(), cpu.values())
        assert_same(dev.to_dense(), cpu.to_dense())
        assert_same(dev @ minitorch.ones(4, 2, device="cuda"), cpu @ minitorch.ones(4, 2))
    s = minitorch.tensor(x, device="cuda").to_sparse()
    got = minitorch.sspaddmm(minitorch.ones(4, 2, device="cuda").to_sparse(), s, minitorch.ones(4, 2, device="cuda"))
    want = minitorch.sspaddmm(minitorch.ones(4, 2).to_sparse(), s.cpu(), minitorch.ones(4, 2))
    assert_same(got.to_dense(), want.to_dense())


def test_batch_norm_update_stats_and_slice_inverse():
    x = R.standard_normal((4, 3, 5)).astype(np.float32)
    results = []
    for dev in ("cpu", "cuda"):
        rm, rv = minitorch.zeros(3, device=dev), minitorch.ones(3, device=dev)
        mean, var = minitorch.batch_norm_update_stats(minitorch.tensor(x, device=dev), rm, rv, 0.1)
        results.append((mean, var, rm, rv))
    for got, want in zip(results[1], results[0]):
        assert_same(got, want, atol=1e-6)
    base = minitorch.arange(6.0, device="cuda")
    inv = minitorch.slice_inverse(base[2:4], base, 0, 2, 4)
    assert inv.device == base.device and inv.data_ptr() == base.data_ptr()
