"""minitorch.nn.quantized: the older name of minitorch.ao.nn.quantized (the same objects)."""
from minitorch.ao.nn.quantized import *  # noqa: F401,F403
from minitorch.ao.nn.quantized import dynamic  # noqa: F401
