"""The compiled-module classes of torch.jit: ScriptModule, RecursiveScriptModule (what script()
and load() return), TracedModule / TopLevelTracedModule (what trace() returns) and
ScriptFunction. A traced module's forward replays its recorded Graph; a scripted one runs the
original Python code eagerly (minitorch compiles no TorchScript), so it has .code (the source) but
no .graph. Both share their parameters, buffers and submodules with the module they came from."""
from __future__ import annotations

import inspect
import textwrap
from typing import Any, Callable, Dict, Optional

from ..nn.modules.module import Module
from ._graph import Graph

_NO_GRAPH = ("minitorch.jit.script runs the module's Python code eagerly and records no graph (a trace of one "
             "example would be wrong for its control flow); use minitorch.jit.trace for a graph")


class ScriptModule(Module):
    """The base of compiled modules, and of old-style subclasses whose script_method methods run
    eagerly."""

    def save(self, f: Any, _extra_files: Optional[Dict[str, Any]] = None) -> None:
        from ._serialization import save
        save(self, f, _extra_files)

    def save_to_buffer(self, _extra_files: Optional[Dict[str, Any]] = None) -> bytes:
        import io
        buf = io.BytesIO()
        self.save(buf, _extra_files)
        return buf.getvalue()



class _Compiled(ScriptModule):
    """What script(), trace() and load() give: original_name, graph, inlined_graph and code (kept
    off ScriptModule itself, whose old-style subclasses may use these names for their own data)."""

    @property
    def original_name(self) -> str:
        return self.__dict__.get("_original_name", type(self).__name__)

    @property
    def graph(self) -> Graph:
        g = self.__dict__.get("_graphs", {}).get("forward")
        if g is None:
            raise RuntimeError(_NO_GRAPH)
        return g

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    @property
    def code(self) -> str:
        g = self.__dict__.get("_graphs", {}).get("forward")
        if g is not None:
            return g.code()
        if "_original" not in self.__dict__:
            raise RuntimeError(f"'{self.original_name}' has no forward method")
        return _source(type(self.__dict__["_original"]).forward)

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"

    def _get_name(self) -> str:
        return self.original_name


def _source(fn: Callable) -> str:
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return f"# the source of {getattr(fn, '__qualname__', fn)!r} is not available\n"


def _share(target: Module, orig: Module) -> None:
    """target holds orig's parameters, buffers and submodules (the same tables) and mode."""
    d = target.__dict__
    for table in ("_parameters", "_buffers", "_modules", "_non_persistent_buffers_set"):
        d[table] = orig.__dict__[table]
    d["training"] = orig.training
    d["_original_name"] = type(orig).__name__


class RecursiveScriptModule(_Compiled):
    """torch.jit.script's (and torch.jit.load's) module. Made from a module, it runs the module's
    own forward (and finds its other attributes); loaded from a traced archive, it replays the graph."""

    def __init__(self, orig: Optional[Module] = None, graphs: Optional[Dict[str, Graph]] = None,
                 name: str = "Module") -> None:
        super().__init__()
        self.__dict__["_graphs"] = dict(graphs or {})
        self.__dict__["_original_name"] = name
        _add_methods(self)
        if orig is not None:
            _share(self, orig)
            self.__dict__["_original"] = orig

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        graphs = self.__dict__["_graphs"]
        if "forward" in graphs:
            return graphs["forward"].run(self, graphs["forward"].positional(args, kwargs))
        orig = self.__dict__.get("_original")
        if orig is None:
            raise RuntimeError(f"'{self.original_name}' has no forward method")
        return type(orig).forward(orig, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            orig = self.__dict__.get("_original")
            if orig is None:
                raise
            return getattr(orig, name)

    def train(self, mode: bool = True) -> "RecursiveScriptModule":
        super().train(mode)
        orig = self.__dict__.get("_original")
        if orig is not None:
            orig.__dict__["training"] = mode
        return self


class TracedModule(_Compiled):
    """torch.jit.trace's module: forward (and any method trace_module traced) replays the graph
    recorded from one call, with the original module's parameters. Its submodules are
    TracedModules too (sharing the originals' parameters), each with the graph of its first call
    during the trace (submodules: dotted name -> Graph); a ScriptModule stays as it is."""

    def __init__(self, orig: Module, graphs: Dict[str, Graph], submodules: Optional[Dict[str, Graph]] = None,
                 prefix: str = "") -> None:
        super().__init__()
        _share(self, orig)
        subs = submodules or {}
        children = {}
        for name, child in orig.__dict__["_modules"].items():
            qual = prefix + name
            if child is None or isinstance(child, ScriptModule):
                children[name] = child
            else:
                own = {"forward": subs[qual]} if qual in subs else {}
                children[name] = TracedModule(child, own, subs, qual + ".")
        self.__dict__["_modules"] = type(orig.__dict__["_modules"])(children)
        self.__dict__["_graphs"] = dict(graphs)
        _add_methods(self)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        graph = self.__dict__["_graphs"].get("forward")
        if graph is None:
            raise RuntimeError(f"'{self.original_name}' was not called while tracing: it has no traced forward")
        return graph.run(self, graph.positional(args, kwargs))


class TopLevelTracedModule(TracedModule):
    pass


def _add_methods(owner: Module) -> None:
    """owner's traced methods other than forward (trace_module's), each replaying its graph."""
    for name, graph in owner.__dict__["_graphs"].items():
        if name != "forward":
            owner.__dict__[name] = _method(owner, graph)


def _method(owner: Module, graph: Graph) -> Callable:
    def call(*args: Any) -> Any:
        return graph.run(owner, args)
    return call


class ScriptFunction:
    """A compiled function: script() of a function runs it as Python (with .code, its source);
    trace() of a function replays the recorded graph (with .graph and .code)."""

    def __init__(self, fn: Optional[Callable] = None, graph: Optional[Graph] = None) -> None:
        self._fn, self._graph = fn, graph
        self.__name__ = getattr(fn, "__name__", type(fn).__name__)
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._graph is not None:
            if kwargs:
                raise RuntimeError(f"{self.__name__}() takes no keyword arguments when traced")
            return self._graph.run(None, args)
        return self._fn(*args, **kwargs)

    @property
    def graph(self) -> Graph:
        if self._graph is None:
            raise RuntimeError(_NO_GRAPH)
        return self._graph

    @property
    def inlined_graph(self) -> Graph:
        return self.graph

    @property
    def code(self) -> str:
        return self._graph.code() if self._graph is not None else _source(self._fn)

    @property
    def name(self) -> str:
        return self.__name__
