"""Window functions: torch.signal.windows' (SciPy's: cosine, exponential, gaussian, general_cosine,
general_hamming, hann, hamming, blackman, bartlett, kaiser, nuttall) and the top-level
hann_window, hamming_window, blackman_window, bartlett_window and kaiser_window.

Every window is a formula of the sample index n = 0 .. M-1 evaluated on one arange in the
requested dtype. A symmetric window of M points peaks at (M - 1) / 2; a periodic one (sym=False,
periodic=True) is the first M points of the M + 1 point symmetric window, which is the same formula
with M + 1 in place of M."""
from __future__ import annotations

import math
from typing import Iterable, Optional

import minitorch
from minitorch import _C

# ---- torch.signal.windows ----


def _check_window(name: str, M: int, dtype, layout) -> None:
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and layout is not minitorch.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype is not None and dtype not in (_C.float32, _C.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _finish(values, requires_grad: bool):
    return values.requires_grad_(True) if requires_grad else values


def _samples(M: int, dtype, device):
    return _C.arange(M, dtype=dtype if dtype is not None else _C._get_default_dtype(), device=device)


def _ones(M, dtype, device, requires_grad):
    return _finish(_C.ones((M,), dtype=dtype if dtype is not None else _C._get_default_dtype(), device=device),
                   requires_grad)


def _cosine_sum(window_length, periodic, coefs, dtype, device):
    """sum over k of (-1)^k coefs[k] cos(2 pi k n / (N - 1)), N = window_length (+ 1 when periodic)."""
    span = window_length + 1 if periodic else window_length
    phase = _samples(window_length, dtype, device) * (2 * math.pi / (span - 1))
    out = _C.zeros((window_length,), dtype=phase.dtype, device=device) + coefs[0]
    for k, coef in enumerate(coefs[1:], start=1):
        out = out + _C.cos(phase * k) * (coef if k % 2 == 0 else -coef)
    return out


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """sin(pi (n + 1/2) / M)."""
    _check_window("cosine", M, dtype, layout)
    if M <= 1:
        return _ones(M, dtype, device, requires_grad)
    span = M if sym else M + 1
    return _finish(_C.sin((_samples(M, dtype, device) + 0.5) * (math.pi / span)), requires_grad)


def exponential(M: int, *, center: Optional[float] = None, tau: float = 1.0, sym: bool = True, dtype=None,
                layout=None, device=None, requires_grad: bool = False):
    """exp(-|n - center| / tau), center (M - 1) / 2 unless given (only for a periodic window)."""
    _check_window("exponential", M, dtype, layout)
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if M <= 1:
        return _ones(M, dtype, device, requires_grad)
    if center is None:
        center = (M - 1) / 2 if sym else M / 2
    return _finish(_C.exp(-(_samples(M, dtype, device) - center).abs() / tau), requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """exp(-((n - (M - 1) / 2) / std)^2 / 2)."""
    _check_window("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M <= 1:
        return _ones(M, dtype, device, requires_grad)
    center = (M - 1) / 2 if sym else M / 2
    z = (_samples(M, dtype, device) - center) / std
    return _finish(_C.exp(z * z * -0.5), requires_grad)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False):
    """sum over k of (-1)^k a[k] cos(2 pi k n / (M - 1))."""
    _check_window("general_cosine", M, dtype, layout)
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    if M <= 1:
        return _ones(M, dtype, device, requires_grad)
    return _finish(_cosine_sum(M, not sym, a, dtype, device), requires_grad)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=None, device=None,
                    requires_grad: bool = False):
    """alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


# Nuttall's 4-term window, continuous first derivative (Nuttall 1981; SciPy's coefficients)
_NUTTALL = [0.3635819, 0.4891775, 0.1365995, 0.0106411]


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    return general_cosine(M, a=_NUTTALL, sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def _triangle(n, span: int):
    """1 - |2 n / (span - 1) - 1|: the Bartlett window of span points."""
    return 1 - (n * (2.0 / (span - 1)) - 1).abs()


def _kaiser(n, span: int, beta: float):
    """I0(beta sqrt(1 - (2 n / (span - 1) - 1)^2)) / I0(beta)."""
    x = n * (2.0 / (span - 1)) - 1
    return _C.i0(beta * (1 - x * x).clamp(min=0).sqrt()) / _C.i0(_C.full((), beta, dtype=n.dtype, device=n.device))


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    _check_window("bartlett", M, dtype, layout)
    if M <= 1:
        return _ones(M, dtype, device, requires_grad)
    return _finish(_triangle(_samples(M, dtype, device), M if sym else M + 1), requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False):
    _check_window("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _ones(M, dtype, device, requires_grad)
    return _finish(_kaiser(_samples(M, dtype, device), M if sym else M + 1, beta), requires_grad)


# ---- the top-level *_window functions (periodic by default) ----

def _top_level(name: str, window_length: int, dtype, layout):
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if layout is not None and layout is not minitorch.strided:
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")


def _window(name: str, window_length: int, periodic: bool, dtype, layout, device, requires_grad, make):
    _top_level(name, window_length, dtype, layout)
    if window_length <= 1:
        return _ones(window_length, dtype, device, requires_grad)
    return _finish(make(window_length + 1 if periodic else window_length), requires_grad)


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                pin_memory: bool = False, requires_grad: bool = False):
    """0.5 - 0.5 cos(2 pi n / (N - 1)), N = window_length (+ 1 when periodic)."""
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda span: _cosine_sum(window_length, periodic, (0.5, 0.5), dtype, device))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54, beta: float = 0.46, *,
                   dtype=None, layout=None, device=None, pin_memory: bool = False, requires_grad: bool = False):
    """alpha - beta cos(2 pi n / (N - 1))."""
    return _window("hamming_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda span: _cosine_sum(window_length, periodic, (alpha, beta), dtype, device))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory: bool = False, requires_grad: bool = False):
    """0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda span: _cosine_sum(window_length, periodic, (0.42, 0.5, 0.08), dtype, device))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None, device=None,
                    pin_memory: bool = False, requires_grad: bool = False):
    """1 - |2 n / (N - 1) - 1|."""
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda span: _triangle(_samples(window_length, dtype, device), span))


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None, layout=None,
                  device=None, pin_memory: bool = False, requires_grad: bool = False):
    """I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)."""
    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda span: _kaiser(_samples(window_length, dtype, device), span, beta))
