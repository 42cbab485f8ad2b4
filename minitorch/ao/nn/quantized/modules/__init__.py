"""Quantized modules: the packed-weight parts shared with the dynamic ones, and the static ones."""
from .linear import LinearPackedParams  # noqa: F401
from .static import DeQuantize, Linear, Quantize  # noqa: F401

__all__ = ["Linear", "LinearPackedParams", "Quantize", "DeQuantize"]
