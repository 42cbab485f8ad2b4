"""torch.stft and torch.istft as composites of minitorch's ops, as ATen's SpectralOps.cpp writes
them: stft frames the (centre-padded) signal with as_strided, windows each frame and takes its
FFT (_fft_r2c, one-sided by default; _fft_c2c for a two-sided one); istft takes the inverse FFT of
each frame (_fft_c2r or _fft_c2c), windows it and overlap-adds the frames with fold (ATen's
unfold_backward), dividing by the overlap-added squared window. Each step is an op, so autograd
records them. A complex signal takes the same steps (its centre padding and fold run on complex
tensors, as PyTorch's): a two-sided stft, and istft(return_complex=True) back to it.
"""
from __future__ import annotations

import warnings

from . import _C

_warned_real = False
_warned_no_window = set()  # "stft", "istft": PyTorch warns once per process for each
_NO_WINDOW = {
    "stft": "A window was not provided. A rectangular window will be applied,which is known to cause spectral "
            "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
            "spectral leakage.",
    "istft": "A window was not provided. A rectangular window will be applied.Please provide the same window used "
             "by stft to make the inversion lossless.",
}


def _warn_no_window(name: str) -> None:
    if name not in _warned_no_window:
        _warned_no_window.add(name)
        warnings.warn(_NO_WINDOW[name] + "To suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=3)


def _window_for(window, win_length: int, n_fft: int, like, name: str):
    """The window as n_fft values: win_length ones by default, zero-padded on both sides."""
    if window is not None and (window.dim() != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{name}: expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    if window is None:
        window = _C.ones([win_length], dtype=like.dtype, device=like.device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _C.constant_pad_nd(window, [left, n_fft - win_length - left], 0)
    return window


def stft(input, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
         center: bool = True, pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None):
    """The short-time Fourier transform: (n_fft // 2 + 1 or n_fft, n_frames) per signal."""
    from .nn import functional as F

    global _warned_real
    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if align_to_window is not None and center:
        raise ValueError("stft align_to_window should only be set when center = false")
    if return_complex is None:
        if not (input.dtype.is_complex or (window is not None and window.dtype.is_complex)):
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
    elif not return_complex and not _warned_real:
        _warned_real = True
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.",
                      UserWarning, stacklevel=2)
    if center:
        dim = input.dim()
        pad = n_fft // 2
        input = F.pad(input.view([1] * (3 - dim) + list(input.shape)), [pad, pad], pad_mode)
        input = input.view(list(input.shape)[-dim:])
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor")
    x = input.unsqueeze(0) if input.dim() == 1 else input
    batch, length = x.shape
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is None:
        _warn_no_window("stft")
    w = None if window is None and win == n_fft else _window_for(window, win, n_fft, x, "stft")
    n_frames = 1 + (length - n_fft) // hop
    s0, s1 = x.stride()
    frames = x.as_strided([batch, n_frames, n_fft], [s0, hop * s1, s1], x.storage_offset())
    if w is not None:
        frames = frames * w
    complex_fft = frames.dtype.is_complex
    one = (not complex_fft) if onesided is None else onesided
    norm = 1 if normalized else 0
    if complex_fft:
        if one:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _C._fft_c2c(frames, [2], norm, True)
    else:
        out = _C._fft_r2c(frames, [2], norm, one)
    out = out.transpose(1, 2)
    if input.dim() == 1:
        out = out.squeeze(0)
    return out if return_complex or return_complex is None else _C.view_as_real(out)


def istft(input, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window=None,
          center: bool = True, normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False):
    """The inverse of stft: the signal (its length n_fft + hop * (n_frames - 1), less the centre padding)."""
    from .nn import functional as F

    if not isinstance(input, _C.TensorBase):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if input.numel() == 0:
        raise RuntimeError("istft: Input tensor must not be empty")
    if input.dim() not in (2, 3):
        raise RuntimeError(f"istft: Tensor of complex type should have 2 or 3 dimensions, but got {input.dim()}")
    if window is None:
        _warn_no_window("istft")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected = n_fft + hop * (n_frames - 1)
    one = fft_size != n_fft if onesided is None else onesided
    if one and n_fft // 2 + 1 != fft_size:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not one and n_fft != fft_size:
        raise RuntimeError("istft: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError("istft: expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError("istft: expected 0 < win_length <= n_fft")
    real_dtype = _C.float64 if input.dtype == _C.complex128 else _C.float32
    like = _C.zeros([1], dtype=real_dtype, device=input.device)
    w = _window_for(window, win, n_fft, like, "istft")
    x = input.unsqueeze(0) if input.dim() == 2 else input
    x = x.transpose(1, 2)  # (channel, n_frames, fft_size)
    norm = 1 if normalized else 2
    if return_complex:
        if one:
            raise RuntimeError("cannot have onesided output if window or input is complex")
        frames = _C._fft_c2c(x, [2], norm, False)
    else:
        if not one:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        frames = _C._fft_c2r(x, [2], norm, n_fft)
    y = _overlap_add(frames * w.view(1, 1, n_fft), expected, n_fft, hop)
    env = _overlap_add((w * w).view(1, 1, n_fft).expand(1, n_frames, n_fft), expected, n_fft, hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (-(n_fft // 2) if center else expected)
    y = y[:, start:end]
    env = env[:, start:end]
    if env.numel() and bool((env.abs().min() < 1e-11).item()):
        raise RuntimeError("istft: window overlap add min: 1e-11")  # PyTorch reports the bound alike
    y = y / env
    if input.dim() == 2:
        y = y.squeeze(0)
    if end > expected:
        y = _C.constant_pad_nd(y, [0, end - expected], 0)
    return y


def _overlap_add(frames, total: int, n_fft: int, hop: int):
    """ATen's unfold_backward: frames (C, n_frames, n_fft) summed into (C, total) at k * hop."""
    from .nn import functional as F

    c = frames.shape[0]
    cols = frames.transpose(1, 2)  # (C, n_fft, n_frames): fold's columns
    return F.fold(cols, (1, total), (1, n_fft), stride=(1, hop)).reshape(c, total)
