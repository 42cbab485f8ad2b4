"""minitorch.quantization: the older name of minitorch.ao.quantization (the same objects)."""
from minitorch.ao.quantization import *  # noqa: F401,F403
from minitorch.ao.quantization import observer, qconfig, quantize  # noqa: F401
