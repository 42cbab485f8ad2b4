"""minitorch.nn.qat: the older name of minitorch.ao.nn.qat (the same objects)."""
from minitorch.ao.nn.qat import *  # noqa: F401,F403
