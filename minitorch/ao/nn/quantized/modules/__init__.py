"""Quantized modules: the packed-weight parts shared with the dynamic ones, and the static ones."""
from .activation import ELU, Hardswish, LeakyReLU, ReLU6  # noqa: F401
from .batchnorm import BatchNorm2d  # noqa: F401
from .conv import Conv2d  # noqa: F401
from .dropout import Dropout  # noqa: F401
from .functional_modules import FloatFunctional, FXFloatFunctional, QFunctional  # noqa: F401
from .linear import LinearPackedParams  # noqa: F401
from .static import DeQuantize, Linear, Quantize  # noqa: F401

__all__ = ["BatchNorm2d", "Conv2d", "DeQuantize", "Dropout", "ELU", "FloatFunctional", "FXFloatFunctional", "Hardswish",
           "LeakyReLU", "Linear", "LinearPackedParams", "QFunctional", "Quantize", "ReLU6"]
