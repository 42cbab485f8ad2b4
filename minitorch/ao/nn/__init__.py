"""minitorch.ao.nn: quantized modules (ao.nn.quantized, ao.nn.quantized.dynamic) and the
quantization-aware training ones (ao.nn.qat)."""
from . import qat, quantized  # noqa: F401
