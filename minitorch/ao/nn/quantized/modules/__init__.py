"""Quantized modules' shared parts."""
from .linear import Linear, LinearPackedParams  # noqa: F401

__all__ = ["Linear", "LinearPackedParams"]
