"""minitorch.ao.nn: quantized modules (ao.nn.quantized, ao.nn.quantized.dynamic), the
quantization-aware training ones (ao.nn.qat) and the fused ones (ao.nn.intrinsic)."""
from . import qat, quantized  # noqa: F401
from . import intrinsic  # noqa: F401,E402  (its quantized modules build on ao.nn.quantized's)
