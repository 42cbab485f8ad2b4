"""What every sparse layout shares: a size, and values (a dense tensor) that carry the dtype, the
device and autograd. A layout's class adds its index tensors; nothing here reads them."""
from __future__ import annotations

from .. import _C
from .._backed import BackedByValues


class SparseBase(BackedByValues):
    """The attributes common to sparse COO and compressed tensors, read off _size and _v."""

    _size: _C.Size
    _v: object

    @property
    def shape(self):
        return self._size

    def size(self, dim=None):
        return self._size if dim is None else self._size[dim]

    def dim(self) -> int:
        return len(self._size)

    ndim = property(dim)

    def numel(self) -> int:
        n = 1
        for s in self._size:
            n *= s
        return n

    def __len__(self) -> int:
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def _nnz(self) -> int:
        return self._v.shape[0]

    def float(self):
        return self.to(_C.float32)

    def double(self):
        return self.to(_C.float64)

    def long(self):
        return self.to(_C.int64)

    def cpu(self):
        return self.to("cpu")
