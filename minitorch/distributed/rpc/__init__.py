"""torch.distributed.rpc: the names that code reaches without starting RPC.

The RPC framework itself (init_rpc, rpc_sync, remote, distributed autograd) is not built: no agent
can be set, so is_available() says False. The RRef type exists all the same, because training
helpers test a model's output with isinstance(out, torch.distributed.rpc.api.RRef) on every batch
(rasbt's deeplearning-models helpers do) and must get False, as under PyTorch without RPC running.
"""
from minitorch.distributed.rpc import api
from minitorch.distributed.rpc.api import RRef

__all__ = ["RRef", "api", "is_available"]


def is_available() -> bool:
    """Whether the RPC framework is built: not in minitorch."""
    return False
