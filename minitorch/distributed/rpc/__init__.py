"""torch.distributed.rpc: remote calls between named workers (init_rpc, rpc_sync, rpc_async,
remote, RRef, shutdown); see api.py for what is built and how it travels. Gradients through
calls: minitorch.distributed.autograd and minitorch.distributed.optim.DistributedOptimizer.

The RRef type exists before init_rpc too: training helpers test a model's output with
isinstance(out, torch.distributed.rpc.api.RRef) on every batch (rasbt's deeplearning-models
helpers do) and must get False, as under PyTorch without RPC running.
"""
import enum
from typing import Optional

from minitorch.distributed.rpc import api, functions
from minitorch.distributed.rpc.api import (RRef, WorkerInfo, get_worker_info, init_rpc, remote, rpc_async,
                                           rpc_sync, shutdown)

__all__ = ["RRef", "api", "is_available", "init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote",
           "get_worker_info", "WorkerInfo", "functions", "BackendType", "TensorPipeRpcBackendOptions",
           "RpcBackendOptions"]


def is_available() -> bool:
    """Whether the RPC framework is built (init_rpc can start an agent): True."""
    return True


class BackendType(enum.Enum):
    """The agents PyTorch offers; minitorch's one agent stands for TENSORPIPE."""
    TENSORPIPE = 1


class RpcBackendOptions:
    def __init__(self, rpc_timeout: float = api.DEFAULT_RPC_TIMEOUT_SEC, init_method: str = "env://") -> None:
        self.rpc_timeout = rpc_timeout
        self.init_method = init_method


class TensorPipeRpcBackendOptions(RpcBackendOptions):
    """The backend options scripts pass to init_rpc: the timeout and the rendezvous address are
    used; the thread count and device maps are accepted (a thread runs each incoming call, and
    tensors travel through the CPU)."""

    def __init__(self, *, num_worker_threads: int = 16, rpc_timeout: float = api.DEFAULT_RPC_TIMEOUT_SEC,
                 init_method: str = "env://", device_maps: Optional[dict] = None, devices=None,
                 _transports=None, _channels=None) -> None:
        super().__init__(rpc_timeout, init_method)
        self.num_worker_threads = num_worker_threads
        self.device_maps = dict(device_maps or {})
        self.devices = list(devices or [])

    def set_device_map(self, to: str, device_map: dict) -> None:
        self.device_maps[to] = dict(device_map)

    def set_devices(self, devices) -> None:
        self.devices = list(devices)
