"""minitorch.ao.nn.quantized (also minitorch.nn.quantized): quantized modules. The dynamic ones
(float in, float out, quantized weights) are in .dynamic."""
from . import dynamic  # noqa: F401
from .modules import DeQuantize, Linear, LinearPackedParams, Quantize  # noqa: F401

__all__ = ["Linear", "LinearPackedParams", "Quantize", "DeQuantize", "dynamic"]
