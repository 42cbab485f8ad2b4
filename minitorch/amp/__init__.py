"""minitorch.amp, as torch.amp: autocast and GradScaler (see autocast_mode.py for what autocast
can do without half-precision dtypes)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
