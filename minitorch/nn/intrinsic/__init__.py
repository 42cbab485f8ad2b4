"""minitorch.nn.intrinsic: the older name of minitorch.ao.nn.intrinsic (the same objects)."""
from minitorch.ao.nn.intrinsic import *  # noqa: F401,F403
from minitorch.ao.nn.intrinsic import _FusedModule, qat, quantized  # noqa: F401
