"""FakeQuantize, as torch.ao.quantization.fake_quantize: an observer followed by fake quantization
with the parameters it computed, each switchable (quantization-aware training)."""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import nn
from minitorch._qtensor import per_channel_affine, per_channel_affine_float_qparams, per_channel_symmetric
from minitorch._qtensor import per_tensor_affine, per_tensor_symmetric, qint8, quint8

from .observer import MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver, _with_args

__all__ = ["FakeQuantizeBase", "FakeQuantize", "FusedMovingAvgObsFakeQuantize", "default_fake_quant",
           "default_weight_fake_quant", "default_per_channel_weight_fake_quant", "disable_fake_quant",
           "disable_observer", "enable_fake_quant", "enable_observer"]

_PER_CHANNEL = (per_channel_affine, per_channel_symmetric, per_channel_affine_float_qparams)


class FakeQuantizeBase(nn.Module):
    """The switches: fake_quant_enabled and observer_enabled, uint8 buffers of one element."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("fake_quant_enabled", minitorch.tensor([1], dtype=minitorch.uint8))
        self.register_buffer("observer_enabled", minitorch.tensor([1], dtype=minitorch.uint8))

    def enable_fake_quant(self, enabled: bool = True) -> None:
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self) -> None:
        self.enable_fake_quant(False)

    def enable_observer(self, enabled: bool = True) -> None:
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self) -> None:
        self.enable_observer(False)

    with_args = classmethod(_with_args)


class FakeQuantize(FakeQuantizeBase):
    """Observes its input (activation_post_process), then fake-quantizes it with the observer's
    scale and zero point, per tensor or per channel as the observer's qscheme says."""

    def __init__(self, observer: Any = MovingAverageMinMaxObserver, quant_min: Any = None, quant_max: Any = None,
                 is_dynamic: bool = False, **observer_kwargs: Any) -> None:
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get("dtype", quint8)
            dtype = getattr(getattr(observer, "p", None), "keywords", {}).get("dtype", dtype)
            lo, hi = (dtype._qmin, dtype._qmax) if dtype in (qint8, quint8) else (
                minitorch.iinfo(dtype).min, minitorch.iinfo(dtype).max)
            if lo > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > hi:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update(quant_min=quant_min, quant_max=quant_max)
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        post = self.activation_post_process
        self.quant_min, self.quant_max, self.is_dynamic = post.quant_min, post.quant_max, post.is_dynamic
        zp_dtype = minitorch.float32 if post.qscheme is per_channel_affine_float_qparams else minitorch.int32
        self.register_buffer("scale", minitorch.tensor([1.0]))
        self.register_buffer("zero_point", minitorch.tensor([0], dtype=zp_dtype))
        self.dtype, self.qscheme = post.dtype, post.qscheme
        self.ch_axis = getattr(post, "ch_axis", -1)
        if self.qscheme not in _PER_CHANNEL and self.qscheme not in (per_tensor_affine, per_tensor_symmetric):
            raise AssertionError("Only per channel and per tensor quantization are supported in fake quantize got "
                                 f"qscheme: {self.qscheme}")
        self.is_per_channel = self.qscheme in _PER_CHANNEL

    def calculate_qparams(self) -> Any:
        return self.activation_post_process.calculate_qparams()

    def forward(self, X: Any) -> Any:
        if int(self.observer_enabled[0]) == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            self.scale = scale.to(minitorch.float32).clone()
            self.zero_point = zero_point.to(self.zero_point.dtype).clone()
        if int(self.fake_quant_enabled[0]) == 1:
            post = self.activation_post_process
            if self.is_per_channel:
                X = minitorch.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                               post.quant_min, post.quant_max)
            else:
                X = minitorch.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, post.quant_min,
                                                              post.quant_max)
        return X

    def extra_repr(self) -> str:
        post = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"quant_min={post.quant_min}, quant_max={post.quant_max}, dtype={self.dtype}, "
                f"qscheme={self.qscheme}, ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """FakeQuantize over a moving-average observer, as PyTorch's fused operator
    (fused_moving_avg_obs_fake_quant) computes it: the observer's running min and max, then the
    scale and zero point from ChooseQuantizationParams (the C++ formula, symmetric schemes with
    preserve_sparsity), not from the observer's calculate_qparams, which convert uses."""

    def __init__(self, observer: Any = MovingAverageMinMaxObserver, quant_min: int = 0, quant_max: int = 255,
                 **observer_kwargs: Any) -> None:
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process,
                          (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with MovingAverageMinMaxObserver")
        self.register_buffer("fake_quant_enabled", minitorch.tensor([1], dtype=minitorch.long))
        self.register_buffer("observer_enabled", minitorch.tensor([1], dtype=minitorch.long))
        self.is_symmetric_quant = self.qscheme in (per_tensor_symmetric, per_channel_symmetric)

    def _observe(self, X: Any) -> None:
        """The running min and max updated with X; scale and zero point from them (C++ formula)."""
        from minitorch._qtensor import _choose_qparams

        post = self.activation_post_process
        post(X.detach())
        lows, highs = post.min_val.reshape(-1).tolist(), post.max_val.reshape(-1).tolist()
        # one (scale, zero point) per channel (or one): scalar arithmetic, as the C++ helper's loop
        params = [_choose_qparams(lo, hi, post.quant_min, post.quant_max, False, self.is_symmetric_quant)
                  for lo, hi in zip(lows, highs)]
        self.scale = minitorch.tensor([p[0] for p in params], dtype=minitorch.float32)
        self.zero_point = minitorch.tensor([p[1] for p in params], dtype=minitorch.int32)

    def forward(self, X: Any) -> Any:
        if int(self.observer_enabled[0]) == 1:
            self._observe(X)
        if int(self.fake_quant_enabled[0]) != 1:
            return X.clone()
        post = self.activation_post_process
        if self.is_per_channel:
            return minitorch.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                              post.quant_min, post.quant_max)
        return minitorch.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, post.quant_min,
                                                         post.quant_max)

    def extra_repr(self) -> str:
        post = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, observer_enabled={self.observer_enabled}, "
                f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}, quant_min={post.quant_min}, "
                f"quant_max={post.quant_max}, qscheme={self.qscheme}, reduce_range={post.reduce_range}")


default_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                                            dtype=quint8, qscheme=per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(observer=MovingAverageMinMaxObserver, quant_min=-128,
                                                   quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric,
                                                   reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(observer=MovingAveragePerChannelMinMaxObserver,
                                                               quant_min=-128, quant_max=127, dtype=qint8,
                                                               qscheme=per_channel_symmetric, reduce_range=False,
                                                               ch_axis=0)


def _switch(method: str, doc: str) -> Any:
    """A function for model.apply(...): calls method on the FakeQuantize modules it is given and
    passes the other modules by."""

    def switch(mod: nn.Module) -> None:
        if isinstance(mod, FakeQuantizeBase):
            getattr(mod, method)()

    switch.__name__ = switch.__qualname__ = method
    switch.__doc__ = doc
    return switch


disable_fake_quant = _switch("disable_fake_quant", "Turns off fake quantization in mod if it is a FakeQuantize.")
enable_fake_quant = _switch("enable_fake_quant", "Turns on fake quantization in mod if it is a FakeQuantize.")
disable_observer = _switch("disable_observer", "Freezes the observer of mod if it is a FakeQuantize.")
enable_observer = _switch("enable_observer", "Lets the observer of mod run again if it is a FakeQuantize.")

default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8, qscheme=per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127, dtype=qint8,
    qscheme=per_channel_symmetric)
