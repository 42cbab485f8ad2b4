"""torch.fx._symbolic_trace: Tracer runs a module's forward on Proxies and records a Graph;
symbolic_trace wraps the result in a GraphModule; wrap() marks a global function to be recorded
as one call_function node instead of being traced through.

How torch.relu(proxy) becomes a node. PyTorch's functions consult __torch_function__; minitorch's
do not (its C bindings parse arguments with no hook, see minitorch/overrides.py), and giving
every call a Python-level check would cost every program, traced or not. So the hook exists only
while a trace runs: _Patcher replaces the public functions of minitorch, minitorch.nn.functional,
special, linalg and fft (and the same functions bound under other names in the traced forward's
globals, and wrap()'d globals) with wrappers that record a call_function node when any argument,
however nested, is a Proxy, and otherwise call the original; Tensor's public methods likewise
record a call_method when a real tensor's method gets a Proxy (torch.ones(3).to(x.device)). It also replaces nn.Module.__call__
(to route submodule calls through Tracer.call_module) and nn.Module.__getattr__ (so parameters
read as attributes become get_attr nodes). Everything is restored when the trace ends, on errors
too, so code outside a trace pays nothing. Nodes always name the original function as target.
The cost of this choice: a minitorch function applied to a Proxy outside symbolic_trace (or
Transformer.transform, which patches the same way) is not recorded.
"""
from __future__ import annotations

import builtins
import functools
import inspect
import sys
import threading
import types
from typing import Any, Callable, Dict, List, Optional, Tuple

import minitorch
import minitorch.nn.functional  # noqa: F401  (the namespaces are patched by attribute)
from minitorch.nn import Module, Parameter, Sequential

from .graph import Graph
from .node import Argument, map_aggregate
from .proxy import Proxy, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "is_fx_tracing"]


class _PHBase:
    """The concrete_args value that keeps an argument a placeholder."""

    def __repr__(self) -> str:
        return "PH"


PH = _PHBase()

# Public names that are not tensor operations: never recorded, always run.
_NOT_RECORDED = {"is_tensor", "is_storage", "typename", "wrap"}

_namespaces_cache: Optional[List[Tuple[Any, str]]] = None
_public_names: Optional[Dict[int, str]] = None


def _namespaces() -> List[Tuple[Any, str]]:
    """The modules whose public functions are recorded, and how PyTorch spells each."""
    global _namespaces_cache
    if _namespaces_cache is None:
        import minitorch.fft
        import minitorch.linalg
        import minitorch.special

        _namespaces_cache = [(minitorch, "torch"), (minitorch.nn.functional, "torch.nn.functional"),
                             (minitorch.special, "torch.special"), (minitorch.linalg, "torch.linalg"),
                             (minitorch.fft, "torch.fft")]
    return _namespaces_cache


def _is_function(obj: Any) -> bool:
    return isinstance(obj, (types.FunctionType, types.BuiltinFunctionType))


def _public_functions(ns: Any) -> Dict[str, Any]:
    return {name: obj for name, obj in vars(ns).items()
            if not name.startswith("_") and name not in _NOT_RECORDED and _is_function(obj)}


def _public_name(fn: Any) -> Optional[str]:
    """torch.relu for minitorch.relu, torch.nn.functional.relu for F.relu, None for a function
    that is none of minitorch's public ones."""
    global _public_names
    if _public_names is None:
        names: Dict[int, str] = {}
        for ns, prefix in _namespaces():
            for name, obj in _public_functions(ns).items():
                if not isinstance(obj, _RecordingWrapper):
                    names.setdefault(id(obj), f"{prefix}.{name}")
        _public_names = names
    return _public_names.get(id(fn))


class _RecordingWrapper:
    """Stands for fn during a trace: a call with a Proxy among its arguments is recorded as a
    call_function node of fn, any other call runs fn."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tracer = _proxy_tracer(args, kwargs)
        if tracer is None:
            return self.fn(*args, **kwargs)
        return tracer.create_proxy("call_function", self.fn, args, kwargs)

    # equal to fn (and hashed as it), so `target == torch.sigmoid` holds inside a Transformer
    def __eq__(self, other: Any) -> bool:
        return other is self or other is self.fn or (isinstance(other, _RecordingWrapper) and other.fn is self.fn)

    def __hash__(self) -> int:
        return hash(self.fn)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else types.MethodType(self, obj)


class _RecordingMethod:
    """Stands for a Tensor method during a trace: tensor.name(..., proxy, ...) is recorded as a
    call_method node on the tensor (a constant of the graph); read from the class, it is the
    original method."""

    def __init__(self, name: str, fn: Any) -> None:
        self.name = name
        self.fn = fn

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self.fn
        bound = self.fn.__get__(obj, objtype)
        name = self.name

        def call(*args: Any, **kwargs: Any) -> Any:
            tracer = _proxy_tracer(args, kwargs)
            if tracer is None:
                return bound(*args, **kwargs)
            return tracer.create_proxy("call_method", name, (obj,) + args, kwargs)

        return call


def _proxy_tracer(args: tuple, kwargs: dict) -> Optional[TracerBase]:
    for a in args:
        if isinstance(a, Proxy):
            return a.tracer
    found: List[TracerBase] = []

    def visit(x: Any) -> Any:
        if not found and isinstance(x, Proxy):
            found.append(x.tracer)
        return x

    map_aggregate((args, kwargs), visit)
    return found[0] if found else None


# (globals dict, name) of each function wrap() marked.
_wrapped_globals: List[Tuple[Dict[str, Any], str]] = []


def wrap(fn_or_name: Any) -> Any:
    """Marks a module-level function (by name or by the function itself, called at module scope)
    so that a trace records each call of it as one call_function node."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise AssertionError("Unsupported type for global function! Must be either a callable or string name")
    name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    if not isinstance(fn_or_name, str) and name == "<lambda>":
        raise AssertionError("wrap must be called at the top level of a module")
    frame = sys._getframe(1)
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_globals.append((frame.f_globals, name))
    return fn_or_name


_tracing_depth = 0


def is_fx_tracing() -> bool:
    """Whether a symbolic trace is running."""
    return _tracing_depth > 0


class _Patcher:
    """Swaps attributes for the length of a with-block and puts every one back on the way out."""

    def __init__(self) -> None:
        self._saved: List[Tuple[Any, str, Any, bool]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        is_dict = isinstance(owner, dict)
        had = name in owner if is_dict else name in vars(owner)
        old = (owner.get(name) if is_dict else vars(owner).get(name))
        self._saved.append((owner, name, old, had))
        if is_dict:
            owner[name] = value
        else:
            setattr(owner, name, value)

    def __enter__(self) -> "_Patcher":
        return self

    def __exit__(self, *exc: Any) -> None:
        for owner, name, old, had in reversed(self._saved):
            if isinstance(owner, dict):
                if had:
                    owner[name] = old
                else:
                    owner.pop(name, None)
            elif had:
                setattr(owner, name, old)
            else:
                delattr(owner, name)
        self._saved.clear()


def _patch_functions(patcher: _Patcher, fn_globals: Optional[Dict[str, Any]]) -> None:
    """Installs the recording wrappers (see the module docstring), Tensor methods' included."""
    _public_name(None)  # the name table is built from the unpatched namespaces
    wrappers: Dict[int, _RecordingWrapper] = {}
    for ns, _ in _namespaces():
        for name, fn in _public_functions(ns).items():
            wrapper = wrappers.setdefault(id(fn), _RecordingWrapper(fn))
            patcher.set(ns, name, wrapper)
    if fn_globals is not None:
        for name, value in list(fn_globals.items()):
            if id(value) in wrappers and wrappers[id(value)].fn is value:
                patcher.set(fn_globals, name, wrappers[id(value)])
    for name in dir(minitorch.Tensor):
        method = getattr(minitorch.Tensor, name)
        if not name.startswith("_") and (_is_function(method) or inspect.ismethoddescriptor(method)):
            patcher.set(minitorch.Tensor, name, _RecordingMethod(name, method))
    for globals_, name in _wrapped_globals:
        fn = globals_.get(name, getattr(builtins, name, None))
        if fn is not None and not isinstance(fn, _RecordingWrapper):
            patcher.set(globals_, name, _RecordingWrapper(fn))


def _patch_modules(patcher: _Patcher, tracer: "Tracer") -> None:
    """Module calls and attribute reads go through the tracer, in the tracing thread only (a
    module another thread runs meanwhile runs as usual)."""
    orig_call = Module.__call__
    orig_getattr = Module.__getattr__
    cache: Dict[str, Proxy] = {}
    tracing_thread = threading.get_ident()

    def module_call(mod: Module, *args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() != tracing_thread:
            return orig_call(mod, *args, **kwargs)

        def forward(*a: Any, **k: Any) -> Any:
            return orig_call(mod, *a, **k)

        return tracer.call_module(mod, forward, args, kwargs)

    def module_getattr(mod: Module, name: str) -> Any:
        value = orig_getattr(mod, name)
        if threading.get_ident() != tracing_thread:
            return value
        return tracer.getattr(name, value, cache)

    patcher.set(Module, "__call__", module_call)
    patcher.set(Module, "__getattr__", module_getattr)


class Tracer(TracerBase):
    """Records a module's forward (or a function) as a Graph: see torch.fx.Tracer."""

    def __init__(self, autowrap_modules: Tuple[Any, ...] = (), autowrap_functions: Tuple[Callable, ...] = (),
                 param_shapes_constant: bool = False) -> None:
        self._autowrap_functions = tuple(autowrap_functions)
        self.param_shapes_constant = param_shapes_constant
        self.proxy_buffer_attributes = False
        self.root: Module = Module()
        self.graph = Graph()
        self.submodule_paths: Optional[Dict[int, str]] = None
        self.tensor_attrs: Dict[int, str] = {}

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """minitorch.nn's own modules (but Sequential) are called, not traced into."""
        return type(m).__module__.startswith("minitorch.nn") and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        if self.submodule_paths is None:
            self.submodule_paths = {id(m): name for name, m in self.root.named_modules(remove_duplicate=False)}
        path = self.submodule_paths.get(id(mod))
        if path is None:
            raise NameError("module is not installed as a submodule")
        return path

    def call_module(self, m: Module, forward: Callable[..., Any], args: Tuple[Any, ...],
                    kwargs: Dict[str, Any]) -> Any:
        """A leaf becomes one call_module node; any other module's forward is traced through."""
        name = self.path_of_module(m)
        if not self.is_leaf_module(m, name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: Dict[str, Any]) -> Any:
        """A parameter (and, with proxy_buffer_attributes, a buffer) read as a module attribute
        becomes a get_attr Proxy; other attributes are returned as they are."""
        if isinstance(attr_val, Parameter):
            names = self._attr_names("_param_names", self.root.named_parameters)
        elif self.proxy_buffer_attributes and isinstance(attr_val, minitorch.Tensor):
            names = self._attr_names("_buffer_names", self.root.named_buffers)
        else:
            return attr_val
        name = names.get(id(attr_val))
        if name is None:
            return attr_val
        if name not in parameter_proxy_cache:
            parameter_proxy_cache[name] = self.create_proxy("get_attr", name, (), {})
        return parameter_proxy_cache[name]

    def _attr_names(self, slot: str, named: Callable[[], Any]) -> Dict[int, str]:
        """id -> qualified name of the root's parameters (or buffers), made once per trace."""
        table = self.__dict__.get(slot)
        if table is None:
            table = {id(v): k for k, v in named()}
            self.__dict__[slot] = table
        return table

    def create_arg(self, a: Any) -> Argument:
        """Besides TracerBase's forms: a submodule becomes its path as a get_attr, a parameter,
        buffer or tensor attribute of the root a get_attr node, another tensor a new
        _tensor_constant attribute of the root."""
        if isinstance(a, Module):
            return self.create_node("get_attr", self.path_of_module(a), (), {})
        if isinstance(a, minitorch.Tensor):
            name = self.tensor_attrs.get(id(a))
            if name is None:
                i = 0
                while hasattr(self.root, f"_tensor_constant{i}"):
                    i += 1
                name = f"_tensor_constant{i}"
                setattr(self.root, name, a)
                self.tensor_attrs[id(a)] = name
            return self.create_node("get_attr", name, (), {})
        if isinstance(a, type) or _is_function(a):
            return a
        return super().create_arg(a)

    def _collect_tensor_attrs(self) -> None:
        self.tensor_attrs = {}
        for prefix, mod in self.root.named_modules():
            for name, value in vars(mod).items():
                if isinstance(value, minitorch.Tensor):
                    self.tensor_attrs[id(value)] = f"{prefix}.{name}" if prefix else name
            for name, value in list(mod._parameters.items()) + list(mod._buffers.items()):
                if value is not None:
                    self.tensor_attrs[id(value)] = f"{prefix}.{name}" if prefix else name

    def _placeholders(self, fn: Callable, skip_self: bool,
                      concrete_args: Optional[Dict[str, Any]]) -> Tuple[List[Any], Dict[str, Any]]:
        """One placeholder per argument of fn, as positional values and keyword-only ones; an
        argument given in concrete_args is that value (kept as a placeholder with it as default,
        so callers may still pass it)."""
        concrete_args = dict(concrete_args or {})
        params = list(inspect.signature(fn).parameters.values())[1 if skip_self else 0:]
        values: List[Any] = []
        for p in params:
            if p.kind is inspect.Parameter.VAR_KEYWORD or p.kind is inspect.Parameter.VAR_POSITIONAL:
                raise NotImplementedError(f"symbolic_trace: *args and **kwargs parameters ({p.name}) are not supported")
            if p.name in concrete_args and concrete_args[p.name] is not PH:
                value = concrete_args.pop(p.name)
                self.create_node("placeholder", p.name, (value,), {}, name=p.name)
                values.append(value)
                continue
            concrete_args.pop(p.name, None)
            default = () if p.default is inspect.Parameter.empty else (p.default,)
            values.append(self.create_proxy("placeholder", p.name, default, {}, name=p.name,
                                            type_expr=fn.__annotations__.get(p.name)))
        if concrete_args:
            raise RuntimeError(f"concrete_args names arguments that {fn.__name__} does not take: "
                               f"{sorted(concrete_args)}")
        n_positional = sum(p.kind is not inspect.Parameter.KEYWORD_ONLY for p in params)
        return values[:n_positional], {p.name: v for p, v in zip(params[n_positional:], values[n_positional:])}

    def trace(self, root: Any, concrete_args: Optional[Dict[str, Any]] = None) -> Graph:
        """Runs root's forward (or root itself, a function) on Proxies and returns the Graph."""
        if isinstance(root, Module):
            self.root = root
            fn = type(root).forward
            fn_globals = getattr(fn, "__globals__", None)
            args_prefix: Tuple[Any, ...] = (root,)
        else:
            self.root = Module()
            fn = root
            fn_globals = getattr(fn, "__globals__", None)
            args_prefix = ()
        self.graph = Graph(tracer_cls=type(self))
        self.submodule_paths = None
        self.__dict__.pop("_param_names", None)
        self.__dict__.pop("_buffer_names", None)
        self._collect_tensor_attrs()
        args, kwargs = self._placeholders(fn, bool(args_prefix), concrete_args)
        global _tracing_depth
        _tracing_depth += 1
        with _Patcher() as patcher:
            _patch_functions(patcher, fn_globals)
            for extra in self._autowrap_functions:
                if fn_globals is not None and fn_globals.get(extra.__name__) is extra:
                    patcher.set(fn_globals, extra.__name__, _RecordingWrapper(extra))
            _patch_modules(patcher, self)
            try:
                result = fn(*args_prefix, *args, **kwargs)
            finally:
                _tracing_depth -= 1
            self.create_node("output", "output", (self.create_arg(result),), {},
                             type_expr=fn.__annotations__.get("return"))
        self.submodule_paths = None
        return self.graph


def symbolic_trace(root: Any, concrete_args: Optional[Dict[str, Any]] = None) -> Any:
    """The GraphModule of root (a Module or a function) traced with Tracer."""
    from .graph_module import GraphModule

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
