"""minitorch.nn.intrinsic.quantized: the older name of minitorch.ao.nn.intrinsic.quantized."""
from minitorch.ao.nn.intrinsic.quantized import *  # noqa: F401,F403
