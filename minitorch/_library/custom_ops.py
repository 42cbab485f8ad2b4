"""custom_op's CustomOpDef, and the Autograd kernel of an op defined from Python: an
autograd.Function whose forward runs the op below the Autograd key and whose backward is the one
register_autograd gave (or, for a custom_op without one, PyTorch's error)."""
from __future__ import annotations

import inspect
from typing import Callable, Optional

from .. import _C, _ops
from ..autograd.function import Function

_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA"}


def device_keys(device_types) -> list:
    """The dispatch keys of device types: "cpu", "cuda", a list of them, or None (every device)."""
    from .. import device

    if device_types is None:
        return ["CPU", "CUDA"]
    types = [device_types] if isinstance(device_types, str) else list(device_types)
    keys = []
    for t in types:
        kind = device(t).type  # PyTorch's RuntimeError for a device type it does not know
        if kind not in _DEVICE_KEYS:
            raise RuntimeError(f"minitorch.library: no kernels for device type {kind}")
        keys.append(_DEVICE_KEYS[kind])
    return keys


def _no_formula(op) -> Callable:
    def backward(ctx, *grads):
        raise RuntimeError(f"Trying to backward through {op!r} but no autograd formula was registered. "
                           "Please use register_autograd to add one.")

    return backward


def autograd_kernel(op: "_ops.OpDef", backward: Optional[Callable] = None,
                    setup_context: Optional[Callable] = None) -> Callable:
    """op's Autograd kernel: its results are linked to a node whose backward is `backward` (None:
    one that raises, as a custom_op's without register_autograd)."""
    params = op.schema.arguments
    kw_only = [p.name for p in params if p.kwarg_only]
    takes_kw_inputs = setup_context is not None and "keyword_only_inputs" in inspect.signature(
        setup_context).parameters

    def forward(ctx, *values):
        out = op.redispatch(list(values))
        if setup_context is not None:
            pos, kw = op.split(list(values))
            if takes_kw_inputs:
                setup_context(ctx=ctx, inputs=pos, keyword_only_inputs=kw, output=out)
            else:
                setup_context(ctx=ctx, inputs=pos, output=out)
        return out

    user_backward = backward if backward is not None else _no_formula(op)

    def backward_(ctx, *grads):
        res = user_backward(ctx, *grads)
        res = res if isinstance(res, tuple) else (res,)
        if kw_only and len(res) == len(params) - len(kw_only):
            res = res + (None,) * len(kw_only)  # keyword-only inputs get no gradient
        return res

    name = f"GeneratedBackwardFor_{op.ns}_{op.name}_{op.overload or 'default'}"
    fn_class = type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward_)})

    def run(*args, **kwargs):
        return fn_class.apply(*op.bind(args, kwargs))

    return run


class CustomOpDef:
    """What custom_op returns: the op, callable, and where its kernels, fake kernel and gradient
    are registered."""

    def __init__(self, opdef: "_ops.OpDef", init_fn: Callable, lib):
        self._opdef = opdef
        self._init_fn = init_fn
        self._lib = lib
        self._name = opdef.name
        self._namespace = opdef.ns
        self._backward: Optional[Callable] = None
        self._setup_context: Optional[Callable] = None
        self.__name__ = opdef.name
        self.__doc__ = init_fn.__doc__

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._opdef.qualname})>"

    @property
    def _qualname(self) -> str:
        return self._opdef.qualname

    @property
    def _opoverload(self) -> "_ops.OpOverload":
        return _ops.OpOverload(self._namespace, self._name, "", self._opdef, str(self._opdef.schema))

    def __call__(self, *args, **kwargs):
        return self._opdef(*args, **kwargs)

    def register_kernel(self, device_types, fn: Optional[Callable] = None, /):
        """fn becomes the op's kernel for device_types ("cpu", "cuda", a list, or None: all)."""

        def register(func):
            for key in device_keys(device_types):
                self._replace(key, func)
            return func

        return register(fn) if fn is not None else register

    def register_fake(self, fn: Callable, /) -> Callable:
        """The op's fake kernel (see minitorch.library's note)."""
        self._replace("Meta", fn)
        return fn

    def register_autograd(self, backward: Callable, /, *, setup_context: Optional[Callable] = None) -> None:
        """backward(ctx, *grads) gives one gradient per input (None for a non-Tensor one), from
        what setup_context(ctx, inputs, output) kept on ctx."""
        if not callable(backward):
            raise TypeError(f"Expected backward to be a function, got {type(backward)}")
        if setup_context is not None and not callable(setup_context):
            raise TypeError(f"Expected setup_context to be a function, got {type(setup_context)}")
        self._backward, self._setup_context = backward, setup_context
        self._replace("Autograd", autograd_kernel(self._opdef, backward, setup_context))

    def _replace(self, key: str, fn: Callable) -> None:
        """fn in place of the kernel this op's own library has for key (without the warning of
        an override: the op's parts are registered here, once each)."""
        self._lib._check_alive()
        _ops.drop_kernels(self._lib.__dict__, self._opdef.qualname, key)
        _ops.push_kernel(self._opdef.qualname, key, fn, self._lib.__dict__)

    def _check_aliasing(self, inputs: list, out) -> None:
        """PyTorch's rule for a custom op: no result is an input, or a view of one, or of another result."""
        outs = out if isinstance(out, (tuple, list)) else (out,)
        seen = [(t.untyped_storage().data_ptr(), t) for t in inputs if t.numel()]
        for o in outs:
            if not isinstance(o, _C.TensorBase):
                continue
            ptr = o.untyped_storage().data_ptr() if o.numel() else None
            if any(o is t or (ptr is not None and ptr == p) for p, t in seen):
                raise RuntimeError(
                    f"{self._init_fn.__name__} (with implementation in {inspect.getmodule(self._init_fn)}): The "
                    "output of this custom operator (1) must not also be an input to this custom operator and "
                    "(2) may not alias any inputs to this custom operator or other returns. The most common way "
                    "to trigger this error is if we have y = custom_op(x) and y and x are the same Tensor. "
                    "Instead, return a clone of y")
            seen.append((ptr, o))
