"""Which operators a DTensor computes, and how (its __torch_function__ comes here).

The rules, each computing on the local tensors (the DTensors themselves, their C tensors being
the local ones) and saying how the result is laid out:
- pointwise ops (the elementwise table, their in-place forms, copy_, clone, to, the *_like
  factories, the optimizers' fused steps): the result laid out as self (in place) or as the
  first DTensor of the result's shape, each operand redistributed to match it (sharded on its
  own aligned dimension, replicated where it broadcasts); on a Partial value only the linear ones
  (add and sub of Partials, mul and div by a scalar or a replicated factor, neg, clone, to)
  keep it partial, the others reduce it first;
- sum, mean, amax, amin: a reduced sharded dimension makes the result Partial (sum, max, min);
  linalg.vector_norm of all the elements (so clip_grad_norm_): the ranks' norms combined, replicated;
- mm, matmul (2-D), linear (2-D input) and t, transpose: the usual matrix rules (Shard(0) @ Replicate -> Shard(0),
  Replicate @ Shard(1) -> Shard(1), Shard(1) @ Shard(0) -> Partial, a sharded contraction against a
  replicated operand chunked alike -> Partial), others through Replicate;
- view, reshape, flatten, squeeze, unsqueeze, expand, permute, indexing, cat, stack, softmax,
  layer_norm, embedding, cross_entropy: _shape_ops.py;
- any op whose DTensor operands are all replicated: computed locally, the result replicated;
- item(), tolist(), numpy() and the number conversions: of the full tensor;
- the random ops (normal_, uniform_, rand_like, ..., dropout): _random.py (each rank its part of one draw).
An operand replicated along a mesh dimension where the result is not gets its gradient back as
a partial sum there (reduced: each rank's is its own part). Any other op on a sharded or partial
DTensor raises NotImplementedError, and a plain tensor
(but a 0-dim one) among a DTensor op's operands raises RuntimeError, in PyTorch's words.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Sequence

import numpy as np

import minitorch
from minitorch import _C
from minitorch._backed import POINTWISE
from minitorch.distributed.tensor import _random, _shape_ops
from minitorch.distributed.tensor._api import DTensor, _operand, _redistribute, _spec, _wrap
from minitorch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard, _StridedShard

_SAME_LAYOUT = {"clone", "detach", "detach_", "contiguous", "to", "cpu", "cuda", "float", "double", "half",
                "bfloat16", "type_as", "requires_grad_", "zero_", "fill_", "copy_", "zeros_like", "ones_like",
                "empty_like", "full_like", "rand_like", "randn_like", "uniform_", "normal_", "data", "lerp",
                "lerp_", "addcmul", "addcmul_", "addcdiv", "addcdiv_", "where", "masked_fill", "masked_fill_",
                "clamp", "clamp_", "clamp_min", "clamp_max", "nan_to_num", "type"}
_ADDITIVE = {"add", "add_", "sub", "sub_", "__add__", "__radd__", "__iadd__", "__sub__", "__rsub__", "__isub__",
             "rsub", "subtract"}
_SCALING = {"mul", "mul_", "__mul__", "__rmul__", "__imul__", "div", "div_", "__truediv__", "__itruediv__",
            "true_divide", "multiply", "divide"}
_UNARY_LINEAR = {"neg", "neg_", "__neg__", "negative", "clone", "detach", "detach_", "contiguous", "to", "cpu",
                 "cuda", "float", "double", "half", "bfloat16", "type_as", "requires_grad_", "data", "zero_", "type"}
_TO_FULL = {"item", "tolist", "numpy", "__float__", "__int__", "__bool__", "__index__", "__format__", "__iter__",
            "__reversed__", "__contains__", "__array__"}


def _name(func: Callable) -> str:
    """The name of what was called (a property's name for its getter and setter)."""
    name = getattr(func, "__name__", "")
    if name in ("__get__", "__set__"):
        member = getattr(func, "__self__", None)
        return getattr(member, "__name__", None) or getattr(getattr(member, "fget", None), "__name__", "")
    return name


def _walk(obj: Any, out: List[Any]) -> List[Any]:
    if isinstance(obj, minitorch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _walk(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _walk(o, out)
    return out


def _map(obj: Any, fn: Callable) -> Any:
    if isinstance(obj, minitorch.Tensor):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _run(func: Callable, args: tuple, kwargs: dict) -> Any:
    """func on the local tensors (each DTensor is its C tensor with subclass dispatch off)."""
    with _C.DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


def _no_strategy(name: str) -> NotImplementedError:
    return NotImplementedError(f"Operator aten.{name}.default does not have a sharding strategy registered.")


def _operands(name: str, args: tuple, kwargs: dict) -> List[DTensor]:
    """The DTensor operands (checked: one mesh, no plain tensor but 0-dim ones)."""
    tensors = _walk((args, kwargs), [])
    dts = [t for t in tensors if isinstance(t, DTensor)]
    for t in tensors:
        if not isinstance(t, DTensor) and t.dim() > 0:
            raise RuntimeError(f"aten.{name}.default: got mixed torch.Tensor and DTensor, need to convert all "
                               "torch.Tensor to DTensor before calling distributed operators!")
    mesh = dts[0].device_mesh
    for d in dts[1:]:
        if d.device_mesh != mesh:
            raise RuntimeError("DTensor does not support cross-mesh operation yet! Got meshes: "
                               f"{mesh} {d.device_mesh}")
    return dts


def dispatch(func: Callable, args: tuple, kwargs: Dict[str, Any]) -> Any:
    name = _name(func)
    kind = getattr(func, "__name__", "")
    if kind == "__set__":
        return _run(func, args, kwargs)
    if name in _TO_FULL:
        return func(*_map(args, _full), **_map(kwargs, _full))
    if name.startswith(("_fused_", "_foreach_")):
        return _foreach(func, args, kwargs)
    rule = _RULES.get(name)
    pointwise = name in POINTWISE or name in _SAME_LAYOUT or (name.endswith("_") and name[:-1] in POINTWISE)
    if rule is None and pointwise:
        return _pointwise(func, name, args, kwargs)
    if name not in _shape_ops.STRIDED_AWARE:  # the other rules know Shard, Replicate and Partial
        if args and _strided(args[0]) and (name.endswith("_") or name.startswith("__i")
                                                            or name == "__setitem__"):
            raise _no_strategy(name)  # in place: a replicated copy would take the write
        args, kwargs = _map(args, _unstrided), _map(kwargs, _unstrided)
    if rule is not None:
        return rule(func, name, args, kwargs)
    dts = [t for t in _walk((args, kwargs), []) if isinstance(t, DTensor)]
    replicated = all(p.is_replicate() for d in dts for p in d.placements)
    if name not in _C.OPS and not name.startswith("__"):  # a member that is no op: on the local tensor
        out = _run(func, args, kwargs)
        if not _walk(out, []):
            return out
    else:
        _operands(name, args, kwargs)
        out = _run(func, args, kwargs) if replicated else None
    if not replicated:
        raise _no_strategy(name)
    mesh = dts[0].device_mesh  # all replicated: each rank computed the same whole result
    return _map(out, lambda t: t if isinstance(t, DTensor) else _wrap(
        t, _spec(mesh, [Replicate()] * mesh.ndim, _C.TensorBase.size(t))))


def _strided(t: Any) -> bool:
    return isinstance(t, DTensor) and any(isinstance(p, _StridedShard) for p in t.placements)


def _unstrided(t: Any) -> Any:
    """t with each _StridedShard mesh dimension replicated (a differentiable redistribution)."""
    if _strided(t):
        return _redistribute(t, [Replicate() if isinstance(p, _StridedShard) else p for p in t.placements])
    return t


def _full(t: Any) -> Any:
    if isinstance(t, DTensor):
        with minitorch.no_grad():
            return t.full_tensor()
    return t


def _broadcast_shape(tensors: Sequence[Any]) -> tuple:
    return tuple(np.broadcast_shapes(*[tuple(t.shape) for t in tensors]))


def _operand_layout(d: DTensor, target: Sequence[Placement], ndim: int) -> List[Placement]:
    """How operand d must lie for a pointwise result laid out by target (ndim dimensions): along
    each mesh dimension, sharded on its own dimension that the result's shard aligns with
    (broadcasting from the right), replicated where it broadcasts over it (missing or of size 1)."""
    off = ndim - d.dim()
    out: List[Placement] = []
    for p in target:
        if isinstance(p, (Shard, _StridedShard)):
            k = p.dim - off
            out.append(Replicate() if k < 0 or d.shape[k] == 1 else
                       Shard(k) if isinstance(p, Shard) else _StridedShard(k, split_factor=p.split_factor))
        else:
            out.append(p)
    return out


def _pointwise(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    dts = _operands(name, args, kwargs)
    inplace = dts[0] is (args[0] if args else None) and (name.endswith("_") and not name.endswith("__")
                                                         or name.startswith("__i"))
    shape = tuple(dts[0].shape) if inplace else _broadcast_shape(_walk((args, kwargs), []))
    # the operand laid out as the result will be: self in place, else the first of the result's shape
    main = dts[0] if inplace else next((d for d in dts if tuple(d.shape) == shape), dts[0])
    mesh = main.device_mesh
    target = list(main.placements)
    factors = ()  # operands kept replicated where the result is partial (a scaling's factors)
    if any(p.is_partial() for p in target):
        others = [a for a in _walk((args, kwargs), []) if a is not main]
        scalars = [a for a in (args[1:] if args else ()) if not isinstance(a, minitorch.Tensor)]
        if name in _ADDITIVE and not scalars and all(all(
                p.is_replicate() or p == q for p, q in zip(d.placements, target)) for d in dts):
            pass  # sums of parts; replicated operands are partitioned (divided) by the redistribution
        elif name in _SCALING and (main is args[0] or "mul" in name) and all(
                all(p.is_replicate() for p in d.placements) for d in others if isinstance(d, DTensor)):
            factors = tuple(others)  # a partial value times a replicated factor
        elif name in _UNARY_LINEAR and not others:
            pass
        elif inplace:
            raise _no_strategy(name)
        else:
            target = [Replicate() if p.is_partial() else p for p in target]

    def laid_out(t):
        if not isinstance(t, DTensor):
            return t
        layout = _operand_layout(t, target, len(shape))
        if any(t is f for f in factors):
            layout = [Replicate() if p.is_partial() else p for p in layout]
        return _operand(t, layout, target)

    out = _run(func, _map(args, laid_out), _map(kwargs, laid_out))
    if inplace:
        return dts[0]
    spec = _spec(mesh, target, shape)
    return _map(out, lambda t: t if isinstance(t, DTensor) else _wrap(t, spec))


def _vector_norm(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """The p-norm of all the elements: each rank's local norm, raised to p and summed over the
    sharded mesh dimensions (max, min for the infinite ones), then the p-th root: replicated.
    Over given dims: computed on the whole tensor."""
    dts = _operands(name, args, kwargs)
    self = args[0]
    ord_ = float(kwargs.get("ord", args[1] if len(args) > 1 else 2))
    dim = kwargs.get("dim", args[2] if len(args) > 2 else None)
    mesh = self.device_mesh
    whole = [Replicate()] * mesh.ndim
    if dim is not None or any(p.is_partial() for p in self.placements):
        if dim is not None:
            self = _redistribute(self, whole)
        else:
            self = _redistribute(self, [Replicate() if p.is_partial() else p for p in self.placements])
        args = (self,) + tuple(args[1:])
        if dim is not None:
            return _replicated(func, args, kwargs, dts)
    op = "max" if ord_ == float("inf") else "min" if ord_ == float("-inf") else "sum"
    if op != "sum" and _C.TensorBase.numel(self) == 0 and any(p.is_shard() for p in self.placements):
        # an empty shard: the identity of the combination (norms are >= 0)
        dtype = self.dtype if self.is_floating_point() else minitorch.get_default_dtype()
        local = minitorch.full((), 0.0 if op == "max" else float("inf"), dtype=dtype, device=self.device)
    else:
        local = _run(func, args, kwargs)
    if not any(p.is_shard() for p in self.placements):
        return _wrap(local, _spec(mesh, whole, _C.TensorBase.size(local)))
    parts = [Partial(op) if p.is_shard() else p for p in self.placements]
    if op != "sum":
        return _redistribute(_wrap(local, _spec(mesh, parts, ())), whole)
    powered = local if ord_ == 0 else local ** ord_
    total = _redistribute(_wrap(powered, _spec(mesh, parts, ())), whole)
    return total if ord_ == 0 else total ** (1.0 / ord_)


def _foreach(func: Callable, args: tuple, kwargs: dict) -> Any:
    """An optimizer's fused step or a _foreach_ op: elementwise on each tensor (a parameter, its
    gradient and its state laid out alike), so on the local tensors; list results laid out as the
    first list's tensors."""
    out = _run(func, args, kwargs)
    first = next((a for a in args if isinstance(a, (list, tuple))), None)
    if isinstance(out, (list, tuple)) and first is not None and len(out) == len(first):
        def laid_out(o, f):
            if isinstance(o, DTensor) or not isinstance(f, DTensor) or not isinstance(o, minitorch.Tensor):
                return o
            return _wrap(o, _spec(f.device_mesh, f.placements, f.shape, f.stride()))

        return type(out)(laid_out(o, f) for o, f in zip(out, first))
    return out


def _reduce_dims(args: tuple, kwargs: dict, ndim: int):
    """(the reduced dimensions, keepdim) of a sum/mean/amax/amin call."""
    dim = kwargs.get("dim", args[1] if len(args) > 1 and not isinstance(args[1], minitorch.dtype) else None)
    keepdim = bool(kwargs.get("keepdim", args[2] if len(args) > 2 else False))
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim)), keepdim
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted(d + ndim if d < 0 else d for d in dims), keepdim


def _reduction(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    dts = _operands(name, args, kwargs)
    self = args[0]
    op = {"sum": "sum", "mean": "sum", "amax": "max", "amin": "min"}[name]
    # a partial value reduces linearly (sum, mean of a sum) or alike (max of maxes): else whole first
    if any(p.is_partial() and (p.reduce_op != op) for p in self.placements):
        self = _redistribute(self, [Replicate() if p.is_partial() else p for p in self.placements])
        args = (self,) + tuple(args[1:])
    shape = tuple(self.shape)
    dims, keepdim = _reduce_dims(args, kwargs, len(shape))
    placements: List[Placement] = []
    sharded_reduced = False
    for p in self.placements:
        if isinstance(p, Shard) and p.dim in dims:
            placements.append(Partial(op))
            sharded_reduced = True
        elif isinstance(p, Shard):
            placements.append(Shard(p.dim - (0 if keepdim else sum(d < p.dim for d in dims))))
        else:
            placements.append(p)
    out_shape = tuple(1 if i in dims else s for i, s in enumerate(shape)) if keepdim else tuple(
        s for i, s in enumerate(shape) if i not in dims)
    if name == "mean" and sharded_reduced:  # the local sum over the global count: parts of the mean
        count = 1
        for d in dims:
            count *= shape[d]
        with _C.DisableTorchFunctionSubclass():
            local = minitorch.Tensor.sum(*args, **kwargs) / count
    else:
        local = _run(func, args, kwargs)
    del dts
    return _wrap(local, _spec(self.device_mesh, placements, out_shape))


# mm's rule per mesh dimension: (a's placement, b's) -> the result's, for what computes locally
_MM = {("R", "R"): Replicate(), ("S0", "R"): Shard(0), ("R", "S1"): Shard(1), ("S1", "S0"): Partial("sum"),
       ("P", "R"): Partial("sum"), ("R", "P"): Partial("sum")}
# a sharded contraction dimension against a replicated operand: that operand chunked alike
# (no communication) and the result partial, as PyTorch's strategy chooses
_MM_CHUNK = {("S1", "R"): (None, Shard(0)), ("R", "S0"): (Shard(1), None)}


def _code(p: Placement) -> str:
    return "R" if p.is_replicate() else f"S{p.dim}" if isinstance(p, Shard) else "P" if p == Partial("sum") else "?"


def _matmul(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    dts = _operands(name, args, kwargs)
    a, b = args[0], args[1]
    if not (isinstance(a, DTensor) and isinstance(b, DTensor)) or a.dim() != 2 or b.dim() != 2:
        if all(p.is_replicate() for d in dts for p in d.placements):
            return _replicated(func, args, kwargs, dts)
        raise _no_strategy(name)
    mesh = a.device_mesh
    pa, pb, out = list(a.placements), list(b.placements), []
    for i in range(mesh.ndim):
        chunk = _MM_CHUNK.get((_code(pa[i]), _code(pb[i])))
        if chunk is not None:
            pa[i], pb[i] = chunk[0] or pa[i], chunk[1] or pb[i]
        rule = _MM.get((_code(pa[i]), _code(pb[i])))
        if rule is None:  # computed whole along this mesh dimension
            pa[i], pb[i], rule = Replicate(), Replicate(), Replicate()
        out.append(rule)
    a, b = _operand(a, pa, out), _operand(b, pb, out)
    local = _run(func, (a, b) + tuple(args[2:]), kwargs)
    return _wrap(local, _spec(mesh, out, (a.shape[0], b.shape[1])))


def _linear(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    """linear(x, w, b) as x @ w.t() + b, each by its rule (2-D x)."""
    dts = _operands(name, args, kwargs)
    x, w = args[0], args[1]
    bias = kwargs.get("bias", args[2] if len(args) > 2 else None)
    if x.dim() != 2:
        if all(p.is_replicate() for d in dts for p in d.placements):
            return _replicated(func, args, kwargs, dts)
        raise _no_strategy(name)
    out = x @ w.t()
    return out if bias is None else out + bias


def _replicated(func: Callable, args: tuple, kwargs: dict, dts: Sequence[DTensor]) -> Any:
    mesh = dts[0].device_mesh
    return _map(_run(func, args, kwargs), lambda t: _wrap(t, _spec(mesh, [Replicate()] * mesh.ndim,
                                                                      _C.TensorBase.size(t))))


def _transpose(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
    _operands(name, args, kwargs)
    self = args[0]
    nd = self.dim()
    if name == "t" or name == "T":
        d0, d1 = (0, 1) if nd == 2 else (0, 0)
    else:
        d0 = kwargs.get("dim0", args[1] if len(args) > 1 else None)
        d1 = kwargs.get("dim1", args[2] if len(args) > 2 else None)
        d0, d1 = d0 + nd if d0 < 0 else d0, d1 + nd if d1 < 0 else d1
    swap = {d0: d1, d1: d0}
    placements = [Shard(swap.get(p.dim, p.dim)) if isinstance(p, Shard) else p for p in self.placements]
    shape, stride = list(self.shape), list(self.stride())
    shape[d0], shape[d1] = shape[d1], shape[d0]
    stride[d0], stride[d1] = stride[d1], stride[d0]
    local = _run(func, args, kwargs)
    return _wrap(local, _spec(self.device_mesh, placements, shape, stride))


_RULES: Dict[str, Callable] = {"sum": _reduction, "mean": _reduction, "amax": _reduction, "amin": _reduction,
                               "mm": _matmul, "_dense_mm": _matmul, "matmul": _matmul, "__matmul__": _matmul,
                               "t": _transpose, "T": _transpose, "transpose": _transpose,
                               "vector_norm": _vector_norm, "linalg_vector_norm": _vector_norm, "linear": _linear}


def _checked(rule: Callable) -> Callable:
    def run(func: Callable, name: str, args: tuple, kwargs: dict) -> Any:
        _operands(name, args, kwargs)
        return rule(func, name, args, kwargs)

    return run


_RULES.update({name: _checked(rule) for name, rule in _shape_ops.RULES.items()})
_RULES["__setitem__"] = _shape_ops._setitem  # its own checks, with PyTorch's messages for each case
_RULES.update({name: _checked(_random.random_op) for name in _random.RANDOM_OPS})
_RULES["dropout"] = _checked(_random.dropout)
