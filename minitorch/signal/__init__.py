"""minitorch.signal, as torch.signal: window functions (minitorch.signal.windows)."""
from . import windows

__all__ = ["windows"]
