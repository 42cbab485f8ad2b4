"""copy_ with sparse tensors, against PyTorch (minitorch/sparse/_copy.py): a COO tensor takes the
source's sizes, entries and coalesced flag in its own dtype; a compressed one takes a source of its
layout with as many entries; a sparse and a dense tensor (or a number) refuse each other with
PyTorch's messages; a module with a sparse buffer loads a state_dict."""
import warnings

import numpy as np
import pytest

import minitorch
from helpers import torch

pytestmark = pytest.mark.skipif(torch is None, reason="compares with PyTorch")

IDX = [[0, 1, 1], [2, 0, 2]]
VAL = [3.0, 4.0, 5.0]


def coo(lib, size=(2, 3), dtype=None, idx=IDX, val=VAL):
    return lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(val, dtype=dtype), size)


def empty_coo(lib, size=(2, 3), dtype=None, sparse_dim=2):
    values = lib.zeros((0,) + tuple(size[sparse_dim:]), dtype=dtype)
    return lib.sparse_coo_tensor(lib.zeros(sparse_dim, 0, dtype=lib.int64), values, size)


def state(t):
    """What a sparse tensor is: layout name, size, dtype, nnz, coalesced flag, dense values."""
    layout = str(t.layout).split(".")[-1]
    coalesced = t.is_coalesced() if layout == "sparse_coo" else None
    return layout, tuple(t.shape), str(t.dtype).split(".")[-1], t._nnz(), coalesced, t.to_dense().numpy().tolist()


def both(fn):
    """fn(lib) in both libraries: its result, or the exception's class name and message."""
    out = []
    for lib in (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out.append(fn(lib))
            except Exception as e:  # noqa: BLE001 - compared
                out.append((type(e).__name__, str(e)))
    return out


COPIES = {
    "same_size": lambda m: state(empty_coo(m).copy_(coo(m))),
    "other_size": lambda m: state(empty_coo(m, (3, 3)).copy_(coo(m))),
    "to_float64": lambda m: state(empty_coo(m, dtype=m.float64).copy_(coo(m))),
    "to_int64": lambda m: state(empty_coo(m, dtype=m.int64).copy_(coo(m))),
    "from_hybrid": lambda m: state(empty_coo(m).copy_(m.sparse_coo_tensor(m.tensor([[0, 1]]), m.ones(2, 3), (2, 3)))),
    "into_3d": lambda m: state(empty_coo(m, (2, 3, 1), sparse_dim=3).copy_(coo(m))),
    "uncoalesced": lambda m: state(empty_coo(m).copy_(coo(m, idx=[[0, 0], [1, 1]], val=[1.0, 2.0]))),
    "coalesced": lambda m: state(empty_coo(m).copy_(coo(m).coalesce())),
    "itself": lambda m: state((lambda s: s.copy_(s))(coo(m))),
    "csr": lambda m: state(coo(m).coalesce().to_sparse_csr().copy_((coo(m) * 2).coalesce().to_sparse_csr())),
    "csr_to_float64": lambda m: state(coo(m, dtype=m.float64).coalesce().to_sparse_csr().copy_(
        coo(m).coalesce().to_sparse_csr())),
    "csr_wider": lambda m: state(coo(m, (2, 4)).coalesce().to_sparse_csr().copy_(coo(m).coalesce().to_sparse_csr())),
    "csc": lambda m: state(coo(m).coalesce().to_sparse_csc().copy_((coo(m) * 3).coalesce().to_sparse_csc())),
}


@pytest.mark.parametrize("case", sorted(COPIES))
def test_sparse_copy_as_torch(case):
    got, want = both(COPIES[case])
    assert got == want


def test_sparse_copy_copies_the_entries():
    for lib in (minitorch, torch):
        src = coo(lib)
        dst = empty_coo(lib).copy_(src)
        src._values().add_(10)
        src._indices().zero_()
        np.testing.assert_array_equal(dst.to_dense().numpy(), [[0, 0, 3], [4, 0, 5]])


ERRORS = {
    "coo_from_dense": lambda m: coo(m).copy_(m.zeros(2, 3)),
    "coo_from_int_dense": lambda m: coo(m, dtype=m.float64).copy_(m.zeros(2, 3, dtype=m.int32)),
    "coo_from_float": lambda m: coo(m).copy_(2.5),
    "coo_from_int": lambda m: coo(m).copy_(3),
    "coo_from_bool": lambda m: coo(m).copy_(True),
    "coo_from_str": lambda m: coo(m).copy_("a"),
    "complex_from_bfloat16": lambda m: coo(m, dtype=m.complex64).copy_(m.zeros(2, 3, dtype=m.bfloat16)),
    "dense_from_coo": lambda m: m.zeros(2, 3).copy_(coo(m)),
    "dense_from_csr": lambda m: m.zeros(2, 3).copy_(coo(m).coalesce().to_sparse_csr()),
    "coo_from_csr": lambda m: coo(m).copy_(coo(m).coalesce().to_sparse_csr()),
    "csr_from_coo": lambda m: coo(m).coalesce().to_sparse_csr().copy_(coo(m)),
    "csr_from_dense": lambda m: coo(m).coalesce().to_sparse_csr().copy_(m.zeros(2, 3)),
    "csc_from_csr": lambda m: coo(m).coalesce().to_sparse_csc().copy_(coo(m).coalesce().to_sparse_csr()),
    "csr_nnz": lambda m: coo(m).coalesce().to_sparse_csr().copy_(coo(m, idx=[[0], [1]], val=[1.0]).to_sparse_csr()),
    "csr_rows": lambda m: coo(m, (3, 3)).coalesce().to_sparse_csr().copy_(coo(m).coalesce().to_sparse_csr()),
    "leaf": lambda m: m.sparse_coo_tensor(m.tensor(IDX), m.tensor(VAL), (2, 3), requires_grad=True).copy_(coo(m)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_sparse_copy_errors_as_torch(case):
    got, want = both(ERRORS[case])
    assert isinstance(want, tuple) and got == want


def test_leaf_copy_under_no_grad_keeps_requires_grad():
    got = []
    for lib in (minitorch, torch):
        a = lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 3), requires_grad=True)
        with lib.no_grad():
            a.copy_(coo(lib))
        got.append((state(a.detach()), a.requires_grad, a.is_leaf))
    assert got[0] == got[1]


def module_with_buffer(lib, buffer):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("adj", buffer)
            self.lin = lib.nn.Linear(3, 2)

    return M()


def test_load_state_dict_into_a_sparse_buffer():
    for lib in (minitorch, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            src = module_with_buffer(lib, coo(lib))
            dst = module_with_buffer(lib, empty_coo(lib))
            result = dst.load_state_dict(src.state_dict())
            assert not result.missing_keys and not result.unexpected_keys
            assert dst.adj.layout == lib.sparse_coo
            np.testing.assert_array_equal(dst.adj.to_dense().numpy(), [[0, 0, 3], [4, 0, 5]])
            np.testing.assert_array_equal(dst.lin.weight.detach().numpy(), src.lin.weight.detach().numpy())


LOADS = {
    "dense_into_sparse": lambda m: module_with_buffer(m, empty_coo(m)).load_state_dict(
        {**module_with_buffer(m, empty_coo(m)).state_dict(), "adj": m.zeros(2, 3)}),
    "sparse_into_dense": lambda m: module_with_buffer(m, m.zeros(2, 3)).load_state_dict(
        module_with_buffer(m, coo(m)).state_dict()),
    "size_mismatch": lambda m: module_with_buffer(m, empty_coo(m)).load_state_dict(
        module_with_buffer(m, coo(m, (2, 4))).state_dict()),
}


@pytest.mark.parametrize("case", sorted(LOADS))
def test_load_state_dict_sparse_errors_as_torch(case):
    got, want = both(LOADS[case])
    assert got[0] == want[0] == "RuntimeError"
    assert got[1].replace("minitorch", "torch") == want[1]
