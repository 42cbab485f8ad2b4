"""minitorch.fft: torch.fft's discrete Fourier transforms.

Every transform is one of PyTorch's three ATen primitives, ops of the op table (csrc/dispatch/
ops.def): _fft_c2c (complex to complex), _fft_r2c (real to complex, one-sided or full) and
_fft_c2r (one-sided complex to real), computed by one C kernel (csrc/cpu/fft.c: mixed-radix
Stockham passes over blocks of lines in each dtype's own precision, Bluestein's chirp-z for large
prime factors, the four-step split for long lines) with their gradients (csrc/autograd/formulas_fft.c).
What is here is what ATen's SpectralOps.cpp does around them: the dtype promotion (integers to the
default float, float32 to complex64), the signal sizes n/s (cropping with narrow, zero-padding with
cat), the dims and norm ("backward", "ortho", "forward") with PyTorch's errors, and the
conjugations of hfft and ihfft. The CUDA backend has no FFT kernel: a CUDA tensor's transform
runs on the host and its complex result comes back to the device (csrc/dispatch/complex.c's and
host_fallback.c's round trips; slow, and a TODO for cuFFT).
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Sequence

from . import _C
from ._checks import _scalar_name, _tensors, _to_out

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
           "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

# ATen's fft_norm_mode: none, by 1/sqrt(n), by 1/n
_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2


def _check_input(name: str, x) -> None:
    """A tensor (on any device: a CUDA tensor's transform runs on the host)."""
    _tensors(name, input=x)


def _with_out(fn):
    """fn with PyTorch's keyword-only out=: the result written into out (resized where its shape
    differs; any precision of the result's kind: complex for a complex result, floating for a
    real one), which is returned. The grad refusal names the ATen primitive, as PyTorch's."""
    # the name PyTorch's messages give: the n-dim entry point for the 2-dim ones and ifftn
    said = {"fft2": "fftn", "ifft2": "fftn", "ifftn": "fftn"}.get(fn.__name__, fn.__name__.replace("2", "n"))

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        if isinstance(out, _C.TensorBase):
            if result.dtype.is_complex and not out.dtype.is_complex:
                raise RuntimeError(f"{said} expects a complex output tensor, but got {_scalar_name(out.dtype)}")
            if not result.dtype.is_complex and not out.dtype.is_floating_point:
                raise RuntimeError(f"{said} expects a floating point output tensor, but got {_scalar_name(out.dtype)}")
            if said == "ihfft" and out.dtype != result.dtype:  # PyTorch's ihfft_out takes no other precision
                raise RuntimeError(f"Found dtype {_scalar_name(out.dtype)} but expected {_scalar_name(result.dtype)}")
        x = args[0] if args else kwargs.get("input")
        if not result.dtype.is_complex:
            primitive = "_fft_c2r"
        elif x.dtype.is_complex or said in ("fftn", "ihfftn"):
            primitive = "_fft_c2c"
        else:
            primitive = "_fft_r2c"
        return _to_out(result, out, primitive)

    sig = inspect.signature(fn)
    with_out.__signature__ = sig.replace(parameters=[*sig.parameters.values(), inspect.Parameter(
        "out", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return with_out


def _norm_mode(norm: str | None, forward: bool) -> int:
    """ATen's norm_from_string: the normalization of a transform in the given direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex: bool):
    """ATen's promote_tensor_fft: integers to the default float; only float32/float64 (and their
    complex types) on the CPU."""
    dt = x.dtype
    if dt.is_complex:
        return x
    if not dt.is_floating_point:
        dt = _C._get_default_dtype()
    if dt not in (_C.float32, _C.float64):
        raise RuntimeError(f"Unsupported dtype {_scalar_name(dt)}")
    if require_complex:
        dt = _C.complex64 if dt == _C.float32 else _C.complex128
    return x if dt == x.dtype else x.to(dt)


_SCALAR_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                 "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int32": "Int", "int64": "Long",
                 "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _scalar_name(dt) -> str:
    return _SCALAR_NAMES.get(str(dt).replace("minitorch.", ""), str(dt))


def _wrap_dim(dim: int, ndim: int) -> int:
    """maybe_wrap_dim(dim, ndim, wrap_scalar=False), with PyTorch's IndexErrors."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def _resize(x, dims: Sequence[int], sizes: Sequence[int]):
    """ATen's resize_fft_input: x.size(dims[i]) made sizes[i] by cropping (a narrow view) or by
    zero-padding at the end (a cat with zeros, which takes complex tensors and records its
    gradient)."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if have > n:
            x = x.narrow(d, 0, n)
        elif have < n:
            shape = list(x.shape)
            shape[d] = n - have
            x = _C.cat([x, _C.zeros(shape, dtype=x.dtype, device=x.device)], d)
    return x


def _check_n(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _c2c(name, x, n, dim, norm, forward):
    if not x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex input tensor, but got {_scalar_name(x.dtype)}")
    d = _wrap_dim(dim, x.dim())
    size = n if n is not None else x.shape[d]
    _check_n(size)
    if n is not None:
        x = _resize(x, [d], [n])
    return _C._fft_c2c(x, [d], _norm_mode(norm, forward), forward)


def _r2c(name, x, n, dim, norm, forward, onesided):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_scalar_name(x.dtype)}")
    x = _promote(x, False)
    d = _wrap_dim(dim, x.dim())
    size = n if n is not None else x.shape[d]
    _check_n(size)
    if n is not None:
        x = _resize(x, [d], [n])
    ret = _C._fft_r2c(x, [d], _norm_mode(norm, forward), onesided)
    return ret if forward else _C.conj_physical(ret)


def _c2r(name, x, n, dim, norm, forward):
    x = _promote(x, True)
    d = _wrap_dim(dim, x.dim())
    size = n if n is not None else 2 * (x.shape[d] - 1)
    _check_n(size)
    if n is not None:
        x = _resize(x, [d], [size // 2 + 1])
    if forward:
        x = _C.conj_physical(x)
    return _C._fft_c2r(x, [d], _norm_mode(norm, forward), size)


@_with_out
def fft(input, n: int | None = None, dim: int = -1, norm: str | None = None):
    """The one-dimensional discrete Fourier transform of input (complex result)."""
    _check_input("fft", input)
    if input.dtype.is_complex:
        return _c2c("fft", input, n, dim, norm, True)
    return _r2c("fft", input, n, dim, norm, True, False)


@_with_out
def ifft(input, n: int | None = None, dim: int = -1, norm: str | None = None):
    """The one-dimensional inverse discrete Fourier transform of input."""
    _check_input("ifft", input)
    if input.dtype.is_complex:
        return _c2c("ifft", input, n, dim, norm, False)
    return _r2c("ifft", input, n, dim, norm, False, False)


@_with_out
def rfft(input, n: int | None = None, dim: int = -1, norm: str | None = None):
    """The FFT of a real signal: the n // 2 + 1 non-negative frequencies."""
    _check_input("rfft", input)
    return _r2c("rfft", input, n, dim, norm, True, True)


@_with_out
def irfft(input, n: int | None = None, dim: int = -1, norm: str | None = None):
    """The inverse of rfft: a real signal of length n (default 2 * (input.size(dim) - 1))."""
    _check_input("irfft", input)
    return _c2r("irfft", input, n, dim, norm, False)


@_with_out
def hfft(input, n: int | None = None, dim: int = -1, norm: str | None = None):
    """The FFT of a Hermitian-symmetric signal given by its first half: a real result."""
    _check_input("hfft", input)
    return _c2r("hfft", input, n, dim, norm, True)


@_with_out
def ihfft(input, n: int | None = None, dim: int = -1, norm: str | None = None):
    """The inverse of hfft: the one-sided inverse FFT of a real signal."""
    _check_input("ihfft", input)
    return _r2c("ihfft", input, n, dim, norm, False, True)


def _shape_and_dims(x, s, dim):
    """ATen's canonicalize_fft_shape_and_dim_args: the signal sizes and the wrapped dims."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dims is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} dimensions.")
        if dims is None:
            dims = list(range(ndim - len(s), ndim))
        shape = [x.shape[d] if n == -1 else n for n, d in zip(s, dims)]
    elif dims is None:
        dims = list(range(ndim))
        shape = list(x.shape)
    else:
        shape = [x.shape[d] for d in dims]
    for n in shape:
        _check_n(n)
    return shape, dims


def _c2c_n(name, x, s, dim, norm, forward):
    shape, dims = _shape_and_dims(x, s, dim)
    x = _promote(x, True)
    x = _resize(x, dims, shape)
    if not dims:
        return x.clone()
    return _C._fft_c2c(x, dims, _norm_mode(norm, forward), forward)


@_with_out
def fftn(input, s=None, dim=None, norm: str | None = None):
    """The N-dimensional discrete Fourier transform over dim (default: all, or the last len(s))."""
    _check_input("fftn", input)
    return _c2c_n("fftn", input, s, dim, norm, True)


@_with_out
def ifftn(input, s=None, dim=None, norm: str | None = None):
    """The N-dimensional inverse discrete Fourier transform."""
    _check_input("ifftn", input)
    return _c2c_n("ifftn", input, s, dim, norm, False)


@_with_out
def fft2(input, s=None, dim=(-2, -1), norm: str | None = None):
    """fftn over two dims (default the last two)."""
    _check_input("fft2", input)
    return fftn(input, s, dim, norm)


@_with_out
def ifft2(input, s=None, dim=(-2, -1), norm: str | None = None):
    """ifftn over two dims (default the last two)."""
    _check_input("ifft2", input)
    return ifftn(input, s, dim, norm)


@_with_out
def rfftn(input, s=None, dim=None, norm: str | None = None):
    """The N-dimensional FFT of a real signal, one-sided along the last of dim."""
    _check_input("rfftn", input)
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {_scalar_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input, False), dims, shape)
    return _C._fft_r2c(x, dims, _norm_mode(norm, True), True)


def _c2r_shape(name, x, s, dim):
    """ATen's canonicalize_fft_c2r_shape_and_dim_args: the input's sizes (n // 2 + 1 along the last
    dim), the dims and the output's size along the last dim."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or (not isinstance(s, int) and list(s)[-1] == -1):
        last = 2 * (x.shape[dims[-1]] - 1)
    else:
        last = shape[-1]
    _check_n(last)
    shape[-1] = last // 2 + 1
    return shape, dims, last


@_with_out
def irfftn(input, s=None, dim=None, norm: str | None = None):
    """The inverse of rfftn: a real signal (its last dim of s[-1], default 2 * (size - 1))."""
    _check_input("irfftn", input)
    shape, dims, last = _c2r_shape("irfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    return _C._fft_c2r(x, dims, _norm_mode(norm, False), last)


@_with_out
def rfft2(input, s=None, dim=(-2, -1), norm: str | None = None):
    """rfftn over two dims (default the last two)."""
    _check_input("rfft2", input)
    return rfftn(input, s, dim, norm)


@_with_out
def irfft2(input, s=None, dim=(-2, -1), norm: str | None = None):
    """irfftn over two dims (default the last two)."""
    _check_input("irfft2", input)
    return irfftn(input, s, dim, norm)


@_with_out
def hfftn(input, s=None, dim=None, norm: str | None = None):
    """The N-dimensional FFT of a Hermitian-symmetric signal given by its one-sided half."""
    _check_input("hfftn", input)
    shape, dims, last = _c2r_shape("hfftn", input, s, dim)
    x = _resize(_promote(input, True), dims, shape)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _C._fft_c2c(x, dims[:-1], mode, True)
    return _C._fft_c2r(_C.conj_physical(x), dims[-1:], mode, last)


@_with_out
def ihfftn(input, s=None, dim=None, norm: str | None = None):
    """The inverse of hfftn: the one-sided inverse N-dimensional FFT of a real signal."""
    _check_input("ihfftn", input)
    if input.dtype.is_complex:
        raise RuntimeError(f"ihfftn expects a real-valued input tensor, but got {_scalar_name(input.dtype)}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    x = _resize(_promote(input, False), dims, shape)
    mode = _norm_mode(norm, False)
    tmp = _C.conj_physical(_C._fft_r2c(x, dims[-1:], mode, True))
    if len(dims) == 1:
        return tmp
    return _C._fft_c2c(tmp, dims[:-1], mode, False)


@_with_out
def hfft2(input, s=None, dim=(-2, -1), norm: str | None = None):
    """hfftn over two dims (default the last two)."""
    _check_input("hfft2", input)
    return hfftn(input, s, dim, norm)


@_with_out
def ihfft2(input, s=None, dim=(-2, -1), norm: str | None = None):
    """ihfftn over two dims (default the last two)."""
    _check_input("ihfft2", input)
    return ihfftn(input, s, dim, norm)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The sample frequencies of an FFT of length n: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)."""
    k = _C.cat([_C.arange(0, (n + 1) // 2, dtype=dtype, device=device),
                _C.arange(-(n // 2), 0, dtype=dtype, device=device)])
    return _freqs(k, n, d, dtype, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The sample frequencies of an rfft of length n: [0, 1, ..., n // 2] / (d * n)."""
    return _freqs(_C.arange(0, n // 2 + 1, dtype=dtype, device=device), n, d, dtype, requires_grad)


def _freqs(k, n, d, dtype, requires_grad):
    if dtype is None:
        k = k.to(_C._get_default_dtype())
    out = k * (1.0 / (n * d))
    if requires_grad:
        out.requires_grad_(True)
    return out


def _all_dims(dim, x):
    if dim is None:
        return list(range(x.dim()))
    return [dim] if isinstance(dim, int) else list(dim)


def fftshift(input, dim=None):
    """input rolled so that the zero frequency sits in the middle of each dim of dim (default all)."""
    _check_input("fftshift", input)
    dims = _all_dims(dim, input)
    return _C.roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input, dim=None):
    """The inverse of fftshift."""
    _check_input("ifftshift", input)
    dims = _all_dims(dim, input)
    return _C.roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
