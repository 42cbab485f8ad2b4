"""torch.distributed.optim.DistributedOptimizer: one optimizer per worker that owns parameters,
stepped with the gradients of a distributed autograd context (never `.grad` of a backward)."""
from __future__ import annotations

import threading
from collections import defaultdict
from typing import List

from minitorch.distributed import autograd as dist_autograd
from minitorch.distributed import rpc

__all__ = ["DistributedOptimizer"]


class _LocalOptimizer:
    """On a parameters' owner: optimizer_class over the local values of the RRefs. One lock for
    all of this worker's, as PyTorch's: two trainers' steps on one parameter server do not interleave."""

    global_lock = threading.Lock()

    def __init__(self, optimizer_class, local_params_rref: List[rpc.RRef], *args, **kwargs) -> None:
        self._local_params = [rref.local_value() for rref in local_params_rref]
        self.optim = optimizer_class(self._local_params, *args, **kwargs)

    def step(self, autograd_ctx_id: int) -> None:
        grads = dist_autograd.get_gradients(autograd_ctx_id)
        with _LocalOptimizer.global_lock:
            for param, grad in grads.items():
                param.grad = grad
            self.optim.step()


def _new_local_optimizer(optim_cls, local_params_rref, args, kwargs) -> rpc.RRef:
    return rpc.RRef(_LocalOptimizer(optim_cls, local_params_rref, *args, **kwargs))


def _local_optimizer_step(local_optim_rref: rpc.RRef, autograd_ctx_id: int) -> None:
    local_optim_rref.local_value().step(autograd_ctx_id)


class DistributedOptimizer:
    """Takes RRefs to parameters spread over workers and makes, on each owner, an optimizer_class
    (with *args, **kwargs) over its own; step(context_id) runs them all, concurrently, each with
    the gradients that backward of that distributed autograd context left on its worker."""

    def __init__(self, optimizer_class, params_rref: List[rpc.RRef], *args, **kwargs) -> None:
        per_worker = defaultdict(list)
        for param in params_rref:
            per_worker[param.owner()].append(param)
        self.is_functional_optim = False
        futures = [rpc.rpc_async(worker, _new_local_optimizer, args=(optimizer_class, params, args, kwargs))
                   for worker, params in per_worker.items()]
        self.remote_optimizers = [f.wait() for f in futures]

    def step(self, context_id: int) -> None:
        dist_autograd._retrieve_context(context_id)
        futures = [rpc.rpc_async(optimizer.owner(), _local_optimizer_step, args=(optimizer, context_id))
                   for optimizer in self.remote_optimizers]
        errors = []
        for f in futures:
            try:
                f.wait()
            except Exception as e:  # noqa: BLE001 - every step is waited for, then the first error raised
                errors.append(e)
        if errors:
            raise errors[0]
