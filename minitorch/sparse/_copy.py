"""copy_ with a sparse tensor on either side, as PyTorch's (copy_sparse_ and copy_sparse_compressed_):
a COO tensor takes the source's sizes, indices, values (cast to its dtype, on its device) and
coalesced flag; a compressed one (CSR, CSC, BSR, BSC) takes the indices and values of a source of
its layout with as many entries and the same size along the compressed dim. Between a sparse and a
dense tensor (or a number) there is none: PyTorch's errors. Loading a state_dict into a module with
a sparse buffer goes through here.
"""
from __future__ import annotations

import numbers

from .. import _C

# the dtypes whose legacy tensor type PyTorch names in these messages (torch.sparse.FloatTensor);
# the others it names by backend and scalar type (SparseCPUComplexFloatType)
_LEGACY = {_C.float32: "Float", _C.float64: "Double", _C.float16: "Half", _C.uint8: "Byte", _C.int8: "Char",
           _C.int16: "Short", _C.int32: "Int", _C.int64: "Long"}
_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr", "sparse_csc": "SparseCsc",
                 "sparse_bsr": "SparseBsr", "sparse_bsc": "SparseBsc"}


def _as_tensor(src):
    """A Python number as the 0-dim tensor PyTorch's binding makes of it (its type names it)."""
    if isinstance(src, _C.TensorBase) or hasattr(src, "layout"):
        return src
    if isinstance(src, numbers.Number):  # as scalar_to_tensor: a float is double, a complex cdouble
        dtype = (_C.bool if isinstance(src, bool) else _C.int64 if isinstance(src, numbers.Integral)
                 else _C.float64 if isinstance(src, numbers.Real) else _C.complex128)
        return _C.tensor(src, dtype=dtype)
    raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")


def _type_string(t) -> str:
    """t's type as PyTorch's messages print it: torch.sparse.FloatTensor, torch.LongTensor,
    CPUBoolType, SparseCPUComplexFloatType."""
    from .._aliases import _NAMES as scalar_names

    scalar_names = {**scalar_names, _C.complex64: "ComplexFloat", _C.complex128: "ComplexDouble"}
    sparse = t.layout._name == "sparse_coo"
    cuda = t.device.type == "cuda"
    name = _LEGACY.get(t.dtype)
    if name is not None:
        return "torch." + ("cuda." if cuda else "") + ("sparse." if sparse else "") + name + "Tensor"
    return ("Sparse" if sparse else "") + ("CUDA" if cuda else "CPU") + scalar_names[t.dtype] + "Type"


def _check_leaf(self) -> None:
    if _C.is_grad_enabled() and self._v.requires_grad and self._v.is_leaf:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")


def _values_from(self, src_values):
    """src's values as self's: its dtype and device, a copy; a leaf that requires grad still does."""
    values = src_values.to(dtype=self.dtype, device=self.device, copy=True)
    if self._v.requires_grad and not values.requires_grad:
        values.requires_grad_(True)
    return values


def copy_coo(self, src, non_blocking: bool = False):
    """self.copy_(src) for a COO self: src's sizes, entries and coalesced flag, in self's dtype."""
    src = _as_tensor(src)
    if src is self:
        return self
    if getattr(src, "layout", None) is not self.layout:
        if getattr(src.layout, "_name", "strided") != "strided":
            raise RuntimeError(f"copy_sparse_compressed_ expected sparse compressed tensor layout but got "
                               f"{_LAYOUT_NAMES[self.layout._name]}")
        raise RuntimeError(f"copy_() between dense and sparse Tensors is not implemented! Found self type = "
                           f"{_type_string(self)} and src type = {_type_string(src)}")
    _check_leaf(self)
    values = _values_from(self, src._v)
    self._size = src._size
    return self._rebind(src._i.to(self.device, copy=True), values, src._coalesced)


def copy_compressed(self, src, non_blocking: bool = False):
    """self.copy_(src) for a compressed self: src of its layout, as many entries, the same size
    along the compressed dim; self keeps its sizes, as PyTorch's."""
    src = _as_tensor(src)
    if src is self:
        return self
    if src.layout is not self.layout:
        raise RuntimeError(f"torch.copy_: copy of sparse compressed tensors having different layouts is not "
                           f"supported. self layout is {_LAYOUT_NAMES[self.layout._name]} and src layout is "
                           f"{_LAYOUT_NAMES[src.layout._name]}")
    if self._nnz() != src._nnz():
        raise RuntimeError("torch.copy_: only sparse compressed tensors with the same number of specified "
                           "elements are supported.")
    dim = 0 if self._by_rows else 1
    if self._size[dim] != src._size[dim]:
        raise RuntimeError(f"torch.copy_: expected shapes of self and src to match along dimension {dim} for "
                           f"{_LAYOUT_NAMES[self.layout._name]} layout but the corresponding dimensions of self "
                           f"and src are {self._size[dim]} and {src._size[dim]}, respectively.")
    _check_leaf(self)
    self._c = src._c.to(dtype=self._c.dtype, device=self.device, copy=True)
    self._p = src._p.to(dtype=self._p.dtype, device=self.device, copy=True)
    self._v = _values_from(self, src._v)
    return self


def copy_into_dense(self, src, non_blocking: bool = False):
    """dense.copy_(sparse): none, as PyTorch's (its message for each layout of src)."""
    if src.layout._name == "sparse_coo":
        raise RuntimeError(f"copy_() between dense and sparse Tensors is not implemented! Found self type = "
                           f"{_type_string(self)} and src type = {_type_string(src)}")
    raise RuntimeError("copy_sparse_compressed_ expected sparse compressed tensor layout but got Strided")
