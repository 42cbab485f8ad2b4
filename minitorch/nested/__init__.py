"""minitorch.nested: nested tensors (PyTorch's torch.nested), a batch of tensors whose sizes differ
along some dims: sentences of different lengths without padding.

A NestedTensor keeps, as PyTorch's strided NestedTensorImpl does, one contiguous 1-D buffer holding
every component's elements one after another and each component's size; a component is a view
of the buffer. So a pointwise op (exp, x + y, x * 2, relu, dropout) is one call on the buffer, and
linear, layer_norm and softmax over the last dim are one call on the buffer seen as (rows, last dim) when
the last dim is regular. The jagged layout (layout=minitorch.jagged) is the same buffer read as
values (sum of lengths, *rest) with offsets, for components that differ only in their first dim.
Every op goes through autograd on the buffer, so gradients reach as_nested_tensor's inputs and
nested_tensor(..., requires_grad=True)'s leaf. Functions of minitorch reach a nested tensor through
__torch_function__ (minitorch/overrides.py). sum, mean, amax and amin reduce where PyTorch's
nested tensors do (the last dim; for jagged ones also the ragged dim, giving a dense tensor).
Not done: views other than unbind and transpose, indexing beyond picking one component.
"""
from __future__ import annotations

import functools
import itertools

from .. import _C
from .._backed import BackedByValues, PointwiseMethods, install_dunders
from .._tensor import Tensor
from ..sparse import layout, strided

jagged = layout("jagged")

_ragged_ids = itertools.count(1)  # names the jagged dims as PyTorch's symbolic sizes j1, j2, ...


class _RaggedDim:
    """The size of a jagged tensor's ragged dim: no single number; prints as PyTorch's j<n>, and
    a minitorch.Size holds it as PyTorch's holds its nested int."""

    _mt_symbolic_size = True

    def __init__(self):
        self._id = next(_ragged_ids)

    def __repr__(self) -> str:
        return f"j{self._id}"


class NestedTensor(PointwiseMethods, BackedByValues):
    """A list of tensors of one dtype, device and number of dims, in one buffer."""

    is_nested = True
    is_sparse = False

    def __init__(self, buffer: Tensor, sizes: list, layout=strided):
        self._v = buffer  # 1-D, contiguous
        self._sizes = [tuple(s) for s in sizes]
        self.layout = layout
        if layout is jagged:
            self._ragged = _RaggedDim()

    # --- what it is -------------------------------------------------------------------------
    def dim(self) -> int:
        return len(self._sizes[0]) + 1 if self._sizes else 1

    ndim = property(dim)

    def _regular(self, d: int):
        """Dim d's size where every component agrees on it (dim 0: their number), else None."""
        if d == 0:
            return len(self._sizes)
        sizes = {s[d - 1] for s in self._sizes}
        return sizes.pop() if len(sizes) == 1 else None

    def size(self, dim=None):
        if dim is None:
            if self.layout is jagged:
                return self.shape
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please file an issue.")
        n = self.dim()
        if not -n <= dim < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
        size = self._regular(dim % n)
        if size is None:
            if self.layout is jagged:
                return self._ragged
            raise RuntimeError(f"Given dimension {dim % n} is irregular and does not have a size.")
        return size

    @property
    def shape(self):
        if self.layout is not jagged:
            return self.size()
        return _C.Size(self._ragged if s is None else s for s in map(self._regular, range(self.dim())))

    def numel(self) -> int:
        return self._v.numel()

    def __len__(self) -> int:
        return len(self._sizes)

    @property
    def grad(self):
        g = self._v.grad
        return None if g is None else NestedTensor(g, self._sizes, self.layout)

    def is_contiguous(self, memory_format=None) -> bool:
        return True

    def _like(self, buffer: Tensor, sizes=None) -> NestedTensor:
        out = NestedTensor(buffer, self._sizes if sizes is None else sizes, self.layout)
        if self.layout is jagged:
            out._ragged = self._ragged  # the same lengths: the same ragged size, as PyTorch's j1
        return out

    # --- components -------------------------------------------------------------------------
    def _numels(self) -> list:
        out = []
        for s in self._sizes:
            n = 1
            for k in s:
                n *= k
            out.append(n)
        return out

    def unbind(self, dim: int = 0) -> tuple:
        if dim != 0:
            raise RuntimeError(f"NestedTensor can only be unbound along dimension 0 got dimension {dim} instead.")
        parts = self._v.split(self._numels()) if self._sizes else ()
        return tuple(p.view(s) for p, s in zip(parts, self._sizes))

    def __getitem__(self, index):
        if isinstance(index, int):
            return self.unbind()[index]
        raise NotImplementedError("minitorch's nested tensors index only with an integer (one component)")

    def __iter__(self):
        return iter(self.unbind())

    def to_padded_tensor(self, padding: float, output_size=None) -> Tensor:
        return to_padded_tensor(self, padding, output_size)

    def values(self) -> Tensor:
        if self.layout is not jagged:
            raise RuntimeError("values(): only the jagged layout has values; use unbind() or to_padded_tensor()")
        rest = self._sizes[0][1:] if self._sizes else ()
        return self._v.view(-1, *rest)

    def offsets(self) -> Tensor:
        lengths = _C.tensor([s[0] for s in self._sizes], dtype=_C.int64)
        return _C.cat([_C.zeros((1,), dtype=_C.int64), lengths.cumsum(0)]).to(self.device)

    def __repr__(self) -> str:
        if self.layout is jagged:
            return f"NestedTensor(size={tuple(self.shape)}, offsets={self.offsets()!r}, contiguous=True)"
        parts = [("  " + repr(t.detach())).replace("\n", "\n  ") for t in self.unbind()]
        return "nested_tensor([\n" + ",\n".join(parts) + "\n])"

    __str__ = __repr__

    # --- conversions --------------------------------------------------------------------------
    def to(self, *args, **kwargs) -> NestedTensor:
        buffer = self._v.to(*args, **kwargs)
        return self if buffer is self._v else self._like(buffer)

    def detach(self) -> NestedTensor:
        return self._like(self._v.detach())

    def clone(self) -> NestedTensor:
        return self._like(self._v.clone())

    def contiguous(self, memory_format=None) -> NestedTensor:
        return self

    def transpose(self, dim0: int, dim1: int) -> NestedTensor:
        n = self.dim()
        dim0, dim1 = dim0 % n, dim1 % n
        if 0 in (dim0, dim1):
            raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
        return _from_parts([t.transpose(dim0 - 1, dim1 - 1) for t in self.unbind()], strided)


NestedTensor.__matmul__ = lambda self, other: _matmul(self, other)
NestedTensor.softmax = lambda self, dim, dtype=None: _softmax("softmax", self, dim, dtype)
NestedTensor.log_softmax = lambda self, dim, dtype=None: _softmax("log_softmax", self, dim, dtype)


def _pointwise(func, args, kwargs):
    """func on the buffers: every nested argument must have the first one's sizes; other tensor
    arguments must be 0-dim (PyTorch's strided nested tensors broadcast no dense operand)."""
    first = next(a for a in itertools.chain(args, kwargs.values()) if isinstance(a, NestedTensor))

    def unwrap(a):
        if isinstance(a, NestedTensor):
            if a._sizes != first._sizes:
                raise RuntimeError("nested tensors have different sizes: the op needs the same size for each "
                                   f"component, got {first._sizes} and {a._sizes}")
            return a._v
        if isinstance(a, Tensor) and a.dim() > 0:
            raise RuntimeError("Expected both self and other to be nested, but got a nested self and non-nested "
                               "other")
        return a

    out = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in kwargs.items()})
    return first._like(out) if isinstance(out, Tensor) else out


def _softmax(name, input, dim, _stacklevel=3, dtype=None):
    n = input.dim()
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    dim %= n
    if dim == 0:
        raise RuntimeError(f"Cannot apply {name} across nested dimension 0")
    last = input._regular(n - 1)
    if dim == n - 1 and last is not None:  # rows of the buffer
        out = getattr(_C, name)(input._v.view(-1, max(last, 1)), -1, dtype)
        return input._like(out.reshape(-1))
    return _from_parts([getattr(_C, name)(t, dim - 1, dtype) for t in input.unbind()], input.layout)


def _linear(input, weight, bias=None):
    """y = x @ weight.T + bias on each component: one call on the buffer seen as (rows, in)."""
    last = input._regular(input.dim() - 1)
    if last is None:
        raise RuntimeError("linear: the last dim of a nested input must be regular")
    out = _C.linear(input._v.view(-1, last), weight, bias)
    sizes = [s[:-1] + (out.shape[-1],) for s in input._sizes]
    return input._like(out.reshape(-1), sizes)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, *rest):
    """layer_norm over the last dims (regular ones): one call on the buffer seen as rows of them."""
    from ..nn.functional import layer_norm

    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    n = input.dim()
    if len(shape) >= n or any(input._regular(n - len(shape) + k) != s for k, s in enumerate(shape)):
        raise RuntimeError(f"layer_norm: the last {len(shape)} dims of a nested input must be regular and equal "
                           f"normalized_shape {list(shape)}")
    out = layer_norm(input._v.view(-1, *shape), shape, weight, bias, eps)
    return input._like(out.reshape(-1))


def _matmul(a, b):
    if not (isinstance(a, NestedTensor) and isinstance(b, NestedTensor)):
        raise RuntimeError("Expected both to be nested, but got a nested self and non-nested other")
    if len(a) != len(b):
        raise RuntimeError(f"matmul: nested tensors have {len(a)} and {len(b)} components")
    return _from_parts([x @ y for x, y in zip(a.unbind(), b.unbind())], a.layout)


_REDUCTIONS = ("sum", "mean", "amax", "amin")


def _reduce(name, input, dim=None, keepdim=False, *, dtype=None):
    """sum / mean / amax / amin of a nested tensor, where PyTorch's nested tensors take them: over
    everything (a 0-dim tensor); over the last dim of a strided one (keepdim=True); over regular
    dims of a jagged one (nested); over its ragged dim, with or without the batch dim (dense)."""
    values = input._v if dtype is None else input._v.to(dtype)
    if dim is None:
        return getattr(values, name)()
    n = input.dim()
    dims = sorted({d % n for d in ([dim] if isinstance(dim, int) else dim)})
    if input.layout is not jagged:
        if len(dims) != 1:
            raise RuntimeError("NestedTensor only allows reduction of a single dimension for now.")
        if dims[0] != n - 1:
            raise RuntimeError(f"NestedTensor can only be reduced across the last dimension for now got dimension "
                               f"{dims[0]} instead.")
        if not keepdim:
            raise RuntimeError("NestedTensor always requires keepdim=True for now.")
        return _from_parts([getattr(t, name)(-1, keepdim=True) for t in input.unbind()], input.layout)
    # jagged: every component is (L_i, *rest); rows is values, (sum of L_i, *rest)
    rows = values.view(-1, *input._sizes[0][1:])
    if 1 not in dims:
        if 0 in dims:
            raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged dimension is not "
                               "supported for nested tensors")
        out = getattr(rows, name)([d - 1 for d in dims], keepdim=bool(keepdim))
        return input._like(out.reshape(-1), [(s[0],) + tuple(out.shape[1:]) for s in input._sizes])
    if any(d > 1 for d in dims):
        raise RuntimeError(f"{name}(): reducing along a ragged and non-batch dimension is not supported for nested "
                           "tensors")
    if 0 in dims:  # batch and ragged dims together: every row
        out = getattr(rows, name)(0, keepdim=bool(keepdim))
        return out.unsqueeze(0) if keepdim else out
    # over the ragged dim alone: each component's rows reduced into its slot
    lengths = _C.tensor([s[0] for s in input._sizes], dtype=_C.int64, device=values.device)
    slot = _C.arange(len(input._sizes), device=values.device).repeat_interleave(lengths)
    out = _C.zeros((len(input._sizes), *rows.shape[1:]), dtype=rows.dtype, device=rows.device)
    if name in ("sum", "mean"):
        out = out.index_add(0, slot, rows)
        if name == "mean":
            out = out / lengths.to(out.dtype).view(-1, *[1] * (out.dim() - 1))
    else:
        spread = slot.view(-1, *[1] * (rows.dim() - 1)).expand(rows.shape)
        out = out.scatter_reduce(0, spread, rows, name, include_self=False)
    return out.unsqueeze(1) if keepdim else out


def _reduce_method(self, name, dim=None, keepdim=False, *, dtype=None):
    return _reduce(name, self, dim, keepdim, dtype=dtype)


NestedTensor._pointwise = staticmethod(_pointwise)
NestedTensor._functions = {"softmax": functools.partial(_softmax, "softmax"),
                           "log_softmax": functools.partial(_softmax, "log_softmax"), "linear": _linear,
                           "matmul": _matmul, "bmm": _matmul, "__matmul__": _matmul, "layer_norm": _layer_norm}
NestedTensor._functions.update({name: functools.partial(_reduce, name) for name in _REDUCTIONS})
for _name in _REDUCTIONS:
    setattr(NestedTensor, _name, functools.partialmethod(_reduce_method, _name))
install_dunders(NestedTensor, _pointwise)


def _from_parts(tensors, layout) -> NestedTensor:
    """A nested tensor whose components are these tensors, keeping their autograd history."""
    buffer = _C.cat([t.reshape(-1) for t in tensors]) if tensors else _C.zeros((0,))
    return NestedTensor(buffer, [tuple(t.shape) for t in tensors], layout)


def _as_list(tensor_list, dtype, device):
    if isinstance(tensor_list, Tensor):
        return list(tensor_list.to(dtype=dtype, device=device).unbind(0))
    out = [t if isinstance(t, Tensor) else _C.tensor(t, dtype=dtype, device=device) for t in tensor_list]
    if out:
        dims = [t.dim() for t in out]
        for k, d in enumerate(dims):
            if d != dims[0]:
                raise RuntimeError("All Tensors given to nested_tensor must have the same dimension. Found dimension "
                                   f"{d} for Tensor at index {k} and dimension {dims[0]} for Tensor at index 0.")
        dtype = dtype or out[0].dtype
        out = [t.to(dtype=dtype, device=device) for t in out]
    return out


def _check_layout(layout, tensors):
    if layout not in (None, strided, jagged):
        raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")
    if layout is jagged:
        for t in tensors:
            if t.dim() == 0:
                raise RuntimeError("Cannot create a jagged nested tensor from 0-dim components")
            if tuple(t.shape[1:]) != tuple(tensors[0].shape[1:]):
                raise RuntimeError("When constructing a nested tensor with the jagged layout, all components must "
                                   "have the same size in every dim but the first")
    return layout or strided


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> NestedTensor:
    """A nested tensor of copies of the tensors in tensor_list: a new leaf (PyTorch's
    torch.nested.nested_tensor)."""
    tensors = [t.detach() for t in _as_list(tensor_list, dtype, device)]
    nt = _from_parts(tensors, _check_layout(layout, tensors))
    nt._v = nt._v.detach().requires_grad_(requires_grad)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None) -> NestedTensor:
    """A nested tensor of the tensors in ts that keeps their autograd history."""
    if isinstance(ts, NestedTensor) and layout in (None, ts.layout):
        return ts.to(dtype=dtype, device=device)
    if isinstance(ts, NestedTensor):
        ts = ts.unbind()
    tensors = _as_list(ts, dtype, device)
    return _from_parts(tensors, _check_layout(layout, tensors))


def nested_tensor_from_jagged(values: Tensor, offsets=None, lengths=None, jagged_dim=None, min_seqlen=None,
                              max_seqlen=None) -> NestedTensor:
    """A jagged nested tensor of the slices values[offsets[i]:offsets[i+1]], a view of values."""
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or lengths is required.")
        offsets = _C.cat([_C.zeros((1,), dtype=lengths.dtype, device=lengths.device), lengths.cumsum(0)])
    elif lengths is not None:
        raise NotImplementedError("nested_tensor_from_jagged: minitorch's jagged tensors are contiguous; "
                                  "offsets with lengths (holes between components) are not supported")
    if jagged_dim not in (None, 1):
        raise NotImplementedError("nested_tensor_from_jagged: only jagged_dim=1 is supported")
    bounds = [int(o) for o in offsets.tolist()]
    if bounds and (bounds[0] != 0 or bounds[-1] != values.shape[0]):
        raise NotImplementedError("nested_tensor_from_jagged: offsets must run from 0 to values.shape[0]")
    rest = tuple(values.shape[1:])
    sizes = [(hi - lo,) + rest for lo, hi in zip(bounds, bounds[1:])]
    return NestedTensor(values.reshape(-1), sizes, jagged)


def to_padded_tensor(input: NestedTensor, padding: float, output_size=None, out=None) -> Tensor:
    """The components stacked into one tensor, each padded at the end of every dim with `padding`
    to the largest size (or to output_size, which must not truncate)."""
    if not isinstance(input, NestedTensor):
        raise NotImplementedError("to_padded_tensor: expected a nested tensor, got a strided one")
    if not input._sizes:
        return _C.zeros(tuple(output_size or (0,)), dtype=input.dtype, device=input.device)
    big = [max(s[d] for s in input._sizes) for d in range(input.dim() - 1)]
    if output_size is not None:
        target = [int(s) for s in output_size]
        if len(target) != input.dim():
            raise RuntimeError(f"Length of output_size does not match NestedTensor dims. Broadcasting is not "
                               f"supported.")
        if target[0] < len(input._sizes) or any(t < b for t, b in zip(target[1:], big)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. Truncation is not "
                               "supported.")
        big = target[1:]
    from ..nn.functional import pad

    rows = []
    for t in input.unbind():
        widths = []
        for d in range(t.dim() - 1, -1, -1):
            widths += [0, big[d] - t.shape[d]]
        rows.append(pad(t, widths, value=padding) if any(widths) else t)
    result = _C.stack(rows)
    if output_size is not None and output_size[0] > len(rows):
        extra = _C.full((output_size[0] - len(rows), *big), padding, dtype=input.dtype, device=input.device)
        result = _C.cat([result, extra])
    return result


def run_padded(x: NestedTensor, fn) -> NestedTensor:
    """fn(padded, key_padding_mask) on x's components (L_i, E) padded with zeros to (N, L, E), the
    mask (N, L) True at the padding; its (N, L, E') result cut back to the components' lengths.
    How the attention layers take a nested input."""
    if x.dim() != 3:
        raise RuntimeError(f"expected a nested tensor of 2-D components, got {x.dim() - 1}-D ones")
    lengths = [s[0] for s in x._sizes]
    padded = to_padded_tensor(x, 0.0)
    pad = _C.arange(padded.shape[1], device=x.device).unsqueeze(0) >= _C.tensor(lengths, device=x.device).unsqueeze(1)
    out = fn(padded, pad)
    return _from_parts([out[i, :n] for i, n in enumerate(lengths)], x.layout)


def _is_nested(self) -> bool:
    return False


def install(namespace: dict, tensor_cls) -> None:
    """minitorch.jagged, Tensor.is_nested (False for a strided tensor)."""
    namespace.update(jagged=jagged)
    tensor_cls.is_nested = property(_is_nested)


__all__ = ["as_nested_tensor", "nested_tensor", "nested_tensor_from_jagged", "to_padded_tensor", "NestedTensor"]
