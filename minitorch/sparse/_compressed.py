"""Sparse compressed tensors: PyTorch's torch.sparse_csr, sparse_csc, sparse_bsr and sparse_bsc
layouts, 2-D only.

A CSR matrix keeps crow_indices (n_rows + 1 offsets: row i's entries are positions
crow[i]:crow[i+1]), col_indices and values (one each per entry); CSC is the same with rows and
columns swapped (ccol_indices, row_indices). BSR and BSC are CSR and CSC over a grid of (R, C)
blocks: the indices count block rows and columns, and values holds one (R, C) block per entry.
Products, to_dense and the conversions go through the COO tensor with the same elements (the
compressed offsets expanded by repeat_interleave, a block's elements by its position in the
grid), so gradients reach the values and the dense operand through the ops' own formulas. No
element is touched in Python. Left out: batched and hybrid (dense-dimension) compressed tensors.
"""
from __future__ import annotations

from .. import _C
from .._tensor import Tensor
from ._base import SparseBase
from ._copy import copy_compressed

# layout -> (compressed name, plain name, the name torch's messages give the layout)
_NAMES = {"sparse_csr": ("crow", "col", "SparseCsr"), "sparse_csc": ("ccol", "row", "SparseCsc"),
          "sparse_bsr": ("crow", "col", "SparseBsr"), "sparse_bsc": ("ccol", "row", "SparseBsc")}
_BLOCKED = ("sparse_bsr", "sparse_bsc")


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
    def _by_rows(self) -> bool:
        """Compressed by rows (CSR, BSR) rather than by columns (CSC, BSC)."""
        return _NAMES[self.layout._name][0] == "crow"

    @property
    def _blocksize(self):
        """(R, C) of a BSR or BSC tensor's blocks; None for CSR and CSC."""
        return tuple(self._v.shape[1:3]) if self.layout._name in _BLOCKED else None

    @property
    def grad(self):
        """The gradient of a leaf: the same layout and entries, with the values' gradients."""
        g = self._v.grad
        return None if g is None else SparseCompressedTensor(self._c, self._p, g, self._size, self.layout)

    def sparse_dim(self) -> int:
        return 2

    copy_ = copy_compressed

    def dense_dim(self) -> int:
        return 0

    def values(self) -> Tensor:
        return self._v

    def crow_indices(self) -> Tensor:
        if not self._by_rows:
            raise _wrong_layout("crow_indices", self, True)
        return self._c

    def col_indices(self) -> Tensor:
        if not self._by_rows:
            raise _wrong_layout("col_indices", self, True)
        return self._p

    def ccol_indices(self) -> Tensor:
        if self._by_rows:
            raise _wrong_layout("ccol_indices", self, False)
        return self._c

    def row_indices(self) -> Tensor:
        if self._by_rows:
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
        rows, cols = (major, minor) if self._by_rows else (minor, major)
        if self._blocksize is None:
            coo = SparseTensor(_C.stack([rows, cols]), self._v, self._size, self._by_rows)
            return coo if self._by_rows else coo.coalesce()
        # block b at (rows[b], cols[b]) of the grid holds elements (rows[b] * R + i, cols[b] * C + j)
        r, c = self._blocksize
        dev = rows.device
        i = _C.arange(r, device=dev).reshape(1, r, 1)
        j = _C.arange(c, device=dev).reshape(1, 1, c)
        elem_rows = (rows.reshape(-1, 1, 1) * r + i).expand(-1, r, c).reshape(-1)
        elem_cols = (cols.reshape(-1, 1, 1) * c + j).expand(-1, r, c).reshape(-1)
        # block by block, uncoalesced, as PyTorch's
        return SparseTensor(_C.stack([elem_rows, elem_cols]), self._v.reshape(-1), self._size, False)

    def to_sparse(self, *, layout=None, blocksize=None, dense_dim=None):
        if layout is None or layout._name == "sparse_coo":
            return self.to_sparse_coo()
        if layout._name in _BLOCKED:
            return to_blocks(self.to_dense(), layout, blocksize)
        if self._blocksize is not None:
            raise RuntimeError(f"sparse_compressed_to_sparse_{layout._name[7:]}: expected SparseCsr or SparseCsc "
                               f"layout but got {_layout_word(self)}")
        return self.to_sparse_coo().to_sparse(layout=layout)

    def to_sparse_csr(self, dense_dim=None):
        from . import sparse_csr

        return self if self.is_sparse_csr else self.to_sparse(layout=sparse_csr)

    def to_sparse_csc(self, dense_dim=None):
        from . import sparse_csc

        return self if self.layout._name == "sparse_csc" else self.to_sparse(layout=sparse_csc)

    def to_sparse_bsr(self, blocksize, dense_dim=None):
        from . import sparse_bsr

        return to_blocks(self.to_dense(), sparse_bsr, blocksize)

    def to_sparse_bsc(self, blocksize, dense_dim=None):
        from . import sparse_bsc

        return to_blocks(self.to_dense(), sparse_bsc, blocksize)

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
        """The transpose shares the arrays: a CSR matrix's transpose is a CSC one, and back (BSR and
        BSC likewise, each block transposed)."""
        from . import _LAYOUTS

        blocked = self._blocksize is not None
        other = ("sparse_bsc" if self._by_rows else "sparse_bsr") if blocked else \
            ("sparse_csc" if self._by_rows else "sparse_csr")
        values = self._v.transpose(1, 2) if blocked else self._v
        return SparseCompressedTensor(self._c, self._p, values, (self._size[1], self._size[0]), _LAYOUTS[other])

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


def _blocksize_of(blocksize) -> tuple:
    if isinstance(blocksize, int):
        return (blocksize, blocksize)
    blocksize = tuple(int(b) for b in blocksize)
    if len(blocksize) != 2:
        raise RuntimeError(f"blocksize needs to be a tuple of size 2, but got {len(blocksize)}")
    return blocksize


def to_blocks(x: Tensor, layout, blocksize) -> SparseCompressedTensor:
    """A strided matrix (M, N) as BSR or BSC (layout) with (R, C) blocks: the blocks of its
    (M / R, N / C) grid that hold a nonzero, ordered by block row (by block column for BSC)."""
    word = _NAMES[layout._name][2]
    if blocksize is None:
        raise RuntimeError(f"dense_to_sparse: conversion from Strided to {word} without blocksize argument given "
                           "is not supported")
    r, c = _blocksize_of(blocksize)
    if x.dim() != 2:
        raise NotImplementedError(f"to_sparse_{layout._name[7:]}: minitorch's compressed tensors are 2-D (not "
                                  f"batched or hybrid), got {x.dim()}-D")
    m, n = x.shape
    if r <= 0 or c <= 0 or m % r or n % c:
        raise RuntimeError(f"dense_to_sparse_{layout._name[7:]}: tensor sparse size ({m},{n}) must be divisible by "
                           f"given blocksize ({r},{c})")
    blocks = x.reshape(m // r, r, n // c, c).permute(0, 2, 1, 3)  # (block row, block col, R, C)
    kept = (blocks != 0).flatten(2).any(-1)
    by_rows = _NAMES[layout._name][0] == "crow"
    where = _C.nonzero(kept if by_rows else kept.t()).t()
    major, minor = where[0], where[1]
    picked = blocks[major, minor] if by_rows else blocks[minor, major]
    length = m // r if by_rows else n // c
    counts = _C.bincount(major, minlength=length) if major.numel() else \
        _C.zeros((length,), dtype=_C.int64, device=x.device)
    offsets = _C.cat([_C.zeros((1,), dtype=_C.int64, device=x.device), counts.cumsum(0)])
    return SparseCompressedTensor(offsets, minor.contiguous(), picked.contiguous(), (m, n), layout)


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
    blocked = layout._name in _BLOCKED
    if blocked and values.dim() <= 2:
        raise RuntimeError("values must have dimensionality > sum of batch and block dimensionalities (=0 + 2) but "
                           f"got {values.dim()}")
    if compressed.dim() != 1 or plain.dim() != 1 or values.dim() != (3 if blocked else 1):
        raise NotImplementedError(f"minitorch's {layout._name} tensors are 2-D: {cname}_indices, {pname}_indices "
                                  f"and values must be 1-D{' (values (nnz, R, C) blocks)' if blocked else ''}")
    if plain.shape[0] != values.shape[0]:
        raise RuntimeError(f"{pname}_indices and values must have the same number of elements, but got "
                           f"{pname}_indices.numel(): {plain.shape[0]}, values.numel(): {values.shape[0]}")
    if compressed.dtype != plain.dtype:
        raise RuntimeError(f"{cname}_indices and {pname}_indices must have the same dtype, bot got "
                           f"{compressed.dtype} and {plain.dtype}")
    if size is None:
        major = compressed.shape[0] - 1
        minor = int(plain.max().item()) + 1 if plain.numel() else 0
        r, c = tuple(values.shape[1:3]) if blocked else (1, 1)
        size = (major * r, minor * c) if cname == "crow" else (minor * r, major * c)
    size = tuple(int(s) for s in size)
    if len(size) != 2:
        raise NotImplementedError(f"minitorch's {layout._name} tensors are 2-D, got size {size}")
    if requires_grad:
        values = values.detach().requires_grad_(True)
    return SparseCompressedTensor(compressed, plain, values, size, layout)
