"""What every sparse layout shares: a size, and values (a dense tensor) that carry the dtype, the
device and autograd. A layout's class adds its index tensors; nothing here reads them."""
from __future__ import annotations

from .. import _C
from .._tensor_str import _add_suffixes, _grad_suffix, _tensor_str
from .._backed import BackedByValues
from ._unary import UnaryMethods


class SparseBase(UnaryMethods, BackedByValues):
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

    def _added_to(self, dense, alpha, inplace: bool):
        """dense + alpha * self (dense.add(self, alpha=), add_, sub, sub_): a dense tensor."""
        coo = self.to_sparse_coo()
        coo._check_same_size(dense, "add")
        values = coo._v if alpha == 1 else coo._v * alpha
        if not inplace:
            return dense + coo._scaled(values).to_dense()
        return dense.index_put_(tuple(coo._i), values.to(dense.dtype), accumulate=True)

    def _repr(self, parts: list, force_newline: bool) -> str:
        """PyTorch's print of a sparse tensor: `tensor(` and each (prefix, index or values tensor)
        part on its own line, then device, size, nnz, dtype (unless a default), layout, grad."""
        indent = len("tensor(")
        body = []
        for prefix, t in parts:
            text = _tensor_str(t.detach(), indent + len(prefix)) if t.numel() else "[]"
            body.append(prefix + text + ("" if t.numel() else f", size={tuple(t.shape)}") + ")")
        suffixes = [f"device='{self.device}'"] if self.device.type != "cpu" else []
        suffixes += [f"size={tuple(self._size)}", f"nnz={self._nnz()}"]
        if self.dtype not in (_C._get_default_dtype(), _C.int64, _C.bool):
            suffixes.append(f"dtype={self.dtype}")
        suffixes.append(f"layout={self.layout}")
        grad = _grad_suffix(self)
        if grad:
            suffixes.append(grad)
        return _add_suffixes("tensor(" + (",\n" + " " * indent).join(body), suffixes, indent, force_newline)

    def __repr__(self) -> str:
        return self._repr(self._parts(), self.layout._name == "sparse_coo")

    __str__ = __repr__
