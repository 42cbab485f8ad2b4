"""The flat parameter of one FSDP unit: the unit's own parameters (not those of units nested in
it) concatenated into one 1-D tensor, padded to a multiple of the world size, of which each rank
keeps one contiguous shard (rank r: elements [r * S, (r + 1) * S), S = ceil(numel / world)).

unshard() all-gathers the shards into the full flat parameter (through _Gather, whose backward
reduce-scatters the full gradient into the shard's, averaged over the ranks) and points each
module's attribute (`linear.weight`) at its view of it; reshard() forgets the full parameter.
Under use_orig_params=False the shard is one nn.Parameter (`_flat_param`); under True each
original parameter stays registered as a 1-D Parameter holding its part of this rank's shard
(possibly empty), and the shard is their concatenation (and the padding). With offload (FSDP1's
CPUOffload(offload_params=True)) the shard lives on the CPU and the full parameter on the
device the module was on: the copy there is part of the differentiable gather.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, List, NamedTuple, Optional

import minitorch
from minitorch import distributed as dist
from minitorch import nn
from minitorch.autograd import Function

FLAT_PARAM = "_flat_param"


class _ParamInfo(NamedTuple):
    module: nn.Module  # the submodule that registered it
    name: str  # its name there
    fqn: str  # its name relative to the unit's module
    shape: tuple
    offset: int  # where it starts in the flat parameter
    numel: int
    requires_grad: bool


class _Gather(Function):
    """forward: the full flat parameter from the ranks' shards; backward: this rank's shard of the
    gradient, averaged over the ranks (DDP's averaging, so that training matches one process).
    handle: a FlatParamHandle, or fully_shard's FSDPParamGroup (the same members)."""

    @staticmethod
    def forward(ctx, local, handle):
        ctx.handle = handle
        return handle._gather(local)

    @staticmethod
    def backward(ctx, grad):
        handle = ctx.handle
        if handle.pending is not None:  # what backward passes under no_sync() left unreduced
            grad = grad + handle.pending
            handle.pending = None
        if handle.no_sync:
            handle.pending = grad
            out = None
        else:
            out = handle._reduce_grad(grad)
        handle.reshard()
        return out, None


class _FullView:
    """A saved tensor that viewed a full parameter which was freed after forward: where it lay."""

    def __init__(self, handle: "FlatParamHandle", t) -> None:
        self.handle = handle
        self.offset = (t.data_ptr() - handle.full.data_ptr()) // t.element_size()
        self.size = tuple(t.shape)
        self.stride = tuple(t.stride())


class SavedFull:
    """What saved_full_views asks of a handle whose full parameter (`full`) forward may free:
    whether a tensor lies in it, and the full parameter for backward (gathered again once,
    through _gather_again, when it was freed)."""

    full = None
    _regathered = None

    def holds(self, t) -> bool:
        full = self.full
        if full is None or t.numel() == 0 or t.dtype != full.dtype or t.device != full.device:
            return False
        base = full.data_ptr()
        return base <= t.data_ptr() < base + full.numel() * full.element_size()

    def full_for_backward(self):
        if self.full is not None:
            return self.full
        if self._regathered is None:
            self._regathered = self._gather_again()
        return self._regathered


class FlatParamHandle(SavedFull):
    """One unit's flat parameter: its shard on this rank, and the full one while gathered."""

    def __init__(self, module: nn.Module, infos: List[_ParamInfo], params: List, aliases: List, pg,
                 sharded: bool, use_orig_params: bool, replicate_pg=None, offload: bool = False) -> None:
        self.module = module
        self.infos = infos
        self.aliases = aliases  # (module, name, index in infos): a parameter registered twice
        self.pg = pg
        self.replicate_pg = replicate_pg  # HYBRID_SHARD: the gradient is also averaged over this group
        self.sharded = sharded
        self.use_orig_params = use_orig_params
        self.reshard_after_forward = False  # set by the owner: FULL_SHARD and not the root
        world = pg.size() if sharded else 1
        self.numel = sum(i.numel for i in infos)
        self.shard_numel = -(-self.numel // world)
        self.start = (pg.rank() if sharded else 0) * self.shard_numel
        ref = params[0]
        self.compute_device = ref.device  # where the full parameter is gathered (the shard may be offloaded)
        self.full = None  # the unsharded flat parameter between unshard() and reshard()
        self.no_sync = False  # FSDP.no_sync(): gradients kept whole here, reduced by the next backward
        self.pending = None  # those gradients (the full flat parameter's)
        self.param_dtype = None  # MixedPrecision: forward and backward compute in it,
        self.reduce_dtype = None  # and the gradients are reduced in this one
        self._regathered = None  # FULL_SHARD: gathered again for backward, after forward freed it
        with minitorch.no_grad():
            padding = minitorch.zeros(self.shard_numel * world - self.numel, dtype=ref.dtype, device=ref.device)
            full = minitorch.cat([p.detach().reshape(-1) for p in params] + [padding])
            local = full[self.start:self.start + self.shard_numel].clone()
            if offload:
                local = local.cpu()
        if use_orig_params:
            self.pieces = []
            for info in infos:
                lo, hi = self._overlap(info)
                piece = nn.Parameter(local[lo - self.start:hi - self.start].clone(), requires_grad=info.requires_grad)
                piece._fsdp_flattened = True
                info.module._parameters[info.name] = piece
                self.pieces.append(piece)
            for mod, name, i in aliases:
                mod._parameters[name] = self.pieces[i]
            self.padding_numel = self.shard_numel - sum(p.numel() for p in self.pieces)
            self.flat_param = None
        else:
            self.flat_param = nn.Parameter(local, requires_grad=infos[0].requires_grad)
            self.flat_param._fsdp_flattened = True
            for info in infos:
                info.module._parameters.pop(info.name)
            for mod, name, _ in aliases:
                mod._parameters.pop(name)
            module.register_parameter(FLAT_PARAM, self.flat_param)
            self._freed = minitorch.empty(0, dtype=ref.dtype, device=ref.device)
            self.reshard()

    def _overlap(self, info: _ParamInfo):
        """The part [lo, hi) of the flat parameter that is both info's and this rank's."""
        lo = max(info.offset, self.start)
        hi = min(info.offset + info.numel, self.start + self.shard_numel)
        return lo, max(lo, hi)

    def local_shard(self):
        """This rank's shard as one 1-D tensor (differentiable back to the pieces)."""
        if self.flat_param is not None:
            return self.flat_param
        return minitorch.cat([*self.pieces, self.padding()])

    def local_grad(self):
        """The shard's gradient as one 1-D tensor (zeros where a piece has none), or None."""
        if self.flat_param is not None:
            return self.flat_param.grad
        if all(p.grad is None for p in self.pieces):
            return None
        parts = [p.grad if p.grad is not None else minitorch.zeros_like(p) for p in self.pieces]
        return minitorch.cat([*parts, self.padding()])

    # the shard's dtype and device are its parameters' (Module.to may move them after wrapping)
    @property
    def dtype(self):
        return self.shard_params()[0].dtype

    @property
    def device(self):
        return self.shard_params()[0].device

    def padding(self):
        """use_orig_params: the zeros after the pieces that make the shard whole."""
        return minitorch.zeros(self.padding_numel, dtype=self.dtype, device=self.device)

    def shard_params(self) -> List:
        return [self.flat_param] if self.flat_param is not None else list(self.pieces)

    # ---- communication ----

    def _gather(self, local):
        if not self.sharded:
            return local.view_as(local)
        out = minitorch.empty(self.shard_numel * self.pg.size(), dtype=self.dtype, device=self.device)
        dist.all_gather_into_tensor(out, local.contiguous(), group=self.pg)
        return out

    def _reduce_grad(self, grad):
        if self.reduce_dtype is not None and grad.dtype != self.reduce_dtype:
            return self._reduce_grad(grad.to(self.reduce_dtype)).to(grad.dtype)
        grad = grad.contiguous()
        if not self.sharded:
            out = grad.clone()
            dist.all_reduce(out, op=dist.ReduceOp.AVG, group=self.pg)
            return out
        out = minitorch.empty(self.shard_numel, dtype=grad.dtype, device=grad.device)
        dist.reduce_scatter_tensor(out, grad, op=dist.ReduceOp.AVG, group=self.pg)
        if self.replicate_pg is not None and self.replicate_pg.size() > 1:
            dist.all_reduce(out, op=dist.ReduceOp.AVG, group=self.replicate_pg)
        return out

    def gather_full(self, local):
        """The full flat tensor of a shard-shaped tensor (a parameter, a gradient, optimizer state)."""
        with minitorch.no_grad():
            return self._gather(local.detach())

    # ---- unshard / reshard ----

    def unshard(self) -> None:
        """All-gathers the full parameter (in param_dtype under mixed precision: the cast is
        differentiable, so the gradient comes back in the shard's dtype) and points the modules'
        attributes at its views."""
        local = self.local_shard()
        if minitorch.is_grad_enabled() and local.requires_grad:
            self.full = self._compute(_Gather.apply(local, self))
        else:
            self.full = self._compute(self.gather_full(local))
        self._use_views(self.full, as_params=False)

    def _compute(self, full):
        full = full.to(device=self.compute_device)
        return full if self.param_dtype is None else full.to(self.param_dtype)

    def views(self, full) -> List:
        return [full[i.offset:i.offset + i.numel].view(i.shape) for i in self.infos]

    def _use_views(self, full, as_params: bool) -> None:
        views = self.views(full)
        for info, v in zip(self.infos, views):
            self._set(info.module, info.name, v, info.requires_grad, as_params)
        for mod, name, i in self.aliases:
            self._set(mod, name, views[i], self.infos[i].requires_grad, as_params)

    @staticmethod
    def _set(mod: nn.Module, name: str, v, requires_grad: bool, as_params: bool) -> None:
        if as_params:  # summon_full_params: registered Parameters (named_parameters, state_dict)
            p = nn.Parameter(v, requires_grad=requires_grad)
            mod._parameters[name] = p
            mod.__dict__.pop(name, None)
        else:  # forward: a plain attribute in front of the registered (sharded) parameter
            mod.__dict__[name] = v

    def reshard(self) -> None:
        """Forgets the full parameter. The attributes fall back to the registered pieces
        (use_orig_params), else to an empty tensor, as PyTorch's views whose storage was freed."""
        self.full = None
        self._regathered = None
        for mod, name in [(i.module, i.name) for i in self.infos] + [(m, n) for m, n, _ in self.aliases]:
            if self.use_orig_params:
                mod.__dict__.pop(name, None)
            else:
                mod.__dict__[name] = self._freed

    def restore_params(self) -> None:
        """Undoes _use_views(as_params=True): the registered parameters are the sharded ones again."""
        for k, info in enumerate(self.infos):
            if self.use_orig_params:
                info.module._parameters[info.name] = self.pieces[k]
            else:
                info.module._parameters.pop(info.name, None)
        for mod, name, i in self.aliases:
            if self.use_orig_params:
                mod._parameters[name] = self.pieces[i]
            else:
                mod._parameters.pop(name, None)
        self.reshard()

    def load_local(self, local) -> None:
        """This rank's shard <- local (a LOCAL_STATE_DICT's flat shard)."""
        with minitorch.no_grad():
            if self.flat_param is not None:
                self.flat_param.copy_(local)
                return
            offset = 0
            for piece in self.pieces:
                piece.copy_(local[offset:offset + piece.numel()])
                offset += piece.numel()

    def write_back(self, full) -> None:
        """This rank's shard <- its part of full."""
        with minitorch.no_grad():
            if self.flat_param is not None:
                self.flat_param.copy_(full[self.start:self.start + self.shard_numel])
                return
            for info, piece in zip(self.infos, self.pieces):
                lo, hi = self._overlap(info)
                piece.copy_(full[lo:hi])

    def _gather_again(self):
        return self._compute(self.gather_full(self.local_shard()))


def _pack(handles: List[FlatParamHandle]):
    def pack(t):
        for h in handles:
            if h.reshard_after_forward and h.holds(t):
                return _FullView(h, t)
        return t

    return pack


def _unpack(packed):
    if isinstance(packed, _FullView):
        full = packed.handle.full_for_backward()
        return full.as_strided(packed.size, packed.stride, full.storage_offset() + packed.offset)
    return packed


def saved_full_views(handles: List[FlatParamHandle]) -> Optional[object]:
    """saved_tensors_hooks under which a tensor saved for backward that views a unit's full
    parameter is kept as where it lay, so that the unit can free it after forward (FULL_SHARD) and
    gather it again when backward needs it."""
    from minitorch.autograd.graph import saved_tensors_hooks

    return saved_tensors_hooks(_pack(handles), _unpack)


@contextlib.contextmanager
def full_params(handles: List[FlatParamHandle], writeback: bool) -> Iterator[None]:
    """Inside: the handles' full parameters registered as Parameters under their original names
    (state_dict, named_parameters see them); at the end, with writeback, this rank's part of
    each is copied back into its shard."""
    gathered = []
    try:
        for h in handles:
            full = h.gather_full(h.local_shard())
            h._use_views(full, as_params=True)
            gathered.append((h, full))
        yield
    finally:
        for h, full in gathered:
            if writeback:
                h.write_back(full)
            h.restore_params()
