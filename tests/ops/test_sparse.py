"""Sparse COO tensors (minitorch.sparse) against PyTorch and NumPy: sparse_coo_tensor (its checks
and messages, inferred sizes), to_sparse, coalesce (repeated indices summed), to_dense, the
products sparse @ dense and dense @ sparse through @, mm, spmm and sparse.mm (with gradients of
the values and of the dense operand), dense + sparse, scaling, t(), and the layout attributes."""
import numpy as np
import pytest

import minitorch
from helpers import check, check_grad

torch = pytest.importorskip("torch")
rng = np.random.default_rng(0)

# a 3x4 matrix with a repeated entry (1, 2) and an explicit zero, in no particular order
IDX = [[2, 1, 0, 1, 2], [3, 2, 0, 2, 1]]
VALS = np.array([1.5, -2.0, 3.0, 0.5, 0.0])


def sparse(lib, values, size=(3, 4)):
    return lib.sparse_coo_tensor(IDX, values, size)


def dense_ref(values, size=(3, 4)):
    out = np.zeros(size)
    np.add.at(out, tuple(np.array(IDX)), values)
    return out


def test_construct_coalesce_and_to_dense():
    s = sparse(minitorch, minitorch.tensor(VALS))
    t = sparse(torch, torch.tensor(VALS))
    assert s.layout == minitorch.sparse_coo and repr(s.layout) == "minitorch.sparse_coo"
    assert s.is_sparse and not minitorch.ones(2).is_sparse and minitorch.ones(2).layout == minitorch.strided
    assert tuple(s.shape) == (3, 4) and s.dtype == minitorch.float64 and s._nnz() == 5
    assert s.is_coalesced() is t.is_coalesced() is False
    np.testing.assert_array_equal(s.to_dense().numpy(), t.to_dense().numpy())
    c, tc = s.coalesce(), t.coalesce()
    assert c.is_coalesced() and c._nnz() == tc._nnz() == 4
    np.testing.assert_array_equal(c.indices().numpy(), tc.indices().numpy())
    np.testing.assert_array_equal(c.values().numpy(), tc.values().numpy())
    with pytest.raises(RuntimeError, match="Cannot get indices on an uncoalesced tensor"):
        s.indices()
    for values in ([1.0, 2, 3, 4, 5], [1, 2, 3, 4, 5]):
        got = repr(sparse(minitorch, minitorch.tensor(values)).to(minitorch.float64))
        assert got.replace("minitorch.", "torch.") == repr(sparse(torch, torch.tensor(values)).to(torch.float64))


def test_inferred_size_dtype_and_errors():
    s = minitorch.sparse_coo_tensor([[0, 3], [1, 1]], [1, 2])
    t = torch.sparse_coo_tensor([[0, 3], [1, 1]], [1, 2])
    assert tuple(s.shape) == tuple(t.shape) == (4, 2) and s.dtype == minitorch.int64 and t.dtype == torch.int64
    args = ([[0, 1]], [1.0, 2.0, 3.0], (2,))
    with pytest.raises(RuntimeError) as got:
        minitorch.sparse_coo_tensor(*args)
    with pytest.raises(RuntimeError) as want:
        torch.sparse_coo_tensor(*args)
    assert str(got.value) == str(want.value)
    with pytest.raises(RuntimeError, match="indices must be sparse_dim x nnz"):
        minitorch.sparse_coo_tensor([0, 1], [1.0, 2.0], (2,))
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        minitorch.sparse_coo_tensor([[0, 2]], [1.0, 2.0], (2,))


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_to_sparse_round_trip(layout):
    a = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.4)
    check(lambda m, x: x.to_sparse().to_dense(), lambda x: x, [a], layout=layout)
    s, t = minitorch.tensor(a).to_sparse(), torch.tensor(a).to_sparse()
    assert s.is_coalesced() and s._nnz() == t._nnz()
    np.testing.assert_array_equal(s.indices().numpy(), t.indices().numpy())
    diag = minitorch.diag(minitorch.tensor([1.0, 0.0, 2.0])).to_sparse()
    np.testing.assert_array_equal(diag.indices().numpy(), [[0, 2], [0, 2]])


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_sparse_times_dense(layout):
    b = rng.standard_normal((4, 6))
    ref = dense_ref(VALS) @ b
    for name in ("matmul_op", "mm", "spmm", "sparse_mm"):
        def fn(m, v, d, name=name):
            s = sparse(m, v)
            return {"matmul_op": lambda: s @ d, "mm": lambda: m.mm(s, d), "spmm": lambda: m.spmm(s, d),
                    "sparse_mm": lambda: m.sparse.mm(s, d)}[name]()
        check(fn, lambda v, d: ref, [VALS, b], layout=layout)
    check_grad(lambda m, v, d: m.sparse.mm(sparse(m, v), d), [VALS, b])


def test_dense_times_sparse_and_sparse_times_sparse():
    a = rng.standard_normal((2, 3))
    check(lambda m, d, v: d @ sparse(m, v), lambda d, v: d @ dense_ref(v), [a, VALS])
    check_grad(lambda m, d, v: d @ sparse(m, v), [a, VALS])
    sq = [[0, 1, 1], [1, 0, 2]]
    s = minitorch.sparse_coo_tensor(sq, [1.0, 2.0, 3.0], (3, 3))
    t = torch.sparse_coo_tensor(sq, [1.0, 2.0, 3.0], (3, 3))
    np.testing.assert_allclose((s @ minitorch.eye(3) @ s).numpy(), (t @ torch.eye(3) @ t).numpy())
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        minitorch.mm(s, minitorch.ones(4, 1))


def test_dense_plus_sparse_and_scaling():
    a = rng.standard_normal((3, 4))
    check(lambda m, d, v: d + sparse(m, v), lambda d, v: d + dense_ref(v), [a, VALS])
    check(lambda m, d, v: d - sparse(m, v), lambda d, v: d - dense_ref(v), [a, VALS])
    # int64 sparse + float dense promotes as PyTorch's: the GCN example's eye(V) + adjacency
    check(lambda m, d: m.eye(3, 4) + m.sparse_coo_tensor(IDX, [1, 1, 1, 1, 1], (3, 4), dtype=m.int64),
          lambda d: np.eye(3, 4) + dense_ref(np.ones(5)), [a], dtype=minitorch.float32)
    with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
        sparse(minitorch, minitorch.tensor(VALS)) + minitorch.tensor(a)
    s = sparse(minitorch, minitorch.tensor(VALS))
    for scaled, want in ((s * 2, 2 * dense_ref(VALS)), (2 * s, 2 * dense_ref(VALS)), (-s, -dense_ref(VALS)),
                         (s / 4, dense_ref(VALS) / 4), (s + s, 2 * dense_ref(VALS)), (s.t(), dense_ref(VALS).T)):
        assert isinstance(scaled, minitorch.sparse.SparseTensor)
        np.testing.assert_allclose(scaled.to_dense().numpy(), want)


def test_to_and_detach_keep_sparsity():
    s = sparse(minitorch, minitorch.tensor(VALS)).to(minitorch.float32)
    assert s.is_sparse and s.dtype == minitorch.float32 and s.device.type == "cpu"
    v = minitorch.tensor(VALS, requires_grad=True)
    s = sparse(minitorch, v)
    assert s.requires_grad and not s.detach().requires_grad
    s.to_dense().sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), np.ones(5))
