"""The fused float modules (torch.ao.nn.intrinsic.modules)."""
from .fused import *  # noqa: F401,F403
from .fused import _FusedModule  # noqa: F401
from .fused import __all__  # noqa: F401
