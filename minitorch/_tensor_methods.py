"""Tensor methods (and their top-level functions) that PyTorch has and that are composites of
minitorch's ops: unfold (an as_strided view, so its gradient is as_strided's), sum_to_size,
select_scatter/slice_scatter, renorm_, vdot, cholesky_solve/cholesky_inverse/triangular_solve,
apply_/map_, nonzero_static, pin_memory/is_pinned and the layout predicates; output_nr, name,
const_data_ptr, as_strided_ (over set_), dim_order and the deprecated resize/resize_as."""
from __future__ import annotations

import collections
import math
import warnings

from . import _C, functional
from ._aliases import _scatter_into, _source

_triangular_solve_result = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])


def _wrap_dim(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


class TensorMethods:
    """Mixed into Tensor by install()."""

    def unfold(self, dimension: int, size: int, step: int):
        """A view of every slice of `size` elements along `dimension`, `step` apart: that dimension
        becomes the number of slices and a new last dimension of `size` holds each."""
        d = _wrap_dim(dimension, self.dim())
        n = self.shape[d] if self.dim() else 1
        if size > n:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        if self.dim() == 0:
            return self.as_strided((size,), (1,), self.storage_offset())
        shape, stride = list(self.shape), list(self.stride())
        shape[d] = (n - size) // step + 1
        if self.requires_grad and _C.is_grad_enabled() and not _is_dense(self):
            # as_strided's backward needs dense elements: gather the windows instead (a copy)
            start = _C.arange(shape[d], device=self.device).unsqueeze(1) * step
            index = (start + _C.arange(size, device=self.device)).reshape(-1)
            windows = self.index_select(d, index).reshape(tuple(shape[:d]) + (shape[d], size) + tuple(shape[d + 1:]))
            return windows.movedim(d + 1, -1)
        st = stride[d]
        stride[d] = st * step
        return self.as_strided(tuple(shape) + (size,), tuple(stride) + (st,), self.storage_offset())

    def sum_to_size(self, *size):
        """Sums self down to `size`, which self must be expandable from (the reverse of expand)."""
        if len(size) == 1 and isinstance(size[0], (tuple, list, _C.Size)):
            size = size[0]
        size = tuple(int(s) for s in size)
        lead = self.dim() - len(size)
        ok = lead >= 0 and all(s == 1 or s == t for s, t in zip(size, self.shape[lead:]))
        if not ok:
            raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}.")
        out = self
        if lead:
            out = out.sum(tuple(range(lead)))
        dims = tuple(i for i, (s, t) in enumerate(zip(size, out.shape)) if s == 1 and t != 1)
        if dims:
            out = out.sum(dims, keepdim=True)
        return out

    def select_scatter(self, src, dim: int, index: int):
        """A copy of self with src written over self.select(dim, index)."""
        return _scatter_into(self, src, lambda out: out.select(dim, index))

    def slice_scatter(self, src, dim: int = 0, start=None, end=None, step: int = 1):
        """A copy of self with src written over self's slice start:end:step along dim."""
        def view(out):
            d = _wrap_dim(dim, out.dim())
            index = [slice(None)] * out.dim()
            index[d] = slice(start, end, step)
            return out[tuple(index)]

        return _scatter_into(self, src, view)

    def renorm_(self, p, dim: int, maxnorm):
        return self.copy_(_source(self).renorm(p, dim, maxnorm))

    def vdot(self, other):
        """The dot product of two 1-D tensors (the first conjugated: the same for real tensors)."""
        return self.conj().dot(other)

    def cholesky_solve(self, input2, upper: bool = False):
        """X solving A X = self, where A = L L^T and input2 is L (U^T U with U = input2 if upper)."""
        from . import linalg

        if self.dim() < 2 or input2.dim() < 2:
            raise RuntimeError(f"b should have at least 2 dimensions, but has {self.dim()} dimensions instead"
                               if self.dim() < 2 else
                               f"u should have at least 2 dimensions, but has {input2.dim()} dimensions instead")
        lower = input2.mT if upper else input2
        y = linalg.solve_triangular(lower, self, upper=False)
        return linalg.solve_triangular(lower.mT, y, upper=True)

    def cholesky_inverse(self, upper: bool = False):
        """The inverse of A from its Cholesky factor self (A = L L^T, or U^T U if upper)."""
        if self.dim() < 2:
            raise RuntimeError(f"cholesky_inverse: The input tensor A must have at least 2 dimensions.")
        n = self.shape[-1]
        eye = _C.eye(n, dtype=self.dtype, device=self.device).expand(tuple(self.shape))
        return TensorMethods.cholesky_solve(eye, self, upper)

    def triangular_solve(self, A, upper: bool = True, transpose: bool = False, unitriangular: bool = False):
        """(X, A.clone()) with op(A) X = self, op(A) = A or A^T (deprecated in PyTorch for
        linalg.solve_triangular)."""
        from . import linalg

        M = A.mT if transpose else A
        up = upper != transpose
        batch = functional.broadcast_shapes(tuple(self.shape[:-2]), tuple(A.shape[:-2]))
        M = M.expand(tuple(batch) + tuple(M.shape[-2:]))
        b = self.expand(tuple(batch) + tuple(self.shape[-2:]))
        x = linalg.solve_triangular(M, b, upper=up, unitriangular=unitriangular)
        return _triangular_solve_result(x, A.expand(tuple(batch) + tuple(A.shape[-2:])).clone())

    def orgqr(self, input2):
        """linalg.householder_product(self, input2): Q of geqrf's (self, tau)."""
        from .linalg import householder_product

        return householder_product(self, input2)

    def ormqr(self, input2, input3, left: bool = True, transpose: bool = False):
        """other (input3) multiplied by Q (or Q^T, transpose) of geqrf's (self, tau = input2), on
        the left or the right."""
        from .linalg import _ormqr

        return _ormqr(self, input2, input3, left, transpose)

    def apply_(self, callable):
        """Applies callable to every element, in place (CPU only, as PyTorch; slow)."""
        if self.device.type != "cpu":
            raise TypeError("apply_ is only implemented on CPU tensors")
        flat = self.detach().reshape(-1).tolist()
        values = _C.tensor([callable(v) for v in flat], dtype=self.dtype).reshape(self.shape)
        with _no_grad():
            self.copy_(values)
        return self

    def map_(self, tensor, callable):
        """self[i] = callable(self[i], tensor[i]) for every element, tensor broadcast to self's shape,
        in place (CPU only, as PyTorch)."""
        if self.device.type != "cpu" or tensor.device.type != "cpu":
            raise TypeError("map_ is only implemented on CPU tensors")
        other = tensor.detach().expand_as(self).reshape(-1).tolist()
        flat = self.detach().reshape(-1).tolist()
        values = _C.tensor([callable(a, b) for a, b in zip(flat, other)], dtype=self.dtype).reshape(self.shape)
        with _no_grad():
            self.copy_(values)
        return self

    def nonzero_static(self, *, size: int, fill_value: int = -1):
        """nonzero() as a (size, dim) tensor: cut to size rows, or padded with fill_value."""
        if size < 0:
            raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got {size}")
        idx = self.nonzero()
        if idx.shape[0] >= size:
            return idx[:size]
        pad = _C.full((size - idx.shape[0], idx.shape[1]), fill_value, dtype=idx.dtype, device=idx.device)
        return _C.cat([idx, pad], 0)

    def pin_memory(self, device=None):
        """Page-locked host memory needs an accelerator: without one PyTorch raises, as here."""
        from . import cuda

        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.device.type}' memory, only dense CPU tensors can be pinned")
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return self.clone()

    def is_pinned(self, device=None) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return self.device.type == "meta"

    is_sparse_csr = property(lambda self: False)
    is_quantized = property(lambda self: False)
    is_mkldnn = property(lambda self: False)
    # the device kinds minitorch has no backend for: no tensor is on one
    is_mps = is_xpu = is_ipu = is_mtia = is_maia = is_vulkan = is_xla = property(lambda self: False)

    @property
    def volatile(self) -> bool:
        """Always False (the pre-0.4 flag, which no_grad replaced), with PyTorch's warning."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
        return False

    def dequantize(self):
        """A plain tensor's values as float32: itself where it is float32 (quantized tensors
        have their own)."""
        return self if self.dtype == _C.float32 else self.to(_C.float32)

    def module_load(self, other, assign: bool = False):
        """What load_state_dict swaps in for this parameter or buffer: other detached (assign),
        else this tensor with other's values copied in, detached."""
        return other.detach() if assign else self.copy_(other).detach()

    def is_set_to(self, tensor) -> bool:
        """Whether both tensors view the same memory the same way: one storage (told by its address
        and length; storages without memory are the same only for the same tensor), offset, sizes
        and strides."""
        mine, theirs = self.untyped_storage(), tensor.untyped_storage()
        same_storage = self is tensor or (mine.data_ptr() != 0 and mine.data_ptr() == theirs.data_ptr()
                                          and mine.nbytes() == theirs.nbytes())
        return (same_storage and self.storage_offset() == tensor.storage_offset() and self.size() == tensor.size()
                and self.stride() == tensor.stride())

    @property
    def output_nr(self) -> int:
        """Which output of its grad_fn this tensor is (0 for a leaf and a tensor without grad_fn)."""
        if self.grad_fn is None:
            return 0
        from .autograd.graph import get_gradient_edge

        return get_gradient_edge(self).output_nr

    @property
    def name(self):
        """None: PyTorch's Tensor.name, set by nothing in eager code."""
        return None

    def const_data_ptr(self) -> int:
        """The address of the first element (data_ptr), for reading only."""
        return self.data_ptr()

    def as_strided_(self, size, stride, storage_offset=None):
        """self re-pointed in place to the view as_strided(size, stride, storage_offset) of its
        own storage (the offset defaults to self's); the version counter counts the change. On a
        tensor that requires grad, self's history goes through AsStridedBackward1 (PyTorch's
        as_strided_ node: the gradient of the new geometry taken back into the old one)."""
        offset = self.storage_offset() if storage_offset is None else storage_offset
        if self.requires_grad and _C.is_grad_enabled():
            base = self._base
            if self.is_leaf and base is None:
                raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
            if base is not None and base.is_leaf and base.requires_grad:
                raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                                   "operation.")
            _C._as_strided_history(self, self.as_strided(size, stride, offset))
            return self
        from .autograd.graph import increment_version

        self.as_strided(size, stride, offset)  # PyTorch's checks of the geometry against the storage
        with _no_grad():
            self.set_(self.untyped_storage(), offset, tuple(size), tuple(stride))
        increment_version(self)
        return self

    def dim_order(self, *, ambiguity_check=False) -> tuple:
        """The dims from outermost to innermost in memory (strides descending; a tie goes to the
        longer dim, 0-strided dims keep their places), PyTorch's order. ambiguity_check=True
        raises when singleton dims or equal neighbouring strides allow more than one order; a
        list of memory formats raises then unless exactly one of them describes the layout."""
        from ._memory_format import channels_last, channels_last_3d, contiguous_format

        if not isinstance(ambiguity_check, (bool, list)):
            raise ValueError(f"ambiguity_check should be bool or a list of memory formats, got "
                             f"{type(ambiguity_check).__name__}")
        formats = ambiguity_check if isinstance(ambiguity_check, list) else []
        for fmt in formats:
            if fmt not in (contiguous_format, channels_last, channels_last_3d):
                raise ValueError(f"Memory format {fmt} is not supported.")
        sizes, strides = tuple(self.shape), self.stride()
        several = 1 in sizes or any(a == b for a, b in zip(strides, strides[1:]))
        if ambiguity_check is not False and several:
            if sum(self.is_contiguous(memory_format=f) for f in formats) != 1:
                raise RuntimeError("The tensor does not have unique dim order, or cannot map to exact one of "
                                   "the given memory formats.")
        if len(sizes) <= 1 or self.is_contiguous():  # PyTorch's fast paths: no ambiguity raised
            return tuple(range(len(sizes)))
        if len(sizes) == 4 and self.is_contiguous(memory_format=channels_last):
            return (0, 2, 3, 1)

        def outer(a: int, b: int) -> int:
            """1 when dim a lies outside dim b in memory, -1 when inside, 0 when either can"""
            if strides[a] == 0 or strides[b] == 0:
                return 0
            if strides[a] == strides[b]:
                return 0 if sizes[b] >= sizes[a] else 1
            return 1 if strides[a] > strides[b] else -1

        # insertion sort from the innermost dim out, stopping at the first dim known to be inner
        perm = list(reversed(range(len(sizes))))
        for i in range(1, len(perm)):
            j = i
            for k in reversed(range(i)):
                order = outer(perm[k], perm[j])
                if order < 0:
                    break
                if order > 0:
                    perm[k], perm[j] = perm[j], perm[k]
                    j = k
        if ambiguity_check and any(outer(a, b) != -1 for a, b in zip(perm, perm[1:])):
            raise RuntimeError("The tensor does not have unique dim order.")
        return tuple(reversed(perm))

    def resize(self, *sizes):
        """Deprecated out-of-place resize: self's elements in the shape sizes (same count), with
        gradient."""
        warnings.warn("non-inplace resize is deprecated", stacklevel=2)
        return _resized(self, sizes)

    def resize_as(self, tensor):
        """Deprecated out-of-place resize_as: self's elements in tensor's shape (same count)."""
        warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
        return _resized(self, tuple(tensor.size()))


def _resized(t, sizes: tuple):
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    n = math.prod(sizes)
    if t.numel() != n:
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({n} elements in total), but the given "
                           f"tensor has a size of {'x'.join(map(str, t.size()))} ({t.numel()} elements). autograd's "
                           "resize can only change the shape of a given tensor, while preserving the number of "
                           "elements. ")
    return t.contiguous().view(*sizes)


def _is_dense(t) -> bool:
    """Whether t's elements fill a block of memory without gaps (in some order of its dims)."""
    expected = 1
    for stride, size in sorted((st, sz) for sz, st in zip(t.shape, t.stride()) if sz != 1):
        if stride != expected:
            return False
        expected *= size
    return True


def _no_grad():
    from ._grad_mode import no_grad

    return no_grad()


_FUNCTIONS = ("select_scatter", "slice_scatter", "vdot", "cholesky_solve", "cholesky_inverse",
              "triangular_solve", "nonzero_static", "orgqr", "ormqr")


# the functions among them that PyTorch gives out=
_OUT_FUNCTIONS = ("vdot", "cholesky_solve", "cholesky_inverse", "triangular_solve", "ormqr")


def install(namespace: dict, tensor_cls: type) -> None:
    from ._aliases import _function

    for name, member in vars(TensorMethods).items():
        if not name.startswith("__"):
            setattr(tensor_cls, name, member)
    for name in _FUNCTIONS:
        namespace[name] = _function(name, with_out=name in _OUT_FUNCTIONS)
