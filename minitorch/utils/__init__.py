"""torch.utils: the data pipeline (minitorch.utils.data)."""
from . import data

__all__ = ["data"]
