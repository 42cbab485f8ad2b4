"""The sparse-result products of a sparse COO matrix and a dense one, as PyTorch has them:
sspaddmm (and its older name saddmm), smm, hspmm (and hsmm), and dsmm (the dense result); and
native_norm, the norm of a sparse tensor's entries.

A product's entries are the rows where mat1 has an entry, times every column of mat2: their values
are those rows of the dense product mat1 @ mat2 (whose gradient reaches mat1's values and mat2), so
no element is touched in Python. sspaddmm keeps input's entries (scaled by beta) before the product's
(scaled by alpha), uncoalesced, as PyTorch's does."""
from __future__ import annotations

from .. import _C
from .._tensor import Tensor
from . import SparseTensor, _dense_mm, sparse_coo_tensor


def _dispatch_error(op: str, t) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{op}' with arguments from the '{t.device.type.upper()}' backend. This could be "
        "because the operator doesn't exist for this backend, or was omitted during the selective/custom build "
        "process (if using custom build). If you are a Facebook employee using PyTorch on mobile, please visit "
        "https://fburl.com/ptmfixes for possible resolutions.")


def _product_rows(mat1: SparseTensor, mat2: Tensor, op: str) -> tuple:
    """(rows, values): the rows where mat1 has an entry, in order, and those rows of mat1 @ mat2."""
    for k, t in ((2, mat1), (3, mat2)):
        if t.dim() != 2:
            raise RuntimeError(f"{op}: Argument #{k}: matrices expected, got {t.dim()}D tensor")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"{op}: Argument #3: Expected dim 0 size {mat1.shape[1]}, got {mat2.shape[0]}")
    if mat2.dtype != mat1.dtype:
        from .._api_names import _dtype_word

        raise RuntimeError(f"expected scalar type {_dtype_word(mat1)} but found {_dtype_word(mat2)}")
    rows = mat1._indices()[0].unique()
    return rows, _dense_mm(mat1, mat2).index_select(0, rows)


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None) -> SparseTensor:
    """beta * input + alpha * (mat1 @ mat2) as a sparse COO tensor: input's entries, then one per row
    of mat1 that has entries and column of mat2 (input and mat1 sparse, mat2 dense)."""
    if not isinstance(input, SparseTensor) or not isinstance(mat1, SparseTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if out is not None:
        raise NotImplementedError("sspaddmm: out= is not supported")
    rows, values = _product_rows(mat1, mat2, "sspaddmm")
    size = (mat1.shape[0], mat2.shape[1])
    for d in (0, 1):
        if input.dim() != 2 or input.shape[d] != size[d]:
            got = input.shape[d] if input.dim() > d else None
            raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {d} size {size[d]}, got {got}")
    n = size[1]
    cols = _C.arange(n, device=rows.device)
    indices = _C.stack([rows.repeat_interleave(n), cols.repeat(rows.numel())])
    vals = _C.cat([input._values() * beta, values.reshape(-1) * alpha])
    return sparse_coo_tensor(_C.cat([input._indices(), indices], 1), vals, size)


def smm(input, mat2) -> SparseTensor:
    """input @ mat2 as a sparse COO tensor (input sparse, mat2 dense): sspaddmm of no entries."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    cols = mat2.shape[1] if mat2.dim() == 2 else 0  # a wrong mat2 is refused by sspaddmm
    none = sparse_coo_tensor(_C.zeros((2, 0), dtype=_C.int64, device=mat2.device),
                             _C.zeros(0, dtype=mat2.dtype, device=mat2.device), (input.shape[0], cols))
    return sspaddmm(none, input, mat2)


def hspmm(mat1, mat2) -> SparseTensor:
    """mat1 @ mat2 as a hybrid COO tensor: one sparse dim (the rows where mat1 has entries), each
    row's values dense."""
    if not isinstance(mat1, SparseTensor):
        raise _dispatch_error("hspmm", mat1)
    rows, values = _product_rows(mat1, mat2, "hspmm")
    return sparse_coo_tensor(rows.unsqueeze(0), values, (mat1.shape[0], mat2.shape[1]))


def dsmm(input, mat2) -> Tensor:
    """input @ mat2, dense (input sparse or dense)."""
    return _dense_mm(input, mat2)


def native_norm(input, p=2, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """The p-norm of a sparse COO tensor's entries (its coalesced values), over all its dims: the
    only reduction PyTorch's sparse kernel has."""
    if not isinstance(input, SparseTensor):
        from .._api_names import _not_for_strided

        _not_for_strided("native_norm")(input)
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        wrapped = {d % max(input.dim(), 1) for d in dims}
        if dims and wrapped != set(range(input.dim())):
            raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' must either be empty or "
                               "contain all dimensions of the input")
        if keepdim:
            raise RuntimeError("norm_sparse currently does not support keepdim=True")
        if dtype is not None:
            raise RuntimeError("norm_sparse currently does not support 'dtype' argument")
    from .. import linalg

    return linalg.vector_norm(input.coalesce().values(), 2 if p is None else p)


def _dense_self(name: str):
    def method(self, *args, **kwargs):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Tensor.{name}: a sparse tensor's; a strided one raises, as PyTorch's."
    return method


def install(namespace: dict, tensor_cls) -> None:
    namespace.update(sspaddmm=sspaddmm, saddmm=sspaddmm, smm=smm, hspmm=hspmm, hsmm=hspmm, dsmm=dsmm,
                     native_norm=native_norm)
    SparseTensor.sspaddmm = lambda self, mat1, mat2, *, beta=1, alpha=1: sspaddmm(self, mat1, mat2, beta=beta,
                                                                                   alpha=alpha)
    SparseTensor.smm = smm
    SparseTensor.hspmm = hspmm
    for name in ("sspaddmm", "smm"):
        setattr(tensor_cls, name, _dense_self(name))
