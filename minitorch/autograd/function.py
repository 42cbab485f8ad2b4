"""autograd.Function: an op written in Python, with its own forward and backward.

forward runs with grad mode off; its tensor outputs are linked to a node (named after the
class, as PyTorch's `MyFnBackward`) whose backward calls the class's backward with the ctx.
"""
from __future__ import annotations

import functools
from typing import Any, Tuple

from .. import _C
from .._grad_mode import no_grad
from . import forward_ad, graph


def _unpacked(unpack_hook, packed):
    t = unpack_hook(packed)
    if not isinstance(t, _C.TensorBase):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                        f"{type(t).__name__}")
    return t


class FunctionCtx:
    def save_for_backward(self, *tensors) -> None:
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.TensorBase):
                raise TypeError(f"save_for_backward can only save variables, but argument {k} is of "
                                f"type {type(t).__name__}")
        if graph._hooks_active():  # saved_tensors_hooks: the ctx keeps what pack gives
            with no_grad():
                self._packed = tuple(None if t is None else graph._pack(t) for t in tensors)
            self.to_save, self._saved_versions = (), ()
            return
        self._packed = None
        self.to_save = tensors
        # Each tensor's version now: one changed in place before backward reads it is an error
        # (as for the saved tensors of built-in ops), not a silently wrong gradient.
        self._saved_versions = tuple(None if t is None else t._version for t in tensors)

    def save_for_forward(self, *tensors) -> None:
        """Keeps tensors for jvp, where ctx.saved_tensors gives them."""
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, _C.TensorBase):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; but got {type(t).__name__} "
                                f"at position {k}")
        self._for_forward = tensors

    @property
    def saved_tensors(self) -> Tuple:
        if getattr(self, "_in_jvp", False):
            return getattr(self, "_for_forward", ())
        packed = getattr(self, "_packed", None)
        if packed is not None:
            return tuple(None if p is None else _unpacked(*p) for p in packed)
        saved = getattr(self, "to_save", ())
        for t, version in zip(saved, getattr(self, "_saved_versions", ())):
            if t is not None:
                _C._check_saved_version(t, version)
        return saved

    def mark_non_differentiable(self, *tensors) -> None:
        self.non_differentiable = tensors

    def mark_dirty(self, *tensors) -> None:
        """Says forward changed these inputs in place: each must be returned as an output, and
        comes back as itself, its history now this Function's (PyTorch's rules and errors)."""
        self.dirty_tensors = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value


class _Ctx(FunctionCtx):
    def __init__(self, fn, n_inputs):
        self._fn = fn
        self._n_inputs = n_inputs
        self.needs_input_grad = ()

    def _do_backward(self, *grads):
        # grads come for the recorded outputs; backward takes one per forward output, as
        # PyTorch's: zeros for a tensor marked non-differentiable or one that got no gradient
        # (unless set_materialize_grads(False)), None for an output that is not a tensor
        materialize = getattr(self, "materialize_grads", True)
        full = []
        for slot, meta in self._outputs:
            g = grads[slot] if slot is not None else None
            if g is None and meta is not None and (materialize or slot is None):
                g = _C.zeros(meta[0], dtype=meta[1], device=meta[2])
            full.append(g)
        res = self._fn._backward_impl()(self, *full)
        if not isinstance(res, tuple):
            res = (res,)
        if len(res) > self._n_inputs and all(g is None for g in res[self._n_inputs:]):
            res = res[:self._n_inputs]  # extra trailing Nones are allowed, as PyTorch's
        if len(res) != self._n_inputs:
            raise RuntimeError(f"function {self._fn.__name__}Backward returned an incorrect number of "
                               f"gradients (expected {self._n_inputs}, got {len(res)})")
        return res


class Function:
    """Subclass with staticmethods forward(ctx, *args) and backward(ctx, *grad_outputs), then call
    MyFunction.apply(*args)."""

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward  # PyTorch's other name for it: a subclass may define either

    @staticmethod
    def setup_context(ctx: Any, inputs: Tuple[Any, ...], output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def _backward_impl(cls):
        """backward, or vjp where a subclass defines only that (PyTorch's alias)."""
        if cls.backward is Function.backward and "vjp" in _own_names(cls):
            return cls.vjp
        return cls.backward

    @classmethod
    def apply(cls, *args):
        ctx = _Ctx(cls, len(args))
        ctx.needs_input_grad = tuple(isinstance(a, _C.TensorBase) and a.requires_grad for a in args)
        with no_grad():
            if cls.setup_context is Function.setup_context:
                out = cls.forward(ctx, *args)
            else:  # forward(*args) without ctx; setup_context fills ctx from the inputs and output
                out = cls.forward(*args)
                cls.setup_context(ctx, args, out)
            # An input returned as it is comes back as a new view of it (PyTorch's
            # _view_as_self_with_no_grad): linking the input itself to the node would make a leaf
            # a non-leaf and the node its own input, a cycle never freed. An input marked dirty
            # (changed in place) comes back as itself, its history this node's.
            inputs = {id(a) for a in args if isinstance(a, _C.TensorBase)}
            skip = {id(t) for t in getattr(ctx, "non_differentiable", ())}
            dirty = {id(t) for t in getattr(ctx, "dirty_tensors", ())}
            returned = {id(o) for o in (out if isinstance(out, tuple) else (out,))}
            if not dirty <= returned:
                raise RuntimeError("Some elements marked as dirty during the forward method were not returned as "
                                   "output. The inputs that are modified inplace must all be outputs of the Function.")

            def fresh(o):
                if id(o) not in inputs or id(o) in dirty:
                    return o
                view = o.view_as(o)
                if id(o) in skip:  # marked non-differentiable: so is its view
                    skip.add(id(view))
                return view

            out = tuple(fresh(o) for o in out) if isinstance(out, tuple) else fresh(out)
        outs = out if isinstance(out, tuple) else (out,)
        tensors_out = [o for o in outs if isinstance(o, _C.TensorBase)]
        if _C.is_grad_enabled() and any(ctx.needs_input_grad):
            record = [o for o in tensors_out if id(o) not in skip]
            inputs = [a if isinstance(a, _C.TensorBase) else None for a in args]
            slots = {id(o): j for j, o in enumerate(record)}
            ctx._outputs = [
                (slots.get(id(o)), (o.shape, o.dtype, o.device) if isinstance(o, _C.TensorBase) else None)
                for o in outs
            ]
            _C._function_record(ctx, cls.__name__ + "Backward", inputs, record, [id(o) in dirty for o in record])
            if dirty and getattr(ctx, "_saved_versions", ()):
                # a dirty tensor saved in forward is saved as the output it became (PyTorch
                # saves after the outputs are wrapped): at the version the recording gave it
                ctx._saved_versions = tuple(t._version if t is not None and id(t) in dirty else v
                                            for t, v in zip(ctx.to_save, ctx._saved_versions))
        if cls.jvp is not Function.jvp and forward_ad._state.level >= 0:
            out = _with_tangents(cls, ctx, args, out)
        return out


def _own_names(cls) -> set:
    """The attributes cls or a base below Function defines."""
    names: set = set()
    for klass in cls.__mro__:
        if klass is Function:
            break
        names.update(vars(klass))
    return names


def _with_tangents(cls, ctx, args, out):
    """Forward mode through a Function with jvp: its outputs become duals of the open level whose
    tangents are jvp(ctx, *input tangents) (zeros for an input without one, as PyTorch
    materializes them), unless no input has a tangent."""
    tangents = [forward_ad._tangent_of(a) if isinstance(a, _C.TensorBase) else None for a in args]
    if all(t is None for t in tangents):
        return out
    tangents = [_C.zeros(a.shape, dtype=a.dtype, device=a.device) if t is None and isinstance(a, _C.TensorBase) else t for a, t in zip(args, tangents)]
    ctx._in_jvp = True
    try:
        with no_grad():
            res = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
        ctx._for_forward = ()
    outs = out if isinstance(out, tuple) else (out,)
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"function {cls.__name__} returned an incorrect number of forward gradients (expected "
                           f"{len(outs)}, got {len(res)})")
    duals = tuple(forward_ad.make_dual(o.detach(), t) if isinstance(o, _C.TensorBase) and t is not None else o
                  for o, t in zip(outs, res))
    return duals if isinstance(out, tuple) else duals[0]


_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """Passes its inputs through; differentiating it raises: it stands behind the results of a
    @once_differentiable backward run while a graph is being built (create_graph=True)."""

    @staticmethod
    def forward(ctx, *tensors):
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_TWICE)


def once_differentiable(fn):
    """Decorates a Function's backward that is not itself differentiable: it runs without
    recording, and when a graph is being built over it (create_graph=True with a gradient that
    requires grad), its results come back linked to a node that raises if differentiated, rather
    than as constants whose gradient would silently be missing."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not _C.is_grad_enabled() or not any(isinstance(a, _C.TensorBase) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        slots = [k for k, o in enumerate(outs) if isinstance(o, _C.TensorBase) and o.is_floating_point()]
        if not slots:
            return outputs
        linked = _DelayedError.apply(*[outs[k].detach().requires_grad_(True) for k in slots])
        linked = linked if isinstance(linked, tuple) else (linked,)
        outs = list(outs)
        for k, t in zip(slots, linked):
            outs[k] = t
        return outs[0] if single else tuple(outs)

    return wrapper
