"""torch.distributed.algorithms: DDP's communication hooks (ddp_comm_hooks) and the Join context
manager for uneven inputs (Join, Joinable, JoinHook)."""
from minitorch.distributed.algorithms import ddp_comm_hooks  # noqa: F401
from minitorch.distributed.algorithms.join import Join, JoinHook, Joinable

__all__ = ["Join", "JoinHook", "Joinable"]
