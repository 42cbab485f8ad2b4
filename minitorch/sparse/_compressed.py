"""Sparse compressed tensors: PyTorch's torch.sparse_csr and torch.sparse_csc layouts, 2-D only.

A CSR matrix keeps crow_indices (n_rows + 1 offsets: row i's entries are positions
crow[i]:crow[i+1]), col_indices and values (one each per entry); CSC is the same with rows and
columns swapped (ccol_indices, row_indices). Products, to_dense and the conversions go through
the COO tensor with the same entries (the compressed offsets expanded by repeat_interleave), so
gradients reach the values and the dense operand through the ops' own formulas. No element is
touched in Python. Left out: batched and hybrid (dense-dimension) compressed tensors, BSR/BSC.
"""
from __future__ import annotations

from .. import _C
from .._tensor import Tensor
from ._base import SparseBase

# layout -> (compressed name, plain name, the name torch's messages give the layout)
_NAMES = {"sparse_csr": ("crow", "col", "SparseCsr"), "sparse_csc": ("ccol", "row", "SparseCsc")}


def _layout_word(t) -> str:
    """The layout as PyTorch's layout-check messages spell it (Strided, Sparse, SparseCsr, ...)."""
    name = t.layout._name
    return {"strided": "Strided", "sparse_coo": "Sparse"}.get(name) or _NAMES[name][2]


def _wrong_layout(method: str, t, row: bool) -> RuntimeError:
    kind = "row" if row else "column"
    return RuntimeError(f"{method} expected sparse {kind} compressed tensor layout but got {_layout_word(t)}")


class SparseCompressedTensor(SparseBase):
    """A 2-D sparse CSR or CSC matrix (which one is its layout)."""

    is_sparse = False

    def __init__(self, compressed: Tensor, plain: Tensor, values: Tensor, size, layout):
        self._c = compressed
        self._p = plain
        self._v = values
        self._size = _C.Size(size)
        self.layout = layout

    # --- what it is -------------------------------------------------------------------------
    @property
    def is_sparse_csr(self) -> bool:
        return self.layout._name == "sparse_csr"

    @property
    def grad(self):
        """The gradient of a leaf: the same layout and entries, with the values' gradients."""
        g = self._v.grad
        return None if g is None else SparseCompressedTensor(self._c, self._p, g, self._size, self.layout)

    def sparse_dim(self) -> int:
        return 2

    def dense_dim(self) -> int:
        return 0

    def values(self) -> Tensor:
        return self._v

    def crow_indices(self) -> Tensor:
        if not self.is_sparse_csr:
            raise _wrong_layout("crow_indices", self, True)
        return self._c

    def col_indices(self) -> Tensor:
        if not self.is_sparse_csr:
            raise _wrong_layout("col_indices", self, True)
        return self._p

    def ccol_indices(self) -> Tensor:
        if self.is_sparse_csr:
            raise _wrong_layout("ccol_indices", self, False)
        return self._c

    def row_indices(self) -> Tensor:
        if self.is_sparse_csr:
            raise _wrong_layout("row_indices", self, False)
        return self._p

    def indices(self):
        raise RuntimeError(f"indices expected sparse coordinate tensor layout but got {_layout_word(self)}")

    def _parts(self) -> list:
        cname, pname, _ = _NAMES[self.layout._name]
        return [(f"{cname}_indices=tensor(", self._c), (f"{pname}_indices=tensor(", self._p),
                ("values=tensor(", self._v)]

    # --- conversions --------------------------------------------------------------------------
    def _expanded(self) -> Tensor:
        """The compressed index of each entry (its row for CSR, its column for CSC)."""
        counts = (self._c[1:] - self._c[:-1]).long()
        n = self._c.shape[0] - 1
        return _C.arange(n, device=self._c.device).repeat_interleave(counts)

    def to_sparse_coo(self):
        from . import SparseTensor

        major, minor = self._expanded(), self._p.long()
        if self.is_sparse_csr:
            return SparseTensor(_C.stack([major, minor]), self._v, self._size, True)
        return SparseTensor(_C.stack([minor, major]), self._v, self._size, False).coalesce()

    def to_sparse(self, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout._name == "sparse_coo":
            return self.to_sparse_coo()
        return self.to_sparse_coo().to_sparse(layout=layout)

    def to_sparse_csr(self, dense_dim=None):
        return self if self.is_sparse_csr else self.to_sparse_coo().to_sparse_csr()

    def to_sparse_csc(self, dense_dim=None):
        return self.to_sparse_coo().to_sparse_csc() if self.is_sparse_csr else self

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        return self.to_sparse_coo().to_dense(dtype)

    def to(self, *args, **kwargs) -> SparseCompressedTensor:
        values = self._v.to(*args, **kwargs)
        if values is self._v:
            return self
        dev = values.device
        return SparseCompressedTensor(self._c.to(dev), self._p.to(dev), values, self._size, self.layout)

    def detach(self) -> SparseCompressedTensor:
        return SparseCompressedTensor(self._c, self._p, self._v.detach(), self._size, self.layout)

    def clone(self) -> SparseCompressedTensor:
        return SparseCompressedTensor(self._c.clone(), self._p.clone(), self._v.clone(), self._size, self.layout)

    def t(self) -> SparseCompressedTensor:
        """The transpose shares the arrays: a CSR matrix's transpose is a CSC one, and back."""
        other = "sparse_csc" if self.is_sparse_csr else "sparse_csr"
        from . import _LAYOUTS

        return SparseCompressedTensor(self._c, self._p, self._v, (self._size[1], self._size[0]), _LAYOUTS[other])

    # --- arithmetic ---------------------------------------------------------------------------
    def _scaled(self, values: Tensor) -> SparseCompressedTensor:
        return SparseCompressedTensor(self._c, self._p, values, self._size, self.layout)

    def __mul__(self, other):
        if not isinstance(other, Tensor) or other.dim() == 0:
            return self._scaled(self._v * other)
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self) -> SparseCompressedTensor:
        return self._scaled(-self._v)

    def __matmul__(self, other):
        from . import mm

        return mm(self.to_sparse_coo(), other) if isinstance(other, Tensor) else NotImplemented

    def __rmatmul__(self, other):
        from . import mm

        return mm(other, self.to_sparse_coo()) if isinstance(other, Tensor) else NotImplemented

    matmul = mm = __matmul__


def compress(coo, layout) -> SparseCompressedTensor:
    """A COO tensor of 2 sparse dims as CSR or CSC (layout): its entries sorted by row (by column
    for CSC); dense dims stay in the values."""
    if coo.sparse_dim() != 2:
        raise RuntimeError(f"to_sparse_{layout._name[7:]}: expected 2 sparse dims, got {coo.sparse_dim()} "
                           "(minitorch's compressed tensors are not batched)")
    csr = layout._name == "sparse_csr"
    src = coo.coalesce() if csr else coo.transpose(0, 1).coalesce()
    major, minor = src._i[0], src._i[1]
    n = coo.shape[0] if csr else coo.shape[1]
    counts = _C.bincount(major, minlength=n) if major.numel() else _C.zeros((n,), dtype=_C.int64, device=major.device)
    offsets = _C.cat([_C.zeros((1,), dtype=_C.int64, device=major.device), counts.cumsum(0)])
    return SparseCompressedTensor(offsets, minor, src._v, coo.shape, layout)


def _as_index(x, device) -> Tensor:
    t = x if isinstance(x, Tensor) else _C.tensor(x, dtype=_C.int64, device=device)
    if t.dtype not in (_C.int32, _C.int64):
        t = t.to(_C.int64)
    return t.to(device) if device is not None else t


def compressed_tensor(compressed, plain, values, size, dtype, device, requires_grad, layout):
    """torch.sparse_csr_tensor / sparse_csc_tensor: the checks that PyTorch always makes (the rest
    of its invariant checks are opt-in there and left out here)."""
    from . import _tensor_of

    values = _tensor_of(values, dtype=dtype, device=device)
    compressed, plain = _as_index(compressed, values.device), _as_index(plain, values.device)
    cname, pname, _ = _NAMES[layout._name]
    if compressed.dim() != 1 or plain.dim() != 1 or values.dim() != 1:
        raise NotImplementedError(f"minitorch's {layout._name} tensors are 2-D: {cname}_indices, {pname}_indices "
                                  "and values must be 1-D")
    if plain.shape[0] != values.shape[0]:
        raise RuntimeError(f"{pname}_indices and values must have the same number of elements, but got "
                           f"{pname}_indices.numel(): {plain.shape[0]}, values.numel(): {values.shape[0]}")
    if compressed.dtype != plain.dtype:
        raise RuntimeError(f"{cname}_indices and {pname}_indices must have the same dtype, bot got "
                           f"{compressed.dtype} and {plain.dtype}")
    if size is None:
        major = compressed.shape[0] - 1
        minor = int(plain.max().item()) + 1 if plain.numel() else 0
        size = (major, minor) if layout._name == "sparse_csr" else (minor, major)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError(f"minitorch's {layout._name} tensors are 2-D, got size {size}")
    if requires_grad:
        values = values.detach().requires_grad_(True)
    return SparseCompressedTensor(compressed, plain, values, size, layout)
