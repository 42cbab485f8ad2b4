"""torch.distributed.algorithms: DDP's communication hooks (ddp_comm_hooks)."""
from minitorch.distributed.algorithms import ddp_comm_hooks  # noqa: F401
