"""torch.fx.proxy: a Proxy stands for a value while a program is traced. Operators, tensor methods
and attribute reads on it record nodes in the tracer's graph instead of computing; control flow
that needs its value (bool(), iteration of unknown length) raises TraceError.
"""
from __future__ import annotations

import dis
import inspect
import operator
import sys
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

from .graph import Graph
from .node import Argument, Node, Target, base_types, map_aggregate

__all__ = ["TraceError", "TracerBase", "GraphAppendingTracer", "Proxy", "Attribute"]


class TraceError(ValueError):
    pass


class TracerBase:
    """What a Proxy needs of its tracer: making nodes from arguments that may hold Proxies."""

    graph: Graph

    def create_node(self, kind: str, target: Target, args: Tuple[Argument, ...], kwargs: Dict[str, Argument],
                    name: Optional[str] = None, type_expr: Optional[Any] = None) -> Node:
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> "Proxy":
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: Tuple[Any, ...], kwargs: Dict[str, Any],
                     name: Optional[str] = None, type_expr: Optional[Any] = None,
                     proxy_factory_fn: Optional[Callable[[Node], "Proxy"]] = None) -> "Proxy":
        """A node for the call, its Proxy arguments turned into Nodes, and a Proxy for its result."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Argument:
        """The graph's form of an argument: Proxies become their Nodes, containers are mapped,
        plain constants stay; anything else is an error (Tracer adds modules and tensors)."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, Node) or isinstance(a, base_types):
            if isinstance(a, slice):
                return slice(self.create_arg(a.start), self.create_arg(a.stop), self.create_arg(a.step))
            return a
        if isinstance(a, tuple):
            mapped = tuple(self.create_arg(e) for e in a)
            return type(a)(*mapped) if hasattr(a, "_fields") else mapped
        if isinstance(a, list):
            return [self.create_arg(e) for e in a]
        if isinstance(a, dict):
            out = {}
            for k, v in a.items():
                if isinstance(k, (Proxy, Node)):
                    raise RuntimeError(f"Keys for dictionaries used as an argument cannot contain a Node. Got key: {k}")
                out[k] = self.create_arg(v)
            return out
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: "Proxy") -> bool:
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: "Proxy") -> Iterator:
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop "
                         "or as a *args or **kwargs function argument. See the torch.fx docs on pytorch.org for a "
                         "more detailed explanation of what types of control flow can be traced, and check out the "
                         "Proxy docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj: "Proxy") -> Any:
        return Attribute(obj, "keys")()


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made by hand around a node: it appends to that node's graph."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph


def _find_tracer(args: Any, kwargs: Any) -> Optional[TracerBase]:
    found = []

    def visit(x: Any) -> Any:
        if isinstance(x, Proxy) and not found:
            found.append(x.tracer)
        return x

    map_aggregate((args, kwargs), visit)
    return found[0] if found else None


class Proxy:
    """A value being traced: what is done to it becomes nodes of its tracer's graph."""

    __hash__ = object.__hash__  # the comparison operators record nodes; hashing stays by identity

    def __init__(self, node: Node, tracer: Optional[TracerBase] = None) -> None:
        self.tracer = tracer if tracer is not None else GraphAppendingTracer(node.graph)
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> "Attribute":
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)  # copy, pickle and the like probe for these
        return Attribute(self, k)

    def __call__(self, *args: Any, **kwargs: Any) -> "Proxy":
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self) -> Iterator["Proxy"]:
        # `a, b = proxy` unpacks a known count: the caller's current instruction says how many.
        frame = sys._getframe(1)
        for inst in dis.get_instructions(frame.f_code):
            if inst.offset == frame.f_lasti:
                if inst.opname == "UNPACK_SEQUENCE":
                    return (self[i] for i in range(inst.argval))
                break
        return self.tracer.iter(self)

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want this call to be "
                           "recorded, please call torch.fx.wrap('len') at module scope")

    def keys(self) -> Any:
        return self.tracer.keys(self)

    @classmethod
    def __torch_function__(cls, orig_method: Callable, types: Tuple[type, ...], args: Tuple[Any, ...] = (),
                           kwargs: Optional[Dict[str, Any]] = None) -> "Proxy":
        """The protocol of minitorch.overrides: a function that hands itself to its Proxy
        arguments is recorded (a Tensor method as call_method, anything else as call_function)."""
        kwargs = kwargs or {}
        tracer = _find_tracer(args, kwargs)
        import minitorch

        if inspect.ismethoddescriptor(orig_method) or getattr(minitorch.Tensor, getattr(orig_method, "__name__", ""),
                                                              None) is orig_method:
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


class Attribute(Proxy):
    """proxy.name: a getattr node made only when the value is used; calling it records a
    call_method on the proxy instead."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Optional[Node] = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _define_operators() -> None:
    binary = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "lshift", "rshift",
              "and_", "or_", "xor")
    compare = ("eq", "ne", "lt", "le", "gt", "ge")
    unary = ("neg", "pos", "invert", "abs")

    def forward(fn: Callable) -> Callable:
        return lambda self, *rest: self.tracer.create_proxy("call_function", fn, (self,) + rest, {})

    def reflected(fn: Callable) -> Callable:
        return lambda self, other: self.tracer.create_proxy("call_function", fn, (other, self), {})

    for name in binary + compare + unary + ("getitem",):
        setattr(Proxy, f"__{name.rstrip('_')}__", forward(getattr(operator, name)))
    for name in binary:
        setattr(Proxy, f"__r{name.rstrip('_')}__", reflected(getattr(operator, name)))


_define_operators()
