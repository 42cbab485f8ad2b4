"""minitorch.nn.quantized.dynamic: the older name of minitorch.ao.nn.quantized.dynamic."""
from minitorch.ao.nn.quantized.dynamic import *  # noqa: F401,F403
