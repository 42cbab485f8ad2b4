"""DDP communication hooks (torch.distributed.algorithms.ddp_comm_hooks): default_hooks."""
from minitorch.distributed.algorithms.ddp_comm_hooks import default_hooks  # noqa: F401
