"""DTensor's rules for the operators that move dimensions (view, reshape, flatten, unflatten,
squeeze, unsqueeze, expand, permute, movedim, indexing, cat, stack) and for the common
layers' ops that reduce along one dimension (softmax, log_softmax, layer_norm, embedding,
cross_entropy), as PyTorch's sharding propagation lays them out (torch/distributed/tensor/_ops):

- a sharded dimension that the op keeps whole (the same size, or the first of a flattened group
  whose size the mesh divides, or split with a first part the mesh divides) stays sharded, on
  the output dimension it became; one the op changes otherwise (indexed, concatenated along,
  normalized over) is replicated first; one flattened behind others becomes PyTorch's
  _StridedShard of the flattened dimension (split_factor: the elements in front of it there),
  which a view that splits it back out (or keeps it) turns into Shard again (or keeps); any other
  op replicates a _StridedShard first (_dispatch). View ops (view, squeeze) raise PyTorch's errors
  where the layout cannot follow evenly;
- embedding: indices sharded -> the output sharded alike; the table sharded by rows -> each
  rank looks its own rows up and the output is the sum of the ranks' parts (_MaskPartial); by
  columns -> the output sharded on its last dimension;
- x[index] = value (a DTensor, gathered whole): each rank writes its part of the region, in place
  (an index of ints, slices, None and Ellipsis; a tensor index only into a replicated x); a
  number or a plain tensor raises, as PyTorch 2.13's;
- cross_entropy over a batch sharded evenly: each rank's loss of its rows, Partial(avg) (mean),
  Partial(sum) (sum) or sharded (none).
Each computes on the local tensors (so autograd runs locally), the output's global shape from
the same call on "meta" tensors of the global shapes.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import minitorch
from minitorch import _C
from minitorch.distributed.tensor import _redistribute as _rd
from minitorch.distributed.tensor._api import DTensor, _operand, _redistribute, _spec, _wrap
from minitorch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard, _StridedShard


class _MaskPartial(Partial):
    """A partial sum whose parts are lookups masked to each rank's rows of a table sharded on
    offset_dim (embedding's output over a row-sharded table)."""

    def __init__(self, offset_shape: Tuple[int, ...] = (), offset_dim: int = 0) -> None:
        super().__init__("sum")
        self.offset_shape = minitorch.Size(offset_shape)
        self.offset_dim = offset_dim

    def __repr__(self) -> str:
        return f"_MaskPartial(reduce_op=sum, offset_shape={self.offset_shape}, offset_dim={self.offset_dim})"


def _meta(obj: Any) -> Any:
    """obj with each DTensor a meta tensor of its global shape and dtype."""
    if isinstance(obj, DTensor):
        return minitorch.empty(tuple(obj.shape), dtype=obj.dtype, device="meta")
    if isinstance(obj, (list, tuple)):
        return type(obj)(_meta(o) for o in obj)
    return obj


def _global_shape(func: Callable, args: tuple, kwargs: dict) -> Tuple[int, ...]:
    args, kwargs = _meta(args), {k: _meta(v) for k, v in kwargs.items()}
    with _C.DisableTorchFunctionSubclass():
        return tuple(func(*args, **kwargs).shape)


def _local(func: Callable, args: tuple, kwargs: dict) -> Any:
    with _C.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


def _out(local: Any, mesh, placements: Sequence[Placement], shape: Sequence[int]) -> DTensor:
    return _wrap(local, _spec(mesh, placements, shape))


# ---- view, reshape and their kin: which output dimension each sharded input dimension becomes ----

def _view_groups(src: Sequence[int], dst: Sequence[int]) -> List[Tuple[List[int], List[int]]]:
    """src's and dst's dimensions in groups of equal products, as PyTorch's view_groups pairs
    them: ([input dims], [output dims]); a size-1 dimension forms a group of its own."""
    groups: List[Tuple[List[int], List[int]]] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        ins: List[int] = []
        outs: List[int] = []
        f = t = 1
        if i < len(src):
            f = src[i]
            ins.append(i)
            i += 1
        if j < len(dst):
            t = dst[j]
            outs.append(j)
            j += 1
        if f == 1 and t != 1 and outs:
            j -= 1
            outs = []
        elif f != 1 and t == 1 and ins:
            i -= 1
            ins = []
        else:
            while f != t:
                if f < t:
                    f *= src[i]
                    ins.append(i)
                    i += 1
                else:
                    t *= dst[j]
                    outs.append(j)
                    j += 1
        groups.append((ins, outs))
    return groups


def _view_layout(dt: DTensor, out_shape: Sequence[int]) -> Tuple[List[Placement], List[Placement]]:
    """(how dt must lie first, how the output then lies) for a view of dt as out_shape, with
    PyTorch's errors of a strict view (reshape, flatten and unflatten run as views there too)."""
    shape = tuple(dt.shape)
    mesh = dt.device_mesh
    placements = _unpartial_placements(dt.placements)
    sharded = {p.dim: i for i, p in enumerate(placements) if isinstance(p, Shard)}
    keep: Dict[int, int] = {}  # input dim -> the output dim it stays sharded on
    becomes: Dict[int, Placement] = {}  # mesh dim -> its placement after the view, where not keep's
    groups = _view_groups(shape, out_shape)
    for i, p in enumerate(placements):
        if isinstance(p, (Shard, _StridedShard)):
            becomes.update(_strided_view(i, p, shape, out_shape, groups, mesh, placements))
    for ins, outs in groups:
        real_outs = [o for o in outs if out_shape[o] != 1] or outs
        for k, d in enumerate(ins[:-1]):  # flattened in front of another: it must split evenly
            if d in sharded and shape[d] % mesh.size(sharded[d]):
                i = sharded[d]
                raise RuntimeError(f"Cannot flatten unevenly sharded tensor: dimension {d} (size {shape[d]}) is "
                                   f"not evenly divisible by mesh dimension {i} (size {mesh.size(i)}). Please "
                                   "redistribute the tensor before this operation.")
        first = next((d for d in ins if d in sharded), None)
        if first is not None and len(real_outs) > 1:  # split: its first part must split evenly
            i = sharded[first]
            if out_shape[real_outs[0]] % mesh.size(i):
                raise RuntimeError(f"Cannot unflatten unevenly sharded tensor: output dimension 0 (size "
                                   f"{out_shape[real_outs[0]]}) is not evenly divisible by mesh dimension {i} "
                                   f"(size {mesh.size(i)}). Please redistribute the tensor before this operation.")
        if ins and outs:  # the first input dim stays sharded; those behind it are gathered (or strided)
            keep[ins[0]] = real_outs[0]
    src = [p if i in becomes else Replicate() if isinstance(p, (Shard, _StridedShard)) and (
        isinstance(p, _StridedShard) or p.dim not in keep) else p for i, p in enumerate(placements)]
    dst = [becomes[i] if i in becomes else Shard(keep[p.dim]) if isinstance(p, Shard) else p
           for i, p in enumerate(src)]
    return src, dst


def _strided_view(i: int, p: Placement, shape, out_shape, groups, mesh, placements) -> Dict[int, Placement]:
    """{i: what mesh dimension i's placement p becomes} where the view makes or keeps a
    _StridedShard, as PyTorch's view propagation: Shard(d) with d behind the first dimension of a
    group flattened into one output dimension o -> _StridedShard(o, split_factor: the product of
    the dimensions in front of d there, as the mesh dimensions before i leave them); a
    _StridedShard(d, f) kept as it is -> _StridedShard(o, f), or split into output dimensions whose
    sizes in front of one, k, multiply to f -> Shard(k) (when k is the last or the mesh divides
    it). {} otherwise (Shard's usual rules, or replicated first)."""
    for ins, outs in groups:
        if p.dim not in ins:
            continue
        real_outs = [o for o in outs if out_shape[o] != 1] or outs
        k = ins.index(p.dim)
        if isinstance(p, Shard):
            if k == 0 or len(real_outs) != 1:
                return {}
            front = _rd.local_shape(shape, mesh, placements, upto=i)
            factor = 1
            for d in ins[:k]:
                factor *= front[d]
            return {i: _StridedShard(real_outs[0], split_factor=factor)}
        if len(ins) != 1:
            return {}
        if len(real_outs) == 1:
            return {i: _StridedShard(real_outs[0], split_factor=p.split_factor)}
        factor = 1
        for j, o in enumerate(real_outs):
            if factor == p.split_factor:
                last = j == len(real_outs) - 1
                return {i: Shard(o)} if last or out_shape[o] % mesh.size(i) == 0 else {}
            factor *= out_shape[o]
        return {}
    return {}


def _unpartial_placements(placements: Sequence[Placement]) -> List[Placement]:
    return [Replicate() if p.is_partial() else p for p in placements]


_VIEWS = {"view", "view_as", "_unsafe_view", "squeeze", "squeeze_", "unsqueeze"}  # the rest may copy


def _view(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """view, reshape, flatten, unflatten, squeeze, unsqueeze, view_as, reshape_as, expand, expand_as."""
    self = args[0]
    if not isinstance(self, DTensor):
        raise NotImplementedError(f"Operator aten.{name}.default does not have a sharding strategy registered.")
    out_shape = _global_shape(func, args, kwargs)
    if name in ("expand", "expand_as", "broadcast_to"):
        src, dst = _expand_layout(self, out_shape)
    else:
        src, dst = _view_layout(self, out_shape)
    x = _redistribute(self, src)
    mesh = self.device_mesh
    local_shape = _rd.local_shape(out_shape, mesh, dst)
    with _C.DisableTorchFunctionSubclass():
        if name in ("expand", "expand_as", "broadcast_to"):
            local = x.expand(local_shape)
        elif name in _VIEWS:
            local = x.view(local_shape)
        else:
            local = x.reshape(local_shape)
    return _out(local, mesh, dst, out_shape)


def _expand_layout(dt: DTensor, out_shape: Sequence[int]) -> Tuple[List[Placement], List[Placement]]:
    """expand: a sharded dimension stays sharded (shifted by the new leading ones) unless it
    had size 1 and is expanded."""
    off = len(out_shape) - dt.dim()
    src, dst = [], []
    for p in _unpartial_placements(dt.placements):
        if isinstance(p, Shard) and dt.shape[p.dim] == out_shape[p.dim + off]:
            src.append(p)
            dst.append(Shard(p.dim + off))
        else:
            src.append(Replicate() if isinstance(p, Shard) else p)
            dst.append(src[-1])
    return src, dst


def _permute(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """permute, movedim, swapaxes: each sharded dimension follows where it went (found from the
    strides of the same call on a meta tensor of distinct strides)."""
    self = args[0]
    nd = self.dim()
    probe = minitorch.empty((2,) * nd, device="meta")
    with _C.DisableTorchFunctionSubclass():
        moved = func(probe, *args[1:], **kwargs)
    where = {probe.stride(d): d for d in range(nd)}  # a stride names its input dimension
    to_out = {where[s]: o for o, s in enumerate(moved.stride())}
    placements = [Shard(to_out[p.dim]) if isinstance(p, Shard) else p for p in self.placements]
    local = _local(func, args, kwargs)
    shape = [self.shape[where[s]] for s in moved.stride()]
    return _out(local, self.device_mesh, placements, shape)


# ---- indexing, cat, stack ----

def _index_dims(index: Any, nd: int) -> Optional[Tuple[List[int], Dict[int, int]]]:
    """(the input dims the index touches, input dim -> output dim of those it keeps whole) for an
    index of ints, slices, None and Ellipsis; None for any other (a tensor index)."""
    items = list(index) if isinstance(index, tuple) else [index]
    if any(not (it is None or it is Ellipsis or isinstance(it, (int, slice))) or isinstance(it, bool)
           for it in items):
        return None
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    if used > nd:
        return None
    touched: List[int] = []
    keep: Dict[int, int] = {}
    d = o = 0
    for it in items:
        if it is Ellipsis:
            for _ in range(nd - used):
                keep[d] = o
                d += 1
                o += 1
        elif it is None:
            o += 1
        elif isinstance(it, int):
            touched.append(d)
            d += 1
        else:
            if it != slice(None):
                touched.append(d)
            keep[d] = o
            d += 1
            o += 1
    while d < nd:
        keep[d] = o
        d += 1
        o += 1
    return touched, keep


def _getitem(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """x[index]: the indexed sharded dimensions replicated first; the others stay sharded."""
    self, index = args[0], args[1]
    if not isinstance(self, DTensor):
        raise NotImplementedError("Operator aten.index.Tensor does not have a sharding strategy registered.")
    dims = _index_dims(index, self.dim())
    out_shape = _global_shape(func, (self, index), {})
    placements = _unpartial_placements(self.placements)
    if dims is None:
        x = _redistribute(self, [Replicate()] * len(placements))
        dst = [Replicate()] * len(placements)
    else:
        touched, keep = dims
        src = [Replicate() if isinstance(p, Shard) and p.dim in touched else p for p in placements]
        x = _redistribute(self, src)
        dst = [Shard(keep[p.dim]) if isinstance(p, Shard) else p for p in src]
    return _out(_local(func, (x, index), {}), self.device_mesh, dst, out_shape)


def _replicated(obj: Any) -> Any:
    """obj with each DTensor in it replicated (an index or a value written into a replicated tensor)."""
    if isinstance(obj, DTensor):
        return _redistribute(obj, [Replicate()] * len(obj.placements))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_replicated(o) for o in obj)
    return obj


def _local_key(index: Any, shape: Sequence[int], offset: Sequence[int], size: Sequence[int]):
    """(this rank's part of a basic index: the index into its local tensor, and the slices of the
    indexed region's values that go there), for an index of ints, slices, None and Ellipsis into
    a tensor of global shape whose local tensor starts at offset and holds size; None where this
    rank holds nothing of the region."""
    items = list(index) if isinstance(index, tuple) else [index]
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    rest = [slice(None)] * (len(shape) - used)  # every dimension named: a sharded one is localised too
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at:at + 1] = rest
    else:
        items += rest
    local: List[Any] = []
    values: List[slice] = []
    d = 0
    for it in items:
        if it is None:
            local.append(None)
            values.append(slice(None))
            continue
        lo, n = offset[d], size[d]
        if isinstance(it, int):
            k = it + shape[d] if it < 0 else it
            if not lo <= k < lo + n:
                return None
            local.append(k - lo)
        else:
            start, stop, step = it.indices(shape[d])
            count = len(range(start, stop, step))
            j0 = min(count, max(0, -(-(lo - start) // step)))  # the first position at or past lo
            j1 = min(count, max(0, -(-(lo + n - start) // step)))  # ... at or past lo + n
            local.append(slice(start + j0 * step - lo, start + j0 * step - lo + (j1 - j0) * step, step)
                         if j1 > j0 else slice(0, 0))
            values.append(slice(j0, max(j0, j1)))
        d += 1
    return tuple(local), tuple(values)


def _setitem(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """x[index] = value in place, as PyTorch 2.13's DTensor: a number raises (aten.fill_ has no
    strategy), a plain tensor raises; a DTensor value goes to the ranks that hold the region
    (each writes its part; PyTorch leaves a sharded self unchanged when the index selects along
    a sharded dimension, writing into a replicated copy). A tensor index (mask, indices) writes
    into a replicated self only, as PyTorch's index_put_."""
    from minitorch.distributed.tensor._dispatch import _operands

    self, index, value = args[0], args[1], args[2]
    if _index_dims(index, self.dim()) is None:
        _operands("index_put_", (self, index, value), {})
        if not all(p.is_replicate() for p in self.placements):
            raise RuntimeError("aten.index_put_.default: in-place operations that require placement changes are "
                               f"not supported. The input has placement {tuple(self.placements)}, but no valid "
                               "strategy preserves this placement. Please use the out-of-place version of this "
                               "operation instead.")
        return _local(func, (self, _replicated(index), _replicated(value)), {})
    if not isinstance(value, minitorch.Tensor):
        raise NotImplementedError("Operator aten.fill_.Tensor does not have a sharding strategy registered.")
    if not isinstance(value, DTensor):
        raise RuntimeError("aten.copy_.default got mixed torch.Tensor and DTensor, need to convert all "
                           "torch.Tensor to DTensor before calling distributed operators!")
    _operands("copy_", (self, value), {})
    if any(p.is_partial() for p in self.placements):
        raise NotImplementedError("Operator aten.copy_.default does not have a sharding strategy registered.")
    region = _global_shape(lambda t, i: t[i], (self, index), {})
    whole = value.full_tensor().broadcast_to(region)
    shape = tuple(self.shape)
    where = _local_key(index, shape, _rd.local_offset(shape, self.device_mesh, self.placements),
                       _rd.local_shape(shape, self.device_mesh, self.placements))
    if where is not None:
        local, values = where
        _local(func, (self, local, whole[values]), {})
    return None


def _cat(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """cat, stack (and their aliases): the inputs laid out as the first, replicated along the
    concatenated dimension; stack's new dimension shifts the later ones."""
    tensors = list(args[0]) if args else list(kwargs["tensors"])
    dim = kwargs.get("dim", args[1] if len(args) > 1 else 0)
    first = next(t for t in tensors if isinstance(t, DTensor))
    out_shape = _global_shape(func, (tensors,) + tuple(args[1:]), kwargs)
    stack = name in ("stack",)
    nd = len(out_shape)
    dim = dim + nd if dim < 0 else dim
    layout = [Replicate() if (isinstance(p, Shard) and p.dim == dim and not stack) else p
              for p in _unpartial_placements(first.placements)]
    moved = [_redistribute(t, layout) if isinstance(t, DTensor) else t for t in tensors]
    dst = [Shard(p.dim + (1 if stack and p.dim >= dim else 0)) if isinstance(p, Shard) else p for p in layout]
    rest = {k: v for k, v in kwargs.items() if k != "tensors"}
    local = _local(func, (moved,) + tuple(args[1:]), rest)
    return _out(local, first.device_mesh, dst, out_shape)


# ---- the layers' ops ----

def _along(dt: DTensor, dims: Sequence[int]) -> DTensor:
    """dt with its shards on dims (and its partial values) replicated."""
    return _redistribute(dt, [Replicate() if p.is_partial() or (isinstance(p, Shard) and p.dim in dims) else p
                              for p in dt.placements])


def _softmax(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """softmax, log_softmax over dim: that dimension whole on every rank, the others as they lie."""
    self = args[0]
    dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
    dim = dim + self.dim() if dim < 0 else dim
    x = _along(self, [dim])
    local = _local(func, (x,) + tuple(args[1:]), kwargs)
    return _out(local, self.device_mesh, x.placements, self.shape)


def _layer_norm(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """layer_norm over the last len(normalized_shape) dims: those whole, weight and bias replicated."""
    self, normalized = args[0], args[1]
    k = 1 if isinstance(normalized, int) else len(normalized)
    x = _along(self, range(self.dim() - k, self.dim()))
    mesh = self.device_mesh
    whole = [Replicate()] * mesh.ndim
    rest = tuple(_operand(a, whole, x.placements) if isinstance(a, DTensor) else a for a in args[2:])
    kw = {key: _operand(v, whole, x.placements) if isinstance(v, DTensor) else v for key, v in kwargs.items()}
    local = _local(func, (x, normalized) + rest, kw)
    return _out(local, mesh, x.placements, self.shape)


def _embedding(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """embedding(weight, indices, padding_idx, ...) (the op's order): per mesh dimension, the indices' even shard kept,
    the table's columns kept as the output's last dimension, the table's rows looked up where
    each rank holds them (a partial sum); other layouts replicated."""
    weight, idx = args[0], args[1]
    if not (isinstance(idx, DTensor) and isinstance(weight, DTensor)):
        raise RuntimeError("aten.embedding.default: got mixed torch.Tensor and DTensor, need to convert all "
                           "torch.Tensor to DTensor before calling distributed operators!")
    mesh = weight.device_mesh
    padding_idx = kwargs.get("padding_idx", args[2] if len(args) > 2 else None)
    ip, wp, out = [], [], []
    for a, b in zip(_unpartial_placements(idx.placements), _unpartial_placements(weight.placements)):
        even = isinstance(a, Shard) and idx.shape[a.dim] % mesh.size(len(ip)) == 0
        if isinstance(b, Shard) and b.dim == 1:  # the table's columns win over the indices' shard
            ip.append(Replicate())
            wp.append(b)
            out.append(Shard(idx.dim()))
        elif isinstance(b, Shard) and b.dim == 0 and not isinstance(a, Shard) and padding_idx in (None, -1):
            ip.append(Replicate())
            wp.append(b)
            out.append(_MaskPartial(tuple(weight.shape), 0))
        else:  # the indices' shard kept where it is even
            ip.append(a if even else Replicate())
            wp.append(Replicate())
            out.append(ip[-1])
    idx, weight = _redistribute(idx, ip), _operand(weight, wp, out)
    out_shape = tuple(idx.shape) + (weight.shape[1],)
    rows = [i for i, p in enumerate(wp) if isinstance(p, Shard) and p.dim == 0]
    if not rows:
        local = _local(func, (weight, idx) + tuple(args[2:]), kwargs)
        return _out(local, mesh, out, out_shape)
    start = _rd.local_offset(tuple(weight.shape), mesh, wp)[0]
    with _C.DisableTorchFunctionSubclass():
        have = _C.TensorBase.size(weight)[0]
        outside = (idx < start) | (idx >= start + have)
        if have == 0:  # no rows here: this rank's part is zeros
            local = minitorch.zeros(tuple(_C.TensorBase.size(idx)) + (_C.TensorBase.size(weight)[1],),
                                    dtype=weight.dtype, device=weight.device) + weight.sum() * 0
        else:
            local = func(weight, (idx - start).masked_fill(outside, 0), *args[2:], **kwargs)
            local = local.masked_fill(outside.unsqueeze(-1), 0.0)
    return _out(local, mesh, out, out_shape)


def _cross_entropy(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """cross_entropy_loss(input (N, C), target (N,), weight, reduction, ignore_index,
    label_smoothing): over a batch sharded evenly, each rank's loss of its rows; the class
    dimension whole; anything else computed on the replicated inputs."""
    x, target = args[0], args[1]
    mesh = x.device_mesh
    whole = [Replicate()] * mesh.ndim
    weight = args[2] if len(args) > 2 else None
    reduction = args[3] if len(args) > 3 else 1
    batch = x.dim() == 2 and isinstance(target, DTensor) and target.dim() == 1 and weight is None
    xp, tp, out = [], [], []
    for i, p in enumerate(_unpartial_placements(x.placements)):
        if batch and isinstance(p, Shard) and p.dim == 0:
            if x.shape[0] % mesh.size(i) and reduction == 1:
                raise RuntimeError("The intermediate results of nll_loss cannot be evenly sharded,"
                                   + " " * 25 + "resulting in biased mean result.")  # PyTorch's words, spaces too
            xp.append(p)
            tp.append(Shard(0))
            out.append(Shard(0) if reduction == 0 else Partial("avg" if reduction == 1 else "sum"))
        else:
            xp.append(Replicate())
            tp.append(Replicate())
            out.append(Replicate())
    x = _redistribute(x, xp)
    if isinstance(target, DTensor):
        target = _redistribute(target, tp)
    rest = tuple(_operand(a, whole, out) if isinstance(a, DTensor) else a for a in args[2:])
    local = _local(func, (x, target) + rest, kwargs)
    return _out(local, mesh, out, tuple(args[1].shape) if reduction == 0 else ())


RULES: Dict[str, Callable] = {
    **{n: _view for n in ("view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "view_as",
                          "reshape_as", "_unsafe_view", "expand", "expand_as", "broadcast_to")},
    **{n: _permute for n in ("permute", "movedim", "moveaxis", "swapaxes", "swapdims")},
    "__getitem__": _getitem, "__setitem__": _setitem, "cat": _cat, "concat": _cat, "concatenate": _cat, "stack": _cat,
    "softmax": _softmax, "log_softmax": _softmax, "_softmax": _softmax, "_log_softmax": _softmax,
    "layer_norm": _layer_norm, "embedding": _embedding, "cross_entropy_loss": _cross_entropy,
}

# the rules that lay out _StridedShard operands themselves (the dispatcher replicates them for the rest)
STRIDED_AWARE = {"view", "reshape", "flatten", "unflatten", "view_as", "reshape_as", "_unsafe_view"}
