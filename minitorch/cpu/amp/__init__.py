"""minitorch.cpu.amp, as torch.cpu.amp: torch.amp's autocast and GradScaler for 'cpu', deprecated."""
from ...amp._deprecated import module as _module

globals().update(_module("cpu"))
__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
from . import autocast_mode, grad_scaler  # noqa: E402,F401  (the modules PyTorch defines these in)
