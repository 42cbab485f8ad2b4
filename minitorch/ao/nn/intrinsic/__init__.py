"""minitorch.ao.nn.intrinsic (also minitorch.nn.intrinsic): fused modules, a run of layers that
quantization treats as one (ConvReLU2d, ConvBnReLU2d, LinearReLU, ...), in .qat their
quantization-aware training forms and in .quantized their quantized forms."""
from .modules import *  # noqa: F401,F403
from .modules import _FusedModule  # noqa: F401
from .modules import __all__  # noqa: F401
from . import qat, quantized  # noqa: F401,E402
