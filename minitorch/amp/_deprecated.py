"""The device-specific spellings torch.cuda.amp / torch.cpu.amp, deprecated in PyTorch for
torch.amp's: the same objects behind PyTorch's FutureWarning."""
from __future__ import annotations

import warnings

from .autocast_mode import autocast as _autocast
from .autocast_mode import custom_bwd as _custom_bwd
from .autocast_mode import custom_fwd as _custom_fwd
from .grad_scaler import GradScaler as _GradScaler


def module(device: str) -> dict:
    """The names of torch.<device>.amp, bound to `device`."""

    class autocast(_autocast):
        def __init__(self, enabled: bool = True, dtype=None, cache_enabled: bool = True) -> None:
            warnings.warn(f"`torch.{device}.amp.autocast(args...)` is deprecated. "
                          f"Please use `torch.amp.autocast('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    class GradScaler(_GradScaler):
        def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                     growth_interval: int = 2000, enabled: bool = True) -> None:
            warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. "
                          f"Please use `torch.amp.GradScaler('{device}', args...)` instead.", FutureWarning, stacklevel=2)
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                             growth_interval=growth_interval, enabled=enabled)

    def custom_fwd(fwd=None, *, cast_inputs=None):
        warnings.warn(f"`torch.{device}.amp.custom_fwd(args...)` is deprecated. "
                      f"Please use `torch.amp.custom_fwd(args..., device_type='{device}')` instead.", FutureWarning,
                      stacklevel=2)
        return _custom_fwd(fwd, device_type=device, cast_inputs=cast_inputs)

    def custom_bwd(bwd=None):
        warnings.warn(f"`torch.{device}.amp.custom_bwd(args...)` is deprecated. "
                      f"Please use `torch.amp.custom_bwd(args..., device_type='{device}')` instead.", FutureWarning,
                      stacklevel=2)
        return _custom_bwd(bwd, device_type=device)

    for obj, where in ((autocast, "autocast_mode"), (custom_fwd, "autocast_mode"), (custom_bwd, "autocast_mode"),
                       (GradScaler, "grad_scaler")):  # PyTorch's modules for them (minitorch/<device>/amp/)
        obj.__module__ = f"minitorch.{device}.amp.{where}"
        obj.__qualname__ = obj.__name__  # found there by pickle
    return {"autocast": autocast, "GradScaler": GradScaler, "custom_fwd": custom_fwd, "custom_bwd": custom_bwd}
