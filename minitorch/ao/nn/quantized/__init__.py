"""minitorch.ao.nn.quantized (also minitorch.nn.quantized): quantized modules. The dynamic ones
(float in, float out, quantized weights) are in .dynamic."""
from . import dynamic  # noqa: F401
from .modules import (ELU, BatchNorm2d, Conv2d, DeQuantize, Dropout, FloatFunctional,  # noqa: F401
                      FXFloatFunctional, Hardswish, LeakyReLU, Linear, LinearPackedParams, QFunctional, Quantize,
                      ReLU6)

__all__ = ["BatchNorm2d", "Conv2d", "DeQuantize", "Dropout", "ELU", "FloatFunctional", "FXFloatFunctional", "Hardswish",
           "LeakyReLU", "Linear", "LinearPackedParams", "QFunctional", "Quantize", "ReLU6", "dynamic"]
