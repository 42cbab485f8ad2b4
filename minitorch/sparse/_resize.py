"""A sparse COO tensor's in-place resizes, as PyTorch's: sparse_resize_ (sizes may grow while the
tensor has entries, the numbers of sparse and dense dims may change only when it has none),
sparse_resize_and_clear_ (any size, no entries left) and resize_as_sparse_ (another tensor's size
and dims). A strided tensor has none of them (PyTorch's errors)."""
from __future__ import annotations

from .. import _C
from . import SparseTensor


def _check_length(size, sparse_dim: int, dense_dim: int) -> list:
    size = [int(s) for s in size]
    if len(size) != sparse_dim + dense_dim:
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                           f"sparse_dim = {sparse_dim}, dense_dim = {dense_dim}")
    return size


def _emptied(self: SparseTensor, size: list, sparse_dim: int) -> SparseTensor:
    indices = _C.zeros((sparse_dim, 0), dtype=_C.int64, device=self._i.device)
    values = _C.zeros([0] + size[sparse_dim:], dtype=self._v.dtype, device=self._v.device)
    self._size = _C.Size(size)
    return self._rebind(indices, values, True)


def sparse_resize_(self: SparseTensor, size, sparse_dim: int, dense_dim: int) -> SparseTensor:
    """self takes `size`, with sparse_dim sparse and dense_dim dense dims: its entries stay (a dense
    dim that grows is zero-filled, where PyTorch's storage resize leaves it unset)."""
    size = _check_length(size, sparse_dim, dense_dim)
    if self._i.shape[1] == 0:
        return _emptied(self, size, sparse_dim)
    for kind, old, new in (("sparse", self.sparse_dim(), sparse_dim), ("dense", self.dense_dim(), dense_dim)):
        if old != new:
            raise RuntimeError(f"changing the number of {kind} dimensions (from {old} to {new}) on a non-empty "
                               "sparse tensor is not supported.")
    for kind, old, new in (("sparse", list(self.shape[:sparse_dim]), size[:sparse_dim]),
                           ("dense", list(self.shape[sparse_dim:]), size[sparse_dim:])):
        if any(n < o for o, n in zip(old, new)):
            raise RuntimeError(f"shrinking the size of {kind} dimensions (from {old} to {new}) on a non-empty sparse "
                               "tensor is not supported.")
    values = self._v
    if size[sparse_dim:] != list(values.shape[1:]):
        grown = _C.zeros([values.shape[0]] + size[sparse_dim:], dtype=values.dtype, device=values.device)
        grown[(slice(None),) + tuple(slice(0, n) for n in values.shape[1:])] = values
        values = grown
    self._size = _C.Size(size)
    return self._rebind(self._i, values, self._coalesced)


def sparse_resize_and_clear_(self: SparseTensor, size, sparse_dim: int, dense_dim: int) -> SparseTensor:
    return _emptied(self, _check_length(size, sparse_dim, dense_dim), sparse_dim)


def resize_as_sparse_(self, the_template):
    """self resized (sparse_resize_) to the template's size, sparse and dense dims."""
    if not isinstance(self, SparseTensor):
        raise RuntimeError("resize_as_sparse_: self must be a sparse COO tensor, got a strided one")
    return sparse_resize_(self, tuple(the_template.shape), the_template.sparse_dim(), the_template.dense_dim())


def install(namespace: dict, tensor_cls) -> None:
    from .._api_names import _not_for_strided

    SparseTensor.sparse_resize_ = sparse_resize_
    SparseTensor.sparse_resize_and_clear_ = sparse_resize_and_clear_
    SparseTensor.resize_as_sparse_ = resize_as_sparse_
    tensor_cls.sparse_resize_ = _not_for_strided("sparse_resize_")
    tensor_cls.sparse_resize_and_clear_ = _not_for_strided("sparse_resize_and_clear_")
    tensor_cls.resize_as_sparse_ = resize_as_sparse_
    namespace["resize_as_sparse_"] = resize_as_sparse_
