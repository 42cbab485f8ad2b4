"""Top-level functions PyTorch programs call that are composites of minitorch's ops: isin,
unravel_index, scalar_tensor, empty_strided, asarray, frombuffer, fill, polar, complex,
chain_matmul, pdist, nuclear_norm/frobenius_norm, the top-level in-place forms (exp_, clamp_, ...),
the *_copy functions (a view op's result, copied), unsafe_split/unsafe_chunk, is_neg/resolve_neg
and the functions PyTorch removed in 1.9 (matrix_rank, lstsq, eig, symeig, solve), which raise.

Each function is a few op calls on whole tensors; none computes on values in Python."""
from __future__ import annotations

import builtins
import math
import warnings
from typing import Any

import numpy as np

from . import _C, _python_ops
from ._checks import _to_out


def _tensor_arg(fname: str, value, name: str = "input", position: int = 1) -> None:
    if not isinstance(value, _C.TensorBase):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


# ---- constants ----
e = math.e
pi = math.pi
inf = math.inf
nan = math.nan
newaxis = None


# ---- elementwise composites ----

def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """Whether each element of `elements` occurs in `test_elements` (either may be a number, not
    both), compared after type promotion; `invert` negates. One broadcast comparison against the
    sorted, deduplicated test values through searchsorted (n log m, not n * m)."""
    if not isinstance(elements, _C.TensorBase) and not isinstance(test_elements, _C.TensorBase):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__})")
    if not isinstance(elements, _C.TensorBase):
        elements = _C.tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, _C.TensorBase):
        test_elements = _C.tensor(test_elements, device=elements.device)
    common = _C.promote_types(elements.dtype, test_elements.dtype)
    x = elements.detach().to(common)
    values = test_elements.detach().to(common).reshape(-1).sort().values
    if values.numel() == 0:
        found = _C.zeros(tuple(x.shape), dtype=_C.bool, device=x.device)
    else:
        pos = _C.searchsorted(values, x.contiguous()).clamp(max=values.numel() - 1)
        found = values[pos] == x
    return found.logical_not() if invert else found



def range_(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad: bool = False):
    """torch.range (deprecated): start, start + step, ... up to and including end, in the
    default float dtype unless dtype says otherwise; floor((end - start) / step) + 1 values,
    each start + i * step computed in double."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        raise TypeError("range() missing 1 required positional arguments: \"end\"")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    values = _C.arange(n, dtype=_C.float64, device=device) * step + start
    result = values.to(dtype if dtype is not None else _C._get_default_dtype())
    result.requires_grad_(requires_grad)
    return _to_out(result, out)


def unravel_index(indices, shape):
    """The coordinates of flat indices into a row-major tensor of `shape`: a tuple of one int64
    tensor per dim, each of indices' shape; negative indices count from the end."""
    if not isinstance(indices, _C.TensorBase):
        raise TypeError(f"expected 'indices' to be integer dtype, but got {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype == _C.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    if any(not isinstance(s, int) for s in shape):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {shape}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    # floor division and a non-negative remainder per dim, as PyTorch's: no bounds check, so an
    # index past the end wraps and a negative one counts from the end
    idx = indices.to(_C.int64)
    coords = []
    for size in reversed(shape):
        coords.append(_C.remainder(idx, size))
        idx = _C.div(idx, size, rounding_mode="floor")
    return tuple(reversed(coords))


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False, layout=None, pin_memory=False):
    """A 0-d tensor holding s, in the default float dtype unless told."""
    return _C.full((), s, dtype=dtype if dtype is not None else _C._get_default_dtype(), device=device,
                   requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False):
    """An uninitialised tensor of `size` with the given strides, on memory just large enough for
    the furthest element."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: {list(size)}")
    span = 0 if 0 in size else 1 + sum((n - 1) * st for n, st in zip(size, stride))
    base = _C.empty((span,), dtype=dtype, device=device)
    out = base.as_strided(size, stride)
    return out.requires_grad_(True) if requires_grad else out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False):
    """An uninitialised tensor of `size` whose memory holds its dims in the order physical_layout
    lists them (physical_layout[0] outermost): empty(sizes in that order), permuted back."""
    size, physical_layout = tuple(size), tuple(physical_layout)
    if len(size) != len(physical_layout):
        raise RuntimeError("Number of dimensions in size does not match the length of the physical_layout; i.e. "
                           f"len(size) = {len(size)} is not equal to len(physical_layout) = {len(physical_layout)}")
    if sorted(physical_layout) != list(builtins.range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    stored = _C.empty(tuple(size[d] for d in physical_layout), dtype=dtype, device=device)
    out = stored.permute(*[physical_layout.index(d) for d in builtins.range(len(size))])
    return out.requires_grad_(True) if requires_grad else out


def norm_except_dim(v, pow: int = 2, dim: int = 0):  # noqa: A002 - PyTorch's parameter name
    """The pow-norm (an int pow, as PyTorch's schema) of each slice of v along dim, over all its
    other dims, shaped to broadcast against v (size 1 but at dim); dim=-1 is the norm of all of v."""
    for k, (name, value) in enumerate((("pow", pow), ("dim", dim))):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"norm_except_dim(): argument '{name}' (position {k + 2}) must be int, "
                            f"not {type(value).__name__}")
    if dim == -1:
        return v.norm(pow)
    rows = v.movedim(dim, 0).reshape(v.size(dim), -1)
    shape = [1] * v.dim()
    shape[dim] = v.size(dim)
    return rows.norm(pow, 1).reshape(shape)


def fill(input, value):
    """A new tensor like input, every element value (a number or a 0-d tensor)."""
    _tensor_arg("fill", input)
    return input.clone().fill_(value)


def polar(abs, angle, *, out=None):  # noqa: A002 - PyTorch's parameter name
    """abs * (cos(angle) + i sin(angle)): a complex tensor of the float inputs' dtype."""
    _tensor_arg("polar", abs, "abs")
    _tensor_arg("polar", angle, "angle", 2)
    _same_float_kind("polar", abs, angle)
    return _to_out(complex(abs * _C.cos(angle), abs * _C.sin(angle)), out)


def complex(real, imag, *, out=None):  # noqa: A001 - PyTorch's name
    """real + i imag, of the float inputs' dtype (float32 -> complex64, float64 -> complex128),
    broadcast together; differentiable in both."""
    _tensor_arg("complex", real, "real")
    _tensor_arg("complex", imag, "imag", 2)
    _same_float_kind("complex", real, imag)
    from .functional import broadcast_tensors

    re, im = broadcast_tensors(real, imag)
    return _to_out(_C.view_as_complex(_C.stack([re, im], -1)), out)


def _same_float_kind(fname: str, a, b) -> None:
    names = {_C.float16: "Half", _C.float32: "Float", _C.float64: "Double"}
    if a.dtype not in names or b.dtype not in names:
        legacy = {_C.int64: "Long", _C.int32: "Int", _C.int16: "Short", _C.int8: "Char", _C.uint8: "Byte",
                  _C.bool: "Bool", _C.bfloat16: "BFloat16", **names}
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{legacy.get(a.dtype, a.dtype)} and {legacy.get(b.dtype, b.dtype)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"Expected object of scalar type {names[a.dtype]} but got scalar type "
                           f"{names[b.dtype]} for second argument")


# ---- products and norms ----

def chain_matmul(*matrices, out=None):
    """The product of the matrices, in the cheapest order (deprecated: linalg.multi_dot)."""
    from . import linalg

    warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                  "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
                  "multiple parameters.", UserWarning, stacklevel=2)
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        m = matrices[0]
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead.")
        return _to_out(m.clone(), out)
    return _to_out(linalg.multi_dot(list(matrices)), out)


def pdist(input, p: float = 2):
    """The p-norm distance between every pair of rows i < j of an (N, M) input, in the order
    (0,1), (0,2), ..., (N-2,N-1): the strict upper triangle of cdist(input, input)."""
    from .nn.functional import pdist as _pdist

    return _pdist(input, p)


def nuclear_norm(input, dim=None, keepdim: bool = False, *, out=None):
    """The sum of singular values (deprecated: linalg.matrix_norm(input, 'nuc'))."""
    from . import linalg

    warnings.warn("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be "
                  "removed in a future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` "
                  "instead", UserWarning, stacklevel=2)
    dims = (-2, -1) if dim is None else tuple(dim)
    if len(dims) != 2:
        raise RuntimeError("nuclear norm requires a 'dim' argument of size 2")
    if dim is None and input.dim() != 2:
        raise RuntimeError(f"Expected a tensor with 2 dimensions, but got a tensor with {input.dim()} "
                           f"dimensions instead.")
    return _to_out(linalg.matrix_norm(input, "nuc", dims, keepdim), out)


def frobenius_norm(input, dim, keepdim: bool = False, *, out=None):
    """The 2-norm over dim (deprecated: linalg.vector_norm(input, 2, dim, keepdim))."""
    from . import linalg

    warnings.warn("at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be "
                  "removed in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` "
                  "instead", UserWarning, stacklevel=2)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions instead.")
    return _to_out(linalg.vector_norm(input, 2, dims, keepdim), out)


def _removed(name: str, hint: str):
    def removed(*args, **kwargs):
        raise RuntimeError(f"This function was deprecated since version 1.9 and is now removed. {hint}")

    removed.__name__ = removed.__qualname__ = name
    removed.__doc__ = f"Removed in PyTorch 1.9: raises, naming the replacement. {hint}"
    return removed


REMOVED = {
    "matrix_rank": _removed("matrix_rank", "Please use the `torch.linalg.matrix_rank` function instead. The "
                            "parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
    "lstsq": _removed("lstsq", "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`: "
                      "X = torch.linalg.lstsq(A, B).solution replaces torch.lstsq(B, A)."),
    "eig": _removed("eig", "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble`: "
                    "torch.linalg.eigvals(A) or torch.linalg.eig(A) replace torch.eig(A)."),
    "symeig": _removed("symeig", "torch.linalg.eigvalsh(A, UPLO) or torch.linalg.eigh(A, UPLO) replace "
                       "torch.symeig(A, upper=upper), with UPLO='U' if upper else 'L'."),
    "solve": _removed("solve", "`torch.solve` is deprecated in favor of `torch.linalg.solve`: "
                      "X = torch.linalg.solve(A, B) replaces torch.solve(B, A).solution."),
}


# ---- neg bit, unsafe splits, loss at top level ----

def is_neg(input) -> bool:
    """False: minitorch has no lazy negation bit (neg() computes at once)."""
    _tensor_arg("is_neg", input)
    return False


def resolve_neg(input):
    """input itself: there is no lazy negation to materialize."""
    _tensor_arg("resolve_neg", input)
    return input


def unsafe_split(tensor, split_size_or_sections, dim: int = 0):
    """split: the same views (minitorch has no check of in-place use of the pieces to skip);
    aten.unsafe_split.Tensor for __torch_dispatch__."""
    _tensor_arg("unsafe_split", tensor, "tensor")
    if isinstance(split_size_or_sections, int) and _python_ops.wanted(tensor):
        args = _python_ops.trimmed((tensor, split_size_or_sections, dim), (0,))
        return _python_ops.dispatch("unsafe_split", _unsafe_split, args, {})
    return _unsafe_split(tensor, split_size_or_sections, dim)


def _unsafe_split(tensor, split_size_or_sections, dim: int = 0):
    return tuple(tensor.split(split_size_or_sections, dim))


def unsafe_split_with_sizes(input, split_sizes, dim: int = 0):
    _tensor_arg("unsafe_split_with_sizes", input)
    return tuple(_C.split_with_sizes(input, split_sizes, dim))


def unsafe_chunk(input, chunks: int, dim: int = 0):
    """chunk's pieces; as PyTorch's, unsafe_split's with their size (so __torch_dispatch__ sees
    aten.unsafe_split.Tensor)."""
    _tensor_arg("unsafe_chunk", input)
    if not _python_ops.wanted(input) or not isinstance(chunks, int) or chunks <= 0 or not input.dim():
        return tuple(input.chunk(chunks, dim))
    size = input.size(dim)
    return unsafe_split(input, -(-size // chunks), dim)


_REDUCTIONS = ("none", "mean", "sum")  # the at:: enum: its number is the index


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction: int = 1):
    """The aten form of F.binary_cross_entropy_with_logits: reduction is 0 (none), 1 (mean) or 2 (sum)."""
    from .nn.functional import binary_cross_entropy_with_logits as _bce

    if not isinstance(reduction, int) or not 0 <= reduction < 3:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _bce(input, target, weight, reduction=_REDUCTIONS[reduction], pos_weight=pos_weight)


def rrelu(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    from .nn.functional import rrelu as _rrelu

    return _rrelu(input, lower, upper, training)


def rrelu_(input, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, generator=None):
    from .nn.functional import rrelu_ as _rrelu_

    return _rrelu_(input, lower, upper, training)


def to_dlpack(tensor):
    """A DLPack capsule of the tensor's memory (the legacy, unversioned one PyTorch's to_dlpack
    gives), for a consumer's from_dlpack."""
    _tensor_arg("to_dlpack", tensor, "tensor")
    return tensor.__dlpack__()


# ---- asarray and frombuffer ----

def _element_size(dtype) -> int:
    return _C.empty((0,), dtype=dtype).element_size()


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0, requires_grad: bool = False):
    """A 1-d tensor over the bytes of an object with the buffer protocol, sharing its memory:
    `count` elements of dtype (all that fit when -1) from byte `offset`."""
    view = memoryview(buffer).cast("B")
    length, size = view.nbytes, _element_size(dtype)
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset ({offset} bytes) must "
                         f"not be greater than actual buffer length ({length} bytes)")
    raw = np.frombuffer(view, dtype=np.uint8, count=count * size, offset=offset)
    if view.readonly:
        warnings.warn("The given buffer is not writable, and minitorch does not support non-writable tensors. "
                      "This means you can write to the underlying (supposedly non-writable) buffer using the "
                      "tensor. You may want to copy the buffer to protect its data or make it writable before "
                      "converting it to a tensor.", UserWarning, stacklevel=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # from_numpy's own warning for a read-only array: said above
        out = _C.from_numpy(raw).view(dtype)
    return out.requires_grad_(True) if requires_grad else out


def asarray(obj: Any, *, dtype=None, device=None, copy=None, requires_grad=None):
    """obj as a tensor, sharing its memory where it can (a tensor, a NumPy array, a DLPack capsule
    holder, a buffer) unless copy=True or a dtype/device change needs a copy (which copy=False
    refuses); sequences and numbers are always copied (and copy=False refuses them)."""
    from ._device import device as _device
    from ._dlpack import from_dlpack

    target = _device(device) if isinstance(device, str) else device
    if not isinstance(obj, _C.TensorBase) and hasattr(obj, "__dlpack__") and not isinstance(obj, np.ndarray):
        obj = from_dlpack(obj)
    if isinstance(obj, np.ndarray):
        obj = _C.from_numpy(obj)  # the array's memory, which a copy below leaves alone
    if isinstance(obj, _C.TensorBase):
        return _from_tensor(obj, dtype, target, copy, requires_grad)
    if _is_buffer(obj):
        base = frombuffer(obj, dtype=dtype if dtype is not None else _C._get_default_dtype())
        return _from_tensor(base, None, target, copy, requires_grad)
    if copy is False:
        raise ValueError("can't alias arbitrary sequence into a tensor.")
    out = _C.tensor(obj, dtype=dtype, device=target)
    return out.requires_grad_(True) if requires_grad else out


def _is_buffer(obj) -> bool:
    if isinstance(obj, (str, list, tuple, int, float, bool)):
        return False
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


_LEGACY_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                 "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _legacy_name(dtype) -> str:
    short = str(dtype).split(".")[-1]
    return _LEGACY_NAMES.get(short, short)


def _from_tensor(t, dtype, device, copy, requires_grad):
    """asarray of a tensor: t itself when nothing changes, else a (detached) converted copy."""
    from ._device import device as _device

    changes = (dtype is not None and dtype != t.dtype) or (device is not None and _device(device) != t.device)
    if copy is False and changes:
        if dtype is not None and dtype != t.dtype:
            raise ValueError(f"can't alias tensor with dtype '{_legacy_name(t.dtype)}' into dtype "
                             f"'{_legacy_name(dtype)}'.")
        raise ValueError(f"can't alias tensor from device '{t.device}' to '{device}'.")
    grad = t.requires_grad if requires_grad is None else requires_grad
    if copy or changes:
        out = t.detach().to(dtype=dtype, device=device, copy=True)
        return out.requires_grad_(True) if grad else out
    if grad == t.requires_grad:
        return t
    out = t.detach()
    return out.requires_grad_(True) if grad else out


# ---- generated families ----

# the view ops whose *_copy PyTorch has, and the Tensor method each copies
_VIEW_COPIES = ("as_strided", "detach", "diagonal", "expand", "permute", "select", "squeeze", "t", "transpose",
                "unfold", "unsqueeze", "view", "alias", "slice", "split", "split_with_sizes", "unbind",
                "view_as_real", "view_as_complex")


def _view_of(name: str):
    if name == "alias":
        return lambda t: t.view(tuple(t.shape))
    if name == "slice":
        def sliced(t, dim=0, start=None, end=None, step=1):
            index = [slice(None)] * t.dim()
            index[dim] = slice(start, end, step)
            return t[tuple(index)]

        return sliced
    if name == "split_with_sizes":
        return lambda t, split_sizes, dim=0: _C.split_with_sizes(t, split_sizes, dim)
    if name in ("view_as_real", "view_as_complex"):
        return getattr(_C, name)
    return lambda t, *args, **kwargs: getattr(t, name)(*args, **kwargs)


def _copy_of_view(name: str):
    view = _view_of(name)

    def copy_fn(input, *args, out=None, **kwargs):
        _tensor_arg(name + "_copy", input)
        res = view(input, *args, **kwargs)
        if isinstance(res, (tuple, list)):
            copies = tuple(r.clone(memory_format=_contiguous()) for r in res)
            if out is not None:
                for o, c in zip(out, copies):
                    _to_out(c, o)
                return None
            return copies
        return _to_out(res.clone(memory_format=_contiguous()), out)

    copy_fn.__name__ = copy_fn.__qualname__ = name + "_copy"
    copy_fn.__doc__ = f"{name}(input, ...) as a new row-major tensor, not a view (differentiable)."
    return copy_fn


def _contiguous():
    from ._memory_format import contiguous_format

    return contiguous_format


# the in-place ops PyTorch also has at top level: torch.exp_(t) is t.exp_()
_INPLACE = ("abs_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "clamp_",
            "clamp_max_", "clamp_min_", "cos_", "detach_", "exp2_", "exp_", "expm1_", "fill_", "index_put_",
            "log10_", "log1p_", "log2_", "log_", "neg_", "negative_", "reciprocal_", "resize_as_", "rsqrt_",
            "sigmoid_", "sin_", "sqrt_", "square_", "tanh_", "zero_", "conj_physical_")


def _inplace(name: str):
    def fn(input, *args, **kwargs):
        _tensor_arg(name, input)
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"input.{name}(...): in place, returns input."
    return fn


class TensorSurface:
    """Mixed into Tensor by install()."""

    def is_neg(self) -> bool:
        return False

    def resolve_neg(self):
        return self

    def unsafe_split(self, split_size, dim: int = 0):
        return unsafe_split(self, split_size, dim)

    def unsafe_split_with_sizes(self, split_sizes, dim: int = 0):
        return unsafe_split_with_sizes(self, split_sizes, dim)

    def unsafe_chunk(self, chunks: int, dim: int = 0):
        return unsafe_chunk(self, chunks, dim)

    def conj_physical_(self):
        """The conjugate in place (real tensors are their own conjugate)."""
        if self.dtype.is_complex:
            return self.copy_(_C.conj_physical(self))
        return self

    def lstsq(self, A):
        return REMOVED["lstsq"](self, A)

    def eig(self, eigenvectors: bool = False):
        return REMOVED["eig"](self)

    def symeig(self, eigenvectors: bool = False, upper: bool = True):
        return REMOVED["symeig"](self)

    def solve(self, A):
        return REMOVED["solve"](self, A)


_NAMES = ("e", "pi", "inf", "nan", "newaxis", "isin", "unravel_index", "scalar_tensor", "empty_strided",
          "empty_permuted", "norm_except_dim",
          "fill", "polar", "complex", "chain_matmul", "pdist", "nuclear_norm", "frobenius_norm", "is_neg",
          "resolve_neg", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk",
          "binary_cross_entropy_with_logits", "rrelu", "rrelu_", "asarray", "frombuffer", "to_dlpack")


def install(namespace: dict, tensor_cls: type) -> None:
    for name in _NAMES:
        namespace[name] = globals()[name]
    namespace["range"] = range_  # a module-level name here would hide the builtin
    namespace["adjoint"] = tensor_cls.adjoint

    namespace.update(REMOVED)
    for view in _VIEW_COPIES:
        namespace[view + "_copy"] = _copy_of_view(view)
    for member, value in vars(TensorSurface).items():
        if not member.startswith("__"):
            setattr(tensor_cls, member, value)
    # clamp_ as _C's function form: its refusal of mixed bounds names the function's overloads
    # (input first), as torch.clamp_'s does, where the method's would not
    namespace["clamp_"] = _C.clamp_
    for name in _INPLACE:
        if name not in namespace:
            namespace[name] = _inplace(name)
    if "is_conj" not in namespace:
        namespace["is_conj"] = _inplace("is_conj")
        namespace["is_conj"].__doc__ = "input.is_conj()"
