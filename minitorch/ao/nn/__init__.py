"""minitorch.ao.nn: quantized modules (ao.nn.quantized, ao.nn.quantized.dynamic)."""
from . import quantized  # noqa: F401
