"""nn.Module: the base class of every layer, and the bookkeeping that makes a tree of them a model.

A Module keeps three ordered tables, filled by attribute assignment: `_parameters` (Parameters),
`_buffers` (tensors that are state but not learned) and `_modules` (child Modules). Everything else
here walks that tree: listing parameters, saving and loading a state_dict, moving to a device or
dtype, switching train/eval, printing. No tensor values are computed here; copies and conversions
are single tensor methods (`copy_`, `to`).
"""
from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any, Callable, Dict, Iterator, List, Optional, Set, Tuple

import minitorch
from minitorch import _C
from minitorch.nn.modules._backward_hook import BackwardHook
from minitorch.nn.parameter import Buffer, Parameter, UninitializedTensorMixin
from minitorch.utils.hooks import RemovableHandle

__all__ = ["Module"]

# The hook tables a module pickled by an older minitorch may lack (set empty on unpickling).
_HOOK_TABLES = (
    "_backward_hooks",
    "_backward_pre_hooks",
    "_state_dict_hooks",
    "_state_dict_pre_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
    "_forward_hooks_always_called",
)

# The state_dict key, after the module's prefix, under which get_extra_state()'s value is saved.
_EXTRA_STATE_KEY_SUFFIX = "_extra_state"

# The profiler asks each Module call to open a Python::<class> range while it records: one
# C call checks (off: the whole cost), one C call records the range around the call (on).
_trace_enabled = _C._trace_enabled
_trace_module_call = _C._trace_module_call

# minitorch.viz.trace sets this while it traces: each Module call marks its scope in it.
_viz_scope = None


# ---- hooks on every module (torch.nn.modules.module.register_module_*_hook) ----------------

_global_forward_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_forward_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_forward_hooks_with_kwargs: "OrderedDict[int, bool]" = OrderedDict()
_global_forward_hooks_always_called: "OrderedDict[int, bool]" = OrderedDict()
_global_backward_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_backward_pre_hooks: "OrderedDict[int, Callable]" = OrderedDict()
_global_hooked = False  # any of the above non-empty: a module's call takes the hooked path


class _GlobalHookHandle(RemovableHandle):
    """A handle whose remove() also updates whether any global hook is left."""

    def remove(self) -> None:
        super().remove()
        _update_global_hooked()


def _update_global_hooked() -> None:
    global _global_hooked
    _global_hooked = bool(_global_forward_pre_hooks or _global_forward_hooks or _global_backward_hooks
                          or _global_backward_pre_hooks)


def _add_global_hook(hooks: OrderedDict, hook: Callable, with_kwargs: bool = False,
                     always_call: bool = False) -> RemovableHandle:
    forward = hooks is _global_forward_hooks
    handle = Module._add_hook(hooks, _global_forward_hooks_with_kwargs if forward else OrderedDict(), hook, False,
                              with_kwargs, _global_forward_hooks_always_called if forward else None, always_call,
                              _GlobalHookHandle)
    _update_global_hooked()
    return handle


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """hook(module, args) -> None or new args, before every module's forward (before its own hooks)."""
    return _add_global_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook: Callable, *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """hook(module, args, output) -> None or new output, after every module's forward."""
    return _add_global_hook(_global_forward_hooks, hook, with_kwargs, always_call)


def register_module_full_backward_pre_hook(hook: Callable) -> RemovableHandle:
    """hook(module, grad_output) -> None or new grad_output, for every module."""
    return _add_global_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable) -> RemovableHandle:
    """hook(module, grad_input, grad_output) -> None or new grad_input, for every module."""
    return _add_global_hook(_global_backward_hooks, hook)


def _typename(obj: Any) -> str:
    """The type name PyTorch's error messages print for `obj`."""
    if isinstance(obj, _C.TensorBase):
        type_fn = getattr(obj, "type", None)
        return type_fn() if callable(type_fn) else type(obj).__name__
    module = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        name = type(obj).__name__
    if module in ("", "builtins"):
        return name
    return f"{module}.{name}"


def _addindent(text: str, spaces: int) -> str:
    """Indent every line of `text` but the first by `spaces` spaces."""
    first, *rest = text.split("\n")
    pad = " " * spaces
    return "\n".join([first] + [pad + line for line in rest])


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it expected and missed, and those it did not expect."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Module:
    """Base class for all neural network modules.

    Subclasses call `super().__init__()` first, then assign their Parameters, buffers and
    submodules as attributes, and define `forward`. Calling the module runs `forward`.
    """

    _version: int = 1
    training: bool

    def __init__(self) -> None:
        # Set through __dict__: our __setattr__ reads these tables, so they must exist first.
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()

    def __getstate__(self) -> Dict[str, Any]:
        # a module compiled in place pickles as the plain module, as PyTorch's does
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        # a module pickled before the backward hooks existed gets their empty tables
        self.__dict__.update(state)
        for name in _HOOK_TABLES:
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    def forward(self, *input: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # ---- calling ----------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # PyTorch's _wrapped_call_impl: a module compiled in place (Module.compile) runs its
        # compiled call, which runs _call_impl
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        hooked = (
            self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
            or _global_hooked
        )
        if _viz_scope is None:
            if not _trace_enabled():
                return self._call_with_hooks(args, kwargs) if hooked else self.forward(*args, **kwargs)
            # profiling: the range is opened and closed in C, around forward (no Python frame)
            if not hooked:
                return _trace_module_call(self, self.forward, args, kwargs)
            return _trace_module_call(self, self._call_with_hooks, (args, kwargs), None)
        return self._traced_call(args, kwargs)

    def _traced_call(self, args: tuple, kwargs: dict) -> Any:
        """A call inside minitorch.viz.trace: the call's module scope is marked (and profiled)."""
        scope = _viz_scope
        scope.push(self)
        try:
            return _trace_module_call(self, self._call_with_hooks, (args, kwargs), None)
        finally:
            scope.pop()

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        for hook in list(_global_forward_pre_hooks.values()):  # the global ones first, as PyTorch's
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of "
                            f"(new_args, new_kwargs), but got {res}."
                        )
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = None
        if self._backward_hooks or self._backward_pre_hooks or _global_backward_hooks or _global_backward_pre_hooks:
            bw_hook = BackwardHook(self, [*_global_backward_hooks.values(), *self._backward_hooks.values()],
                                   [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()])
            args = bw_hook.setup_input_hook(args)
        # forward hooks: the global ones, then the module's; those registered with always_call
        # also run when forward (or an earlier hook) raises, with the result so far
        hooks = [(i, h, i in _global_forward_hooks_with_kwargs, i in _global_forward_hooks_always_called)
                 for i, h in _global_forward_hooks.items()]
        hooks += [(i, h, i in self._forward_hooks_with_kwargs, i in self._forward_hooks_always_called)
                  for i, h in self._forward_hooks.items()]
        result = None
        called = set()
        try:
            result = self.forward(*args, **kwargs)
            for hook_id, hook, with_kwargs, _ in hooks:
                res = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
                called.add(hook_id)
                if res is not None:
                    result = res
        except Exception:
            for hook_id, hook, with_kwargs, always_call in hooks:
                if always_call and hook_id not in called:
                    try:
                        hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
                    except Exception as e:  # noqa: BLE001 - the first error is the one raised
                        warnings.warn("forward hook with ``always_call=True`` raised an exception that was silenced "
                                      f"as another error was raised in forward: {e}", stacklevel=2)
            raise
        if bw_hook is not None:
            if not isinstance(result, (minitorch.Tensor, tuple)):
                warnings.warn(
                    "For backward hooks to be called, module output should be a Tensor or a tuple of "
                    f"Tensors but received {type(result)}",
                    stacklevel=2,
                )
            result = bw_hook.setup_output_hook(result)
        return result

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """hook(module, args) -> None or new args; with_kwargs: hook(module, args, kwargs)."""
        return self._add_hook(
            self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs, hook, prepend, with_kwargs
        )

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """hook(module, args, output) -> None or new output; with_kwargs adds kwargs before output;
        always_call: also when forward raises."""
        return self._add_hook(self._forward_hooks, self._forward_hooks_with_kwargs, hook, prepend, with_kwargs,
                              self._forward_hooks_always_called, always_call)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) -> None or a new grad_input, called once the
        gradients of the module's inputs are computed (None where an input needs none)."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        return self._add_hook(self._backward_hooks, OrderedDict(), hook, prepend, False)

    def register_backward_hook(self, hook: Callable) -> RemovableHandle:
        """The deprecated form of register_full_backward_hook (hook(module, grad_input, grad_output)).

        PyTorch attaches it to the last autograd node of forward; here it sees the module's
        inputs' gradients, which is what it gives for a module whose forward is one op.
        """
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = False
        return self._add_hook(self._backward_hooks, OrderedDict(), hook, False, False)

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) -> None or a new grad_output, called when the gradients of
        the module's outputs are computed, before those of its inputs."""
        return self._add_hook(self._backward_pre_hooks, OrderedDict(), hook, prepend, False)

    @staticmethod
    def _add_hook(
        hooks: OrderedDict, kw_ids: OrderedDict, hook: Callable, prepend: bool, with_kwargs: bool,
        always_ids: Optional[OrderedDict] = None, always_call: bool = False, handle_cls: type = RemovableHandle
    ) -> RemovableHandle:
        """hook under a new handle's id in hooks, marked in kw_ids (with_kwargs) and always_ids
        (always_call: forward hooks), which the handle's remove() clears too."""
        handle = handle_cls(hooks, kw_ids, *(() if always_ids is None else (always_ids,)))
        hooks[handle.id] = hook
        if with_kwargs:
            kw_ids[handle.id] = True
        if always_call:
            always_ids[handle.id] = True
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    # ---- registration -----------------------------------------------------------------------

    def _check_new_name(self, kind: str, name: Any, table: dict) -> None:
        """PyTorch's checks on the name of a new parameter, buffer or module."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Optional[Parameter]) -> None:
        """Add a Parameter (or None, a declared but absent one) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_new_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param is not None and getattr(param, "grad_fn", None) is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(
        self, name: str, tensor: Optional[minitorch.Tensor], persistent: bool = True
    ) -> None:
        """Add a tensor that is state but not a parameter; persistent ones go in the state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_new_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, minitorch.Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Optional["Module"]) -> None:
        """Add a child module, reachable as attribute `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path `target` ("" is self)."""
        mod: Module = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Put `module` at dotted path `target`; the parent must exist (and, if strict, the old one)."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError("`" + "module" + f"` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def _get_member(self, target: str) -> Tuple["Module", str]:
        """The module holding dotted path `target`'s last name, and that name (which it has)."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        return mod, name

    def get_parameter(self, target: str) -> Parameter:
        """The Parameter at dotted path `target`."""
        mod, name = self._get_member(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> minitorch.Tensor:
        """The buffer at dotted path `target`."""
        mod, name = self._get_member(target)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # ---- attribute protocol -----------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        # Only reached when normal lookup fails: the three tables hold the registered state.
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _forget(self, name: str, *tables: str) -> None:
        for table in tables:
            if table == "__dict__":
                self.__dict__.pop(name, None)
            elif table == "_non_persistent_buffers_set":
                self._non_persistent_buffers_set.discard(name)
            else:
                self.__dict__[table].pop(name, None)

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, "__dict__", "_buffers", "_modules", "_non_persistent_buffers_set")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(
                name, "__dict__", "_parameters", "_buffers", "_non_persistent_buffers_set"
            )
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        is_buffer = isinstance(value, Buffer)
        if is_buffer or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, minitorch.Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            if is_buffer:
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self._forget(name, "__dict__", "_parameters", "_modules")
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self) -> List[str]:
        keys = set(dir(type(self))) | set(self.__dict__)
        keys |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    # ---- walking the tree -------------------------------------------------------------------

    def named_modules(
        self, memo: Optional[Set["Module"]] = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[Tuple[str, "Module"]]:
        """(dotted name, module) for self and every descendant, depth first, each module once."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                sub_prefix = prefix + "." + name if prefix else name
                yield from module.named_modules(memo, sub_prefix, remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[Tuple[str, "Module"]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def _named_members(
        self, table: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[Tuple[str, Any]]:
        # Tensors are compared by identity: a Tensor's __eq__ is elementwise, not a key.
        seen: Set[int] = set()
        if recurse:
            walk = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            walk = iter([(prefix, self)])
        for module_prefix, module in walk:
            for name, value in module.__dict__[table].items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (module_prefix + "." + name if module_prefix else name), value

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[Tuple[str, Parameter]]:
        """(dotted name, Parameter) in registration order, a shared Parameter once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[Tuple[str, minitorch.Tensor]]:
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[minitorch.Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call fn on every child (recursively) and then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- state_dict -------------------------------------------------------------------------

    def _local_state(self) -> Dict[str, minitorch.Tensor]:
        """Parameters, then persistent buffers, that are not None: what this module saves."""
        state = {k: v for k, v in self._parameters.items() if v is not None}
        for k, v in self._buffers.items():
            if v is not None and k not in self._non_persistent_buffers_set:
                state[k] = v
        return state

    def get_extra_state(self) -> Any:
        """State beyond parameters and buffers to save; a module that has some overrides this
        and set_extra_state, and state_dict then holds it under `<prefix>_extra_state`."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def set_extra_state(self, state: Any) -> None:
        """Restore what get_extra_state returned, from a loaded state_dict."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
            "to report this bug."
        )

    def _has_own(self, method: str) -> bool:
        return getattr(type(self), method, None) is not getattr(Module, method)

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, prefix, keep_vars) -> None, run before this module's state is saved."""
        return self._add_hook(self._state_dict_pre_hooks, OrderedDict(), hook, False, False)

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata) -> None; it may edit state_dict in place."""
        hook._from_public_api = True
        return self._add_hook(self._state_dict_hooks, OrderedDict(), hook, False, False)

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs) -> None, run before this module loads its entries."""
        return self._add_hook(
            self._load_state_dict_pre_hooks, OrderedDict(), functools.partial(hook, self), False, False
        )

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """hook(module, incompatible_keys) -> None, run after this module and its children loaded;
        it may edit incompatible_keys' lists in place, which strict then sees."""
        return self._add_hook(self._load_state_dict_post_hooks, OrderedDict(), hook, False, False)

    def _save_to_state_dict(self, destination: Dict[str, Any], prefix: str, keep_vars: bool) -> None:
        """This module's own entries (not its children's), as PyTorch's, which subclasses may override."""
        for name, value in self._local_state().items():
            destination[prefix + name] = value if keep_vars else value.detach()
        if self._has_own("get_extra_state"):
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(
        self, *args: Any, destination: Optional[Dict[str, Any]] = None, prefix: str = "", keep_vars: bool = False
    ) -> Dict[str, Any]:
        """An OrderedDict from dotted name to tensor, detached unless keep_vars (sharing storage)."""
        if args:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                " for details.",
                FutureWarning,
                stacklevel=2,
            )
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if result is not None:
                    destination = result
            elif result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(
        self,
        state_dict: Mapping,
        prefix: str,
        local_metadata: Dict[str, Any],
        strict: bool,
        missing_keys: List[str],
        unexpected_keys: List[str],
        error_msgs: List[str],
    ) -> None:
        """Load this module's own entries of state_dict (not its children's), as PyTorch's, which
        subclasses may override; keys missing or unexpected are listed, errors collected."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local = self._local_state()
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, minitorch.Tensor):  # a sparse tensor is one too, as in PyTorch
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor or '
                    f"Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if param.dim() == 0 and value.dim() == 1 and value.shape[0] == 1:
                value = value[0]  # a 0-d parameter loads from a one-element vector, as in PyTorch
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from "
                    f"checkpoint, the shape in current model is {param.shape}."
                )
                continue
            try:
                with minitorch.no_grad():
                    if minitorch.__future__.get_swap_module_params_on_conversion():
                        self._swap_loaded(param, value, assign)
                    elif assign:
                        self._assign_loaded(name, param, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{value.size()}, an exception occurred : {ex.args}."
                )
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if self._has_own("set_extra_state"):
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if not key.startswith(prefix) or key == extra_key:
                    continue
                head, dot, _ = key[len(prefix):].partition(".")
                if (dot and head not in self._modules) or (not dot and head not in local):
                    unexpected_keys.append(key)

    @staticmethod
    def _swap_loaded(param: minitorch.Tensor, value: minitorch.Tensor, assign: bool) -> None:
        """load_state_dict under __future__.set_swap_module_params_on_conversion(True): param
        swaps contents with param.module_load(value, assign), made a Parameter where param is."""
        loaded = param.module_load(value, assign=assign)
        if loaded is value or loaded is param:
            raise RuntimeError("module_load returned one of self or other, please .detach() the result if "
                               "returning one of the inputs in module_load")
        if isinstance(param, Parameter):
            if not isinstance(loaded, Parameter):
                loaded = Parameter(loaded, requires_grad=param.requires_grad)
            else:
                loaded.requires_grad_(param.requires_grad)
        minitorch.utils.swap_tensors(param, loaded)

    def _assign_loaded(self, name: str, param: minitorch.Tensor, value: minitorch.Tensor) -> None:
        if name in self._parameters:
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=param.requires_grad)
            else:
                value.requires_grad_(param.requires_grad)
            self._parameters[name] = value
        else:
            self._buffers[name] = value

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy state_dict's tensors into this module's parameters and buffers, in place.

        With strict, missing or unexpected keys are an error; a shape mismatch always is.
        assign=True replaces the tensors instead of copying into them.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: List[str] = []
        unexpected: List[str] = []
        errors: List[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata  # type: ignore[attr-defined]

        def load(module: Module, local_dict: Mapping, prefix: str) -> None:
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_dict, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_dict = {k: v for k, v in local_dict.items() if k.startswith(child_prefix)}
                    load(child, child_dict, child_prefix)
            incompatible = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, incompatible) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not "
                        "expected to return new values, if incompatible_keys need to be modified, "
                        "it should be done inplace."
                    )

        load(self, state_dict, "")
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.insert(0, f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.insert(0, f"Missing key(s) in state_dict: {keys}. ")
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # ---- modes and gradients ----------------------------------------------------------------

    def train(self, mode: bool = True) -> "Module":
        """Set training mode on self and every descendant; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop every parameter's grad, or with set_to_none=False zero it in place."""
        for param in self.parameters():
            grad = param.grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if grad.requires_grad:
                    grad.requires_grad_(False)
                grad.zero_()

    # ---- device and dtype -------------------------------------------------------------------

    def _apply(self, fn: Callable[[minitorch.Tensor], minitorch.Tensor], recurse: bool = True) -> "Module":
        """Replace every parameter, grad and buffer t by fn(t), children first.

        A Parameter stays the same object where the Tensor lets its data be swapped (`.data = `),
        as PyTorch does, so an optimizer built before `.to()` still holds the model's parameters.
        """
        if recurse:
            for module in self.children():
                module._apply(fn)
        swap = minitorch.__future__.get_swap_module_params_on_conversion()
        overwrite = minitorch.__future__.get_overwrite_module_params_on_conversion()
        for key, param in self._parameters.items():
            if param is None:
                continue
            with minitorch.no_grad():
                new_data = fn(param)
            if swap:
                self._swap_applied(key, param, new_data, fn)
                continue
            if overwrite:
                target = Parameter(new_data, param.requires_grad)
            else:
                target = param if new_data is param else _rebind(param, new_data)
            self._parameters[key] = target
            grad = param.grad
            if grad is not None:
                with minitorch.no_grad():
                    new_grad = fn(grad)
                if target is param and new_grad is not grad and not overwrite:
                    # the gradient object stays too, as PyTorch's `param.grad.data = fn(grad)`
                    try:
                        grad.data = new_grad
                    except (AttributeError, TypeError, RuntimeError):
                        target.grad = new_grad
                elif new_grad is not grad or target is not param:
                    target.grad = new_grad
        for key, buf in self._buffers.items():
            if buf is None:
                continue
            if isinstance(buf, UninitializedTensorMixin):
                # a Lazy module's buffer stays uninitialised, with the new dtype and device
                with minitorch.no_grad():
                    buf.data = fn(buf.detach())
                continue
            self._buffers[key] = fn(buf)
        return self

    def _swap_applied(self, key: str, param: Parameter, new_data: minitorch.Tensor, fn: Callable) -> None:
        """_apply under __future__.set_swap_module_params_on_conversion(True): param keeps its
        identity and takes new_data's contents (utils.swap_tensors), its grad likewise."""
        grad = param.grad
        try:
            if grad is not None:
                param.grad = None
            minitorch.utils.swap_tensors(param, Parameter(new_data, requires_grad=param.requires_grad))
        except Exception as e:
            if grad is not None:
                param.grad = grad
            raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}") from e
        if grad is not None:
            with minitorch.no_grad():
                new_grad = fn(grad)
            new_grad.requires_grad_(grad.requires_grad)
            try:
                minitorch.utils.swap_tensors(grad, new_grad)
            except Exception as e:
                raise RuntimeError(f"_apply(): Couldn't swap {self._get_name()}.{key}.grad") from e
            param.grad = grad

    def to(self, *args: Any, **kwargs: Any) -> "Module":
        """to(device), to(dtype), to(tensor), to(device, dtype): move/cast parameters and buffers.

        A dtype applies to floating-point tensors only; integer buffers keep theirs.
        """
        device, dtype, non_blocking, memory_format = _parse_to(args, kwargs)
        if dtype is not None and not (
            dtype.is_floating_point or getattr(dtype, "is_complex", False)
        ):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got desired dtype="
                + str(dtype)
            )

        def convert(t: minitorch.Tensor) -> minitorch.Tensor:
            to_args: List[Any] = []
            if device is not None:
                to_args.append(device)
            if dtype is not None and t.dtype.is_floating_point:
                to_args.append(dtype)
            if memory_format is not None and t.dim() in (4, 5):  # as PyTorch: conv weights, images
                return t.to(*to_args, non_blocking=non_blocking, memory_format=memory_format)
            if not to_args:
                return t
            if non_blocking:
                return t.to(*to_args, non_blocking=True)
            return t.to(*to_args)

        return self._apply(convert)

    def type(self, dst_type: Any) -> "Module":
        """Cast every parameter and buffer with Tensor.type(dst_type); returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def to_empty(self, *, device: Any, recurse: bool = True) -> "Module":
        """Give every parameter and buffer new, uninitialised memory on `device` (no copy)."""
        return self._apply(lambda t: minitorch.empty_like(t, device=device), recurse=recurse)

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """torch.nn.Module.compile: minitorch.compile(self._call_impl, *args, **kwargs), kept as
        self._compiled_call_impl, which calls to self then run. minitorch.compile checks the
        arguments as torch.compile does and runs the call as it is (minitorch runs eagerly), as a
        compiled call (compiler.py)."""
        self._compiled_call_impl = minitorch.compile(self._call_impl, *args, **kwargs)

    def share_memory(self) -> "Module":
        """Tensor.share_memory_ on every parameter and buffer; returns self.

        As Optimizer.share_memory does, a tensor whose class has no share_memory_ is left as it is.
        """
        return self._apply(lambda t: t.share_memory_() if hasattr(t, "share_memory_") else t)

    def cpu(self) -> "Module":
        return self._apply(lambda t: t.to("cpu"))

    def cuda(self, device: Optional[Any] = None) -> "Module":
        target = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int) else device)
        return self._apply(lambda t: t.to(target))

    def float(self) -> "Module":
        return self._apply(lambda t: t.to(minitorch.float32) if t.dtype.is_floating_point else t)

    def double(self) -> "Module":
        return self._apply(lambda t: t.to(minitorch.float64) if t.dtype.is_floating_point else t)

    def half(self) -> "Module":
        return self._apply(lambda t: t.to(minitorch.float16) if t.dtype.is_floating_point else t)

    def bfloat16(self) -> "Module":
        return self._apply(lambda t: t.to(minitorch.bfloat16) if t.dtype.is_floating_point else t)

    # ---- printing ---------------------------------------------------------------------------

    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """One or more lines shown inside this module's repr; subclasses override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        lines = extra.split("\n") if extra else []
        children = [
            "(" + name + "): " + _addindent(repr(module), 2) for name, module in self._modules.items()
        ]
        if not lines and not children:
            body = ""
        elif len(lines) == 1 and not children:
            body = lines[0]
        else:
            body = "\n  " + "\n  ".join(lines + children) + "\n"
        return self._get_name() + "(" + body + ")"

    def _repr_html_(self) -> str:
        from minitorch._html import module_html  # Jupyter: the module tree with parameter shapes

        return module_html(self)


_data_settable: Optional[bool] = None


def _rebind(param: Parameter, new_data: minitorch.Tensor) -> Parameter:
    """Point `param` at new_data's storage if the Tensor allows it, else wrap it in a new Parameter.

    Only a true rebinding counts (param then shares new_data's memory, as after PyTorch's
    set_data); a `.data` setter that copies or refuses leaves the fallback.
    """
    global _data_settable
    requires_grad = param.requires_grad  # read first: a failing setter may have changed it
    if _data_settable is None:
        descriptor = None
        for klass in type(param).__mro__:
            if "data" in klass.__dict__:
                descriptor = klass.__dict__["data"]
                break
        # Without a data descriptor, `param.data = x` would only add an instance attribute.
        _data_settable = descriptor is not None and hasattr(descriptor, "__set__")
    if _data_settable:
        try:
            param.data = new_data
            rebound = param.data_ptr() == new_data.data_ptr() and param.dtype == new_data.dtype
        except (AttributeError, TypeError, RuntimeError):
            rebound = False
        param.requires_grad_(requires_grad)
        if rebound:
            return param
    return Parameter(new_data, requires_grad)


def _parse_to(args: tuple, kwargs: dict) -> Tuple[Any, Any, bool, Any]:
    """(device, dtype, non_blocking, memory_format) from Module.to's arguments, as Tensor.to
    reads them."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("copy", None)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    dtype_type = type(minitorch.float32)
    for arg in args:
        if isinstance(arg, bool):
            non_blocking = arg
        elif isinstance(arg, dtype_type):
            dtype = arg
        elif isinstance(arg, _C.TensorBase):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, int):
            device = f"cuda:{arg}"
        elif arg is not None:
            device = arg
    return device, dtype, non_blocking, memory_format
