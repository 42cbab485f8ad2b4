"""minitorch.jit: torch.jit's entry points. trace and trace_module record one call through the
dispatcher's Tracer key and return a TracedModule (or, for a function, a ScriptFunction) that
replays the recorded graph, with .graph and .code (jit/_trace.py, jit/_graph.py); script returns
a RecursiveScriptModule / ScriptFunction that runs the Python code eagerly, with .code (its source)
and no graph (jit/_script.py); save and load write and read a zip archive in PyTorch's layout
(jit/_serialization.py). The decorators leave functions alone, annotate and Attribute keep their
values, fork runs its function at once and returns a completed Future, isinstance checks typing
containers element by element, freeze and optimize_for_inference give the (eval-mode) module
itself, and the fusion and optimization switches are kept and change nothing."""
from __future__ import annotations

import builtins
import collections
import contextlib
import inspect
import types
import typing
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ..futures import Future
from ..nn.modules.module import Module
from . import _trace
from ._script import (RecursiveScriptModule, ScriptFunction, ScriptModule, TopLevelTracedModule,  # noqa: F401
                      TracedModule)
from ._serialization import load as _load
from ._serialization import save  # noqa: F401
from ._trace import TracerWarning, TracingCheckError  # noqa: F401

Final = typing.Final


def _deprecated(what: str, instead: str = "Please switch to `torch.compile` or `torch.export`.") -> None:
    """PyTorch 2.13's DeprecationWarning for a TorchScript entry point (shown where it is called)."""
    warnings.warn(f"`torch.jit.{what}` is deprecated. {instead}", DeprecationWarning, stacklevel=3)


def script(obj: Any, optimize: Optional[bool] = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """A module as a RecursiveScriptModule sharing its parameters, a function as a ScriptFunction;
    both run the Python code eagerly. A ScriptModule (already compiled, or an old-style subclass)
    is returned as it is."""
    _deprecated("script")
    if builtins.isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if builtins.isinstance(obj, Module):
        return RecursiveScriptModule(obj, name=type(obj).__name__)
    if builtins.isinstance(obj, type):
        return obj  # a class: TorchScript compiles its methods; here it stays a Python class
    if callable(obj):
        return ScriptFunction(obj)
    raise RuntimeError(f"Type '{type(obj).__name__}' cannot be compiled: minitorch.jit.script takes a module, "
                       "a function or a class")


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-05, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: Any = None, _store_inputs: bool = True) -> Any:
    """Records one call of func (a module's forward, or a function) on example_inputs: a
    TopLevelTracedModule / ScriptFunction replaying it. With check_trace, each of check_inputs
    (default: the example) is traced again and compared (TracingCheckError, TracerWarning)."""
    _deprecated("trace")
    if builtins.isinstance(func, (ScriptModule, ScriptFunction)) and not builtins.isinstance(func, TracedModule):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. Returning the object as is.")
        return func
    if example_inputs is None and example_kwarg_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be specified")
    if example_kwarg_inputs is not None:
        if not builtins.isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict")
        try:  # in forward's order, so the traced module takes them by position or by name
            bound = inspect.signature(func.forward if builtins.isinstance(func, Module) else func).bind(
                **example_kwarg_inputs)
        except TypeError as e:
            raise RuntimeError(f"example_kwarg_inputs do not fit the traced function: {e}") from None
        example_inputs = tuple(bound.args)
    if builtins.isinstance(func, Module):
        return trace_module(func, {"forward": example_inputs}, None, check_trace,
                            [{"forward": c} for c in check_inputs] if check_inputs else None, check_tolerance)
    args = _trace._as_tuple(example_inputs)
    graph, _ = _trace.record(func, args, None, None)
    graph.name = getattr(func, "__name__", "forward")
    if check_trace:
        _trace.check(graph, func, None, [_trace._as_tuple(c) for c in (check_inputs or [args])], None,
                     check_tolerance)
    return ScriptFunction(func, graph)


def trace_module(mod: Any, inputs: Dict[str, Any], optimize: Any = None, check_trace: bool = True,
                 check_inputs: Any = None, check_tolerance: float = 1e-05, strict: bool = True,
                 _force_outplace: bool = False, _module_class: Any = None, _compilation_unit: Any = None,
                 example_inputs_is_kwarg: bool = False, _store_inputs: bool = True) -> Any:
    """Traces each method named in inputs on its example: a TopLevelTracedModule whose methods
    replay those recordings; PyTorch's errors for inputs that are not a dict of existing methods."""
    _deprecated("trace_method")
    if not builtins.isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not builtins.isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    graphs = {}
    for name, example in inputs.items():
        method = getattr(mod, name, None)
        if not callable(method):
            raise AttributeError(f"'{type(mod).__name__}' object has no attribute '{name}'")
        call = mod if name == "forward" else method
        args = _trace._as_tuple(example)
        graphs[name], _ = _trace.record(call, args, mod, _trace.qualified_type(mod))
        if check_trace:
            checks = [_trace._as_tuple(c[name]) for c in check_inputs] if check_inputs else [args]
            _trace.check(graphs[name], call, mod, checks, _trace.qualified_type(mod), check_tolerance)
    return TopLevelTracedModule(mod, graphs, getattr(graphs.get("forward"), "submodules", {}))


def load(f: Any, map_location: Any = None, _extra_files: Optional[Dict[str, Any]] = None,
         _restore_shapes: bool = False) -> Any:
    """torch.jit.load: the module minitorch.jit.save wrote (jit/_serialization.py)."""
    _deprecated("load", "Please switch to `torch.export`.")
    return _load(f, map_location, _extra_files, _restore_shapes)


def script_if_tracing(fn: Callable) -> Callable:
    """fn itself: it would be scripted only while tracing, and nothing is traced here."""
    return fn


def script_method(fn: Callable) -> Callable:
    return fn


def annotate(the_type: Any, the_value: Any) -> Any:
    """the_value: the type only guides TorchScript's inference."""
    return the_value


Attribute = collections.namedtuple("Attribute", ["value", "type"])


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """Runs func(*args, **kwargs) now (an exception propagates from fork, as PyTorch's eager fork
    raises it) and returns a completed Future of its result."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future) -> Any:
    return future.wait()


_RAW_CONTAINERS = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict", typing.List: "List",
                   typing.Optional: "Optional", typing.Tuple: "Tuple"}


def _check_has_args(target_type: Any) -> None:
    name = _RAW_CONTAINERS.get(target_type) if builtins.isinstance(target_type, collections.abc.Hashable) else None
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add contained type, "
                           f"e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a contained type, "
                       f"e.g. {name}[int]")


def _warn_if_empty(obj: Any) -> None:
    if builtins.isinstance(obj, (list, dict, tuple)) and len(obj) == 0:
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance in eager mode. "
                      "For example, List[int] would become list and therefore falsely return True for "
                      "List[float] or List[str].", stacklevel=3)


def _matches(obj: Any, target_type: Any) -> bool:
    """whether obj is a target_type, looking into List[T], Dict[K, V], Tuple[...] and unions"""
    _check_has_args(target_type)
    origin, args = typing.get_origin(target_type), typing.get_args(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    if origin is typing.Union or origin is types.UnionType:
        return any(_matches(obj, t) for t in args)
    if origin in (list, dict, tuple):
        _warn_if_empty(obj)
    if origin is list:
        return builtins.isinstance(obj, list) and all(_matches(el, args[0]) for el in obj)
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        return builtins.isinstance(obj, tuple) and len(obj) == len(args) and all(map(_matches, obj, args))
    return False


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001 - torch.jit.isinstance
    """Whether obj is of target_type, a type, a typing container (List[int], Dict[str, Tensor],
    Tuple[int, str], Optional[T], nested) or a tuple of such. Elements are checked one by one; an
    empty container matches any element type (with PyTorch's warning)."""
    if builtins.isinstance(target_type, collections.abc.Container) and typing.get_origin(target_type) is None:
        if not builtins.isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    return _matches(obj, target_type)


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    return fn


def export(fn: Callable) -> Callable:
    return fn


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    """Whether a torch.jit.trace is recording on this thread."""
    return _trace.is_tracing()


def freeze(mod: Any, preserved_attrs: Optional[List[str]] = None, optimize_numerics: bool = True) -> Any:
    """torch.jit.freeze: the module itself (its weights are already what an eager call reads);
    PyTorch's error for a module in training mode."""
    _deprecated("freeze", "Please use `torch.compile` instead.")
    if not builtins.isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if getattr(mod, "training", False):
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return mod


def optimize_for_inference(mod: Any, other_methods: Optional[List[str]] = None) -> Any:
    """torch.jit.optimize_for_inference: the module in eval mode, frozen (freeze)."""
    if not builtins.isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if hasattr(mod, "training"):
        mod.eval()
    return freeze(mod)


_onednn_fusion = False
_fusion_strategy: List[Tuple[str, int]] = [("STATIC", 2), ("DYNAMIC", 10)]
_optimize_graphs = True
_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


def enable_onednn_fusion(enabled: bool) -> None:
    global _onednn_fusion
    _onednn_fusion = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _onednn_fusion


def set_fusion_strategy(strategy: List[Tuple[str, int]]) -> List[Tuple[str, int]]:
    """Keeps the fusion strategy (a list of ("STATIC" | "DYNAMIC", depth)) and returns the one it
    replaces, as PyTorch does; nothing is fused here."""
    for kind, _depth in strategy:
        if kind not in ("STATIC", "DYNAMIC"):
            raise ValueError(f"FusionBehavior only supported 'STATIC' or 'DYNAMIC', got: {kind}")
    global _fusion_strategy
    previous, _fusion_strategy = _fusion_strategy, [(kind, int(depth)) for kind, depth in strategy]
    return previous


@contextlib.contextmanager
def optimized_execution(should_optimize: bool) -> Iterator[None]:
    """Sets whether the graph executor optimizes for the block and restores the previous flag."""
    global _optimize_graphs
    stored, _optimize_graphs = _optimize_graphs, bool(should_optimize)
    try:
        yield
    finally:
        _optimize_graphs = stored


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """torch.jit.fuser(name): selects a TorchScript fuser for the block; nothing is fused here."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")
    yield

