"""Public names of torch and torch.Tensor that the API audit (tests/api/api_audit.py) found missing:
hash_tensor (function and method), from_file, segment_reduce, batch_norm_update_stats, the *_copy
forms of the sparse accessors, the quantizer's accessors and as_strided_ as functions,
slice_inverse, Tensor.map2_; a strided tensor's sparse and quantized accessors (sparse_dim,
dense_dim, indices, values, coalesce, is_coalesced, int_repr, q_scale, ...: PyTorch's results and
errors; a sparse tensor or a QTensor has its own), is_distributed, the moves to devices minitorch
has no backend for (xpu, ipu, mtia: PyTorch's errors), reinforce (removed, raises) and
to_padded_tensor (raises); and torch's module-level names Storage, Future, fork, wait, Tag, windows,
DisableTorchFunction(Subclass), TYPE_CHECKING, USE_GLOBAL_DEPS, USE_RTLD_GLOBAL_WITH_LIBTORCH,
PRIVATE_OPS, classproperty, get_file_path and two hooks of torch._utils_internal.

Each function is a few op calls on whole tensors; none computes on values in Python (map2_ calls the
user's Python function per element, as PyTorch's does)."""
from __future__ import annotations

import enum
import mmap
import os

from . import _C
from ._tensor_methods import _no_grad, _wrap_dim
from .autograd import Function

# torch's module-level constants (torch/__init__.py): import-time switches, read by some programs
TYPE_CHECKING = False
USE_GLOBAL_DEPS = True
USE_RTLD_GLOBAL_WITH_LIBTORCH = False


class Tag(enum.IntEnum):
    """The tags an operator can carry (PyTorch's tags.yaml, torch.Tag), in PyTorch's order and
    values: torch.library.custom_op(..., tags=(Tag.pt2_compliant_tag,)) and OpOverload.tags."""

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19


# the ops torch's overload checks treat as private (torch.PRIVATE_OPS)
PRIVATE_OPS = ("unique_dim",)


class _ClassPropertyDescriptor:
    def __init__(self, fget, fset=None):
        self.fget = fget

    def __get__(self, instance, owner=None):
        if owner is None:
            owner = type(instance)
        return self.fget.__get__(instance, owner)()


def classproperty(func):
    """A read-only property of the class (torch.classproperty): func(cls) on attribute access."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)


def get_file_path(*path_components: str) -> str:
    """A path under the directory that holds the minitorch package (torch's: under torch's)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *path_components)


def prepare_multiprocessing_environment(path: str) -> None:
    """A hook for builds that must set up worker processes first: none here, as in PyTorch's."""


def profiler_allow_cudagraph_cupti_lazy_reinit_cuda12() -> bool:
    """Whether the profiler may re-initialise CUPTI lazily under CUDA graphs: yes, as PyTorch's."""
    return True


# ---- hash_tensor ----

_COMPLEX_NAMES = {"complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _hash_dims(input, dim) -> list:
    """The dims hash_tensor reduces, wrapped, in order; all of them for None or []."""
    if dim is None:
        return list(range(input.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    if not dims:
        return list(range(input.dim()))
    wrapped = []
    for d in dims:
        w = _wrap_dim(d, input.dim())
        if w in wrapped:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        wrapped.append(w)
    return wrapped


def hash_tensor(input, dim=None, *, keepdim: bool = False, mode: int = 0):
    """The xor of the elements' 64-bit patterns (mode 0, PyTorch's only one): each element widened
    to float64 (floating dtypes) or int64 (integers and bool) and read as uint64, reduced over `dim`
    (all dims when None) by a log2(n) fold of bitwise_xor over halves. Returns uint64 (so CPU only:
    minitorch has no uint64 CUDA tensors)."""
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"hash_tensor(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    name = str(input.dtype).split(".")[-1]
    if name in _COMPLEX_NAMES:
        raise NotImplementedError(f'"xor_sum_{input.device.type}" not implemented for \'{_COMPLEX_NAMES[name]}\'')
    dims = _hash_dims(input, dim)
    if input.numel() == 0 and (dim is None or (not isinstance(dim, int) and len(dim) == 0)):
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for input.numel() == 0. Specify "
                           "the reduction dim with the 'dim' argument.")
    for d in dims:
        if input.dim() and input.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    x = input.detach()
    if name == "uint64":
        bits = x.view(_C.int64)
    elif x.is_floating_point():
        bits = x.to(_C.float64).view(_C.int64)
    else:
        bits = x.to(_C.int64)
    # the reduced dims last, flattened into one of length n
    kept = [d for d in range(x.dim()) if d not in dims]
    bits = bits.permute(*kept, *dims) if x.dim() else bits.reshape(1)
    kept_shape = [x.shape[d] for d in kept]
    n = 1
    for d in dims if x.dim() else ():
        n *= x.shape[d]
    bits = bits.reshape(*kept_shape, n)
    while n > 1:
        half = n // 2
        folded = bits[..., :half] ^ bits[..., half:2 * half]
        bits = _C.cat([folded, bits[..., 2 * half:]], -1) if n % 2 else folded
        n = bits.shape[-1]
    out = bits.reshape(kept_shape).view(_C.uint64)
    if keepdim and x.dim():
        out = out.reshape([1 if d in dims else x.shape[d] for d in range(x.dim())])
    return out


# ---- segment_reduce ----

_SEGMENT_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "sum", "max": "amax", "amax": "amax",
                       "min": "amin", "amin": "amin"}
# an empty segment's value without `initial` (mean's is 0 / 0)
_SEGMENT_EMPTY = {"sum": 0.0, "prod": 1.0, "mean": 0.0, "amax": -float("inf"), "amin": float("inf")}
_FLOAT_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}
_TYPE_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _dtype_word(t) -> str:
    name = str(t.dtype).split(".")[-1]
    return _FLOAT_NAMES.get(name) or _TYPE_NAMES.get(name) or _COMPLEX_NAMES.get(name, name)


def segment_reduce(data, reduce: str, *, lengths=None, indices=None, offsets=None, axis: int = 0,
                   unsafe: bool = False, initial=None):
    """Reduces data along `axis` over consecutive segments, given by their lengths (or offsets):
    data (A..., L, B...), lengths (A..., S) -> (A..., S, B...). Each position's segment comes from
    searchsorted over the segment ends; one scatter_reduce (whose gradient is PyTorch's: ties of
    max and min share it) fills the segments, an extra one catching positions past the last."""
    for name, value in (("data", data), ("lengths", lengths), ("indices", indices), ("offsets", offsets)):
        if (value is not None or name == "data") and not isinstance(value, _C.TensorBase):
            raise TypeError(f"segment_reduce(): argument '{name}' must be Tensor, not {type(value).__name__}")
    if reduce not in _SEGMENT_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    axis = _wrap_dim(axis, data.dim())
    if indices is not None and lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    what, given = ("lengths", lengths) if lengths is not None else ("offsets", offsets)
    if given.dim() - 1 != axis:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {what} but got {axis}.")
    if not data.is_floating_point():
        raise NotImplementedError(f'"_segment_reduce_{data.device.type}" not implemented for \'{_dtype_word(data)}\'')
    if given.is_floating_point() or given.dtype == _C.bool:
        raise NotImplementedError(f'"_segment_reduce_{what}_{data.device.type}_kernel1" not implemented for '
                                  f"'{_dtype_word(given)}'")
    given = given.to(_C.int64)
    if lengths is not None:
        if not unsafe:
            if bool((given < 0).any()):
                raise RuntimeError("lengths contains negative value!")
            if bool((given.sum(-1) != data.shape[axis]).any()):
                raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                                   "data.size(lengths.dim()-1) when !unsafe.")
        ends = given.cumsum(-1)
        starts = _C.zeros(tuple(given.shape[:-1]) + (1,), dtype=_C.int64, device=given.device)
        counts = given
    else:
        ends, starts = offsets.to(_C.int64)[..., 1:], offsets.to(_C.int64)[..., :1]
        counts = ends - offsets.to(_C.int64)[..., :-1]
    segments = ends.shape[-1]
    # each position's segment (A..., L); positions outside every segment go to the extra one
    pos = _C.arange(data.shape[axis], device=data.device).expand(*given.shape[:-1], data.shape[axis])
    seg = _C.searchsorted(ends.contiguous(), pos.contiguous(), right=True)
    seg = seg.masked_fill((pos < starts) | (seg >= segments), segments)
    trailing = data.dim() - axis - 1
    index = seg.reshape(tuple(seg.shape) + (1,) * trailing).expand(data.shape)
    mode = _SEGMENT_REDUCTIONS[reduce]
    # sum and prod start from `initial`; max and min compare with it after, so that a tie with it
    # leaves the whole gradient to the element (PyTorch's backward ignores the initial value)
    extreme = mode in ("amax", "amin")
    start = initial is not None and not extreme
    fill = initial if start else _SEGMENT_EMPTY["mean" if reduce == "mean" else mode]
    shape = list(data.shape)
    shape[axis] = segments + 1
    out = _C.full(tuple(shape), fill, dtype=data.dtype, device=data.device)
    out = out.scatter_reduce(axis, index, data, mode, include_self=start).narrow(axis, 0, segments)
    if extreme and initial is not None:
        out = _C.where(out >= initial if mode == "amax" else out <= initial, out, initial)
    if reduce == "mean":
        counts = counts.reshape(tuple(counts.shape) + (1,) * trailing)
        out = out / (counts.clamp(min=1) if initial is not None else counts).to(data.dtype)
    return out


# ---- batch_norm_update_stats ----

def batch_norm_update_stats(input, running_mean, running_var, momentum: float):
    """The per-channel (dim 1) mean and biased variance of input, and the running statistics moved
    towards them in place (running_var towards the unbiased variance), as a training batch_norm
    updates them. A float16 or bfloat16 input with float32 statistics gives float32 results."""
    name = str(input.dtype).split(".")[-1]
    if not input.is_floating_point():
        raise NotImplementedError(f'"batch_norm_update_stats_{input.device.type}" not implemented for '
                                  f"'{_dtype_word(input)}'")
    channel = _wrap_dim(1, input.dim())
    if input.numel() == 0:
        raise RuntimeError(f"input tensor must have at least one element, but got input_sizes = {list(input.shape)}")
    out_dtype = input.dtype
    stats = [t for t in (running_mean, running_var) if t is not None]
    if stats and stats[0].dtype != input.dtype:
        if name in ("float16", "bfloat16") and stats[0].dtype == _C.float32:
            out_dtype = _C.float32
        elif name == "float32":
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        else:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    with _no_grad():
        x = input.detach().to(_C.float64 if name == "float64" else _C.float32)
        dims = [d for d in range(x.dim()) if d != channel]
        mean = x.mean(dims)
        var = x.var(dims, unbiased=False)
        count = input.numel() // input.shape[channel]
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_((mean * momentum).to(running_mean.dtype))
        if running_var is not None:
            unbiased = var * count / (count - 1)  # 0 / 0 = nan for a single value, as PyTorch's
            running_var.mul_(1 - momentum).add_((unbiased * momentum).to(running_var.dtype))
    return mean.to(out_dtype), var.to(out_dtype)


# ---- from_file ----

def from_file(filename, shared=None, size: int = 0, *, dtype=None, layout=None, device=None,
              pin_memory: bool = False, requires_grad: bool = False):
    """A 1-d CPU tensor of `size` elements over a memory map of the file: with shared=True the
    map is the file's (writes reach it; the file is created or extended to size elements), else a
    private copy-on-write map (writes stay in the tensor)."""
    if not isinstance(filename, str):
        raise TypeError(f"from_file(): argument 'filename' (position 1) must be str, not {type(filename).__name__}")
    if pin_memory:
        raise RuntimeError("tensors constructed from a file cannot be pinned")
    if device is not None and _C.device(device).type != "cpu":
        raise NotImplementedError(f"Could not run 'aten::from_file' with arguments from the "
                                  f"'{_C.device(device).type.upper()}' backend.")
    dtype = dtype if dtype is not None else _C._get_default_dtype()
    nbytes = size * _C.empty(0, dtype=dtype).element_size()
    shared = bool(shared)
    flags = os.O_RDWR | os.O_CREAT if shared else os.O_RDONLY
    try:
        fd = os.open(filename, flags, 0o666)
    except OSError as e:
        mode = "read-write" if shared else "read-only"
        raise RuntimeError(f"unable to open file <{filename}> in {mode} mode: {e.strerror} ({e.errno})") from None
    try:
        have = os.fstat(fd).st_size
        if nbytes < 0:
            raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: Cannot allocate memory (12)")
        if have < nbytes:
            if not shared:
                raise RuntimeError(f"file <{filename}> size <{have}> is smaller than the required mapping size "
                                   f"<{nbytes}>")
            os.ftruncate(fd, nbytes)
        if nbytes == 0:
            out = _C.empty(0, dtype=dtype)
        else:
            mapped = mmap.mmap(fd, nbytes, access=mmap.ACCESS_WRITE if shared else mmap.ACCESS_COPY)
            from ._toplevel import frombuffer

            out = frombuffer(mapped, dtype=dtype)  # the tensor keeps the map alive
    finally:
        os.close(fd)
    return out.requires_grad_(True) if requires_grad else out


# ---- the *_copy forms of the sparse accessors ----

def _accessor_copy(accessor: str):
    """torch.<accessor>_copy: a copy of what input.<accessor>() views (the COO tensor's indices and
    values, the compressed one's offsets and indices), with that accessor's errors."""

    def fn(input):
        from .sparse._base import SparseBase

        if not isinstance(input, (_C.TensorBase, SparseBase)):
            raise TypeError(f"{accessor}_copy(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, accessor)().clone()

    fn.__name__ = fn.__qualname__ = f"{accessor}_copy"
    fn.__doc__ = f"A copy of input.{accessor}(), as torch.{accessor}_copy."
    return fn


_COPIES = ("indices", "values", "crow_indices", "col_indices", "ccol_indices", "row_indices")
# torch.<name>(input): the method, as a function (the quantizer's accessors, the in-place as_strided_)
_METHOD_FUNCTIONS = ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales", "q_per_channel_zero_points",
                     "q_per_channel_axis", "as_strided_")


# ---- Tensor methods ----

def _backend(t) -> str:
    return t.device.type.upper()


def _not_for_strided(op: str):
    """A quantized, nested or sparse tensor's method on a strided tensor: PyTorch's dispatcher error."""

    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{op}' with arguments from the '{_backend(self)}' backend. This could be because "
            "the operator doesn't exist for this backend, or was omitted during the selective/custom build "
            "process (if using custom build). If you are a Facebook employee using PyTorch on mobile, please "
            "visit https://fburl.com/ptmfixes for possible resolutions.")

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"Tensor.{op}: another layout's (quantized, nested, sparse); a strided tensor raises, as PyTorch's."
    return method


def _sparse_only(name: str, what: str):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected sparse {what} layout but got Strided")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"Tensor.{name}: a sparse tensor's; a strided one raises, as PyTorch's."
    return method


class TensorNames:
    """Mixed into Tensor by install()."""

    def is_distributed(self) -> bool:
        return False

    def sparse_dim(self) -> int:
        """The number of sparse dimensions: none for a strided tensor."""
        return 0

    def dense_dim(self) -> int:
        """The number of dense dimensions: all of a strided tensor's."""
        return self.dim()

    indices = _sparse_only("indices", "coordinate tensor")
    values = _sparse_only("values", "tensor")
    coalesce = _sparse_only("coalesce", "coordinate tensor")
    is_coalesced = _sparse_only("is_coalesced", "coordinate tensor")
    int_repr = _not_for_strided("int_repr")
    q_scale = _not_for_strided("q_scale")
    q_zero_point = _not_for_strided("q_zero_point")
    q_per_channel_scales = _not_for_strided("q_per_channel_scales")
    q_per_channel_zero_points = _not_for_strided("q_per_channel_zero_points")
    q_per_channel_axis = _not_for_strided("q_per_channel_axis")
    qscheme = _not_for_strided("qscheme")
    to_padded_tensor = _not_for_strided("to_padded_tensor")

    def xpu(self, device=None, non_blocking: bool = False, memory_format=None):
        """No XPU backend: PyTorch's error where it was built without one."""
        raise AssertionError("Torch not compiled with XPU enabled")

    def mtia(self, device=None, non_blocking: bool = False, memory_format=None):
        """No MTIA backend: PyTorch's error where it was built without one."""
        raise AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                             "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
                             "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")

    def ipu(self, device=None, non_blocking: bool = False, memory_format=None):
        """No IPU backend: PyTorch's error where it was built without one."""
        raise RuntimeError("PyTorch is not linked with support for ipu devices")

    def reinforce(self, reward):
        """Removed from PyTorch (stochastic functions): raises with PyTorch's advice."""
        raise RuntimeError(
            "reinforce() was removed.\nUse torch.distributions instead.\n"
            "See https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
            "probs = policy_network(state)\naction = probs.multinomial()\nnext_state, reward = env.step(action)\n"
            "action.reinforce(reward)\naction.backward()\n\nUse:\n\nprobs = policy_network(state)\n"
            "# NOTE: categorical is equivalent to what used to be called multinomial\n"
            "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
            "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\nloss.backward()")

    def map2_(self, x, y, callable):
        """self[i] = callable(self[i], x[i], y[i]) for every element, x and y broadcast to self's
        shape and of self's dtype, in place (CPU only, as PyTorch)."""
        if self.device.type != "cpu" or x.device.type != "cpu" or y.device.type != "cpu":
            raise TypeError("map2_ is only implemented on CPU tensors")
        from ._legacy import type_name

        for name, t in (("x", x), ("y", y)):
            if t.dtype != self.dtype:
                raise TypeError(f"map2_: expected {type_name(self)} for argument '{name}' (got {type_name(t)})")
        xs = x.detach().expand_as(self).reshape(-1).tolist()
        ys = y.detach().expand_as(self).reshape(-1).tolist()
        flat = self.detach().reshape(-1).tolist()
        values = _C.tensor([callable(a, b, c) for a, b, c in zip(flat, xs, ys)], dtype=self.dtype)
        with _no_grad():
            self.copy_(values.reshape(self.shape))
        return self

    hash_tensor = hash_tensor

    def slice_inverse(self, src, dim: int = 0, start=None, end=None, step: int = 1):
        """The tensor whose slice self is, laid out as src: a view of self's storage with src's
        sizes, strides and offset (PyTorch's forward reads only src's geometry). Its gradient is
        PyTorch's formula: self's is the slice of grad, src's grad with that slice zeroed."""
        geometry = (tuple(src.shape), tuple(src.stride()), src.storage_offset())
        if not _C.is_grad_enabled() or not (self.requires_grad or src.requires_grad):
            return self.as_strided(*geometry)
        return _SliceInverse.apply(self, src, geometry, dim, start, end, step)


class _SliceInverse(Function):
    """slice_inverse's node (SliceInverseBackward0): PyTorch's formula from derivatives.yaml."""

    @staticmethod
    def forward(ctx, self, src, geometry, dim, start, end, step):
        ctx.slice = (dim, start, end, step)
        ctx.self_shape = tuple(self.shape)
        return self.detach().as_strided(*geometry)

    @staticmethod
    def backward(ctx, grad):
        dim, start, end, step = ctx.slice
        index = (slice(None),) * _wrap_dim(dim, grad.dim()) + (slice(start, end, step),)
        zeros = _C.zeros(ctx.self_shape, dtype=grad.dtype, device=grad.device)
        return grad[index], grad.slice_scatter(zeros, dim, start, end, step), None, None, None, None, None


def cudnn_is_acceptable(input) -> bool:
    """Whether cuDNN may take input (ATen's cudnn_is_acceptable): cuDNN enabled and built, input on
    a CUDA device, float64, float32 or float16, and not empty."""
    from . import backends

    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"cudnn_is_acceptable(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return (bool(backends.cudnn.enabled) and input.device.type == "cuda"
            and input.dtype in (_C.float64, _C.float32, _C.float16) and backends.cudnn.is_available()
            and input.numel() != 0)


def install(namespace: dict, tensor_cls: type) -> None:
    for name, member in vars(TensorNames).items():
        if not name.startswith("__") and name not in vars(tensor_cls):
            setattr(tensor_cls, name, member)
    from . import futures, jit, storage
    from ._aliases import _function
    from .signal import windows

    namespace.update({f"{name}_copy": _accessor_copy(name) for name in _COPIES})
    namespace.update({name: _function(name) for name in _METHOD_FUNCTIONS + ("slice_inverse",)})

    namespace.update(hash_tensor=hash_tensor, from_file=from_file, cudnn_is_acceptable=cudnn_is_acceptable, segment_reduce=segment_reduce,
                     batch_norm_update_stats=batch_norm_update_stats, Tag=Tag, TYPE_CHECKING=TYPE_CHECKING,
                     USE_GLOBAL_DEPS=USE_GLOBAL_DEPS, USE_RTLD_GLOBAL_WITH_LIBTORCH=USE_RTLD_GLOBAL_WITH_LIBTORCH,
                     Future=futures.Future, fork=jit.fork, wait=jit.wait, windows=windows,
                     Storage=storage.LEGACY_CLASSES["FloatStorage"], DisableTorchFunction=_C.DisableTorchFunction,
                     DisableTorchFunctionSubclass=_C.DisableTorchFunctionSubclass, PRIVATE_OPS=PRIVATE_OPS,
                     classproperty=classproperty, get_file_path=get_file_path,
                     prepare_multiprocessing_environment=prepare_multiprocessing_environment,
                     profiler_allow_cudagraph_cupti_lazy_reinit_cuda12=profiler_allow_cudagraph_cupti_lazy_reinit_cuda12)
