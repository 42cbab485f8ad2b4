"""minitorch: a small, real PyTorch written in C under a Python API.

`import minitorch as torch` and write PyTorch code; every tensor operation is one call into
the C extension minitorch._C, whose dispatcher picks a kernel by dispatch key.
"""
import ctypes as _ctypes
import importlib.util as _importlib_util
import os as _os

from ._release import RELEASE as _RELEASE
from .torch_version import TorchVersion as _TorchVersion

# The PyTorch API level minitorch follows, with our own release as the local label
__version__ = _TorchVersion(f"2.13.0+minitorch.{_RELEASE}")


def _load_openblas() -> None:
    """_C links libscipy_openblas.so; load it from the installed wheel first so that the loader
    finds it wherever the wheel lives (the build-time rpath may point into a temporary build
    env). The library is found beside the package without importing scipy_openblas32, whose
    import reads its version through importlib.metadata (70-90 ms of our import time)."""
    spec = _importlib_util.find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("minitorch needs the scipy-openblas32 package (pip install scipy-openblas32)")
    libdir = _os.path.join(list(spec.submodule_search_locations)[0], "lib")
    libs = sorted(n for n in _os.listdir(libdir) if n.startswith("libscipy_openblas") and ".so" in n)
    if not libs:
        raise ImportError(f"no libscipy_openblas*.so in {libdir}: reinstall scipy-openblas32")
    _ctypes.CDLL(_os.path.join(libdir, libs[0]), mode=_ctypes.RTLD_GLOBAL)


_load_openblas()

from . import _C  # noqa: E402
from ._C import Size, dtype  # noqa: E402
from ._C import get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads  # noqa: E402
from ._C import bfloat16, bool, float16, float32, float64, int8, int16, int32, int64, uint8  # noqa: E402,A004
from ._C import complex64, complex128  # noqa: E402
from ._C import uint16, uint32, uint64  # noqa: E402
from ._C import float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz  # noqa: E402
from ._C import can_cast, promote_types, result_type  # noqa: E402
from ._device import device, get_default_device, set_default_device  # noqa: E402
from ._grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: E402
from ._tensor import Tensor  # noqa: E402
from ._indexing import argwhere, nonzero, unique  # noqa: E402

_C._register_classes(Tensor, device)

float = float32  # noqa: A001
double = float64
long = int64
int = int32  # noqa: A001
half = float16
short = int16
cfloat = complex64
cdouble = complex128

# Every op of the op table flagged FUNCTION is a minitorch.<name> function.
for _name in _C.OPS:
    if _C._op_info(_name)["function"]:
        globals()[_name] = getattr(_C, _name)
del _name

from ._reductions import max, min  # noqa: E402,A004
from ._checks import _tensors  # noqa: E402


def where(condition, input=None, other=None, *, out=None):
    """input where condition holds, else other; where(condition) alone is
    nonzero(condition, as_tuple=True), as in PyTorch."""
    if input is None and other is None:
        _tensors("where", condition=condition)
        return nonzero(condition, as_tuple=True)
    return _C.where(condition, input, other, out=out)


tensor = _C.tensor
from_numpy = _C.from_numpy
from ._dlpack import from_dlpack  # noqa: E402
Generator = _C.Generator
default_generator = _C.default_generator
from . import random  # noqa: E402
from .random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state, thread_safe_generator  # noqa: E402


def _expect_tensor(fname, input):
    """PyTorch's TypeError for a non-tensor input (before .shape would raise AttributeError)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")


from . import _memory_format  # noqa: E402
from . import _python_ops  # noqa: E402


def _subclass_like(fn, input, *args, **kwargs):
    """fn(input, ...) for a Tensor subclass's instance that overrides it (a DTensor's zeros_like is
    laid out as it), through __torch_function__."""
    from .overrides import handle_torch_function

    return handle_torch_function(fn, (input,), input, *args, **kwargs)


def _like(name, *args):
    factory = getattr(_C, name)

    def like(input, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False,
             memory_format=_memory_format.preserve_format, **generator):
        if type(input) is not Tensor and _C._has_torch_function((input,)):
            return _subclass_like(like, input, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                  requires_grad=requires_grad, memory_format=memory_format, **generator)
        _C._factory_options(name + "_like", layout, pin_memory)
        _expect_tensor(name + "_like", input)
        _memory_format._check(name + "_like", memory_format)
        if not generator and _python_ops.wanted(input):  # aten.<name>_like, for __torch_dispatch__
            given = None if memory_format is _memory_format.preserve_format else memory_format
            return _python_ops.dispatch(name + "_like", _like_op(name), (input, *args),
                                        _python_ops.options(dtype, device, given), requires_grad)
        dtype = dtype if dtype is not None else input.dtype
        device = device if device is not None else input.device
        if generator and (name not in ("rand", "randn") or list(generator) != ["generator"]):
            raise TypeError(f"{name}_like() got an unexpected keyword argument '{next(iter(generator))}'")
        strides = _memory_format._dense_strides(input, memory_format)
        if strides is None:
            return factory(input.shape, *args, dtype=dtype, device=device, requires_grad=requires_grad, **generator)
        flat = factory((input.numel(),), *args, dtype=dtype, device=device, **generator)
        return flat.as_strided(input.shape, strides).requires_grad_(requires_grad)

    like.__name__ = like.__qualname__ = name + "_like"
    like.__doc__ = f"{name}(input.shape) with input's dtype and device, laid out as memory_format says."
    return like


_LIKE_OPS: dict = {}


def _like_op(name):
    """aten.<name>_like(self, [fill_value,] *, dtype, layout, device, pin_memory, memory_format) as
    the OpOverload's function, made once."""
    if name not in _LIKE_OPS:
        def op(input, *args, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
            fmt = _memory_format.preserve_format if memory_format is None else memory_format
            return _like(name, *args)(input, dtype=dtype, device=device, memory_format=fmt)

        _LIKE_OPS[name] = op
    return _LIKE_OPS[name]


empty_like = _like("empty")
zeros_like = _like("zeros")
ones_like = _like("ones")
rand_like = _like("rand")
randn_like = _like("randn")


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False,
              memory_format=_memory_format.preserve_format):
    """full(input.shape, fill_value) with input's dtype and device, laid out as memory_format says."""
    if type(input) is not Tensor and _C._has_torch_function((input,)):
        return _subclass_like(full_like, input, fill_value, dtype=dtype, layout=layout, device=device,
                              pin_memory=pin_memory, requires_grad=requires_grad, memory_format=memory_format)
    return _like("full", fill_value)(input, dtype=dtype, layout=layout, device=device, pin_memory=pin_memory,
                                     requires_grad=requires_grad, memory_format=memory_format)


def split(tensor, split_size_or_sections, dim=0) -> "tuple":
    """tensor.split(split_size_or_sections, dim): views of one size, or of each size in a list."""
    _tensors("split", tensor=tensor)
    return tensor.split(split_size_or_sections, dim)


from ._random import normal, randint, randint_like  # noqa: E402
from .functional import broadcast_shapes, broadcast_tensors, einsum, norm  # noqa: E402
from .functional import atleast_1d, atleast_2d, atleast_3d, block_diag, cartesian_prod, cdist  # noqa: E402
from .functional import lu, meshgrid, tensordot  # noqa: E402
from ._numeric import cumulative_trapezoid, gradient, trapezoid, trapz, vander  # noqa: E402
from ._shape import dsplit, hsplit, tensor_split, vsplit  # noqa: E402
from ._rnn import gru, lstm, rnn_relu, rnn_tanh  # noqa: E402
from ._stats import histogram, median, nanmedian, unique_consecutive  # noqa: E402
from ._pointwise import allclose, as_tensor, equal  # noqa: E402
from ._finfo import finfo, iinfo  # noqa: E402
from ._tensor_str import set_printoptions  # noqa: E402
from . import _aliases  # noqa: E402

_aliases.install(globals(), Tensor)  # greater, arccos, multiply, ..., is_nonzero, Tensor.H
from . import _tensor_methods  # noqa: E402

_tensor_methods.install(globals(), Tensor)  # unfold, sum_to_size, select_scatter, vdot, cholesky_solve, ...
from . import sparse  # noqa: E402

sparse.install(globals(), Tensor)  # sparse_coo_tensor, spmm, a sparse-aware mm, layouts
from .sparse import _products as _sparse_products  # noqa: E402

_sparse_products.install(globals(), Tensor)  # sspaddmm, saddmm, smm, hspmm, hsmm, dsmm
from . import _complex  # noqa: E402

_memory_format.install(globals(), Tensor)  # memory_format, channels_last, ...; contiguous/clone/is_contiguous(memory_format=)

_complex.install(globals(), Tensor)  # Tensor.real/.imag/conj/angle, minitorch.real/imag/conj/angle
from ._stft import istft, stft  # noqa: E402
from ._lowrank import pca_lowrank, svd_lowrank  # noqa: E402

Tensor.stft, Tensor.istft = stft, istft


def is_tensor(obj, /) -> "bool":
    return isinstance(obj, Tensor)


def numel(input) -> "int":
    _expect_tensor("numel", input)
    return input.numel()


def get_default_dtype() -> "dtype":
    """The dtype of float factories, of Python floats in tensor() and of integer inputs to float
    math: float32 unless set_default_dtype changed it."""
    return _C._get_default_dtype()


def set_default_dtype(d: "dtype", /) -> None:
    """Makes d (float32 or float64) the default floating-point dtype, for the whole process."""
    _C._set_default_dtype(d)


def set_default_tensor_type(t, /) -> None:
    """Deprecated as in PyTorch 2.1 (set_default_dtype and set_default_device instead): a legacy
    float type (minitorch.DoubleTensor, "torch.cuda.FloatTensor") sets the default dtype, and a
    CUDA one the default device too."""
    import warnings

    from ._legacy import set_default_type

    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    set_default_type(t)


from . import autograd, fft, linalg, nn, optim, profiler, special  # noqa: E402
from .autograd import profiler as _autograd_profiler  # noqa: E402,F401  (torch.autograd.profiler)
from .nn.functional import channel_shuffle, native_channel_shuffle  # noqa: E402
from .nn._ctc import ctc_loss_op as ctc_loss  # noqa: E402
from .autograd.anomaly_mode import (  # noqa: E402
    is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled,
)


class AcceleratorError(RuntimeError):
    """Exception raised while executing on device"""


_C._set_accelerator_error(AcceleratorError)  # a failed CUDA call (PyTorch's C10_CUDA_CHECK)
from . import cuda  # noqa: E402  (never fails: without a usable GPU, cuda.is_available() is False)
OutOfMemoryError = cuda.OutOfMemoryError  # torch.OutOfMemoryError is the CUDA allocator's error
from ._stream import Event, Stream  # noqa: E402
from .serialization import load, save  # noqa: E402
from . import viz  # noqa: E402
from . import accelerator, amp, backends, compiler, cpu, jit, testing  # noqa: E402
from . import export  # noqa: E402  (after jit and fx, which it builds on)
from .amp import GradScaler, autocast  # noqa: E402
from .amp.autocast_mode import is_autocast_enabled, set_autocast_enabled, get_autocast_dtype  # noqa: E402
from .amp.autocast_mode import set_autocast_dtype, is_autocast_cache_enabled, set_autocast_cache_enabled  # noqa: E402
from .amp.autocast_mode import clear_autocast_cache, autocast_increment_nesting, autocast_decrement_nesting  # noqa: E402
from .amp.autocast_mode import LEGACY as _AUTOCAST_LEGACY  # noqa: E402

globals().update(_AUTOCAST_LEGACY)  # is_autocast_cpu_enabled, get_autocast_gpu_dtype, ... (deprecated)
from ._modes import (  # noqa: E402
    are_deterministic_algorithms_enabled, compiled_with_cxx11_abi, get_deterministic_debug_mode, get_device,
    has_lapack, has_mkl, has_openmp, has_spectral, is_deterministic_algorithms_warn_only_enabled,
    is_warn_always_enabled, set_deterministic_debug_mode, set_flush_denormal, set_warn_always, typename,
    use_deterministic_algorithms, get_device_module, init_num_threads, is_vulkan_available,
)
from ._grad_mode import is_inference_mode_enabled  # noqa: E402
from . import _toplevel  # noqa: E402

_toplevel.install(globals(), Tensor)  # isin, rsub, asarray, complex, *_copy, exp_, ..., e, pi, inf, nan
from . import _foreach  # noqa: E402

_foreach.install(globals())  # _foreach_add, _foreach_mul_, _foreach_norm, ...
from ._symbolic import *  # noqa: E402,F401,F403  (sym_int, sym_max, ..., cond, while_loop)
from ._native import *  # noqa: E402,F401,F403  (native_layer_norm, convolution, ...)
from . import signal  # noqa: E402
from . import storage as _storage  # noqa: E402
from .storage import TypedStorage, UntypedStorage, is_storage  # noqa: E402

globals().update(_storage.LEGACY_CLASSES)  # FloatStorage, LongStorage, ...
Tensor.untyped_storage = _storage.untyped_storage
Tensor.storage = _storage.storage
Tensor.storage_type = _storage.storage_type
Tensor.set_ = _storage.set_
from .signal.windows.windows import (  # noqa: E402
    bartlett_window, blackman_window, hamming_window, hann_window, kaiser_window,
)
from .backends import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from .compiler import compile  # noqa: E402,A004
from ._legacy import CPU_TYPES as _CPU_TYPES  # noqa: E402

globals().update(_CPU_TYPES)  # FloatTensor, DoubleTensor, LongTensor, IntTensor, BoolTensor
from . import utils  # noqa: E402
from . import __future__  # noqa: E402  (torch.__future__: nn.Module's conversion switches)
from . import futures  # noqa: E402
from . import multiprocessing  # noqa: E402  (registers tensors with multiprocessing's pickler)
from . import xpu  # noqa: E402
from . import overrides, return_types, types, version  # noqa: E402
from . import library  # noqa: E402
from ._ops import ops  # noqa: E402  (minitorch.ops.aten.relu, minitorch.ops.mylib.foo)
from ._qtensor import qint8, qint32, quint8, qscheme  # noqa: E402  (quantized dtypes: Python objects)
from ._qtensor import (  # noqa: E402
    dequantize, per_channel_affine, per_channel_affine_float_qparams, per_channel_symmetric, per_tensor_affine,
    per_tensor_symmetric, quantize_per_channel, quantize_per_tensor, quantize_per_tensor_dynamic,
    _empty_affine_quantized, _make_per_channel_quantized_tensor, _make_per_tensor_quantized_tensor,
)
from ._fake_quantize import fake_quantize_per_channel_affine, fake_quantize_per_tensor_affine  # noqa: E402

conv2d = nn.functional.conv2d  # the op, plus PyTorch's padding='same' / 'valid'
conv1d = nn.functional.conv1d  # the op, plus PyTorch's padding='same' / 'valid'
pixel_shuffle = nn.functional.pixel_shuffle
pixel_unshuffle = nn.functional.pixel_unshuffle
max_pool1d = nn.functional.max_pool1d
avg_pool1d = nn.functional.avg_pool1d
adaptive_avg_pool1d = nn.functional.adaptive_avg_pool1d


def adaptive_max_pool1d(input, output_size):
    """torch.adaptive_max_pool1d: the values and the indices (F.adaptive_max_pool1d's return_indices)."""
    return nn.functional.adaptive_max_pool1d(input, output_size, return_indices=True)


# Submodules imported on first use (PEP 562), as `minitorch.distributions.Normal` or `import
# minitorch.func` reach them: nothing at import time needs them, and they cost more than the rest
# of `import minitorch` would (hub: urllib, zipfile and tempfile; distributions: 48 modules;
# distributed: 14, with its RPC and sessions; func: 4). Importing them registers nothing that
# Tensor or the other modules rely on.
_LAZY_SUBMODULES = ("hub", "fx", "_dynamo", "_inductor", "_logging", "__config__", "ao", "quantization",
                    "distributions", "distributed", "func")
# Names of the top level that live in a lazy submodule: name -> (submodule, attribute)
_LAZY_NAMES = {"vmap": ("func", "vmap")}


def __getattr__(name: str):
    """A lazy submodule, or a name of one, imported on first use."""
    import importlib

    if name in _LAZY_SUBMODULES:
        return importlib.import_module("." + name, __name__)
    if name in _LAZY_NAMES:
        module, attr = _LAZY_NAMES[name]
        value = getattr(importlib.import_module("." + module, __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES) | set(_LAZY_NAMES))


from ._einops import install as _install_einops  # noqa: E402

_install_einops()  # einops finds minitorch's backend, imported before or after us (minitorch/_einops)
from . import masked, nested  # noqa: E402  (torch.masked: MaskedTensor; torch.nested: nested tensors)

nested.install(globals(), Tensor)  # minitorch.jagged, Tensor.is_nested

# histogramdd (a composite in _stats, its result type named in return_types), quasirandom, lobpcg
from ._stats import histogramdd  # noqa: E402
from . import quasirandom  # noqa: E402
from ._lobpcg import lobpcg  # noqa: E402
from . import return_types as _return_types  # noqa: E402

_return_types.histogramdd = _stats._histogramdd_result
from . import _api_names  # noqa: E402

_api_names.install(globals(), Tensor)  # hash_tensor, from_file, Tensor.map2_/values/q_scale/xpu/..., Tag, Storage
from .sparse import _resize as _sparse_resize  # noqa: E402

_sparse_resize.install(globals(), Tensor)  # sparse_resize_, sparse_resize_and_clear_, resize_as_sparse_
from . import _quantized_names  # noqa: E402

_quantized_names.install(globals())  # quantized_max_pool1d/2d/3d, empty_quantized, quantized_batch_norm
from . import mps  # noqa: E402  (torch.mps on a machine without Metal)
