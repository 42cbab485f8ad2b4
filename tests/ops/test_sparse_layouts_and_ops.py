"""Sparse tensors beyond construction (minitorch.sparse) against PyTorch and NumPy: torch.sparse.sum
over some or all dims, softmax / log_softmax over the specified entries, addmm, Tensor.sparse_mask,
a sparse leaf's gradient (sparse, on its indices), and the CSR / CSC layouts: sparse_csr_tensor,
sparse_csc_tensor, to_sparse_csr / to_sparse_csc / to_sparse(layout=), crow_indices, col_indices,
ccol_indices, row_indices, to_dense, the conversions to COO, CSR @ dense with gradients, printing."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import check, check_grad

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Sparse")  # PyTorch's beta and invariant-check warnings
rng = np.random.default_rng(0)

from test_sparse import IDX, VALS, dense_ref  # noqa: E402  (a 3x4 matrix, a repeated entry, an explicit 0)
from test_sparse import sparse as coo  # noqa: E402


def softmax_ref(values, dim, log=False):
    """Softmax along dim of the specified (coalesced) entries of dense_ref; others count as -inf."""
    d = dense_ref(values)
    present = np.zeros(d.shape, bool)
    present[tuple(np.array(IDX))] = True
    x = np.where(present, d, -np.inf)
    x = x - x.max(dim, keepdims=True)
    out = x - np.log(np.exp(x).sum(dim, keepdims=True)) if log else np.exp(x) / np.exp(x).sum(dim, keepdims=True)
    return np.where(present, out, 0.0)


def same_sparse(got, want):
    assert got.layout._name == str(want.layout).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape) and got._nnz() == want._nnz()
    np.testing.assert_allclose(got.to_dense().detach().numpy(), want.to_dense().detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_sparse_sum(dim):
    want = dense_ref(VALS).sum() if dim is None else dense_ref(VALS).sum(dim)
    got = check(lambda m, v: m.sparse.sum(coo(m, v), dim) if dim is None or isinstance(dim, tuple)
                else m.sparse.sum(coo(m, v), dim).to_dense(), lambda v: want, [VALS])
    assert got.layout == minitorch.strided
    if isinstance(dim, int):
        s, t = minitorch.sparse.sum(coo(minitorch, minitorch.tensor(VALS)), dim), torch.sparse.sum(
            coo(torch, torch.tensor(VALS)), dim)
        assert s.is_coalesced() and t.is_coalesced()
        np.testing.assert_array_equal(s.indices().numpy(), t.indices().numpy())
    check_grad(lambda m, v: m.sparse.sum(coo(m, v), 1).to_dense(), [VALS])
    with pytest.raises(IndexError, match="Dimension out of range"):
        minitorch.sparse.sum(coo(minitorch, minitorch.tensor(VALS)), 2)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_sparse_softmax(dim, log):
    name = "log_softmax" if log else "softmax"
    for values in (VALS, np.array([1e3, -1e3, 0.0, 5.0, np.inf])):
        if np.isinf(values).any() and log:
            continue  # inf - inf: NaN in both, compared by the softmax case
        check(lambda m, v: getattr(m.sparse, name)(coo(m, v), dim).to_dense(),
              lambda v: softmax_ref(v, dim, log), [values])
    if dim >= 0:
        check_grad(lambda m, v: getattr(m.sparse, name)(coo(m, v), dim).to_dense(), [VALS])
    else:  # PyTorch 2.13's backward is wrong for a negative dim: -1 must give what 1 gives
        grads = []
        for d in (dim, dim % 2):
            v = minitorch.tensor(VALS, requires_grad=True)
            (getattr(minitorch.sparse, name)(coo(minitorch, v), d).to_dense() * minitorch.arange(12.0).view(3, 4)
             ).sum().backward()
            grads.append(v.grad.numpy())
        np.testing.assert_array_equal(*grads)
    got = getattr(minitorch.sparse, name)(coo(minitorch, minitorch.tensor(VALS)), dim, dtype=minitorch.float32)
    assert got.dtype == minitorch.float32 and got.is_coalesced()
    empty = minitorch.sparse_coo_tensor(minitorch.zeros(2, 0, dtype=minitorch.int64), minitorch.zeros(0), (2, 2))
    assert minitorch.sparse.softmax(empty, 0)._nnz() == 0


def test_addmm_and_sparse_mask():
    mat, b = rng.standard_normal((3, 5)), rng.standard_normal((4, 5))
    check(lambda m, a, v, d: m.sparse.addmm(a, coo(m, v), d, beta=0.5, alpha=2.0),
          lambda a, v, d: 0.5 * a + 2.0 * dense_ref(v) @ d, [mat, VALS, b])
    check_grad(lambda m, a, v, d: m.sparse.addmm(a, coo(m, v), d, beta=0.5, alpha=2.0), [mat, VALS, b])
    x = rng.standard_normal((3, 4))
    mask = [coo(lib, lib.tensor(VALS)) for lib in (minitorch, torch)]
    got, want = minitorch.tensor(x).sparse_mask(mask[0]), torch.tensor(x).sparse_mask(mask[1])
    same_sparse(got, want)
    np.testing.assert_array_equal(got._indices().numpy(), want._indices().numpy())
    assert got.is_coalesced() is want.is_coalesced() is False
    check_grad(lambda m, d: d.sparse_mask(coo(m, m.tensor(VALS))).to_dense(), [x])
    csr = [minitorch.tensor(dense_ref(VALS)).to_sparse_csr(), torch.tensor(dense_ref(VALS)).to_sparse_csr()]
    same_sparse(minitorch.tensor(x).sparse_mask(csr[0]), torch.tensor(x).sparse_mask(csr[1]))
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match=r"sparse_mask\(\): operands have incompatible sizes"):
            lib.ones(4, 3).sparse_mask(coo(lib, lib.tensor(VALS)))


def test_sparse_leaf_gradient():
    d = rng.standard_normal((4, 2))
    grads = []
    for lib in (minitorch, torch):
        s = lib.sparse_coo_tensor(IDX, lib.tensor(VALS), (3, 4), requires_grad=True)
        assert s.is_leaf and s.requires_grad and s.grad is None
        dense = lib.tensor(d, requires_grad=True)
        (lib.sparse.mm(s, dense) * lib.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
        assert s.grad.layout == lib.sparse_coo and tuple(s.grad.shape) == (3, 4)
        grads.append((s.grad, dense.grad))
    np.testing.assert_array_equal(grads[0][0]._indices().numpy(), grads[1][0]._indices().numpy())
    np.testing.assert_allclose(grads[0][0]._values().numpy(), grads[1][0]._values().numpy())
    np.testing.assert_allclose(grads[0][1].numpy(), grads[1][1].numpy())


CROW, COL, CVALS = [0, 2, 2, 5], [1, 3, 0, 1, 2], np.array([1.0, -2.0, 3.0, 0.5, 4.0])


def csr_ref(values):
    out = np.zeros((3, 4))
    rows = np.repeat(np.arange(3), np.diff(CROW))
    out[rows, COL] = values
    return out


def test_csr_construct_accessors_and_print():
    s = minitorch.sparse_csr_tensor(CROW, COL, minitorch.tensor(CVALS), (3, 4))
    t = torch.sparse_csr_tensor(CROW, COL, torch.tensor(CVALS), (3, 4))
    assert s.layout == minitorch.sparse_csr and repr(s.layout) == "minitorch.sparse_csr"
    assert s.is_sparse_csr and not s.is_sparse and not minitorch.ones(1).is_sparse_csr
    assert tuple(s.shape) == (3, 4) and s._nnz() == 5 and s.dim() == 2 and s.dtype == minitorch.float64
    for name in ("crow_indices", "col_indices", "values"):
        np.testing.assert_array_equal(getattr(s, name)().numpy(), getattr(t, name)().numpy())
    np.testing.assert_array_equal(s.to_dense().numpy(), csr_ref(CVALS))
    assert repr(s).replace("minitorch.", "torch.") == repr(t)
    inferred = minitorch.sparse_csr_tensor(CROW, COL, [1.0, 2, 3, 4, 5])
    assert tuple(inferred.shape) == tuple(torch.sparse_csr_tensor(CROW, COL, [1.0, 2, 3, 4, 5]).shape) == (3, 4)
    empty = [lib.zeros(2, 3).to_sparse_csr() for lib in (minitorch, torch)]
    assert repr(empty[0]).replace("minitorch.", "torch.") == repr(empty[1])
    for lib, x in ((minitorch, s), (torch, t)):
        for call in (x.ccol_indices, x.row_indices, x.indices, lib.ones(2, 2).crow_indices,
                     x.to_sparse_csc().col_indices):
            with pytest.raises(RuntimeError) as err:
                call()
            assert "expected sparse" in str(err.value)
    messages = []
    for lib, x in ((minitorch, s), (torch, t)):
        for call in (x.ccol_indices, lib.ones(2, 2).crow_indices, x.to_sparse_csc().col_indices, x.indices):
            with pytest.raises(RuntimeError) as err:
                call()
            messages.append(str(err.value))
    assert messages[:4] == messages[4:]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_to_csr_csc_round_trips(layout):
    a = rng.standard_normal((4, 5)) * (rng.random((4, 5)) < 0.5)
    for name in ("to_sparse_csr", "to_sparse_csc"):
        check(lambda m, x: getattr(x, name)().to_dense(), lambda x: x, [a], layout=layout)
        check(lambda m, x: getattr(x.to_sparse(), name)().to_sparse_coo().to_dense(), lambda x: x, [a], layout=layout)
        s, t = getattr(minitorch.tensor(a), name)(), getattr(torch.tensor(a), name)()
        assert repr(s).replace("minitorch.", "torch.") == repr(t)
    s = minitorch.tensor(a).to_sparse(layout=minitorch.sparse_csc)
    t = torch.tensor(a).to_sparse(layout=torch.sparse_csc)
    for name in ("ccol_indices", "row_indices", "values"):
        np.testing.assert_array_equal(getattr(s, name)().numpy(), getattr(t, name)().numpy())
    same_sparse(s.t(), t.t())
    same_sparse(s.to_sparse_csr(), t.to_sparse_csr())
    coo_m, coo_t = s.to_sparse_coo(), t.to_sparse_coo()
    assert coo_m.is_coalesced()
    np.testing.assert_array_equal(coo_m.indices().numpy(), coo_t.coalesce().indices().numpy())


def test_csr_matmul_and_gradients():
    b = rng.standard_normal((4, 3))
    check(lambda m, v, d: m.sparse_csr_tensor(CROW, COL, v, (3, 4)) @ d, lambda v, d: csr_ref(v) @ d, [CVALS, b])
    check(lambda m, v, d: m.mm(m.sparse_csr_tensor(CROW, COL, v, (3, 4)), d), lambda v, d: csr_ref(v) @ d,
          [CVALS, b])
    check_grad(lambda m, v, d: m.sparse_csr_tensor(CROW, COL, v, (3, 4)) @ d, [CVALS, b])
    a = rng.standard_normal((2, 3))
    check(lambda m, d, v: d @ m.sparse_csr_tensor(CROW, COL, v, (3, 4)), lambda d, v: d @ csr_ref(v), [a, CVALS])
    csc = [lib.tensor(csr_ref(CVALS)).to_sparse_csc() for lib in (minitorch, torch)]
    np.testing.assert_allclose((csc[0] @ minitorch.tensor(b)).numpy(), (csc[1] @ torch.tensor(b)).numpy())
    grads = []
    for lib in (minitorch, torch):
        s = lib.sparse_csr_tensor(CROW, COL, lib.tensor(CVALS), (3, 4), requires_grad=True)
        (s @ lib.tensor(b)).sum().backward()
        grads.append(s.grad)
    # PyTorch's gradient of a CSR leaf is dense (every element); minitorch's is CSR, the same
    # numbers at the specified entries
    assert grads[0].layout == minitorch.sparse_csr and grads[1].layout == torch.strided
    rows = np.repeat(np.arange(3), np.diff(CROW))
    np.testing.assert_allclose(grads[0].values().numpy(), grads[1].numpy()[rows, COL])
    with pytest.raises(RuntimeError, match="shapes cannot be multiplied"):
        minitorch.sparse_csr_tensor(CROW, COL, CVALS, (3, 4)) @ minitorch.ones(3, 1, dtype=minitorch.float64)
    with pytest.raises(RuntimeError, match="col_indices and values must have the same number of elements"):
        minitorch.sparse_csr_tensor(CROW, COL, [1.0, 2.0])


HYBRID_IDX = [[0, 2, 0], [1, 0, 1]]  # 2 sparse dims, a repeated entry (0, 1); values (3, 2)


def hybrid_ref(v):
    out = np.zeros((3, 2, 2))
    np.add.at(out, tuple(np.array(HYBRID_IDX)), v)
    return out


def test_hybrid_coo():
    v = rng.standard_normal((3, 2))
    hybrid = lambda lib, vals: lib.sparse_coo_tensor(HYBRID_IDX, vals, (3, 2, 2))  # noqa: E731
    check(lambda m, x: hybrid(m, x).to_dense(), hybrid_ref, [v])
    s, t = hybrid(minitorch, minitorch.tensor(v)), hybrid(torch, torch.tensor(v))
    assert (s.sparse_dim(), s.dense_dim()) == (t.sparse_dim(), t.dense_dim()) == (2, 1)
    # the same words; where lines break may differ, "minitorch.float64" being longer than "torch.float64"
    assert repr(s.coalesce()).replace("minitorch.", "torch.").split() == repr(t.coalesce()).split()
    assert tuple(minitorch.sparse_coo_tensor(HYBRID_IDX, minitorch.tensor(v)).shape) == (3, 2, 2)
    for dim in (0, 2, (0, 1), (1, 2)):
        check(lambda m, x: (lambda r: r.to_dense() if r.layout == m.sparse_coo else r)(
            m.sparse.sum(hybrid(m, x).coalesce(), dim)), lambda x: hybrid_ref(x).sum(dim), [v])
    for dim in (0, 2):
        got = minitorch.sparse.softmax(s, dim).to_dense()
        want = torch.sparse.softmax(t.coalesce(), dim).to_dense()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    check_grad(lambda m, x: m.sparse.softmax(hybrid(m, x), 2).to_dense(), [v])
    same_sparse(s.to_sparse_csr(), t.coalesce().to_sparse_csr())
    d = np.arange(6.0).reshape(3, 2) * np.array([[1.0], [0.0], [1.0]])
    got, want = minitorch.tensor(d).to_sparse(1), torch.tensor(d).to_sparse(1)
    assert got.dense_dim() == want.dense_dim() == 1
    np.testing.assert_array_equal(got.indices().numpy(), want.indices().numpy())
    np.testing.assert_array_equal(got.values().numpy(), want.values().numpy())
    messages = []
    for lib in (minitorch, torch):
        for call in (lambda: lib.sparse_coo_tensor(HYBRID_IDX, lib.tensor(v), (3, 2)),
                     lambda: lib.sparse_coo_tensor(HYBRID_IDX, lib.tensor(v), (3, 2, 3)),
                     lambda: hybrid(lib, lib.tensor(v)).transpose(1, 2),
                     lambda: hybrid(lib, lib.tensor(v)).t()):
            with pytest.raises(RuntimeError) as err:
                call()
            messages.append(str(err.value))
    assert messages[:4] == messages[4:]


def test_printing_matches_torch():
    def cases(lib):
        leaf = lib.sparse_coo_tensor([[0, 1]], lib.tensor([1.0, 2.0]), (3,), requires_grad=True)
        return [leaf, leaf * 2, lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 2)),
                lib.sparse_csr_tensor([0, 1, 2], [0, 1], lib.tensor([1, 2])),
                lib.sparse_coo_tensor([[0, 1]], lib.tensor([True, False]), (2,)),
                lib.tensor(np.arange(12.0).reshape(3, 4)).to_sparse_csr()]

    for got, want in zip(cases(minitorch), cases(torch)):
        assert repr(got).replace("minitorch.", "torch.") == repr(want)


def test_sparse_products_stay_sparse():
    sq = [[0, 1, 1, 0], [1, 0, 2, 1]]  # a repeated entry (0, 1)
    vals = np.array([1.0, 2.0, 3.0, 4.0])
    dense = rng.standard_normal((3, 3))
    ops = {"sparse_mm": lambda lib, s: lib.sparse.mm(s, s), "matmul": lambda lib, s: s @ s,
           "mul_sparse": lambda lib, s: s * s, "mul_dense": lambda lib, s: s * lib.tensor(dense),
           "rmul_dense": lambda lib, s: lib.tensor(dense) * s, "mul_row": lambda lib, s: s * lib.tensor(dense[0]),
           "mul_col": lambda lib, s: s * lib.tensor(dense[:, :1])}
    for name, op in ops.items():
        got = op(minitorch, minitorch.sparse_coo_tensor(sq, minitorch.tensor(vals), (3, 3)))
        want = op(torch, torch.sparse_coo_tensor(sq, torch.tensor(vals), (3, 3)))
        assert got.layout == minitorch.sparse_coo and want.layout == torch.sparse_coo, name
        np.testing.assert_allclose(got.to_dense().numpy(), want.to_dense().numpy(), err_msg=name)
    ref = np.zeros((3, 3))
    np.add.at(ref, tuple(np.array(sq)), vals)
    check(lambda m, v: m.sparse.mm(m.sparse_coo_tensor(sq, v, (3, 3)), m.sparse_coo_tensor(sq, v, (3, 3))
                                   ).to_dense(), lambda v: ref @ ref, [vals])
    check_grad(lambda m, v: m.sparse.mm(m.sparse_coo_tensor(sq, v, (3, 3)), m.sparse_coo_tensor(sq, v, (3, 3))
                                        ).to_dense(), [vals])
    grads = []  # PyTorch's gradient of the dense operand is sparse; minitorch's is dense, the same numbers
    for lib in (minitorch, torch):
        v, d = lib.tensor(vals, requires_grad=True), lib.tensor(dense, requires_grad=True)
        ((lib.sparse_coo_tensor(sq, v, (3, 3)) * d).to_dense() * lib.tensor(dense)).sum().backward()
        grads.append((v.grad.numpy(), d.grad.to_dense().numpy()))
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w)
    empty = minitorch.sparse_coo_tensor(minitorch.zeros(2, 0, dtype=minitorch.int64), minitorch.zeros(0), (3, 3))
    assert (minitorch.sparse_coo_tensor(sq, minitorch.tensor(vals), (3, 3)).float() * empty)._nnz() == 0
    assert minitorch.sparse.mm(empty, empty)._nnz() == 0
    for lib in (minitorch, torch):
        with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of tensor b \(3\) at "
                                               "non-singleton dimension 0"):
            lib.sparse_coo_tensor(sq, lib.tensor(vals), (3, 3)) * lib.ones(2, 3, dtype=lib.float64)
