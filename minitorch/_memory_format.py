"""Memory formats, as torch.memory_format: contiguous_format (row-major), channels_last (N, C, H, W
stored as N, H, W, C), channels_last_3d (N, C, D, H, W stored as N, D, H, W, C) and
preserve_format (a copy keeps its source's layout).

A format only chooses strides: the copies here are an empty buffer viewed with as_strided and
filled by copy_, so autograd and every device see ordinary ops, and a kernel reads such a tensor
through its strides like any other."""
from __future__ import annotations

from . import _C


class memory_format:
    """One of the four layouts; the instances are minitorch's module constants, as PyTorch's."""

    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'minitorch.memory_format' instances")

    @classmethod
    def _make(cls, name: str) -> "memory_format":
        obj = object.__new__(cls)
        object.__setattr__(obj, "_name", name)
        return obj

    def __setattr__(self, name, value):
        raise AttributeError(f"'minitorch.memory_format' object attribute '{name}' is read-only")

    def __repr__(self) -> str:
        return "minitorch." + self._name

    def __reduce__(self):
        return self._name  # pickles as the module global of that name, one object per format


memory_format.__module__ = "minitorch"
contiguous_format = memory_format._make("contiguous_format")
channels_last = memory_format._make("channels_last")
channels_last_3d = memory_format._make("channels_last_3d")
preserve_format = memory_format._make("preserve_format")
legacy_contiguous_format = contiguous_format  # PyTorch's alias of the same object

# rank a channels-last format needs, its name in errors, and the order its dims are stored in
# (outermost first): the channel dim 1 becomes the innermost
_CHANNELS_LAST = {channels_last: (4, "channels_last", (0, 2, 3, 1)),
                  channels_last_3d: (5, "channels_last_3d", (0, 2, 3, 4, 1))}


def _check(fname: str, fmt) -> None:
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{fname}(): argument 'memory_format' must be minitorch.memory_format, not {type(fmt).__name__}")


def _check_rank(fmt, ndim: int) -> None:
    rank, name, _ = _CHANNELS_LAST[fmt]
    if ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")


def _row_major_strides(shape) -> tuple:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(size, 1)  # as PyTorch's contiguous strides: a size-0 dim still steps by 1
    return tuple(reversed(strides))


def channels_last_strides(shape, fmt) -> tuple:
    """The strides of a dense tensor of shape stored in a channels-last format. Unlike row-major
    strides, a size-0 dim multiplies the outer strides by 0 (PyTorch's get_channels_last_strides)."""
    order = _CHANNELS_LAST[fmt][2]
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def is_contiguous_as(t, fmt) -> bool:
    """Whether t is dense in format fmt: walking the dims from the innermost stored one, each dim of
    size other than 1 steps by the product of the sizes inside it (size-1 dims may step by anything)."""
    if fmt not in _CHANNELS_LAST:
        return _C.TensorBase.is_contiguous(t)
    rank, _, order = _CHANNELS_LAST[fmt]
    if t.dim() != rank:
        return False
    shape, stride = t.shape, t.stride()
    want = 1
    for d in reversed(order):
        if shape[d] != 1:
            if stride[d] != want:
                return False
            want *= shape[d]
    return True


def _strides_like_channels_last(shape, stride, fmt) -> bool:
    """Whether strides increase from the channel dim outward in fmt's order (PyTorch's
    is_channels_last_strides_2d/3d, which suggest_memory_format reads). Ambiguous layouts count as
    row-major: a channel stride of 0, any size-0 dim, and a batch dim stepping no further than the
    channel dim (N111)."""
    order = _CHANNELS_LAST[fmt][2]
    if stride[1] == 0:
        return False
    floor = 0
    for d in reversed(order):
        if shape[d] == 0 or stride[d] < floor:
            return False
        if d == 0 and floor == stride[1]:
            return False
        floor = stride[d] * shape[d] if shape[d] > 1 else stride[d]
    return True


def suggest_memory_format(t):
    """The format t's strides look like: channels_last(_3d) for 4-d (5-d) tensors ordered so,
    else contiguous_format."""
    for fmt, (rank, _, _) in _CHANNELS_LAST.items():
        if t.dim() == rank and _strides_like_channels_last(t.shape, t.stride(), fmt):
            return fmt
    return contiguous_format


def _dense_strides(t, fmt):
    """The strides a new tensor shaped like t gets in fmt (None: row-major)."""
    if fmt is preserve_format:
        stride = t._preserve_strides()
        return None if stride == _row_major_strides(tuple(t.shape)) else stride
    if fmt in _CHANNELS_LAST:
        _check_rank(fmt, t.dim())
        return channels_last_strides(tuple(t.shape), fmt)
    return None


def empty_strided_like(t, strides, *, dtype, device):
    """An uninitialised tensor of t's shape with the given dense strides (None: row-major)."""
    if strides is None:
        return _C.empty(tuple(t.shape), dtype=dtype, device=device)
    return _C.empty((t.numel(),), dtype=dtype, device=device).as_strided(tuple(t.shape), strides)


def copy_in_format(t, fmt, *, dtype=None, device=None):
    """A copy of t (cast to dtype, moved to device) laid out in fmt; differentiable through copy_."""
    strides = _dense_strides(t, fmt)
    if t.numel() == 0:  # no element to copy; a channels-last empty tensor has 0 strides copy_ refuses
        flat = _C.TensorBase.clone(_C.to(t, dtype=dtype, device=device, copy=False).reshape(-1))
        return flat.view(tuple(t.shape)) if strides is None else flat.as_strided(tuple(t.shape), strides)
    out = empty_strided_like(t, strides, dtype=dtype or t.dtype, device=device or t.device)
    return out.copy_(t)


def to_format(t, fmt, dtype, device, copy: bool):
    """Tensor.to(..., memory_format=fmt): t itself when nothing changes (its dtype, its device, no
    copy asked, and strides that already look like fmt), else a copy laid out in fmt."""
    _check("to", fmt)
    same = (dtype is None or dtype == t.dtype) and (device is None or device == t.device)
    if same and not copy and suggest_memory_format(t) is fmt:
        return t
    return copy_in_format(t, fmt, dtype=dtype, device=device)


class TensorFormats:
    """Mixed into Tensor by install(): the methods that take memory_format."""

    def is_contiguous(self, *, memory_format=contiguous_format) -> bool:
        _check("is_contiguous", memory_format)
        return is_contiguous_as(self, memory_format)

    def contiguous(self, *, memory_format=contiguous_format):
        _check("contiguous", memory_format)
        if memory_format is contiguous_format:
            return _C.TensorBase.contiguous(self)
        if is_contiguous_as(self, memory_format):
            return self
        if memory_format is preserve_format:
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        return copy_in_format(self, memory_format)

    def clone(self, *, memory_format=preserve_format):
        _check("clone", memory_format)
        if memory_format is preserve_format:
            return _C.TensorBase.clone(self)
        return copy_in_format(self, memory_format)


def empty(*size, memory_format=contiguous_format, requires_grad=False, **kwargs):
    """empty(*size, ...) laid out in memory_format (row-major, channels_last, channels_last_3d)."""
    _check("empty", memory_format)
    t = _C.empty(*size, **kwargs)
    if memory_format is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    if memory_format in _CHANNELS_LAST:
        _check_rank(memory_format, t.dim())
        t = t.as_strided(tuple(t.shape), channels_last_strides(tuple(t.shape), memory_format))
    return t.requires_grad_(requires_grad) if requires_grad else t


def install(namespace: dict, tensor_cls: type) -> None:
    """The format constants and clone at top level; the format-aware methods on Tensor."""
    for name in ("memory_format", "contiguous_format", "channels_last", "channels_last_3d",
                 "preserve_format", "legacy_contiguous_format"):
        namespace[name] = globals()[name]
    for name, member in vars(TensorFormats).items():
        if not name.startswith("__"):
            setattr(tensor_cls, name, member)

    def clone(input, *, memory_format=preserve_format):
        if not isinstance(input, _C.TensorBase):
            raise TypeError(f"clone(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
        return TensorFormats.clone(input, memory_format=memory_format)

    namespace["clone"] = clone
    namespace["empty"] = empty
