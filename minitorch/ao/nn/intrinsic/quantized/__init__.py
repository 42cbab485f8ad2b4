"""minitorch.ao.nn.intrinsic.quantized: the quantized fused modules."""
from .modules import ConvReLU2d, LinearReLU  # noqa: F401

__all__ = ["ConvReLU2d", "LinearReLU"]
