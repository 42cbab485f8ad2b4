"""PyTorch's alias names and small tensor predicates (torch/_refs and native_functions.yaml's
aliases: greater for gt, arccos for acos, multiply for mul, ...).

An alias is the op itself under a second name, for minitorch.<name> and Tensor.<name> alike,
so it records the same autograd node and prints the same errors. The predicates (is_signed,
is_nonzero, ...) read a tensor's metadata only. Nothing here computes on values.
"""
from __future__ import annotations

from . import _C

# alias -> op, as PyTorch's native_functions.yaml lists them; each is a function and a method,
# and "<alias>_" the in-place method where the op has one.
ALIASES = {
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
    "multiply": "mul", "divide": "div", "negative": "neg", "absolute": "abs",
    "arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctan2": "atan2",
    "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "subtract": "sub", "sgn": "sign",
}


def install(namespace: dict, tensor_cls: type) -> None:
    """Adds each alias to the minitorch namespace and to Tensor (and its in-place form)."""
    for alias, op in ALIASES.items():
        namespace[alias] = namespace.get(op) or getattr(_C, op)
        setattr(tensor_cls, alias, getattr(_C.TensorBase, op))
        if hasattr(_C.TensorBase, op + "_"):
            setattr(tensor_cls, alias + "_", getattr(_C.TensorBase, op + "_"))
    for mixin in (TensorAliases, TensorInplace, TensorIndexing):
        for name, member in vars(mixin).items():
            if not name.startswith("__"):
                setattr(tensor_cls, name, member)
    for name in ("is_signed", "is_nonzero", "is_same_size", "is_inference",
                 "is_floating_point", "positive", "ravel", "index_reduce", "put",
                 "diagonal_scatter", "as_strided_scatter"):
        namespace[name] = _function(name)


def _function(name: str, with_out: bool = False):
    """torch.name(input, ...) as input.name(...); with_out: with PyTorch's out= too"""
    def fn(input, *args, **kwargs):
        if not isinstance(input, _C.TensorBase):
            if _C._has_torch_function((input,)):  # a sparse tensor
                from .overrides import handle_torch_function

                return handle_torch_function(fn, (input,), input, *args, **kwargs)
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        if not with_out:
            return getattr(input, name)(*args, **kwargs)
        out = kwargs.pop("out", None)
        from ._checks import _to_out

        return _to_out(getattr(input, name)(*args, **kwargs), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"input.{name}(...), as torch.{name}."
    return fn


class TensorAliases:
    """Mixed into Tensor: the predicates and the real-tensor forms of the conjugate views."""

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    def is_signed(self) -> bool:
        """True for the signed dtypes: the floats and int8/16/32/64 (not bool or uint8)."""
        return self.dtype.is_signed

    def is_inference(self) -> bool:
        """Whether this is an inference tensor: made in inference_mode, or a view of one."""
        return self._is_inference

    def is_same_size(self, other) -> bool:
        return tuple(self.shape) == tuple(other.shape)

    def is_nonzero(self) -> bool:
        """The truth value of a one-element tensor, with PyTorch's errors for any other."""
        n = self.numel()
        if n == 0:
            raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
        if n > 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def positive(self):
        """self itself (unary +); PyTorch refuses it on bool tensors."""
        if self.dtype == _C.bool:
            raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
        return self

    def ravel(self):
        """The elements in row-major order as one dimension: a view when self is contiguous."""
        return self.contiguous().view(-1)

    @property
    def H(self):
        """The conjugate transpose of a matrix (the transpose, for real tensors)."""
        if self.dim() not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor. "
                               "For batches of matrices, consider using tensor.mH")
        return self.t().conj() if self.is_complex() else self.t()

    @property
    def mH(self):
        """The conjugate transpose of the last two dims (mT, for real tensors)."""
        return _batch_transpose(self, "mH")

    def adjoint(self):
        """The conjugate transpose of the last two dims (mT, for real tensors)."""
        return _batch_transpose(self, "adjoint()")


def _batch_transpose(t, name: str):
    if t.dim() == 1:
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {t.dim()}-D tensor.")
    return t.mT.conj() if t.is_complex() else t.mT


class TensorInplace:
    """Mixed into Tensor: in-place forms PyTorch has as methods (Tensor.cumsum_, addmm_, ...),
    each the out-of-place op followed by one copy_ into self. Under autograd the op reads a clone
    of self, so what its node saves is not the tensor the copy_ then changes."""

    def cumsum_(self, dim, *, dtype=None):
        _same_dtype(self, dtype)
        return self.copy_(_source(self).cumsum(dim, dtype=dtype))

    def cumprod_(self, dim, *, dtype=None):
        _same_dtype(self, dtype)
        return self.copy_(_source(self).cumprod(dim, dtype=dtype))

    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        return self.copy_(_source(self).addmm(mat1, mat2, beta=beta, alpha=alpha))

    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        return self.copy_(_source(self).addmv(mat, vec, beta=beta, alpha=alpha))

    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return self.copy_(_source(self).baddbmm(batch1, batch2, beta=beta, alpha=alpha))

    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return self.copy_(_source(self).addbmm(batch1, batch2, beta=beta, alpha=alpha))

    def addr_(self, vec1, vec2, *, beta=1, alpha=1):
        return self.copy_(_source(self).addr(vec1, vec2, beta=beta, alpha=alpha))

    def resize_as_(self, the_template, *, memory_format=None):
        return self.resize_(the_template.shape)

    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                          pin_memory=False):
        """An uninitialised tensor of the given size and strides, with self's dtype and device
        by default."""
        flat = self.new_empty(_span(size, stride), dtype=dtype, device=device, layout=layout, pin_memory=pin_memory)
        return flat.as_strided(size, stride).requires_grad_(requires_grad)

    def fill_diagonal_(self, fill_value, wrap=False):
        """Fills the main diagonal (all dims of equal length beyond 2-D); wrap=True continues a
        tall matrix's diagonal every ncols + 1 rows, as NumPy's fill_diagonal."""
        if self.dim() < 2:
            raise RuntimeError("dimensions must larger than 1")
        if self.dim() > 2 and len(set(self.shape)) != 1:
            raise RuntimeError("all dimensions of input must be of equal length")
        size = min(self.shape)
        offset = self.storage_offset()
        self.as_strided((size,), (sum(self.stride()),), offset).fill_(fill_value)
        if wrap and self.dim() == 2 and self.shape[0] > self.shape[1] + 1:
            rows, cols = self.shape
            for start in range(cols + 1, rows, cols + 1):
                self[start:].diagonal().fill_(fill_value)
        return self


class TensorIndexing:
    """Mixed into Tensor: index_reduce and put, PyTorch's forms over the scatter and index ops
    (one op each, after view-only arrangements of the index)."""

    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        return self.clone().index_reduce_(dim, index, source, reduce, include_self=include_self)

    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        """self[..., index[i], ...] (along dim) reduced with source[..., i, ...] by prod, mean,
        amax or amin: scatter_reduce_ with index spread along source's other dims."""
        if reduce not in ("prod", "mean", "amax", "amin"):
            raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
        if index.dtype not in (_C.int64, _C.int32):
            raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: {_NAMES[index.dtype]}")
        if index.dim() > 1:
            raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: {index.dim()} with type: "
                             f"{_NAMES[index.dtype]} and size: {list(index.shape)}")
        d = dim % max(self.dim(), 1)
        if source.dim() and index.numel() != source.shape[d]:
            raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to "
                               f"source.size(dim): ({source.shape[d]}), for dim: {dim}")
        spread = index.reshape([-1 if k == d else 1 for k in range(source.dim())]).expand(source.shape)
        return self.scatter_reduce_(d, spread.long(), source, reduce, include_self=include_self)

    def put(self, index, source, accumulate=False):
        """A copy of self with source's elements at the flat positions index (added when
        accumulate), as if self were 1-D."""
        if source.numel() != index.numel():
            raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                             f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
        flat = self.reshape(-1).index_put((index.reshape(-1),), source.reshape(-1), accumulate)
        return flat.view(self.shape)

    def put_(self, index, source, accumulate=False):
        if not accumulate or self.is_cuda:  # PyTorch's put_ has no deterministic kernel for these
            from ._modes import _alert_not_deterministic

            _alert_not_deterministic("put_")
        return self.copy_(self.put(index, source, accumulate))

    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        """A copy of self with src written over its diagonal(offset, dim1, dim2)."""
        return _scatter_into(self, src, lambda out: out.diagonal(offset, dim1, dim2))

    def as_strided_scatter(self, src, size, stride, storage_offset=None):
        """A copy of self with src written over its as_strided(size, stride, storage_offset)."""
        return _scatter_into(self, src, lambda out: out.as_strided(size, stride, storage_offset))


def _scatter_into(self, src, view_of):
    out = self.clone()
    view = view_of(out)
    if tuple(view.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view.shape)}")
    view.copy_(src)
    return out


_NAMES = {_C.float32: "Float", _C.float64: "Double", _C.int64: "Long", _C.int32: "Int", _C.bool: "Bool",
          _C.int16: "Short", _C.int8: "Char", _C.uint8: "Byte", _C.float16: "Half", _C.bfloat16: "BFloat16",
          _C.uint16: "UInt16", _C.uint32: "UInt32", _C.uint64: "UInt64", _C.float8_e4m3fn: "Float8_e4m3fn",
          _C.float8_e5m2: "Float8_e5m2", _C.float8_e4m3fnuz: "Float8_e4m3fnuz", _C.float8_e5m2fnuz: "Float8_e5m2fnuz"}


def _same_dtype(t, dtype) -> None:
    if dtype is not None and dtype != t.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_C_NAMES[t.dtype]} and output tensor dtype "
                           f"{_C_NAMES[dtype]} should match")


_C_NAMES = {_C.float32: "float", _C.float64: "double", _C.int64: "long int", _C.int32: "int", _C.bool: "bool",
            _C.int16: "short int", _C.int8: "signed char", _C.uint8: "unsigned char", _C.float16: "c10::Half",
            _C.bfloat16: "c10::BFloat16", _C.uint16: "unsigned short", _C.uint32: "unsigned int",
            _C.uint64: "unsigned long", _C.float8_e4m3fn: "c10::Float8_e4m3fn", _C.float8_e5m2: "c10::Float8_e5m2",
            _C.float8_e4m3fnuz: "c10::Float8_e4m3fnuz", _C.float8_e5m2fnuz: "c10::Float8_e5m2fnuz"}


def _source(t):
    """t, or a clone of it where autograd may save it for backward."""
    return t.clone() if t.requires_grad and _C.is_grad_enabled() else t


def _span(size, stride) -> int:
    """The number of elements an as_strided(size, stride) view reaches (0 if it is empty)."""
    if any(s == 0 for s in size):
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(size, stride))
