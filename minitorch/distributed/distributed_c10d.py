"""torch.distributed.distributed_c10d, the module where PyTorch defines the process-group API:
here the same names as minitorch.distributed (which defines them), _get_default_store included."""
from minitorch.distributed import *  # noqa: F401,F403
from minitorch.distributed import _get_default_store  # noqa: F401
