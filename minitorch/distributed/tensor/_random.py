"""DTensor's random numbers as PyTorch's OffsetBasedRNGTracker gives them: a random DTensor
(the factories rand and randn, and the random ops on a DTensor: normal_, uniform_, rand_like,
...) is the whole tensor drawn once, the same on every rank, each rank keeping its part; so each
shard equals the matching slice of the tensor that minitorch.randn draws with the same seed.

The ranks draw in step: every draw starts from the generator state of the mesh's first rank
(broadcast along each mesh dimension; PyTorch's tracker syncs its state from rank 0 too), and
every rank's generator ends where the draw left it. Unlike PyTorch's (CUDA's Philox offsets),
each rank draws the whole tensor: the CPU's Mersenne Twister cannot skip ahead."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import minitorch
from minitorch import _C
from minitorch.distributed.tensor import _redistribute as _rd


def _rng(device_type: str):
    if device_type == "cuda":
        return minitorch.cuda.get_rng_state, minitorch.cuda.set_rng_state
    return minitorch.get_rng_state, minitorch.set_rng_state


def synced(mesh, draw: Callable[[], Any]) -> Any:
    """draw() run from the mesh's first rank's generator state (every rank of the mesh calls it)."""
    get, set_state = _rng(mesh.device_type)
    if mesh.size() > 1:
        from minitorch import distributed as dist

        state = get().clone()
        if mesh.device_type == "cuda":  # NCCL moves device memory
            state = state.cuda()
        for i in range(mesh.ndim):
            group = mesh.get_group(i)
            if group.size() > 1:
                dist.broadcast(state, src=group._ranks[0], group=group)
        set_state(state.cpu())
    return draw()


def local_part(full, shape: Sequence[int], mesh, placements) -> Any:
    """This rank's part of full (the whole tensor, of global shape) laid out by placements."""
    offset = _rd.local_offset(shape, mesh, placements)
    for d, (start, length) in enumerate(zip(offset, _rd.local_shape(shape, mesh, placements))):
        full = full.narrow(d, start, length)
    return full.contiguous()


def random_op(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """An in-place random op (normal_, uniform_, ...) or a *_like one on a DTensor: drawn whole,
    then each rank's part kept (written in place, or laid out as the input)."""
    from minitorch.distributed.tensor._api import DTensor, _spec, _wrap

    self = args[0]
    mesh = self.device_mesh
    if any(p.is_partial() for p in self.placements):
        raise NotImplementedError(f"Operator aten.{name}.default does not have a sharding strategy registered.")
    shape = tuple(self.shape)
    with _C.DisableTorchFunctionSubclass():
        whole = minitorch.empty(shape, dtype=self.dtype, device=self.device)
        rest = tuple(a for a in args[1:])
        drawn = synced(mesh, lambda: func(whole, *rest, **kwargs))
        part = local_part(drawn, shape, mesh, self.placements)
        if name.endswith("_"):
            self.copy_(part)
            return self
    if isinstance(part, DTensor):
        return part
    return _wrap(part, _spec(mesh, self.placements, shape))


def dropout(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """dropout(input, p, train) on a DTensor: each rank's input times its slice of the scaled
    mask that dropout draws for a whole tensor of ones (one draw, as random_op's), so the result
    is the slice of what one process's dropout gives with that seed."""
    from minitorch.distributed.tensor._api import _redistribute, _spec, _wrap
    from minitorch.distributed.tensor.placement_types import Replicate

    self = args[0]
    p = kwargs.get("p", args[1] if len(args) > 1 else 0.5)
    train = kwargs.get("train", args[2] if len(args) > 2 else True)
    mesh = self.device_mesh
    if not train or p == 0:  # the identity (a partial value stays partial)
        with _C.DisableTorchFunctionSubclass():
            local = func(*args, **kwargs)
        return _wrap(local, _spec(mesh, self.placements, tuple(self.shape)))
    if any(q.is_partial() for q in self.placements):  # a mask multiplies the whole value
        self = _redistribute(self, [Replicate() if q.is_partial() else q for q in self.placements])
    shape = tuple(self.shape)
    with _C.DisableTorchFunctionSubclass():
        ones = minitorch.ones(shape, dtype=self.dtype, device=self.device)
        scale = local_part(synced(mesh, lambda: func(ones, p, True)), shape, mesh, self.placements)
        local = self * scale
    return _wrap(local, _spec(mesh, self.placements, shape))


RANDOM_OPS = ("normal_", "uniform_", "random_", "bernoulli_", "exponential_", "log_normal_", "cauchy_",
              "geometric_", "rand_like", "randn_like", "randint_like")
