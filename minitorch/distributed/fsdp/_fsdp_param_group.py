"""fully_shard's parameter group: one module's own parameters, each a DTensor sharded on its
shard dim (Shard(0) unless shard_placement_fn said otherwise; as torch.chunk splits it;
(Replicate(), Shard(d)) on a 2-D mesh) and registered under its name, as PyTorch's FSDP2 keeps them.

unshard() all-gathers the group's shards in one collective: each parameter's local slices along
its shard dim (its "rows", that dim moved first) padded to ceil(size / world) and flattened, the
parameters one after another (this rank's `local flat`);
the gathered (world, local flat) is copied out into the full parameters, one after another
(`full`, in the compute dtype), whose views the modules' attributes point at during forward.
The all-gather is differentiable (_flat_param._Gather, as FSDP1's): its backward reduce-scatters the full gradient (in
the reduce dtype) into the local flat one, averaged over the ranks (and over the replicating
dimension of a 2-D mesh), which the autograd graph splits back into each DTensor's local gradient.
"""
from __future__ import annotations

from typing import List, NamedTuple

import minitorch
from minitorch import _C
from minitorch import distributed as dist
from minitorch import nn
from minitorch.distributed.fsdp._flat_param import SavedFull, _Gather


class _Param(NamedTuple):
    module: nn.Module  # the submodule that registered it
    name: str  # its name there
    shape: tuple  # the full parameter's
    dim: int  # its shard dim (the "rows" are its slices along it)
    rows: int  # ceil(shape[dim] / world): each rank's padded share of dim
    row_numel: int  # elements in one row (the product of the other dims)
    padded_offset: int  # where its padded rows start in the local flat tensor
    offset: int  # where it starts in the full flat tensor
    numel: int


class FSDPParamGroup(SavedFull):
    """One fully_shard module's own parameters, as DTensors, and their full form while gathered."""

    def __init__(self, found: List, aliases: List, mesh, mp_policy, offload: bool, dims: List[int]) -> None:
        from minitorch.distributed.tensor import Replicate, Shard, distribute_tensor

        self.mesh = mesh
        self.shard_pg = mesh.get_group(mesh.ndim - 1)
        self.replicate_pg = mesh.get_group(0) if mesh.ndim == 2 else None
        world = self.shard_pg.size()
        self.param_dtype = mp_policy.param_dtype
        self.reduce_dtype = mp_policy.reduce_dtype if mp_policy.reduce_dtype is not None else mp_policy.param_dtype
        self.offload = offload
        self.reshard_after_forward = False  # set by the root's forward for each module
        self.no_sync = False  # set_requires_gradient_sync(False): gradients kept whole here
        self.pending = None  # those gradients (of the full flat parameters)
        self.full = None  # the full flat parameters between unshard() and reshard()
        self._regathered = None  # gathered again for backward, after forward freed them
        self._pending_gather = None  # unshard(async_op=True)'s all-gather in flight: (work, out)
        self.infos: List[_Param] = []
        self.aliases = aliases  # (module, name, index in infos): a parameter registered twice
        padded, offset = 0, 0
        for (mod, name, fqn, p), dim in zip(found, dims):
            if p.dim() == 0:
                raise NotImplementedError(f"minitorch's fully_shard does not shard 0-dim parameters ({fqn})")
            rows = -(-p.shape[dim] // world)
            row_numel = p.numel() // p.shape[dim] if p.shape[dim] else 0
            self.infos.append(_Param(mod, name, tuple(p.shape), dim, rows, row_numel, padded, offset, p.numel()))
            placements = (Shard(dim),) if mesh.ndim == 1 else (Replicate(), Shard(dim))
            padded += rows * row_numel
            offset += p.numel()
            with minitorch.no_grad():
                dt = distribute_tensor(p.detach(), mesh, placements, src_data_rank=None)
                if offload:
                    dt = _cpu(dt)
            mod._parameters[name] = nn.Parameter(dt, requires_grad=p.requires_grad)
        for mod, name, i in aliases:
            mod._parameters[name] = self.params[i]
        self.padded_numel = padded
        self.numel = offset

    @property
    def params(self) -> List[nn.Parameter]:
        """The DTensor parameters as the modules have them now (Module.to_empty, .to replace them)."""
        return [i.module._parameters[i.name] for i in self.infos]

    @property
    def compute_device(self):
        """Where the full parameters are gathered: the shards' device, the mesh's when offloaded."""
        return minitorch.device(self.mesh.device_type) if self.offload else self.params[0].device

    # ---- the local flat tensor and the collectives ----

    def local_flat(self):
        """This rank's rows of every parameter, each padded to its share, one after another
        (differentiable back to the DTensors' local tensors)."""
        with _C.DisableTorchFunctionSubclass():  # the DTensors as their local tensors
            parts = []
            for info, p in zip(self.infos, self.params):
                p = p.movedim(info.dim, 0)
                have = _C.TensorBase.size(p)[0]
                if have < info.rows:
                    pad = minitorch.zeros((info.rows - have,) + _moved(info)[1:], dtype=p.dtype, device=p.device)
                    p = minitorch.cat([p, pad])
                parts.append(p.reshape(-1))
            return minitorch.cat(parts)

    def _start_gather(self, local, async_op: bool = False):
        """The all-gather of the local flat tensor (in the compute dtype, on the compute device)
        into a (world * padded_numel) buffer: (its Work when async_op, else None; the buffer)."""
        world = self.shard_pg.size()
        x = local.to(device=self.compute_device)
        if self.param_dtype is not None:
            x = x.to(self.param_dtype)
        out = minitorch.empty(world * self.padded_numel, dtype=x.dtype, device=x.device)
        work = dist.all_gather_into_tensor(out, x.contiguous(), group=self.shard_pg, async_op=async_op)
        return work, out

    def _gather(self, local):
        """The full flat parameters from the local flat ones: the all-gather that
        unshard(async_op=True) started when there is one (local has not changed since), else one now."""
        pending, self._pending_gather = self._pending_gather, None
        if pending is not None:
            work, out = pending
            if work is not None:
                work.wait()
        else:
            _, out = self._start_gather(local)
        world = self.shard_pg.size()
        out = out.view(world, self.padded_numel)
        parts = []
        for i in self.infos:
            rows = out[:, i.padded_offset:i.padded_offset + i.rows * i.row_numel]
            rows = rows.reshape((world * i.rows,) + _moved(i)[1:])[:i.shape[i.dim]]
            parts.append(rows.movedim(0, i.dim).reshape(-1))
        return minitorch.cat(parts)

    def _reduce_grad(self, grad):
        """The local flat gradient of the full flat one: reduce-scattered (averaged) in the
        reduce dtype, then in the shards' dtype and on their device."""
        world = self.shard_pg.size()
        if self.reduce_dtype is not None:
            grad = grad.to(self.reduce_dtype)
        cols = []
        for i in self.infos:
            g = grad[i.offset:i.offset + i.numel].view(i.shape).movedim(i.dim, 0)
            if world * i.rows > i.shape[i.dim]:
                pad = minitorch.zeros((world * i.rows - i.shape[i.dim],) + _moved(i)[1:], dtype=g.dtype,
                                      device=g.device)
                g = minitorch.cat([g, pad])
            cols.append(g.reshape(world, i.rows * i.row_numel))
        stacked = minitorch.cat(cols, 1).contiguous()
        out = minitorch.empty(self.padded_numel, dtype=grad.dtype, device=grad.device)
        dist.reduce_scatter_tensor(out, stacked.reshape(-1), op=dist.ReduceOp.AVG, group=self.shard_pg)
        if self.replicate_pg is not None and self.replicate_pg.size() > 1:
            dist.all_reduce(out, op=dist.ReduceOp.AVG, group=self.replicate_pg)
        ref = self.params[0]
        return out.to(dtype=ref.dtype, device=ref.device)

    # ---- unshard / reshard ----

    def start_unshard(self) -> None:
        """unshard(async_op=True): issues the all-gather and returns; wait_for_unshard() (the
        handle's wait()) or the next forward finishes it."""
        if self._pending_gather is None:
            with minitorch.no_grad():
                self._pending_gather = self._start_gather(self.local_flat().detach(), async_op=True)

    def wait_for_unshard(self) -> None:
        """Finishes the all-gather start_unshard() issued: the full parameters are the modules'
        attributes; the gathered buffer stays for the forward's differentiable gather to take."""
        if self._pending_gather is None or self._pending_gather[0] is None:
            return
        work, out = self._pending_gather
        work.wait()
        self._pending_gather = (None, out)
        with minitorch.no_grad():
            self._point_at(self._gather(None))
        self._pending_gather = (None, out)

    def unshard(self) -> None:
        """All-gathers the full parameters (differentiably where grad is on) and points the
        modules' attributes at their views."""
        local = self.local_flat()
        if minitorch.is_grad_enabled() and local.requires_grad:
            full = _Gather.apply(local, self)
        else:
            with minitorch.no_grad():
                full = self._gather(local.detach())
        self._point_at(full)

    def _point_at(self, full) -> None:
        self.full = full
        views = [full[i.offset:i.offset + i.numel].view(i.shape) for i in self.infos]
        for info, v in zip(self.infos, views):
            info.module.__dict__[info.name] = v
        for mod, name, k in self.aliases:
            mod.__dict__[name] = views[k]

    def reshard(self) -> None:
        """Forgets the full parameters: the attributes are the registered DTensors again."""
        if self._pending_gather is not None and self._pending_gather[0] is not None:
            self._pending_gather[0].wait()  # MPI writes its buffer until then
        self._pending_gather = None
        self.full = None
        self._regathered = None
        for mod, name in [(i.module, i.name) for i in self.infos] + [(m, n) for m, n, _ in self.aliases]:
            mod.__dict__.pop(name, None)

    def _gather_again(self):
        with minitorch.no_grad():
            return self._gather(self.local_flat().detach())


def _moved(info: _Param) -> tuple:
    """info's full shape with its shard dim first (the shape its rows are slices of)."""
    shape = list(info.shape)
    return (shape.pop(info.dim),) + tuple(shape)


def _cpu(dt):
    """dt with its local tensor on the CPU (CPUOffloadPolicy)."""
    from minitorch.distributed.tensor._api import _leaf

    with _C.DisableTorchFunctionSubclass():
        local = dt.detach().cpu()
    return _leaf(local, dt._spec, False)
