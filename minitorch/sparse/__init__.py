"""minitorch.sparse: sparse COO tensors (PyTorch's torch.sparse_coo layout) and the torch.sparse
functions: build an adjacency or feature matrix with sparse_coo_tensor or to_sparse(), add it to a
dense matrix, multiply it with dense ones (torch.sparse.mm, addmm, torch.spmm, torch.mm, @), sum
it, take softmax over its entries; CSR and CSC matrices live in _compressed.py.

A sparse tensor keeps PyTorch's two parts: indices, an int64 (sparse_dim, nnz) tensor, and values,
an (nnz, *dense sizes) tensor (a "hybrid" tensor has dense dims; products take none). Every
computation is an op on those parts (index_add for a product, index_put_ for to_dense, unique for
coalesce), so no element is touched in Python and gradients reach the values and the dense
operand through the ops' own formulas; a sparse leaf's .grad is sparse, as PyTorch's. Sparse @
sparse and sparse * (number, dense or sparse) stay sparse, as PyTorch's, and so do the
zero-preserving unary ops (_unary.py). A dense tensor's .grad is sparse where autograd made it
so (embedding(sparse=True)): _from_grad and _grad_parts are how csrc/python/sparse_grad.c hands
one out and takes one in. isinstance(s, Tensor) holds, as in PyTorch (_C._TensorMeta).
"""
from __future__ import annotations

import numbers

from .. import _C, _indexing
from .._device import device as _device
from .._tensor import Tensor
from . import _compressed, _copy
from ._base import SparseBase
from ._compressed import SparseCompressedTensor


class layout:
    """A tensor's memory layout, as torch.layout: minitorch.strided or minitorch.sparse_coo."""

    def __init__(self, name: str):
        self._name = name

    def __repr__(self) -> str:
        return "minitorch." + self._name

    def __reduce__(self):
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
_LAYOUTS = {"sparse_coo": sparse_coo, "sparse_csr": sparse_csr, "sparse_csc": sparse_csc, "sparse_bsr": sparse_bsr,
            "sparse_bsc": sparse_bsc}


def _tensor_of(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data if dtype is None and device is None else data.to(dtype=dtype, device=device)
    return _C.tensor(data, dtype=dtype, device=device)


class SparseTensor(SparseBase):
    """A sparse COO tensor: values[k] sits at indices[:, k]; repeated indices add up."""

    is_sparse = True
    layout = sparse_coo

    def __init__(self, indices: Tensor, values: Tensor, size, coalesced: bool):
        self._i = indices
        self._v = values
        self._size = _C.Size(size)
        self._coalesced = coalesced

    @property
    def grad(self):
        """A leaf's gradient, as PyTorch gives it: the gradient of the dense tensor at this tensor's
        coalesced indices. Repeated entries each got that same gradient, so their mean is it."""
        g = self._v.grad
        if g is None or self._coalesced:
            return None if g is None else SparseTensor(self._i, g, self._size, True)
        total = SparseTensor(self._i, g, self._size, False).coalesce()
        ones = _C.ones((g.shape[0],), dtype=g.dtype, device=g.device)
        count = SparseTensor(self._i, ones, self._size, False).coalesce()
        return SparseTensor(total._i, total._v / count._v, self._size, True)

    is_sparse_csr = False

    def sparse_dim(self) -> int:
        return self._i.shape[0]

    def dense_dim(self) -> int:
        return self._v.dim() - 1

    def _indices(self) -> Tensor:
        return self._i

    def _values(self) -> Tensor:
        return self._v

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._i

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._v

    def is_coalesced(self) -> bool:
        return self._coalesced

    # --- in place: the object takes new parts (a parameter's .grad is assigned them back) ------
    def _rebind(self, indices: Tensor, values: Tensor, coalesced: bool) -> SparseTensor:
        self._i, self._v, self._coalesced = indices, values, coalesced
        owner = getattr(self, "_grad_of", None)
        if owner is not None:
            owner.grad = self
        return self

    copy_ = _copy.copy_coo

    def zero_(self) -> SparseTensor:
        """No entries left, as PyTorch's."""
        return self._rebind(self._i[:, :0], self._v[:0].detach().clone(), True)

    def mul_(self, other) -> SparseTensor:
        """The values scaled in place by a number or a 0-dim tensor."""
        if isinstance(other, Tensor) and other.dim() != 0 or isinstance(other, SparseBase):
            raise NotImplementedError("mul_: minitorch scales a sparse tensor in place by a number only")
        self._v.mul_(other)
        return self

    def add_(self, other, *, alpha=1) -> SparseTensor:
        """self += alpha * other, other sparse: the entries of both (uncoalesced), as PyTorch's."""
        total = self.add(other, alpha=alpha)
        return self._rebind(total._i, total._v, False)

    def _parts(self) -> list:
        return [("indices=tensor(", self._i), ("values=tensor(", self._v)]

    # --- conversions --------------------------------------------------------------------------
    def _linear(self) -> Tensor:
        """Each element's index into the flattened dense tensor."""
        lin = self._i[0]
        for d in range(1, self.sparse_dim()):
            lin = lin * self._size[d] + self._i[d]
        return lin

    def coalesce(self) -> SparseTensor:
        """The same tensor with its indices sorted and unique, repeated entries summed."""
        if self._coalesced:
            return self
        uniq, inverse = _indexing.unique(self._linear(), sorted=True, return_inverse=True)
        # sums start from -0.0, which adds to any x as x: a lone -0.0 entry stays -0.0 (signbit)
        values = _C.full((uniq.shape[0], *self._v.shape[1:]), -0.0, dtype=self.dtype, device=self.device).index_add(
            0, inverse, self._v)
        rows, rest = [], uniq
        for d in range(self.sparse_dim() - 1, -1, -1):
            rows.append(rest.remainder(self._size[d]))
            rest = rest.div(self._size[d], rounding_mode="floor")
        indices = _C.stack(rows[::-1]) if rows else uniq.view(0, -1)
        return SparseTensor(indices, values, self._size, True)

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        out = _C.zeros(self._size, dtype=dtype or self.dtype, device=self.device)
        values = self._v if dtype is None else self._v.to(dtype)
        return out.index_put(tuple(self._i), values, accumulate=True)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout is sparse_coo:
            return self
        if layout in (sparse_bsr, sparse_bsc):
            return _compressed.to_blocks(self.to_dense(), layout, blocksize)
        return _compressed.compress(self, _check_layout(layout))

    def to_sparse_coo(self) -> SparseTensor:
        return self

    def to_sparse_csr(self, dense_dim=None):
        return _compressed.compress(self, sparse_csr)

    def to_sparse_csc(self, dense_dim=None):
        return _compressed.compress(self, sparse_csc)

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        return _compressed.to_blocks(self.to_dense(), sparse_bsr, blocksize)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        return _compressed.to_blocks(self.to_dense(), sparse_bsc, blocksize)

    def to(self, *args, **kwargs) -> SparseTensor:
        values = self._v.to(*args, **kwargs)
        indices = self._i.to(values.device)
        return self if values is self._v else SparseTensor(indices, values, self._size, self._coalesced)

    def cuda(self, device=None, non_blocking: bool = False) -> SparseTensor:
        return self.to(_device("cuda") if device is None else device, non_blocking=non_blocking)

    def detach(self) -> SparseTensor:
        out = SparseTensor(self._i, self._v.detach(), self._size, self._coalesced)
        out._grad_of = getattr(self, "_grad_of", None)  # p.grad.data.zero_() empties p.grad
        return out

    data = property(detach)

    def clone(self) -> SparseTensor:
        return SparseTensor(self._i.clone(), self._v.clone(), self._size, self._coalesced)

    def t(self) -> SparseTensor:
        if self.sparse_dim() > 2 or self.dense_dim():
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, but got "
                               f"{self.sparse_dim()} sparse and {self.dense_dim()} dense dimensions")
        if self.sparse_dim() < 2:
            return self
        return SparseTensor(self._i.flip(0), self._v, (self._size[1], self._size[0]), False)

    def transpose(self, dim0: int, dim1: int) -> SparseTensor:
        n = self.dim()
        dim0, dim1 = dim0 % n, dim1 % n
        if max(dim0, dim1) >= self.sparse_dim():
            raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got sparse_dim: "
                               f"{self.sparse_dim()}, d0: {dim0}, d1: {dim1}")
        order = list(range(self.sparse_dim()))
        order[dim0], order[dim1] = order[dim1], order[dim0]
        size = [self._size[d] for d in order] + list(self._size[self.sparse_dim():])
        return SparseTensor(self._i[order], self._v, size, self._coalesced and dim0 == dim1)

    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        if keepdim:
            return self.to_dense().sum(dim, keepdim=True, dtype=dtype)
        return sum(self, dim, dtype)

    def softmax(self, dim: int, dtype=None) -> SparseTensor:
        return softmax(self, dim, dtype)

    def log_softmax(self, dim: int, dtype=None) -> SparseTensor:
        return log_softmax(self, dim, dtype)

    # --- arithmetic ---------------------------------------------------------------------------
    def _scaled(self, values: Tensor) -> SparseTensor:
        return SparseTensor(self._i, values, self._size, self._coalesced)

    def __neg__(self) -> SparseTensor:
        return self._scaled(-self._v)

    def __mul__(self, other):
        """Sparse times a number, a dense tensor (broadcast to this shape, read at the entries) or a
        sparse tensor (the entries both have): a sparse tensor, as PyTorch's."""
        if isinstance(other, SparseTensor):
            return _sparse_mul(self, other)
        if isinstance(other, numbers.Number) or (isinstance(other, Tensor) and other.dim() == 0):
            return self._scaled(self._v * other)
        if isinstance(other, Tensor):
            n = len(self._size)
            for d in range(1, max(other.dim(), n) + 1):  # the dense operand must broadcast to this shape
                a, b = other.shape[-d] if d <= other.dim() else 1, self._size[-d] if d <= n else 1
                if a not in (1, b) or d > n:
                    raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                                       f"non-singleton dimension {max(n, other.dim()) - d}")
            return self._scaled(self._v * other.expand(self._size)[tuple(self._i)])
        return NotImplemented

    __rmul__ = __mul__
    mul = __mul__

    def __truediv__(self, other):
        if isinstance(other, (numbers.Number, Tensor)) and (not isinstance(other, Tensor) or other.dim() == 0):
            return self._scaled(self._v / other)
        return NotImplemented

    div = __truediv__

    def _check_same_size(self, other, op: str) -> None:
        if tuple(other.shape) != tuple(self._size):
            raise RuntimeError(f"{op}: expected 'self' and 'other' to have same size, but self has size "
                               f"{list(self._size)} while other has size {list(other.shape)} (FYI: op2-sparse "
                               "addition does not currently support broadcasting)")

    def add(self, other, *, alpha=1):
        if isinstance(other, SparseTensor):
            self._check_same_size(other, "add")
            values = _C.cat([self._v, other._v * alpha if alpha != 1 else other._v])
            return SparseTensor(_C.cat([self._i, other._i], 1), values, self._size, False)
        if isinstance(other, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
        return NotImplemented

    __add__ = add

    def __radd__(self, other):
        if isinstance(other, Tensor):  # dense + sparse is dense
            self._check_same_size(other, "add")
            return other + self.to_dense()
        return NotImplemented

    def __sub__(self, other):
        if isinstance(other, SparseTensor):
            return self.add(other, alpha=-1)
        return self.add(other)

    def __rsub__(self, other):
        if isinstance(other, Tensor):
            self._check_same_size(other, "sub")
            return other - self.to_dense()
        return NotImplemented

    def __matmul__(self, other):
        return mm(self, other) if isinstance(other, (Tensor, SparseTensor)) else NotImplemented

    def __rmatmul__(self, other):
        return mm(other, self) if isinstance(other, Tensor) else NotImplemented

    def mm(self, mat2):
        return mm(self, mat2)

    matmul = mm


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None) -> SparseTensor:
    """A sparse COO tensor with values[k] at indices[:, k] (PyTorch's torch.sparse_coo_tensor).
    Without size, each dim is one more than its largest index."""
    values = _tensor_of(values, dtype=dtype, device=device)
    indices = _tensor_of(indices, device=values.device)
    if indices.dtype != _C.int64:
        indices = indices.to(_C.int64)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        raise RuntimeError("values must be at least 1-D (nnz, *dense sizes), got a 0-d tensor")
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
                           f"nnz from values: {values.shape[0]}")
    nnz, sparse_dim, dense = indices.shape[1], indices.shape[0], list(values.shape[1:])
    if size is None:
        size = [int(indices[d].max().item()) + 1 if nnz else 0 for d in range(sparse_dim)] + dense
    else:
        size = [int(s) for s in size]
        if len(size) != sparse_dim + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) = {len(size)}, "
                               f"sparse_dim = {sparse_dim}, dense_dim = {len(dense)}")
        if size[sparse_dim:] != dense:
            raise RuntimeError(f"values has incorrect size, expected {[nnz] + size[sparse_dim:]}, got "
                               f"{list(values.shape)}")
        if nnz:
            low, high = indices.amin(1).tolist(), indices.amax(1).tolist()
            for d, s in enumerate(size[:sparse_dim]):
                if low[d] < 0 or high[d] >= s:
                    bad = low[d] if low[d] < 0 else high[d]
                    raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is {s} but found "
                                       f"index {bad}")
    if requires_grad:
        values = values.detach().requires_grad_(True) if values.grad_fn is not None else values.requires_grad_(True)
    return SparseTensor(indices, values, size, bool(is_coalesced) or nnz <= 1)


def _from_grad(values: Tensor, indices: Tensor, size, coalesced: bool, owner) -> SparseTensor:
    """A sparse gradient as autograd hands it out (csrc/python/sparse_grad.c): owner is the tensor
    whose .grad it is, or None."""
    grad = SparseTensor(indices, values, size, coalesced)
    grad._grad_of = owner
    return grad


def _grad_parts(tensor: Tensor, grad) -> tuple:
    """(values, indices, coalesced) of a sparse COO tensor assigned as tensor.grad, checked as
    PyTorch checks an assigned grad."""
    if not isinstance(grad, SparseTensor):  # a CSR or CSC tensor: PyTorch's layout check
        raise RuntimeError("attempting to assign a gradient to a tensor that has data of a different type")
    if grad.dtype != tensor.dtype:
        from .._aliases import _NAMES

        raise RuntimeError(f"attempting to assign a gradient with dtype '{_NAMES[grad.dtype].lower()}' to a tensor "
                           f"with grad_dtype '{_NAMES[tensor.dtype]}'. The gradient must match the tensor's "
                           "grad_dtype (defaults to the tensor's dtype).")
    if grad.device != tensor.device:
        raise RuntimeError("attempting to assign a gradient located on a different device than the tensor")
    if tuple(grad.shape) != tuple(tensor.shape):
        raise RuntimeError(f"attempting to assign a gradient of size '{list(grad.shape)}' to a tensor of size "
                           f"'{list(tensor.shape)}'. Please ensure that the gradient and the tensor are the same size")
    return grad._v, grad._i, grad._coalesced


def _check_layout(layout):
    if layout not in _LAYOUTS.values():
        raise NotImplementedError(f"to_sparse: minitorch has the sparse_coo, sparse_csr, sparse_csc, sparse_bsr "
                                  f"and sparse_bsc layouts, not {layout}")
    return layout


def to_sparse(self: Tensor, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """A strided tensor as a sparse one: its nonzero elements, in row-major order (coalesced COO),
    or compressed by rows or columns (layout=sparse_csr / sparse_csc). With sparse_dim (or
    dense_dim) the last dims stay dense: an entry per index of the first ones with any nonzero."""
    if sparse_dim is None:
        sparse_dim = self.dim() - (dense_dim or 0)
    if not 0 <= sparse_dim <= self.dim():
        raise RuntimeError(f"sparse_dim argument must be in [0, {self.dim()}] range, but {sparse_dim} is given")
    if layout in (sparse_bsr, sparse_bsc):
        return _compressed.to_blocks(self, layout, blocksize)
    mask = self != 0
    if sparse_dim < self.dim():
        mask = mask.flatten(sparse_dim).any(-1) if sparse_dim else mask.any().view(1)
    indices = _C.nonzero(mask).t().contiguous()
    values = self[tuple(indices)] if sparse_dim else self.unsqueeze(0)[: indices.shape[1]]
    coo = SparseTensor(indices[:sparse_dim], values, self.shape, True)
    return coo if layout in (None, sparse_coo) else _compressed.compress(coo, _check_layout(layout))


def sparse_csr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None) -> SparseCompressedTensor:
    """A CSR matrix: row i holds values[crow_indices[i]:crow_indices[i+1]] at those col_indices."""
    return _compressed.compressed_tensor(crow_indices, col_indices, values, size, dtype, device, requires_grad,
                                         sparse_csr)


def sparse_csc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None) -> SparseCompressedTensor:
    """A CSC matrix: column j holds values[ccol_indices[j]:ccol_indices[j+1]] at those row_indices."""
    return _compressed.compressed_tensor(ccol_indices, row_indices, values, size, dtype, device, requires_grad,
                                         sparse_csc)


def sparse_bsr_tensor(crow_indices, col_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None) -> SparseCompressedTensor:
    """A BSR matrix: block row i holds the (R, C) blocks values[crow_indices[i]:crow_indices[i+1]]
    at those block columns col_indices."""
    return _compressed.compressed_tensor(crow_indices, col_indices, values, size, dtype, device, requires_grad,
                                         sparse_bsr)


def sparse_bsc_tensor(ccol_indices, row_indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None) -> SparseCompressedTensor:
    """A BSC matrix: block column j holds the (R, C) blocks values[ccol_indices[j]:ccol_indices[j+1]]
    at those block rows row_indices."""
    return _compressed.compressed_tensor(ccol_indices, row_indices, values, size, dtype, device, requires_grad,
                                         sparse_bsc)


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *, dtype=None, layout=None,
                             device=None, pin_memory=False, requires_grad=False,
                             check_invariants=None) -> SparseCompressedTensor:
    """A CSR, CSC, BSR or BSC matrix, as layout says."""
    if layout not in (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc):
        word = "none" if layout is None else _compressed._layout_word(_LayoutOf(layout))
        raise RuntimeError(f"sparse_compressed_tensor expected sparse compressed tensor layout but got {word}")
    return _compressed.compressed_tensor(compressed_indices, plain_indices, values, size, dtype, device,
                                         requires_grad, layout)


class _LayoutOf:
    """Something with a layout, for _layout_word."""

    def __init__(self, layout):
        self.layout = layout


def sparse_mask(self: Tensor, mask):
    """This dense tensor's elements at the entries of the sparse `mask`, in mask's layout."""
    if tuple(self.shape) != tuple(mask.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size {list(self.shape)} but "
                           f"mask has size {list(mask.shape)}")
    coo = mask.to_sparse_coo()  # an uncoalesced mask's repeated entries stay repeated, as in PyTorch
    picked = SparseTensor(coo._i, self[tuple(coo._i)], coo.shape, coo._coalesced)
    return picked if isinstance(mask, SparseTensor) else _compressed.compress(picked, mask.layout)


def _product_dtype(a, b):
    return _C.promote_types(a.dtype, b.dtype)


def _dense_mm(input, mat2, *, out=None):
    """minitorch.mm (and spmm): mm itself, or the sparse product where either matrix is sparse."""
    if isinstance(input, (SparseTensor, SparseCompressedTensor)) or isinstance(mat2, (SparseTensor,
                                                                                      SparseCompressedTensor)):
        if out is not None:
            raise NotImplementedError("mm: out= with a sparse operand is not supported")
        return mm(input, mat2)
    return _C.mm(input, mat2, out=out)


def mm(mat1, mat2, reduce: str = "sum"):
    """mat1 @ mat2 where either may be sparse COO (2-D) and the other dense: a dense result, as
    PyTorch's torch.sparse.mm; both dense is mm itself."""
    if isinstance(mat1, SparseCompressedTensor) or isinstance(mat2, SparseCompressedTensor):
        return mm(*[m.to_sparse_coo() if isinstance(m, SparseCompressedTensor) else m for m in (mat1, mat2)], reduce)
    sparse1, sparse2 = isinstance(mat1, SparseTensor), isinstance(mat2, SparseTensor)
    if not (sparse1 or sparse2):
        return _C.mm(mat1, mat2)
    if reduce != "sum":
        raise NotImplementedError(f"sparse mm: reduce={reduce!r} is not supported (only 'sum')")
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"mm: expected 2D matrices, got {mat1.dim()}D and {mat2.dim()}D tensors")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    if sparse1 and sparse2:
        return _sparse_sparse_mm(mat1, mat2)
    dtype = _product_dtype(mat1, mat2)
    if sparse1:
        # out (n, k): row i gathers values[e] * mat2[cols[e]] for each entry e = (i, cols[e])
        rows, cols = mat1._i[0], mat1._i[1]
        terms = mat1._v.to(dtype).unsqueeze(1) * mat2.to(dtype).index_select(0, cols)
        out = _C.zeros((mat1.shape[0], mat2.shape[1]), dtype=dtype, device=mat2.device)
        return out.index_add(0, rows, terms)
    # out (n, k) = mat1 (n, m) @ mat2 (m, k): column cols[e] gathers mat1[:, rows[e]] * values[e]
    rows, cols = mat2._i[0], mat2._i[1]
    terms = mat1.to(dtype).index_select(1, rows) * mat2._v.to(dtype)
    out = _C.zeros((mat1.shape[0], mat2.shape[1]), dtype=dtype, device=mat1.device)
    return out.index_add(1, cols, terms)


def addmm(mat: Tensor, mat1, mat2, *, beta=1.0, alpha=1.0) -> Tensor:
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse (torch.sparse.addmm)."""
    return mat * beta + mm(mat1, mat2) * alpha


def _dims(dim, n: int) -> list:
    dims = [dim] if isinstance(dim, int) else list(dim)
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return sorted({d % n for d in dims})


def _sparse_sparse_mm(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """a (n, m) @ b (m, p), both sparse: a coalesced sparse product, as PyTorch's. Each entry
    (i, k) of a meets the entries (k, j) of b's row k (b coalesced: its rows are runs), and their
    products land at (i, j)."""
    b = b.coalesce()
    dev = b._i.device
    counts = _C.bincount(b._i[0], minlength=b.shape[0]) if b._nnz() else _C.zeros(
        (b.shape[0],), dtype=_C.int64, device=dev)
    starts = counts.cumsum(0) - counts  # where row k of b begins among its entries
    k = a._i[1]
    per = counts.index_select(0, k)  # how many entries of b each entry of a meets
    owner = _C.arange(a._nnz(), device=dev).repeat_interleave(per)
    first = (per.cumsum(0) - per).index_select(0, owner)
    pos = starts.index_select(0, k.index_select(0, owner)) + _C.arange(owner.shape[0], device=dev) - first
    indices = _C.stack([a._i[0].index_select(0, owner), b._i[1].index_select(0, pos)])
    values = a._v.index_select(0, owner) * b._v.index_select(0, pos)
    return SparseTensor(indices, values, (a.shape[0], b.shape[1]), False).coalesce()


def _sparse_mul(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """a * b, both sparse of one shape: the products at the entries both have."""
    a._check_same_size(b, "mul")
    a, b = a.coalesce(), b.coalesce()
    la, lb = a._linear(), b._linear()
    if not lb.numel():
        return SparseTensor(a._i[:, :0], a._v[:0] * b._v[:0], a.shape, True)
    pos = _C.searchsorted(lb, la).clamp_max(lb.numel() - 1)
    keep = _C.nonzero(lb.index_select(0, pos) == la).view(-1)
    values = a._v.index_select(0, keep) * b._v.index_select(0, pos.index_select(0, keep))
    return SparseTensor(a._i.index_select(1, keep), values, a.shape, True)


def sum(input, dim=None, dtype=None):  # noqa: A001
    """torch.sparse.sum: over all elements, a 0-dim dense tensor; over some dims, a coalesced sparse
    tensor of the dims left."""
    if dim is None:
        return input._values().sum(dtype=dtype)
    dims, sd = _dims(dim, input.dim()), input.sparse_dim()
    values = input._v if dtype is None else input._v.to(dtype)
    dense = [d - sd + 1 for d in dims if d >= sd]  # dense dims, as dims of values
    if dense:
        values = values.sum(dense)
    size = [input.shape[d] for d in range(input.dim()) if d not in dims]
    keep = [d for d in range(sd) if d not in dims]
    if not keep:  # every sparse dim reduced: a dense tensor of the dense dims left
        return values.sum(0)
    return SparseTensor(input._i[keep], values, size, False).coalesce()


def _softmax_parts(input, dim: int, dtype):
    """The shifted values of a sparse tensor and the sum of exp over each slice along dim (only the
    specified entries take part: the others count as -inf), as (coalesced tensor, shifted, sums)."""
    s = input.coalesce()
    dim = _dims(dim, s.dim())[0]
    values = s._v if dtype is None else s._v.to(dtype)
    if dim >= s.sparse_dim():  # along a dense dim: each entry's values on their own
        shifted = values - values.detach().amax(dim - s.sparse_dim() + 1, keepdim=True)
        return s, shifted, shifted.exp().sum(dim - s.sparse_dim() + 1, keepdim=True)
    others = [d for d in range(s.sparse_dim()) if d != dim]
    key = s._i[others[0]] if others else _C.zeros_like(s._i[0])
    for d in others[1:]:
        key = key * s.shape[d] + s._i[d]
    groups, slot = _indexing.unique(key, sorted=True, return_inverse=True)
    shape = (groups.shape[0], *values.shape[1:])
    spread = slot.view(-1, *[1] * (values.dim() - 1)).expand(values.shape)
    top = _C.zeros(shape, dtype=values.dtype, device=values.device).scatter_reduce(
        0, spread, values.detach(), "amax", include_self=False)
    shifted = values - top.index_select(0, slot)
    sums = _C.zeros(shape, dtype=values.dtype, device=values.device).index_add(0, slot, shifted.exp())
    return s, shifted, sums.index_select(0, slot)


def softmax(input, dim: int, dtype=None) -> SparseTensor:
    """torch.sparse.softmax: softmax along dim over the specified entries of each slice."""
    s, shifted, sums = _softmax_parts(input, dim, dtype)
    return SparseTensor(s._i, shifted.exp() / sums, s.shape, True)


def log_softmax(input, dim: int, dtype=None) -> SparseTensor:
    """torch.sparse.log_softmax: log_softmax along dim over the specified entries of each slice."""
    s, shifted, sums = _softmax_parts(input, dim, dtype)
    return SparseTensor(s._i, shifted - sums.log(), s.shape, True)


def _crow_missing(name: str, row: bool):
    def method(self):
        raise _compressed._wrong_layout(name, self, row)

    return method


def _is_sparse(self) -> bool:
    return False


def install(namespace: dict, tensor_cls) -> None:
    """Adds the sparse entry points to minitorch's namespace and Tensor: sparse_coo_tensor, spmm,
    a sparse-aware mm, the layouts, Tensor.to_sparse / is_sparse / layout; and makes a sparse
    tensor an instance of Tensor (isinstance), as PyTorch's are."""
    type(tensor_cls)._register_layout(SparseBase)
    namespace.update(sparse_coo_tensor=sparse_coo_tensor, spmm=_dense_mm, mm=_dense_mm, layout=layout, strided=strided,
                     sparse_coo=sparse_coo, sparse_csr=sparse_csr, sparse_csc=sparse_csc,
                     sparse_csr_tensor=sparse_csr_tensor, sparse_csc_tensor=sparse_csc_tensor, sparse_bsr=sparse_bsr,
                     sparse_bsc=sparse_bsc, sparse_bsr_tensor=sparse_bsr_tensor, sparse_bsc_tensor=sparse_bsc_tensor,
                     sparse_compressed_tensor=sparse_compressed_tensor)
    tensor_cls.to_sparse = to_sparse
    tensor_cls.to_sparse_coo = to_sparse
    tensor_cls.to_sparse_csr = lambda self, dense_dim=None: to_sparse(self, layout=sparse_csr)
    tensor_cls.to_sparse_csc = lambda self, dense_dim=None: to_sparse(self, layout=sparse_csc)
    tensor_cls.to_sparse_bsr = lambda self, blocksize, dense_dim=None: to_sparse(self, layout=sparse_bsr,
                                                                               blocksize=blocksize)
    tensor_cls.to_sparse_bsc = lambda self, blocksize, dense_dim=None: to_sparse(self, layout=sparse_bsc,
                                                                               blocksize=blocksize)
    tensor_cls.sparse_mask = sparse_mask
    for name, row in (("crow_indices", True), ("col_indices", True), ("ccol_indices", False),
                      ("row_indices", False)):
        setattr(tensor_cls, name, _crow_missing(name, row))
    tensor_cls.is_sparse = property(_is_sparse)
    tensor_cls.layout = property(lambda self: strided)
    tensor_cls.to_dense = lambda self, dtype=None, *, masked_grad=None: self if dtype is None else self.to(dtype)

