"""torch.fx.interpreter: Interpreter runs a GraphModule's graph node by node, one overridable
method per op kind (placeholder, get_attr, call_function, call_module, call_method, output), so a
subclass can time, record or change each step. Transformer is an Interpreter that runs on Proxies
and so produces a new GraphModule.
"""
from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Tuple

from minitorch.nn import Module

from ._symbolic_trace import Tracer, _patch_functions, _Patcher
from .graph import Graph
from .graph_module import GraphModule
from .node import Argument, Node, Target, map_arg
from .proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs module.graph (or graph) on concrete values. With garbage_collect_values, a value is
    dropped from the environment after its last use."""

    def __init__(self, module: Module, garbage_collect_values: bool = True, graph: Optional[Graph] = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: Dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses: Dict[Node, List[Node]] = {}
        if garbage_collect_values:
            seen: set = set()
            for node in reversed(self.graph.nodes):
                for arg in node.all_input_nodes:
                    if arg not in seen:
                        seen.add(arg)
                        self.user_to_last_uses.setdefault(node, []).append(arg)
        self.current_node: Optional[Node] = None

    def run(self, *args: Any, initial_env: Optional[Dict[Node, Any]] = None,
            enable_io_processing: bool = True) -> Any:
        """Runs the graph on args and returns what its output node returns."""
        self.env = dict(initial_env) if initial_env is not None else {}
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue  # given in initial_env
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback and hasattr(e, "add_note"):
                    e.add_note(f"While executing {node.format_node()}")
                raise
            if self.garbage_collect_values:
                for dead in self.user_to_last_uses.get(node, []):
                    del self.env[dead]
            if node.op == "output":
                return self.env[node]
        return None

    @contextmanager
    def _set_current_node(self, node: Node) -> Iterator[None]:
        prev, self.current_node = self.current_node, node
        try:
            yield
        finally:
            self.current_node = prev

    def run_node(self, n: Node) -> Any:
        """Runs one node: its arguments from the environment, then the method named after its op."""
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            if not isinstance(args, tuple) or not isinstance(kwargs, dict):
                raise AssertionError("fetch_args_kwargs_from_env must return a tuple and a dict")
            return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per op ---------------------------------------------------------------------------

    def placeholder(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        """The next positional argument of run (all the rest for a *args placeholder), else the
        placeholder's default."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but one was not passed in!")

    def get_attr(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        self_obj, *rest = args
        return getattr(self_obj, target)(*rest, **kwargs)

    def call_module(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        return args[0]

    # ---- helpers ---------------------------------------------------------------------------------------

    def fetch_attr(self, target: str) -> Any:
        """The module attribute at dotted path target."""
        obj: Any = self.module
        atoms = target.split(".")
        for i, atom in enumerate(atoms):
            if not hasattr(obj, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            obj = getattr(obj, atom)
        return obj

    def fetch_args_kwargs_from_env(self, n: Node) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        """n's args and kwargs with each Node replaced by its value."""
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args: Argument, n: Node) -> Any:
        def value(node: Node) -> Any:
            if node not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {node}! Run Graph.lint() "
                                   "to diagnose such issues")
            return self.env[node]

        return map_arg(args, value)


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """Runs the graph on Proxies, so that what each method returns builds a new graph; override
    call_function and the like to change nodes, then call transform() for the new GraphModule."""

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Proxy:
        default = args[0] if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default), self.tracer)

    def get_attr(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Proxy:
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Any]) -> Any:
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """The new GraphModule. minitorch functions called on Proxies inside the overrides are
        recorded (they are patched for the length of the transform, as during symbolic_trace)."""
        with _Patcher() as patcher:
            _patch_functions(patcher, None)
            result = super().run(enable_io_processing=False)
        self.new_graph.output(self.tracer.create_arg(result))
        return GraphModule(self.module, self.new_graph)
