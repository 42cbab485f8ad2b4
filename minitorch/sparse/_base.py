"""What every sparse layout shares: a size, and values (a dense tensor) that carry the dtype, the
device and autograd. A layout's class adds its index tensors; nothing here reads them."""
from __future__ import annotations

from .. import _C


class SparseBase:
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

    @property
    def dtype(self):
        return self._v.dtype

    @property
    def device(self):
        return self._v.device

    @property
    def is_cuda(self) -> bool:
        return self._v.is_cuda

    @property
    def requires_grad(self) -> bool:
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._v.requires_grad = flag

    def requires_grad_(self, requires_grad: bool = True):
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def grad_fn(self):
        return self._v.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self._v.is_leaf

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
