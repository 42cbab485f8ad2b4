"""torch.distributed.tensor.DTensor: a tensor laid out over a DeviceMesh, each mesh dimension
saying how (placement_types.py), and what makes one (distribute_tensor, DTensor.from_local).

A DTensor is a Tensor subclass whose C tensor is this rank's local tensor: the autograd engine,
the kernels and the optimizers' fused steps see the local tensor, so that a DTensor parameter
accumulates its local gradient and an optimizer steps its shard. Its Python face is the global
tensor (shape, size(), stride(), numel()), its .grad a DTensor laid out as it is. Operators reach
it through __torch_function__ and go to _dispatch.py, which says which it computes and how.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Optional, Sequence, Tuple

import minitorch
from minitorch import _C
from minitorch.autograd import Function
from minitorch.distributed.tensor import _redistribute as _rd
from minitorch.distributed.tensor.placement_types import Partial, Placement, Replicate, Shard, _StridedShard

__all__ = ["DTensor", "distribute_module", "distribute_tensor"]

_base_grad = _C.TensorBase.grad  # the C tensor's own .grad (the local gradient)


class _Spec(NamedTuple):
    mesh: Any
    placements: Tuple[Placement, ...]
    shape: Tuple[int, ...]
    stride: Tuple[int, ...]


def _contiguous_stride(shape: Sequence[int]) -> Tuple[int, ...]:
    stride, acc = [], 1
    for s in reversed(shape):
        stride.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(stride))


def _spec(mesh, placements, shape, stride=None) -> _Spec:
    shape = tuple(int(s) for s in shape)
    return _Spec(mesh, tuple(placements), shape, tuple(stride) if stride is not None else _contiguous_stride(shape))


def _local_size(t) -> Tuple[int, ...]:
    """The C tensor's own sizes (a DTensor's local shape)."""
    return tuple(_C.TensorBase.size(t))


def _wrap(local, spec: _Spec) -> "DTensor":
    """A DTensor over local (a plain tensor, kept in the autograd graph) laid out by spec."""
    with _C.DisableTorchFunctionSubclass():
        t = local.as_subclass(DTensor)
    t.__dict__["_spec"] = spec
    return t


def _leaf(local, spec: _Spec, requires_grad: bool) -> "DTensor":
    """A DTensor leaf (a parameter's) over local's memory."""
    t = _C.TensorBase._make_subclass(DTensor, local.detach(), requires_grad)
    t.__dict__["_spec"] = spec
    return t


class _FromLocal(Function):
    """from_local: an alias of the local tensor; the gradient comes back as the local one."""

    @staticmethod
    def forward(ctx, local):
        return local.view_as(local)

    @staticmethod
    def backward(ctx, grad):
        return grad


class _Redistribute(Function):
    """forward: local laid out by src -> by dst; backward: the gradient (laid out by dst, its
    Partial ones replicated) back to src's layout (its Partial ones replicated too: a replicated
    gradient is what a partial value's parts each receive, as PyTorch's). grad_partial: the mesh
    dimensions along which the gradient that comes back is a partial sum (an operand replicated
    there for an op whose result is not: each rank's gradient is its own part)."""

    @staticmethod
    def forward(ctx, local, src: _Spec, dst: _Spec, grad_partial: Tuple[int, ...] = ()):
        ctx.src, ctx.dst, ctx.grad_partial = src, dst, grad_partial
        return _rd.transform(local, src.shape, src.mesh, src.placements, dst.placements)

    @staticmethod
    def backward(ctx, grad):
        def unpartial(ps):
            return tuple(Replicate() if p.is_partial() else p for p in ps)

        src, dst = ctx.src, ctx.dst
        came = tuple(Partial() if i in ctx.grad_partial else p for i, p in enumerate(unpartial(dst.placements)))
        back = _rd.transform(grad, src.shape, src.mesh, came, unpartial(src.placements))
        return back, None, None, None


def _redistribute(dt: "DTensor", placements: Sequence[Placement], grad_partial: Sequence[int] = ()) -> "DTensor":
    spec = dt._spec
    dst = _spec(spec.mesh, placements, spec.shape, spec.stride)
    grad_partial = tuple(i for i in grad_partial if dst.placements[i].is_replicate())
    if dst.placements == spec.placements and not (
            grad_partial and minitorch.is_grad_enabled() and _C.TensorBase.requires_grad.__get__(dt)):
        return dt
    with _C.DisableTorchFunctionSubclass():
        local = _Redistribute.apply(dt.view_as(dt), spec, dst, grad_partial)
    return _wrap(local, dst)


def _operand(dt: "DTensor", placements: Sequence[Placement], out: Sequence[Placement]) -> "DTensor":
    """dt laid out by placements as an operand of an op whose result lies as out: where it is
    replicated and the result is not, its gradient comes back as a partial sum (reduced)."""
    return _redistribute(dt, placements, [i for i, (p, q) in enumerate(zip(placements, out))
                                          if p.is_replicate() and not q.is_replicate()])


class DTensor(minitorch.Tensor):
    """A global tensor of shape `shape` laid out over device_mesh by placements (one per mesh
    dimension); to_local() is this rank's part, full_tensor() the whole."""

    _spec: _Spec
    _saved_by_reduce = True  # minitorch.save pickles it by __reduce_ex__ (its local tensor, its layout)

    # ---- what it is: the global tensor (the local one while subclass dispatch is off, where the
    # code running is a local computation's: _dispatch's, a Python-written op's) ----

    @property
    def device_mesh(self):
        return self._spec.mesh

    @property
    def placements(self) -> Tuple[Placement, ...]:
        return self._spec.placements

    def _global(self) -> bool:
        return _C._has_torch_function((self,))

    @property
    def shape(self) -> "minitorch.Size":
        return minitorch.Size(self._spec.shape) if self._global() else _C.TensorBase.shape.__get__(self)

    def size(self, dim: Optional[int] = None):
        if not self._global():
            return _C.TensorBase.size(self) if dim is None else _C.TensorBase.size(self, dim)
        if dim is None:
            return minitorch.Size(self._spec.shape)
        return self._spec.shape[_dim(dim, len(self._spec.shape))]

    def stride(self, dim: Optional[int] = None):
        if not self._global():
            return _C.TensorBase.stride(self) if dim is None else _C.TensorBase.stride(self, dim)
        if dim is None:
            return self._spec.stride
        return self._spec.stride[_dim(dim, len(self._spec.stride))]

    def dim(self) -> int:
        return len(self._spec.shape)

    ndimension = dim

    @property
    def ndim(self) -> int:
        return len(self._spec.shape)

    def numel(self) -> int:
        if not self._global():
            return _C.TensorBase.numel(self)
        n = 1
        for s in self._spec.shape:
            n *= s
        return n

    nelement = numel

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def __repr__(self) -> str:
        with _C.DisableTorchFunctionSubclass():
            local = minitorch.Tensor.__repr__(self.view_as(self).detach())
        return f"DTensor(local_tensor={local}, device_mesh={self._spec.mesh!r}, placements={self._spec.placements})"

    __str__ = __repr__

    # ---- its gradient: the local one, laid out as the DTensor ----

    @property
    def grad(self) -> Optional["DTensor"]:
        g = _base_grad.__get__(self)
        if g is None or isinstance(g, DTensor):
            return g
        cached = self.__dict__.get("_grad_view")
        if cached is not None and cached[0] is g:
            return cached[1]
        view = _leaf(g, self._spec, False)
        self.__dict__["_grad_view"] = (g, view)
        return view

    @grad.setter
    def grad(self, value) -> None:
        if value is not None and not isinstance(value, DTensor):
            raise RuntimeError("assigned grad expected to be a DTensor of the parameter's layout, got a plain Tensor")
        self.__dict__.pop("_grad_view", None)
        _base_grad.__set__(self, value)

    # ---- conversions ----

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements: Optional[Sequence[Placement]] = None, *,
                   run_check: bool = False, shape: Optional[Sequence[int]] = None,
                   stride: Optional[Sequence[int]] = None) -> "DTensor":
        """The DTensor whose part on this rank is local_tensor (every rank calls it); its global
        shape is local_tensor's with each sharded dimension times its mesh dimension's size,
        unless shape (and stride) are given. Differentiable: the gradient comes back local."""
        from minitorch.distributed.device_mesh import _mesh_resources

        mesh = device_mesh if device_mesh is not None else _mesh_resources.get_current_mesh()
        placements = _rd.normalize(placements if placements is not None else [Replicate()] * mesh.ndim,
                                   local_tensor.dim(), mesh.ndim)
        if shape is not None:
            gshape = tuple(int(s) for s in shape)
            gstride = tuple(stride) if stride is not None else _contiguous_stride(gshape)
        else:
            gshape, gstride = list(local_tensor.shape), list(local_tensor.stride())
            for i, p in enumerate(placements):
                if isinstance(p, (Shard, _StridedShard)):
                    w = mesh.size(i)
                    for k in range(len(gstride)):
                        if k != p.dim and gstride[k] >= gstride[p.dim]:
                            gstride[k] *= w
                    gshape[p.dim] *= w
            gshape, gstride = tuple(gshape), tuple(gstride)
        if run_check:
            for i, p in enumerate(placements):
                if p.is_replicate():  # every rank of the mesh dimension gets its first rank's values
                    group = mesh.get_group(i)
                    with minitorch.no_grad():
                        from minitorch import distributed as dist

                        dist.broadcast(local_tensor, src=group._ranks[0], group=group)
        with _C.DisableTorchFunctionSubclass():
            local = _FromLocal.apply(local_tensor)
        return _wrap(local, _spec(mesh, placements, gshape, gstride))

    def to_local(self, *, grad_placements: Optional[Sequence[Placement]] = None):
        """This rank's local tensor (differentiable: its gradient becomes this DTensor's)."""
        with _C.DisableTorchFunctionSubclass():
            return self.view_as(self)

    def redistribute(self, device_mesh=None, placements: Optional[Sequence[Placement]] = None, *,
                     async_op: bool = False, forward_dtype=None, backward_dtype=None) -> "DTensor":
        """The same global tensor laid out by placements (collectives over the mesh's dimensions
        whose placement changes); differentiable."""
        mesh = device_mesh if device_mesh is not None else self._spec.mesh
        if mesh != self._spec.mesh:
            raise NotImplementedError("Cross device mesh comm not supported yet!")
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        placements = _rd.normalize(placements, len(self._spec.shape), mesh.ndim)
        for p in placements:
            if p.is_partial() and not any(q == p for q in self._spec.placements) and not all(
                    q.is_replicate() for q in self._spec.placements):
                raise RuntimeError("Can not redistribute to Partial, redistributing to Partial is for internal use "
                                   "only!")
        return _redistribute(self, placements)

    def full_tensor(self, *, grad_placements: Optional[Sequence[Placement]] = None):
        """The whole global tensor on every rank (differentiable)."""
        return _redistribute(self, [Replicate()] * self._spec.mesh.ndim).to_local()

    def __deepcopy__(self, memo: dict) -> "DTensor":
        if id(self) in memo:
            return memo[id(self)]
        with _C.DisableTorchFunctionSubclass():
            local = self.detach().clone()
        t = _leaf(local, self._spec, _C.TensorBase.requires_grad.__get__(self))
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, protocol: int):
        """Pickled (minitorch.save) as this rank's local tensor and its layout, the mesh by its
        ranks: each rank loads its own part back into the same mesh (_rebuild_dtensor)."""
        spec = self._spec
        with _C.DisableTorchFunctionSubclass():
            local = self.detach()
            requires_grad = self.requires_grad
        mesh = (spec.mesh.device_type, spec.mesh.mesh.tolist(), spec.mesh.mesh_dim_names)
        layout = (mesh, tuple(_placement_code(p) for p in spec.placements), spec.shape, spec.stride)
        state = {k: v for k, v in self.__dict__.items() if k not in ("_spec", "_grad_view")}
        return (_rebuild_dtensor, (local, layout, requires_grad, state))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        from minitorch.distributed.tensor import _dispatch

        return _dispatch.dispatch(func, args, kwargs or {})


def _placement_code(p: Placement) -> tuple:
    """A placement as plain data (what a pickle may hold under weights_only)."""
    if isinstance(p, Shard):
        return ("S", p.dim)
    if isinstance(p, _StridedShard):
        return ("SS", p.dim, p.split_factor)
    if isinstance(p, Partial):
        return ("P", p.reduce_op)
    return ("R",)


def _rebuild_dtensor(local, layout: tuple, requires_grad: bool, state: dict) -> "DTensor":
    """A pickled DTensor: local (this rank's part) laid out by layout over this process's mesh
    of those ranks (a new one when there is none: then every rank loads together)."""
    from minitorch.distributed.device_mesh import _rebuild_mesh

    (device_type, ranks, names), codes, shape, stride = layout
    kinds = {"S": Shard, "P": Partial, "R": Replicate, "SS": lambda d, f: _StridedShard(d, split_factor=f)}
    placements = [kinds[c[0]](*c[1:]) for c in codes]
    t = _leaf(local, _spec(_rebuild_mesh(device_type, ranks, names), placements, shape, stride), requires_grad)
    t.__dict__.update(state)
    return t


def _allow_loading() -> None:
    from minitorch.serialization import _unpickler

    _unpickler.library_globals[f"{__name__}._rebuild_dtensor"] = _rebuild_dtensor


def _dim(dim: int, ndim: int) -> int:
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], "
                         f"but got {dim})")
    return dim + ndim if dim < 0 else dim


def distribute_tensor(tensor, device_mesh=None, placements: Optional[Sequence[Placement]] = None, *,
                      src_data_rank: Optional[int] = 0) -> DTensor:
    """tensor (the whole, on every rank) laid out over device_mesh by placements: a leaf DTensor
    holding this rank's part. src_data_rank=0: every rank's part comes from the mesh's first rank's
    tensor (broadcast along each mesh dimension); None: from this rank's own tensor."""
    from minitorch.distributed.device_mesh import _mesh_resources

    if isinstance(tensor, DTensor):
        raise ValueError("distribute_tensor expects a torch.Tensor, but got a DTensor: call redistribute instead")
    mesh = device_mesh if device_mesh is not None else _mesh_resources.get_current_mesh()
    placements = _rd.normalize(placements if placements is not None else [Replicate()] * mesh.ndim,
                               tensor.dim(), mesh.ndim)
    for p in placements:
        if p.is_partial():
            raise RuntimeError("distribute_tensor does not support Partial placements; use DTensor.from_local")
    with minitorch.no_grad():
        local = tensor.detach()
        if src_data_rank is not None and mesh.size() > 1:
            from minitorch import distributed as dist

            local = local.contiguous().clone()
            for i in range(mesh.ndim):
                group = mesh.get_group(i)
                if group.size() > 1:
                    dist.broadcast(local, src=group._ranks[0], group=group)
        for i, p in enumerate(placements):
            if isinstance(p, (Shard, _StridedShard)):
                local = _rd.shard_part(local, p, mesh, i)
        local = local.contiguous()
    return _leaf(local, _spec(mesh, placements, tuple(tensor.shape), tuple(tensor.stride())), tensor.requires_grad)


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None, output_fn=None):
    """module with its parameters and buffers made DTensors (every rank calls it): partition_fn(name,
    submodule, device_mesh) lays out each submodule's own as it likes, and whatever it leaves
    plain is replicated; input_fn(module, inputs, device_mesh) and output_fn(module, outputs,
    device_mesh) run before and after each forward (their results, when not None, replace the
    inputs, the outputs). Returns module."""
    from minitorch import nn
    from minitorch.distributed.device_mesh import _mesh_resources

    mesh = device_mesh if device_mesh is not None else _mesh_resources.get_current_mesh()
    whole = [Replicate()] * mesh.ndim
    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, mesh)
        for key, p in list(sub._parameters.items()):
            if p is not None and not isinstance(p, DTensor):
                sub.register_parameter(key, nn.Parameter(distribute_tensor(p.data, mesh, whole), p.requires_grad))
        for key, b in list(sub._buffers.items()):
            if b is not None and not isinstance(b, DTensor):
                sub._buffers[key] = distribute_tensor(b, mesh, whole)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs, mesh))
    return module


_allow_loading()
