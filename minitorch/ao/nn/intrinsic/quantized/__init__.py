"""minitorch.ao.nn.intrinsic.quantized: the quantized fused modules."""
from .modules import BNReLU2d, ConvReLU2d, LinearReLU  # noqa: F401

__all__ = ["BNReLU2d", "ConvReLU2d", "LinearReLU"]
