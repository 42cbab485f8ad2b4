"""Observers, as torch.ao.quantization.observer: modules that watch the values passing through
them (their running min and max) and turn what they saw into a scale and zero point
(calculate_qparams), with PyTorch's formulas in float32 tensor arithmetic, so that the weights
they quantize match PyTorch's bit for bit.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Tuple

import numpy as np

import minitorch
from minitorch import nn
from minitorch._qtensor import per_channel_affine, per_channel_affine_float_qparams, per_channel_symmetric
from minitorch._qtensor import per_tensor_affine, per_tensor_symmetric, qint8, qint32, quint8

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver", "MovingAverageMinMaxObserver",
           "PerChannelMinMaxObserver", "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "PlaceholderObserver", "NoopObserver", "default_observer",
           "default_weight_observer", "default_per_channel_weight_observer", "default_dynamic_quant_observer",
           "default_placeholder_observer", "default_float_qparams_observer"]


class _PartialWrapper:
    """What Observer.with_args returns: calling it makes the observer with those arguments.
    callable_args (PyTorch's, for arguments computed at each call) is always empty here, and
    prints after the partial as PyTorch prints it."""

    def __init__(self, p: functools.partial) -> None:
        self.p = p
        self.callable_args: dict = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.p(*args, **kwargs)

    def __repr__(self) -> str:
        return self.p.__repr__() + self.callable_args.__repr__()

    with_args = lambda self, **kwargs: _with_args(self, **kwargs)  # noqa: E731


def _with_args(cls_or_self: Any, **kwargs: Any) -> _PartialWrapper:
    return _PartialWrapper(functools.partial(cls_or_self, **kwargs))


def _qrange(dtype: Any, reduce_range: bool) -> Tuple[int, int]:
    """The default (quant_min, quant_max) of an 8-bit (or 32-bit) dtype, one bit less with reduce_range."""
    if dtype in (qint8, minitorch.int8):
        lo, hi = -128, 127
    elif dtype in (quint8, minitorch.uint8):
        lo, hi = 0, 255
    elif dtype in (qint32, minitorch.int32):
        return -(2 ** 31), 2 ** 31 - 1
    elif dtype is minitorch.int16:
        return -(2 ** 15), 2 ** 15 - 1
    else:
        lo, hi = 0, 15
    return (lo // 2, hi // 2) if reduce_range else (lo, hi)


class ObserverBase(nn.Module):
    """Base of the observers: a dtype, whether it is dynamic, and with_args."""

    def __init__(self, dtype: Any, is_dynamic: bool = False) -> None:
        super().__init__()
        self.dtype, self.is_dynamic = dtype, is_dynamic

    with_args = classmethod(_with_args)


class UniformQuantizationObserverBase(ObserverBase):
    """Observers of an affine or symmetric scheme: quant_min/quant_max and eps, and the formula
    from (min, max) to (scale, zero_point) shared by all of them."""

    _version = 3

    def __init__(self, dtype: Any = quint8, qscheme: Any = per_tensor_affine, reduce_range: bool = False,
                 quant_min: Any = None, quant_max: Any = None, factory_kwargs: Any = None,
                 eps: float = 1.1920928955078125e-07, is_dynamic: bool = False, **kwargs: Any) -> None:
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for observers.                     "
                          "reduce_range will be deprecated in a future release of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", minitorch.tensor([eps]))
        if qscheme not in (per_tensor_affine, per_tensor_symmetric, per_channel_affine, per_channel_symmetric,
                           per_channel_affine_float_qparams):
            raise AssertionError("Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                                 "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                                 "quantization scheme")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            if not quant_min <= 0 <= quant_max:
                raise AssertionError("Used-specified quantization range must include 0.")
            if quant_min >= quant_max:
                raise AssertionError("qmin must be strictly less than qmax for user-specified quantization range.")
            # reduce_range halves a custom range too, as PyTorch's calculate_qmin_qmax
            self.quant_min, self.quant_max = (quant_min // 2, quant_max // 2) if reduce_range else (quant_min, quant_max)
        else:
            self.quant_min, self.quant_max = _qrange(dtype, reduce_range)

    def _calculate_qparams(self, min_val: Any, max_val: Any) -> Tuple[Any, Any]:
        """(scale float32, zero_point integer) for the ranges [min_val, max_val] (one per channel)."""
        if min_val.numel() == 0 or max_val.numel() == 0:
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.")
            return minitorch.tensor([1.0]), minitorch.tensor([0])
        if min_val.dim() == 0 and float(min_val) == float("inf") and float(max_val) == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning default values.")
            return minitorch.tensor([1.0]), minitorch.tensor([0])
        qmin, qmax = self.quant_min, self.quant_max
        min_neg = minitorch.minimum(min_val, minitorch.zeros_like(min_val))
        max_pos = minitorch.maximum(max_val, minitorch.zeros_like(max_val))
        zero_point = minitorch.zeros(min_neg.shape, dtype=minitorch.int64)
        if self.qscheme in (per_tensor_symmetric, per_channel_symmetric):
            max_pos = minitorch.maximum(-min_neg, max_pos)
            scale = minitorch.maximum(max_pos / (float(qmax - qmin) / 2), self.eps)
            if self.dtype in (quint8, minitorch.uint8):
                mid = (qmin + qmax) // 2 if self.has_customized_qrange else 128
                zero_point = minitorch.full(zero_point.shape, mid, dtype=minitorch.int64)
        elif self.qscheme is per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(qmax - qmin)
            scale = minitorch.where(scale > self.eps, scale, minitorch.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = minitorch.maximum((max_pos - min_neg) / float(qmax - qmin), self.eps)
            zero_point = qmin - minitorch.round(min_neg / scale).to(minitorch.int32)
            zero_point = minitorch.clamp(zero_point, qmin, qmax)  # int32, as PyTorch's
        if scale.dim() == 0:
            scale = minitorch.tensor([float(scale)], dtype=scale.dtype)
        if zero_point.dim() == 0:
            zero_point = minitorch.tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point


_ObserverBase = UniformQuantizationObserverBase


class _RangeObserver(UniformQuantizationObserverBase):
    """An observer that keeps min_val and max_val buffers and turns them into parameters."""

    def calculate_qparams(self) -> Tuple[Any, Any]:
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class MinMaxObserver(_RangeObserver):
    """Records the running min and max of the tensors it sees (per tensor)."""

    def __init__(self, dtype: Any = quint8, qscheme: Any = per_tensor_affine, reduce_range: bool = False,
                 quant_min: Any = None, quant_max: Any = None, factory_kwargs: Any = None,
                 eps: float = 1.1920928955078125e-07, is_dynamic: bool = False, **kwargs: Any) -> None:
        if qscheme not in (per_tensor_affine, per_tensor_symmetric):
            raise NotImplementedError("MinMaxObserver's qscheme only support torch.per_tensor_symmetric "
                                      "                     and torch.per_tensor_affine.")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic,
                         **kwargs)
        self.register_buffer("min_val", minitorch.tensor(float("inf")))
        self.register_buffer("max_val", minitorch.tensor(float("-inf")))

    def forward(self, x_orig: Any) -> Any:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = minitorch.aminmax(x)
        self.min_val.copy_(minitorch.minimum(lo, self.min_val))
        self.max_val.copy_(minitorch.maximum(hi, self.max_val))
        return x_orig

    def reset_min_max_vals(self) -> None:
        self.min_val.copy_(minitorch.tensor(float("inf")))
        self.max_val.copy_(minitorch.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Min and max as moving averages: m += c * (current - m) after the first batch."""

    def __init__(self, averaging_constant: float = 0.01, dtype: Any = quint8, qscheme: Any = per_tensor_affine,
                 reduce_range: bool = False, quant_min: Any = None, quant_max: Any = None,
                 eps: float = 1.1920928955078125e-07, is_dynamic: bool = False, **kwargs: Any) -> None:
        self.averaging_constant = averaging_constant
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range, quant_min=quant_min,
                         quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig: Any) -> Any:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = minitorch.aminmax(x)
        if float(self.min_val) != float("inf") or float(self.max_val) != float("-inf"):
            c = self.averaging_constant
            lo, hi = self.min_val + c * (lo - self.min_val), self.max_val + c * (hi - self.max_val)
        self.min_val.copy_(lo)
        self.max_val.copy_(hi)
        return x_orig


class PerChannelMinMaxObserver(_RangeObserver):
    """Records the running min and max of each slice along ch_axis."""

    def __init__(self, ch_axis: int = 0, dtype: Any = quint8, qscheme: Any = per_channel_affine,
                 reduce_range: bool = False, quant_min: Any = None, quant_max: Any = None,
                 factory_kwargs: Any = None, eps: float = 1.1920928955078125e-07, is_dynamic: bool = False,
                 **kwargs: Any) -> None:
        if qscheme not in (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams):
            raise NotImplementedError("PerChannelMinMaxObserver's qscheme only support                     "
                                      "torch.per_channel_symmetric, torch.per_channel_affine and "
                                      "torch.per_channel_affine_float_qparams.")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic,
                         **kwargs)
        self.ch_axis = ch_axis
        self.register_buffer("min_val", minitorch.tensor([]))
        self.register_buffer("max_val", minitorch.tensor([]))

    def forward(self, x_orig: Any) -> Any:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        y = x.movedim(self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1)
        lo, hi = minitorch.aminmax(y, dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            self.min_val, self.max_val = lo, hi  # the buffers take the channel count's shape
        else:
            self.min_val.copy_(minitorch.minimum(lo, self.min_val))
            self.max_val.copy_(minitorch.maximum(hi, self.max_val))
        return x_orig

    def reset_min_max_vals(self) -> None:
        self.min_val = minitorch.tensor([])
        self.max_val = minitorch.tensor([])


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel min and max as moving averages: m += c * (current - m) after the first batch."""

    def __init__(self, averaging_constant: float = 0.01, ch_axis: int = 0, dtype: Any = quint8,
                 qscheme: Any = per_channel_affine, reduce_range: bool = False, quant_min: Any = None,
                 quant_max: Any = None, eps: float = 1.1920928955078125e-07, is_dynamic: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def forward(self, x_orig: Any) -> Any:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        lo, hi = minitorch.aminmax(x.movedim(self.ch_axis, 0).reshape(x.shape[self.ch_axis], -1), dim=1)
        if self.min_val.numel() and self.max_val.numel():
            c = self.averaging_constant
            lo, hi = self.min_val + c * (lo - self.min_val), self.max_val + c * (hi - self.max_val)
        self.min_val, self.max_val = lo, hi
        return x_orig


class HistogramObserver(UniformQuantizationObserverBase):
    """Keeps a histogram (bins) of the values seen over a running [min_val, max_val], rescaled
    when the range grows; calculate_qparams picks the [min, max] that minimises the L2 error of
    quantizing that histogram (PyTorch's search, from caffe2's norm minimization) and turns it
    into parameters. The float32 tensor arithmetic is PyTorch's, in its order."""

    def __init__(self, bins: int = 2048, dtype: Any = quint8, qscheme: Any = per_tensor_affine,
                 reduce_range: bool = False, quant_min: Any = None, quant_max: Any = None, factory_kwargs: Any = None,
                 eps: float = 1.1920928955078125e-07, is_dynamic: bool = False, **kwargs: Any) -> None:
        if qscheme not in (per_tensor_affine, per_tensor_symmetric):
            raise NotImplementedError("HistogramObserver's qscheme only support torch.per_tensor_symmetric "
                                      "and torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype, qscheme, reduce_range, quant_min, quant_max, factory_kwargs, eps, is_dynamic,
                         **kwargs)
        self.bins = bins
        self.register_buffer("histogram", minitorch.zeros(bins))
        self.register_buffer("min_val", minitorch.tensor(float("inf")))
        self.register_buffer("max_val", minitorch.tensor(float("-inf")))
        self.dst_nbins = 2 ** (32 if dtype is qint32 else 8)
        self.upsample_rate = 16  # a histogram rescaled to a wider range is first split 16 ways per bin

    @staticmethod
    def _get_norm(delta_begin: Any, delta_end: Any, density: Any) -> Any:
        """density * integral of x^2 from delta_begin to delta_end (the L2 error of uniform values)."""
        return density * ((delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin) / 3)

    def _compute_quantization_error(self, next_start_bin: int, next_end_bin: int) -> float:
        """The L2 error of quantizing the histogram with bins start..end as the range."""
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_bin_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_bin_width == 0.0:
            return 0.0
        src_bin = minitorch.arange(self.bins)
        src_bin_begin = (src_bin - next_start_bin) * bin_width
        src_bin_end = src_bin_begin + bin_width
        last = self.dst_nbins - 1
        dst_bin_of_begin = minitorch.clamp(minitorch.div(src_bin_begin, dst_bin_width, rounding_mode="floor"), 0, last)
        dst_bin_of_begin_center = (dst_bin_of_begin + 0.5) * dst_bin_width
        dst_bin_of_end = minitorch.clamp(minitorch.div(src_bin_end, dst_bin_width, rounding_mode="floor"), 0, last)
        density = self.histogram / bin_width
        norm = minitorch.zeros(self.bins)
        norm += self._get_norm(src_bin_begin - dst_bin_of_begin_center, minitorch.ones(self.bins) * (dst_bin_width / 2),
                               density)
        norm += (dst_bin_of_end - dst_bin_of_begin - 1) * self._get_norm(
            minitorch.tensor(-dst_bin_width / 2), minitorch.tensor(dst_bin_width / 2), density)
        dst_bin_of_end_center = dst_bin_of_end * dst_bin_width + dst_bin_width / 2
        norm += self._get_norm(minitorch.tensor(-dst_bin_width / 2), src_bin_end - dst_bin_of_end_center, density)
        return norm.sum().item()

    def _non_linear_param_search(self) -> Tuple[Any, Any]:
        """Narrows [start_bin, end_bin] from whichever side holds fewer values (by steps of 1e-5 of
        the count) while the quantization error decreases."""
        bin_width = (self.max_val - self.min_val) / self.bins
        total = minitorch.sum(self.histogram).item()
        csum = [float(np.float32(v)) for v in minitorch.cumsum(self.histogram, dim=0).tolist()]
        stepsize, alpha, beta = 1e-5, 0.0, 1.0
        start_bin, end_bin, norm_min = 0, self.bins - 1, float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            lo_bound, hi_bound = float(np.float32(next_alpha * total)), float(np.float32(next_beta * total))
            left, right = start_bin, end_bin
            while left < end_bin and csum[left] < lo_bound:
                left += 1
            while right > start_bin and csum[right] > hi_bound:
                right -= 1
            next_start_bin, next_end_bin = start_bin, end_bin
            if (left - start_bin) > (end_bin - right):
                next_start_bin, alpha = left, next_alpha
            else:
                next_end_bin, beta = right, next_beta
            if next_start_bin == start_bin and next_end_bin == end_bin:
                continue
            norm = self._compute_quantization_error(next_start_bin, next_end_bin)
            if norm > norm_min:
                break
            norm_min, start_bin, end_bin = norm, next_start_bin, next_end_bin
        return self.min_val + bin_width * start_bin, self.min_val + bin_width * (end_bin + 1)

    def _upscale_histogram(self, histogram: Any, orig_min: Any, orig_max: Any, update_min: Any,
                           update_max: Any) -> Any:
        """histogram over [orig_min, orig_max] re-binned over [update_min, update_max]."""
        histogram = histogram.repeat_interleave(self.upsample_rate) / self.upsample_rate
        bin_size = (orig_max - orig_min) / (self.bins * self.upsample_rate)
        mid_points = minitorch.linspace(orig_min, orig_max, self.bins * self.upsample_rate + 1)[:-1] + 0.5 * bin_size
        boundaries = minitorch.linspace(update_min, update_max, self.bins + 1)
        buckets = (minitorch.bucketize(mid_points, boundaries, right=True) - 1).clamp(0, self.bins - 1)
        return minitorch.bincount(buckets, weights=histogram, minlength=self.bins)

    def _combine_histograms(self, orig_hist: Any, orig_min: Any, orig_max: Any, update_hist: Any,
                            update_min: Any, update_max: Any) -> Any:
        if bool(update_min == orig_min) and bool(update_max == orig_max):
            return orig_hist + update_hist
        if bool(orig_min == orig_max):
            bin_value = minitorch.sum(orig_hist)
            moved = minitorch.histc(orig_min.reshape(1), bins=self.bins, min=float(update_min), max=float(update_max))
            return moved * bin_value + update_hist
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max, update_min, update_max)

    def forward(self, x_orig: Any) -> Any:
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = minitorch.aminmax(x)
        if float(x_min) == float("-inf") or float(x_max) == float("inf"):
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = minitorch.aminmax(x)
        if float(self.min_val) == float("inf") or float(self.max_val) == float("-inf"):
            self.min_val, self.max_val = x_min.clone(), x_max.clone()
            self.histogram = minitorch.histc(x, self.bins, min=float(x_min), max=float(x_max))
            return x_orig
        new_min = minitorch.minimum(self.min_val, x_min)
        new_max = minitorch.maximum(self.max_val, x_max)
        update = minitorch.histc(x, self.bins, min=float(new_min), max=float(new_max))
        self.histogram = self._combine_histograms(self.histogram, self.min_val, self.max_val, update, new_min,
                                                  new_max)
        self.min_val, self.max_val = new_min.clone(), new_max.clone()
        return x_orig

    def calculate_qparams(self) -> Tuple[Any, Any]:
        if float(self.min_val) == float("inf") and float(self.max_val) == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning default scale and zero "
                          "point ", stacklevel=2)
            return minitorch.tensor([1.0]), minitorch.tensor([0])
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class PlaceholderObserver(ObserverBase):
    """Observes nothing: it carries a dtype (and a range) for the conversion, as the dynamic
    activation observer and the float16 one do."""

    def __init__(self, dtype: Any = minitorch.float32, custom_op_name: str = "", compute_dtype: Any = None,
                 quant_min: Any = None, quant_max: Any = None, qscheme: Any = None, eps: Any = None,
                 is_dynamic: bool = False) -> None:
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        if qscheme is None:
            qscheme = per_tensor_affine
        if eps is None:
            eps = 1.1920928955078125e-07
        self.qscheme, self.quant_min, self.quant_max, self.eps = qscheme, quant_min, quant_max, eps
        self.custom_op = custom_op_name
        if compute_dtype:
            self.is_dynamic = True
            warnings.warn("Please use `is_dynamic` instead of `compute_dtype`.                     "
                          "`compute_dtype` will be deprecated in a future release                     "
                          "of PyTorch.")

    def forward(self, x: Any) -> Any:
        return x

    def extra_repr(self) -> str:
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self) -> Any:
        raise Exception("calculate_qparams should not be called for PlaceholderObserver")  # noqa: TRY002


class NoopObserver(ObserverBase):
    """Observes nothing, for a dtype (float16) that needs no parameters."""

    def __init__(self, dtype: Any = minitorch.float16, custom_op_name: str = "") -> None:
        super().__init__(dtype=dtype)
        self.dtype, self.custom_op = dtype, custom_op_name

    def forward(self, x: Any) -> Any:
        return x

    def calculate_qparams(self) -> Any:
        raise Exception("calculate_qparams should not be called for NoopObserver")  # noqa: TRY002


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_placeholder_observer = PlaceholderObserver
default_weight_observer = MinMaxObserver.with_args(dtype=qint8, qscheme=per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(dtype=qint8,
                                                                         qscheme=per_channel_symmetric)
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=quint8, quant_min=0, quant_max=255,
                                                               is_dynamic=True)
default_float_qparams_observer = PerChannelMinMaxObserver.with_args(dtype=quint8,
                                                                    qscheme=per_channel_affine_float_qparams,
                                                                    ch_axis=0)
default_histogram_observer = HistogramObserver.with_args(quant_min=0, quant_max=127)
