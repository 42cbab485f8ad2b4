"""minitorch.backends: the switches scripts set, as torch.backends.

The flags are kept with PyTorch's names and defaults, so that `torch.backends.cudnn.benchmark =
True` or `torch.backends.cuda.matmul.allow_tf32 = True` in a script runs unchanged. The CUDA
backend obeys five of them, pushed to it after each change (_C_cuda.set_library_flags):
`cudnn.benchmark` (convolutions rank cuDNN's algorithms by cudnnFind*, once per shape, instead of
its heuristics), `cudnn.deterministic` (deterministic algorithms only),
`cuda.matmul.allow_tf32` (float32 products on cuBLASLt's TF32 compute type; what
`set_float32_matmul_precision("high")` sets), `cudnn.enabled` (False: convolutions on im2col and
cuBLAS instead, as PyTorch's slow_conv2d) and `cudnn.allow_tf32` (True, PyTorch's default:
float32 convolutions may run on TF32 tensor cores, cuDNN's default math; False: FMA math only).
The queries (`is_available`, `is_built`, `version`) answer truthfully for this build.
"""
from __future__ import annotations

import contextlib
import sys
import types
import warnings
from typing import Iterator, Optional

from .. import cuda as _cuda

_PRECISIONS = ("highest", "high", "medium")
_float32_matmul_precision = "highest"


def _push_flags() -> None:
    """The switches the CUDA backend obeys, as they are now, to the backend (where built)."""
    c = _cuda._C_cuda
    if c is None or "cudnn" not in globals() or "cuda" not in globals():
        return
    c.set_library_flags(bool(cudnn.benchmark), bool(cudnn.deterministic),
                        bool(cuda.matmul.allow_tf32), bool(cudnn.enabled), bool(cudnn.allow_tf32))


class _Flags:
    """A fixed set of attributes; setting any other raises, as PyTorch's flag objects do."""

    def __init__(self, **defaults: object) -> None:
        object.__setattr__(self, "_names", frozenset(defaults))
        for name, value in defaults.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        if name not in self._names:
            raise AttributeError(f"Unknown attribute {name}")
        object.__setattr__(self, name, value)
        _push_flags()

    def __repr__(self) -> str:
        return "<" + ", ".join(f"{n}={getattr(self, n)!r}" for n in sorted(self._names)) + ">"


class _FlagModule(types.ModuleType):
    """A submodule whose attribute changes reach the CUDA backend (torch.backends.cudnn is
    such a module in PyTorch too: its flags are properties over the C++ context)."""

    def __setattr__(self, name: str, value: object) -> None:
        super().__setattr__(name, value)
        _push_flags()


def _module(name: str, doc: str, **attrs: object) -> types.ModuleType:
    """A submodule, registered so that `import minitorch.backends.cudnn as cudnn` finds it."""
    mod = _FlagModule(f"{__name__}.{name}", doc)
    mod.__dict__.update(attrs)
    sys.modules[mod.__name__] = mod
    return mod


# ---- cudnn ---------------------------------------------------------------------------------

def _cudnn_is_available() -> bool:
    """Whether cuDNN can be used: minitorch's conv calls cuDNN only through its CUDA backend."""
    return _cuda.is_available() and bool(getattr(_cuda._C_cuda, "has_cudnn", False))


def _cudnn_version() -> Optional[int]:
    """cudnnGetVersion() of the cuDNN the backend runs (e.g. 91300 for 9.13.0), None where cuDNN is
    not available, as PyTorch."""
    return getattr(_cuda._C_cuda, "cudnn_version", None) if _cudnn_is_available() else None


@contextlib.contextmanager
def _cudnn_flags(enabled: bool = False, benchmark: bool = False, deterministic: bool = False,
                 allow_tf32: bool = True) -> Iterator[None]:
    """torch.backends.cudnn.flags: the four flags set for the block, restored after it."""
    names = ("enabled", "benchmark", "deterministic", "allow_tf32")
    saved = {n: getattr(cudnn, n) for n in names}
    cudnn.__dict__.update(enabled=enabled, benchmark=benchmark, deterministic=deterministic,
                          allow_tf32=allow_tf32)
    _push_flags()
    try:
        yield
    finally:
        cudnn.__dict__.update(saved)
        _push_flags()


cudnn = _module("cudnn", "cuDNN's switches (torch.backends.cudnn).", enabled=True, benchmark=False,
                benchmark_limit=10, deterministic=False, allow_tf32=True,
                is_available=_cudnn_is_available, version=_cudnn_version, flags=_cudnn_flags)

# ---- cuda ----------------------------------------------------------------------------------

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind: str):
    def enable(enabled: bool) -> None:
        _sdp[kind] = bool(enabled)

    def is_enabled() -> bool:
        return _sdp[kind]

    enable.__name__, is_enabled.__name__ = f"enable_{kind}_sdp", f"{kind}_sdp_enabled"
    return {enable.__name__: enable, is_enabled.__name__: is_enabled}


def _sdp_kernel(enable_flash: bool = True, enable_math: bool = True, enable_mem_efficient: bool = True,
                enable_cudnn: bool = True):
    """torch.backends.cuda.sdp_kernel, deprecated in PyTorch for nn.attention.sdpa_kernel: a context
    manager inside which only the enabled backends may run scaled_dot_product_attention (the
    switches as they were come back after it); the call warns as PyTorch's does."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will "
                  "be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=2)
    from ..nn.attention import SDPBackend, sdpa_kernel

    switches = ((SDPBackend.FLASH_ATTENTION, enable_flash), (SDPBackend.EFFICIENT_ATTENTION, enable_mem_efficient),
                (SDPBackend.MATH, enable_math), (SDPBackend.CUDNN_ATTENTION, enable_cudnn))
    return sdpa_kernel([backend for backend, on in switches if on])


cuda = _module("cuda", "CUDA's switches (torch.backends.cuda).", is_built=_cuda.is_built,
               matmul=_Flags(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                             allow_bf16_reduced_precision_reduction=True), sdp_kernel=_sdp_kernel)
for _kind in _sdp:
    cuda.__dict__.update(_sdp_switch(_kind))
del _kind
cuda.SDPBackend = __import__("minitorch.nn.attention", fromlist=["SDPBackend"]).SDPBackend
_push_flags()

# ---- the backends this build does not have -------------------------------------------------

mps = _module("mps", "Apple's Metal (torch.backends.mps): not in minitorch.",
              is_available=lambda: False, is_built=lambda: False)
mkldnn = _module("mkldnn", "oneDNN (torch.backends.mkldnn): not in minitorch.", enabled=True,
                 is_available=lambda: False)
mkl = _module("mkl", "Intel MKL (torch.backends.mkl): minitorch uses OpenBLAS.", is_available=lambda: False)
kleidiai = _module("kleidiai", "Arm's KleidiAI kernels (torch.backends.kleidiai): not in minitorch.",
                   is_available=lambda: False)
cusparselt = _module("cusparselt", "cuSPARSELt (torch.backends.cusparselt): not in minitorch.",
                     is_available=lambda: False, version=lambda: None, get_max_alg_id=lambda: None)
miopen = _module("miopen", "AMD's MIOpen (torch.backends.miopen): not in minitorch.")


class _MklVerbose:
    """torch.backends.mkl.verbose(level): MKL's on-demand verbose messages in a block. Without
    MKL, as PyTorch built without it, VERBOSE_ON fails on entering; VERBOSE_OFF does nothing."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        if self.enable == mkl.VERBOSE_OFF:
            return None
        raise AssertionError("Failed to set MKL into verbose mode. Please consider to disable this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False


mkl.__dict__.update(VERBOSE_OFF=0, VERBOSE_ON=1, verbose=_MklVerbose)
_nnpack_enabled = [True]  # PyTorch's default: NNPACK allowed where built (it is not, here)


def _nnpack_set_flags(_enabled):
    """Sets whether NNPACK may be used (no convolution here uses it); returns the old setting."""
    before = (_nnpack_enabled[0],)
    _nnpack_enabled[0] = bool(_enabled)
    return before


@contextlib.contextmanager
def _nnpack_flags(enabled=False):
    before = _nnpack_set_flags(enabled)
    try:
        yield
    finally:
        _nnpack_set_flags(before[0])


nnpack = _module("nnpack", "NNPACK (torch.backends.nnpack): not in minitorch; its switch is kept.",
                 is_available=lambda: False, set_flags=_nnpack_set_flags, flags=_nnpack_flags)
openmp = _module("openmp", "OpenMP (torch.backends.openmp): minitorch's CPU loops use it.",
                 is_available=lambda: True)


def _cpu_capability() -> str:
    """The instruction set the CPU loops run: they are built for x86-64-v4 (AVX-512), x86-64-v3
    (AVX2 and FMA) and the baseline (MT_SIMD_CLONES in csrc/cpu/loops.h), and the loader picks the
    best this CPU has; named as PyTorch names its levels."""
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        return "DEFAULT"
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return "DEFAULT"
    have = set(flags)
    if {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"} <= have:
        return "AVX512"
    if {"avx2", "fma", "bmi1", "bmi2", "f16c", "movbe"} <= have:
        return "AVX2"
    return "DEFAULT"


cpu = _module("cpu", "The CPU's capability (torch.backends.cpu).", get_cpu_capability=_cpu_capability)


# ---- quantized ----------------------------------------------------------------------------

_QENGINES = ("none", "fbgemm", "qnnpack", "onednn", "x86")  # the names PyTorch knows (c10 QEngine)
_SUPPORTED_QENGINES = ["x86", "fbgemm"]  # the numerics minitorch's quantized kernels follow


class _QuantizedModule(types.ModuleType):
    """torch.backends.quantized: `engine`, the quantized kernels' backend ('x86', as PyTorch's
    default on x86 CPUs; 'fbgemm' names the same numerics), and the read-only `supported_engines`."""

    _engine = "x86"

    @property
    def engine(self) -> str:
        return self._engine

    @engine.setter
    def engine(self, value: str) -> None:
        if value not in _QENGINES and value not in ("", None):
            raise RuntimeError(f"{value} is not a valid value for quantized engine")
        if value not in _SUPPORTED_QENGINES:
            name = {"none": "NoQEngine", "": "NoQEngine", None: "NoQEngine", "qnnpack": "QNNPACK",
                    "onednn": "ONEDNN"}.get(value, value)
            raise RuntimeError(f"quantized engine {name} is not supported")
        type(self)._engine = value

    @property
    def supported_engines(self) -> list:
        return list(_SUPPORTED_QENGINES)

    @supported_engines.setter
    def supported_engines(self, value: object) -> None:
        raise RuntimeError("Assignment not supported")


quantized = _QuantizedModule(f"{__name__}.quantized", "The quantized engine (torch.backends.quantized).")
sys.modules[quantized.__name__] = quantized

# ---- opt_einsum ----------------------------------------------------------------------------

try:
    import opt_einsum as _opt_einsum_package
except ImportError:
    _opt_einsum_package = None

_STRATEGIES = ("auto", "greedy", "optimal")


class _OptEinsumModule(types.ModuleType):
    """torch.backends.opt_einsum: `enabled` and `strategy`, checked by set_flags and flags() as
    PyTorch's (a plain assignment is not checked there either)."""

    def _check_enabled(self, value: object) -> None:
        if value and not self.is_available():
            raise ValueError(
                f"opt_einsum is not available, so setting `enabled` to {value} will not reap the benefits of "
                "calculating an optimal path for einsum. torch.einsum will fall back to contracting from left "
                "to right. To enable this optimal path calculation, please install opt-einsum.")

    def _check_strategy(self, value: object) -> None:
        if not self.is_available():
            raise ValueError(
                f"opt_einsum is not available, so setting `strategy` to {value} will not be meaningful. "
                "torch.einsum will bypass path calculation and simply contract from left to right. Please "
                "install opt_einsum or unset `strategy`.")
        if not self.enabled:
            raise ValueError(
                f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be meaningful. "
                "torch.einsum will bypass path calculation and simply contract from left to right. Please set "
                "`enabled` to `True` as well or unset `strategy`.")
        if value not in _STRATEGIES:
            raise ValueError(f"`strategy` must be one of the following: [auto, greedy, optimal] but is {value}")

    def set_flags(self, _enabled: Optional[bool] = None, _strategy: Optional[str] = None) -> tuple:
        """Sets the flags given; returns them as they were."""
        before = (self.enabled, self.strategy if self.is_available() else None)
        if _enabled is not None:
            self._check_enabled(_enabled)
            self.enabled = _enabled
        if _strategy is not None:
            self._check_strategy(_strategy)
            self.strategy = _strategy
        return before

    @contextlib.contextmanager
    def flags(self, enabled: Optional[bool] = None, strategy: Optional[str] = None) -> Iterator[None]:
        before = self.set_flags(enabled, strategy)
        try:
            yield
        finally:
            self.set_flags(*before)


opt_einsum = _OptEinsumModule(f"{__name__}.opt_einsum", "einsum's contraction order (torch.backends.opt_einsum): "
                              "opt_einsum's path where the package is installed, else left to right.")
opt_einsum.__dict__.update(is_available=lambda: _opt_einsum_package is not None,
                           get_opt_einsum=lambda: _opt_einsum_package,
                           enabled=_opt_einsum_package is not None,
                           strategy="auto" if _opt_einsum_package is not None else None)
sys.modules[opt_einsum.__name__] = opt_einsum


# ---- mha: the fast path of nn.MultiheadAttention and nn.TransformerEncoder ------------------

_mha_fastpath = [True]


def _get_fastpath_enabled() -> bool:
    """Whether MultiheadAttention and TransformerEncoder(Layer) may take PyTorch's fused fast path
    in inference. minitorch has one path, so the switch changes no result here; it is kept, and
    read back, for the scripts that set it."""
    return _mha_fastpath[0]


def _set_fastpath_enabled(value: bool) -> None:
    _mha_fastpath[0] = value


mha = _module("mha", "The switch of MultiheadAttention's fast path (torch.backends.mha).",
              get_fastpath_enabled=_get_fastpath_enabled, set_fastpath_enabled=_set_fastpath_enabled)


def set_float32_matmul_precision(precision: str) -> None:
    """torch.set_float32_matmul_precision: 'highest' keeps float32 matrix products in float32;
    'high' and 'medium' allow TF32 (backends.cuda.matmul.allow_tf32 follows, as in PyTorch)."""
    global _float32_matmul_precision
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _float32_matmul_precision = precision
    cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    """'highest', or the precision that allows TF32 ('high' when allow_tf32 was set directly)."""
    if not cuda.matmul.allow_tf32:
        return "highest"
    return "high" if _float32_matmul_precision == "highest" else _float32_matmul_precision
