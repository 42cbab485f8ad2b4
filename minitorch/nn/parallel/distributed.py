"""DistributedDataParallel, as PyTorch's: one model replica per process, gradients averaged.

At construction the parameters and buffers of rank 0 are broadcast to every rank (one message).
The parameters are put in buckets (reverse registration order, about the order backward produces
their gradients; the first bucket 1 MiB, the others bucket_cap_mb). A post-accumulate-grad hook on
each parameter (it runs when AccumulateGrad wrote .grad) marks it ready; when all of a bucket's
parameters are ready, their gradients are copied into the bucket's flat buffer (on the parameters'
device: a CUDA model's buckets go to NCCL under the "nccl" backend), divided by the world size and
all-reduced asynchronously while backward goes on with the next layers; or, once
register_comm_hook(state, hook) was called, handed to hook(state, GradBucket), whose Future gives
the reduced bucket. When the last bucket was issued, each is waited for and copied back into the
.grads.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, List, Optional

import numpy as np

import minitorch
from minitorch import distributed as dist
from minitorch.distributed.algorithms.join import Join, JoinHook, Joinable
from minitorch.nn.modules.module import Module
from minitorch.nn.parallel.data_parallel import _index, _to

_FIRST_BUCKET_BYTES = 1024 * 1024


def _tensors_of(obj) -> List:
    """The tensors in a forward's output (nested tuples, lists and dicts)."""
    if isinstance(obj, minitorch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors_of(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _tensors_of(o)]
    return []


class _Bucket:
    def __init__(self, index: List[int], dtype) -> None:
        self.index = index  # positions in DistributedDataParallel._params
        self.dtype = dtype
        self.numels: List[int] = []
        self.flat = None  # a 1-D tensor of the bucket's dtype, on the parameters' device
        self.pending = 0
        self.work = None  # the all_reduce in flight, or the comm hook's Future


class GradBucket:
    """torch.distributed.GradBucket: what a communication hook receives, one bucket of gradients
    flattened into one tensor."""

    def __init__(self, index: int, buffer, params: List, offsets: List[int], last: bool) -> None:
        self._index = index
        self._buffer = buffer
        self._params = params
        self._offsets = offsets
        self._last = last

    def index(self) -> int:
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer) -> None:
        self._buffer = buffer

    def gradients(self) -> List:
        """Views of the buffer shaped as the parameters' gradients."""
        return [self._buffer[o:o + p.numel()].view(tuple(p.shape)) for p, o in zip(self._params, self._offsets)]

    def parameters(self) -> List:
        return list(self._params)

    def is_last(self) -> bool:
        return self._last


class DistributedDataParallel(Module, Joinable):
    """Wraps module: forward runs it; backward averages the gradients over the process group."""

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group=None, bucket_cap_mb: Optional[float] = None,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False, **kwargs: Any) -> None:
        Module.__init__(self)
        Joinable.__init__(self)
        self.module = module
        self.process_group = process_group
        pg = dist._group(process_group)
        if pg is None:
            raise RuntimeError("DistributedDataParallel: this rank is not a member of process_group")
        self._pg = pg
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._params = [p for p in module.parameters() if p.requires_grad]
        if not self._params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.device_ids, self.output_device = self._single_device(module, device_ids, output_device)
        self._verify_same_model()
        self._sync_state([*self._params, *[b for b in module.buffers()]])
        cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.bucket_bytes_cap = cap
        self._buckets = self._make_buckets(cap)
        self._bucket_of = {}
        for b, bucket in enumerate(self._buckets):
            for i in bucket.index:
                self._bucket_of[i] = b
        self._ready = [False] * len(self._params)
        self._used = np.ones(len(self._params), dtype=np.int32)
        self._expect = False  # a backward of this iteration started its reduction
        self._join_count = None  # inside join(divide_by_initial_world_size=False): the count's Work
        self._launched = 0
        self._comm_hook = None
        self._comm_state = None
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(self._params)]

    def _single_device(self, module: Module, device_ids, output_device) -> tuple:
        """(device_ids, output_device) as DDP keeps them: the module's one GPU index each for a
        module on one GPU given device_ids, else None (and device_ids refused for other modules)."""
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        devices = {p.device for p in module.parameters()}
        types = {d.type for d in devices}
        if len(types) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type of devices, but "
                             f"input module parameters locate in {types}.")
        self.device_type = next(iter(types))
        if not device_ids or self.device_type == "cpu" or len(devices) > 1:
            if device_ids or output_device:
                raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                                 "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                                 f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
            return None, None
        ids = [_index(d) for d in device_ids]
        return ids, ids[0] if output_device is None else _index(output_device)

    def register_comm_hook(self, state: Any, hook) -> None:
        """hook(state, bucket: GradBucket) -> minitorch.futures.Future of the bucket's tensor,
        reduced over the ranks, instead of DDP's all_reduce of the bucket over the world size
        (default_hooks.allreduce_hook does what DDP does; fp16_compress_hook sends float16).
        Registered once, before the first backward, as PyTorch's."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._comm_hook = hook
        self._comm_state = state

    # ---- construction ----
    def _verify_same_model(self) -> None:
        shapes = [d for p in self._params for d in (p.dim(), *p.shape)]
        h = 0
        for v in shapes:
            h = (h * 1000003 + v + 1) % (1 << 61)
        sig = np.asarray([len(self._params), sum(p.numel() for p in self._params), h], dtype=np.int64)
        out = np.empty_like(sig, shape=(self._pg.size(), 3))
        t = minitorch.from_numpy(sig.copy())
        gathered = [minitorch.empty(3, dtype=minitorch.int64) for _ in range(self._pg.size())]
        dist.all_gather(gathered, t, group=self.process_group)
        for r, g in enumerate(gathered):
            out[r] = g.numpy()
        for r in range(len(out)):
            if not np.array_equal(out[r], sig):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {self._pg.rank()} has "
                    f"{int(sig[0])} params ({int(sig[1])} elements), while rank {self._pg._ranks[r]} has "
                    f"inconsistent {int(out[r][0])} params ({int(out[r][1])} elements) or shapes.")

    def _sync_state(self, tensors: List, src: int = 0) -> None:
        """The values of tensors on the group's rank src, on every rank: one broadcast of their bytes."""
        tensors = [t for t in tensors if t.numel() > 0]
        if not tensors or self._pg.size() == 1:
            return
        parts = [dist._bytes(dist._host(t)) for t in tensors]
        flat = minitorch.from_numpy(np.concatenate(parts))
        dist.broadcast(flat, src=self._pg._ranks[src], group=self.process_group)
        raw = flat.numpy()
        off = 0
        with minitorch.no_grad():
            for t, p in zip(tensors, parts):
                dist._assign_bytes(t, raw[off:off + p.size])
                off += p.size

    def _make_buckets(self, cap: int) -> List[_Bucket]:
        buckets: List[_Bucket] = []
        open_: Dict[Any, _Bucket] = {}
        size: Dict[Any, int] = {}
        for i in reversed(range(len(self._params))):
            p = self._params[i]
            key = p.dtype
            limit = _FIRST_BUCKET_BYTES if not buckets else cap
            b = open_.get(key)
            if b is None or (size[key] > 0 and size[key] + p.numel() * p.element_size() > limit):
                b = _Bucket([], p.dtype)
                buckets.append(b)
                open_[key] = b
                size[key] = 0
            b.index.append(i)
            b.numels.append(p.numel())
            size[key] += p.numel() * p.element_size()
        for b in buckets:
            b.flat = minitorch.zeros(sum(b.numels), dtype=b.dtype, device=self._params[b.index[0]].device)
            b.pending = len(b.index)
        return buckets

    # ---- forward ----
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._expect and self._launched < len(self._buckets):
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This "
                "error indicates that your module has parameters that were not used in producing loss. You "
                "can enable unused parameter detection by passing the keyword argument "
                "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by making "
                "sure all `forward` function outputs participate in calculating loss.")
        self._reset()
        work = Join.notify_join_context(self)  # inside Join: this rank has not joined
        self._join_count = work if work is not None and not self._divide_by_initial_world_size else None
        if self.device_ids:  # a single-GPU module: the inputs go to its device first
            device = minitorch.device(self.device_type, self.device_ids[0])
            inputs, kwargs = _to(inputs, device), _to(kwargs, device)
        if self.broadcast_buffers and self.require_forward_param_sync:
            bufs = [b for b in self.module.buffers()]
            if bufs:
                # inside Join, rank 0 may have joined with stale buffers: the highest rank still training
                src = self._find_common_rank(self._pg.rank(), True) if self._join_config.enable else 0
                self._sync_state(bufs, src)
        if self._join_config.enable:  # tells the joined ranks whether this backward all-reduces
            self._global_requires_sync(is_joined_rank=False)
        out = self.module(*inputs, **kwargs)
        if self.find_unused_parameters and minitorch.is_grad_enabled() and self.require_backward_grad_sync:
            self._mark_unused(out)
        return out

    def _reset(self) -> None:
        self._expect = False
        self._launched = 0
        self._ready = [False] * len(self._params)
        self._used[:] = 1
        for b in self._buckets:
            b.pending = len(b.index)
            b.work = None

    def _mark_unused(self, out: Any) -> None:
        """find_unused_parameters: the parameters the output's graph does not reach are ready now
        (their slots of the buckets are zeros), so that their buckets need not wait for them."""
        reached = set()
        seen = {}  # id -> node: holding the nodes keeps their ids from being reused
        stack = [t.grad_fn for t in _tensors_of(out) if t.grad_fn is not None]
        leaves = {id(t) for t in _tensors_of(out) if t.requires_grad and t.grad_fn is None}
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen[id(node)] = node
            var = getattr(node, "variable", None)
            if var is not None:
                reached.add(id(var))
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    stack.append(nxt)
        reached |= leaves
        unused = [i for i, p in enumerate(self._params) if id(p) not in reached]
        if unused:
            self._expect = True
            for i in unused:
                self._used[i] = 0
                self._mark_ready(i)

    # ---- backward ----
    def _make_hook(self, i: int):
        def hook(param) -> None:
            if self.require_backward_grad_sync and not self._ready[i]:
                self._expect = True
                self._mark_ready(i)

        return hook

    def _mark_ready(self, i: int) -> None:
        self._ready[i] = True
        for issued in self._buckets:  # MPI moves messages on inside its calls: poll the ones in flight
            if issued.work is not None:
                if self._comm_hook is not None:
                    issued.work.done()
                else:
                    issued.work.is_completed()
        b = self._bucket_of[i]
        bucket = self._buckets[b]
        bucket.pending -= 1
        if bucket.pending == 0:
            self._launch(bucket)
            if self._launched == len(self._buckets):
                self._finish()

    def _launch(self, bucket: _Bucket) -> None:
        flat = bucket.flat
        off = 0
        offsets = []
        with minitorch.no_grad():
            for i, n in zip(bucket.index, bucket.numels):
                p = self._params[i]
                offsets.append(off)
                if p.grad is None or not self._used[i]:
                    flat[off:off + n].zero_()
                else:
                    flat[off:off + n].copy_(p.grad.detach().reshape(-1))
                off += n
        if self._comm_hook is not None:
            b = self._buckets.index(bucket)
            grad_bucket = GradBucket(b, flat, [self._params[i] for i in bucket.index], offsets,
                                     b == len(self._buckets) - 1)
            bucket.work = self._comm_hook(self._comm_state, grad_bucket)
        else:
            with minitorch.no_grad():
                flat.div_(self._divisor())
            bucket.work = dist.all_reduce(flat, group=self.process_group, async_op=True)
        self._launched += 1

    def _finish(self) -> None:
        used = None
        if self.find_unused_parameters:
            u = minitorch.from_numpy(self._used.copy())
            dist.all_reduce(u, group=self.process_group)
            used = u.numpy()
        for bucket in self._buckets:
            if self._comm_hook is not None:
                reduced = bucket.work.wait()
                if not isinstance(reduced, minitorch.Tensor) or reduced.numel() != bucket.flat.numel():
                    raise RuntimeError(f"A communication hook's Future must give a tensor of the bucket's "
                                       f"{bucket.flat.numel()} elements, got {reduced!r:.80}")
            else:
                bucket.work.wait()
                reduced = bucket.flat
            off = 0
            for i, n in zip(bucket.index, bucket.numels):
                p = self._params[i]
                if used is not None and used[i] == 0:
                    off += n  # unused on every rank: .grad stays as it was, as PyTorch leaves it
                    continue
                if p.grad is None:
                    p.grad = minitorch.zeros(tuple(p.shape), dtype=p.dtype, device=p.device)
                with minitorch.no_grad():
                    p.grad.copy_(reduced[off:off + n].view(tuple(p.shape)))
                off += n
            bucket.work = None

    # ---- uneven inputs (Join) ----
    _divide_by_initial_world_size = True

    def _divisor(self) -> float:
        """What the gradients are divided by: the world size, or inside join(...,
        divide_by_initial_world_size=False) the number of ranks not joined this iteration."""
        if self._join_count is None:
            return self._pg.size()
        self._join_count.wait()
        return self._join_count.result()[0].item()

    def _find_common_rank(self, rank: int, candidate: bool) -> int:
        """The highest group rank among the candidates (every rank calls it)."""
        t = minitorch.tensor([rank if candidate else -1], device=self.join_device)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.process_group)
        if t.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process.")
        return int(t.item())

    def _global_requires_sync(self, is_joined_rank: bool):
        """An all-reduce of whether the ranks still training all-reduce gradients this iteration;
        the joined rank waits for it and gets the answer."""
        flag = minitorch.ones(1, device=self.join_device) if not is_joined_rank and self.require_backward_grad_sync \
            else minitorch.zeros(1, device=self.join_device)
        work = dist.all_reduce(flag, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return flag.item() != 0
        return None

    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Join:
        """Join([self]) (see minitorch.distributed.algorithms.join) for training on uneven inputs."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs: Any) -> JoinHook:
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self) -> minitorch.device:
        return self._params[0].device

    @property
    def join_process_group(self) -> Any:
        return self.process_group if self.process_group is not None else dist.group.WORLD

    @contextlib.contextmanager
    def no_sync(self):
        """Within it, backward accumulates gradients locally; the first backward after it averages them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


class _DDPJoinHook(JoinHook):
    """DDP on a joined rank: each iteration, the buffer broadcast and the gradient all-reduces of
    the ranks still training (with zero gradients); at the end, the last joiner's model to all."""

    def __init__(self, ddp: DistributedDataParallel, divide_by_initial_world_size: bool) -> None:
        self.ddp = ddp
        ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        ddp = self.ddp
        bufs = [b for b in ddp.module.buffers()]
        if ddp.broadcast_buffers and ddp.require_forward_param_sync and bufs:
            ddp._sync_state(bufs, ddp._find_common_rank(ddp._pg.rank(), False))
        should_sync = ddp._global_requires_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        works = []
        for b, bucket in enumerate(ddp._buckets):
            with minitorch.no_grad():
                bucket.flat.zero_()
            if ddp._comm_hook is not None:
                params = [ddp._params[i] for i in bucket.index]
                offsets = [int(o) for o in np.cumsum([0, *bucket.numels[:-1]])]
                works.append(ddp._comm_hook(ddp._comm_state, GradBucket(b, bucket.flat, params, offsets,
                                                                        b == len(ddp._buckets) - 1)))
            else:
                works.append(dist.all_reduce(bucket.flat, group=ddp.process_group, async_op=True))
        for work in works:
            work.wait()
        if ddp.find_unused_parameters:
            dist.all_reduce(minitorch.zeros(len(ddp._params), dtype=minitorch.int32), group=ddp.process_group)

    def post_hook(self, is_last_joiner: bool) -> None:
        ddp = self.ddp
        src = ddp._find_common_rank(ddp._pg.rank(), is_last_joiner)
        ddp._sync_state([*ddp._params, *([b for b in ddp.module.buffers()] if ddp.broadcast_buffers else [])], src)
