"""torch.fx.graph: a Graph is a doubly linked list of Nodes (with a sentinel root), the builders
that append to it (placeholder, get_attr, call_*, output), the edits (erase_node, node_copy,
graph_copy, inserting_before/after), checks (lint), dead-code elimination, and the code generator
that turns it into the Python source of a forward function.

The generated code spells minitorch's public functions as PyTorch's (torch.relu,
torch.nn.functional.relu, operator.add as `a + b`), with `torch` bound to minitorch in its globals.
"""
from __future__ import annotations

import builtins
import copy
import inspect
import keyword
import math
import operator
import re
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import minitorch

from .node import Argument, Node, Target, _format_target, _qualified_name, map_aggregate, map_arg

__all__ = ["Graph", "PythonCode"]

# operator functions written as Python operators in generated code
_BINARY = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
           "matmul": "@", "lshift": "<<", "rshift": ">>", "and_": "&", "or_": "|", "xor": "^",
           "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_UNARY = {"neg": "-", "pos": "+", "invert": "~"}
_BINARY_OPS = {getattr(operator, k): v for k, v in _BINARY.items()}
_UNARY_OPS = {getattr(operator, k): v for k, v in _UNARY.items()}

# Names generated code reads from its globals, so no node may be called so.
_RESERVED = {"self", "torch", "operator", "builtins", "device", "inf", "nan", "fx_pytree"}


class _Namespace:
    """Hands out unique, legal Python identifiers for node names: `relu`, `relu_1`, `relu_2`."""

    def __init__(self) -> None:
        self._used: set = set()
        self._next_suffix: Dict[str, int] = {}

    def create_name(self, candidate: str) -> str:
        candidate = re.sub(r"[^0-9a-zA-Z_]+", "_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = "_" + candidate
        match = re.match(r"(.*)_(\d+)$", candidate)
        base, num = (match.group(1), int(match.group(2))) if match else (candidate, None)
        name = candidate
        if num is None:
            num = self._next_suffix.get(base, 0)
        while name in self._used or _illegal(name):
            num += 1
            name = f"{base}_{num}"
        self._next_suffix[base] = num
        self._used.add(name)
        return name

    def forget(self, name: str) -> None:
        self._used.discard(name)


def _illegal(name: str) -> bool:
    return keyword.iskeyword(name) or hasattr(builtins, name) or name in _RESERVED


def _snake_case(s: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", s).lower()


class _NodeList:
    """graph.nodes: iterates the linked list, forward or reversed. Erasing the node an iteration
    stands on is allowed (an erased node keeps its links)."""

    def __init__(self, graph: "Graph", reverse: bool = False) -> None:
        self._graph = graph
        self._reverse = reverse

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        step = "_prev" if self._reverse else "_next"
        cur = getattr(root, step)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, step)

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, not self._reverse))

    def __repr__(self) -> str:
        return repr(list(self))


class _InsertPoint:
    """Where create_node inserts; set on construction and restored on leaving the with-block."""

    def __init__(self, graph: "Graph", insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, insert

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        self.graph._insert = self.orig_insert


class _NodeRef:
    """A node named in a pickled graph's arguments."""

    def __init__(self, name: str) -> None:
        self.name = name


class PythonCode:
    """The source of a generated forward function and the globals it runs in."""

    def __init__(self, src: str, globals: Dict[str, Any]) -> None:
        self.src = src
        self.globals = globals


class Graph:
    """The operations of a traced program, in execution order: see torch.fx.Graph."""

    def __init__(self, owning_module: Optional[Any] = None, tracer_cls: Optional[type] = None,
                 tracer_extras: Optional[Dict[str, Any]] = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras

    @property
    def owning_module(self) -> Optional[Any]:
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod: Optional[Any]) -> None:
        self._owning_module = mod

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    def find_nodes(self, *, op: str, target: Optional[Target] = None) -> List[Node]:
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- building ---------------------------------------------------------------------------------

    def create_node(self, op: str, target: Target, args: Optional[Tuple[Argument, ...]] = None,
                    kwargs: Optional[Dict[str, Argument]] = None, name: Optional[str] = None,
                    type_expr: Optional[Any] = None) -> Node:
        """A new node at the insertion point (the end of the graph unless inserting_before/after
        says otherwise), named after name or its target."""
        args = () if args is None else args
        kwargs = {} if kwargs is None else kwargs
        if not isinstance(args, tuple):
            raise AssertionError("args must be a tuple")
        if not isinstance(kwargs, dict):
            raise AssertionError("kwargs must be a dict")
        name = self._graph_namespace.create_name(name if name is not None else self._target_to_str(target))
        node = Node(self, name, op, target, args, kwargs, type_expr)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Target) -> str:
        if callable(target):
            return _snake_case(getattr(target, "__name__", "fn"))
        return _snake_case(target)

    def placeholder(self, name: str, type_expr: Optional[Any] = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Optional[Any] = None) -> Node:
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: Optional[Tuple[Argument, ...]] = None,
                    kwargs: Optional[Dict[str, Argument]] = None, type_expr: Optional[Any] = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: Optional[Tuple[Argument, ...]] = None,
                    kwargs: Optional[Dict[str, Argument]] = None, type_expr: Optional[Any] = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable[..., Any], args: Optional[Tuple[Argument, ...]] = None,
                      kwargs: Optional[Dict[str, Argument]] = None, type_expr: Optional[Any] = None) -> Node:
        return self.create_node("call_function", the_function, args, kwargs, type_expr=type_expr)

    def output(self, result: Argument, type_expr: Optional[Any] = None) -> Node:
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def inserting_before(self, n: Optional[Node] = None) -> _InsertPoint:
        """New nodes go just before n (the start of the graph when n is None)."""
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Optional[Node] = None) -> _InsertPoint:
        """New nodes go just after n (the end of the graph when n is None); as in PyTorch, each
        goes right after n, so several land in reverse order."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise AssertionError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # ---- editing ----------------------------------------------------------------------------------

    def erase_node(self, to_erase: Node) -> None:
        """Removes a node that nothing reads any more."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had {len(to_erase.users)} "
                               f"users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        self._graph_namespace.forget(to_erase.name)
        to_erase._update_args_kwargs((), {})

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """A copy of node (from any graph) in this one, its Node arguments mapped by arg_transform."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copied = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        copied.meta = copy.copy(node.meta)
        return copied

    def graph_copy(self, g: "Graph", val_map: Dict[Node, Node], return_output_node: bool = False) -> Any:
        """Copies every node of g but its output into this graph, recording old -> new in val_map;
        returns the value g's output node returned, mapped."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                value = map_arg(node.args[0], lambda n: val_map[n])
                return (value, node) if return_output_node else value
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: Dict[int, Any]) -> "Graph":
        new = Graph(tracer_cls=self._tracer_cls, tracer_extras=self._tracer_extras)
        memo[id(self)] = new
        out = new.graph_copy(self, {}, return_output_node=True)
        if out is not None:
            value, old_out = out
            new.output(value, type_expr=old_out.type)
        return new

    def __getstate__(self) -> Dict[str, Any]:
        # Nodes as a flat list (a linked list pickled as is recurses once per node), arguments
        # naming nodes by name; the owning module is not part of the graph's state.
        ref = lambda n: _NodeRef(n.name)  # noqa: E731
        records = [(n.name, n.op, n.target, map_arg(n.args, ref), map_arg(n.kwargs, ref), n.type, n.meta)
                   for n in self.nodes]
        return {"records": records, "tracer_cls": self._tracer_cls, "tracer_extras": self._tracer_extras}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__init__(tracer_cls=state["tracer_cls"], tracer_extras=state["tracer_extras"])
        made: Dict[str, Node] = {}
        resolve = lambda a: made[a.name] if isinstance(a, _NodeRef) else a  # noqa: E731
        for name, op, target, args, kwargs, type_expr, meta in state["records"]:
            args, kwargs = map_aggregate(args, resolve), map_aggregate(kwargs, resolve)
            made[name] = self.create_node(op, target, args, kwargs, name, type_expr)
            made[name].meta = meta

    def eliminate_dead_code(self, is_impure_node: Optional[Callable[[Node], bool]] = None) -> bool:
        """Erases the nodes whose value nothing reads and that have no side effect (as is_impure
        says); returns whether anything changed."""
        impure = is_impure_node if is_impure_node is not None else Node.is_impure
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed

    # ---- checks and printing ----------------------------------------------------------------------

    def lint(self) -> None:
        """Checks the graph's invariants: nodes belong to it, arguments are defined before use,
        names are unique, use lists are in step, and targets exist on the owning module."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to this Graph, "
                                       "but was used as an argument! If you are copying nodes from another "
                                       "graph, make sure to use ``arg_transform`` on node_copy() to remap "
                                       "values\n" + str(self))
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it has been defined! "
                                       "Please check that Nodes in the graph are topologically ordered\n" + str(self))
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' reads '{arg}' but is missing from its users")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
        mod = self._owning_module
        if mod is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                self._check_target(mod, node)

    @staticmethod
    def _check_target(mod: Any, node: Node) -> None:
        obj = mod
        atoms = node.target.split(".")
        for i, atom in enumerate(atoms):
            if not hasattr(obj, atom):
                where = ".".join(atoms[:i])
                raise RuntimeError(f"Node {node} target {node.target} references nonexistent attribute {atom} "
                                   f"of {where or 'root'}")
            obj = getattr(obj, atom)
        if node.op == "call_module" and not isinstance(obj, minitorch.nn.Module):
            raise RuntimeError(f"Node {node} target {node.target} {atoms[-1]} is not a Module")

    def __str__(self) -> str:
        lines = ["graph():"]
        for node in self.nodes:
            text = node.format_node()
            if text is not None:
                lines.append("    " + text)
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Prints the nodes as a table: opcode, name, target, args, kwargs (through tabulate where
        it is installed, else as a plain aligned table)."""
        rows = [[n.op, n.name, _format_target(n.target) if n.op != "output" else n.target, n.args, n.kwargs]
                for n in self.nodes]
        headers = ["opcode", "name", "target", "args", "kwargs"]
        try:
            from tabulate import tabulate
        except ImportError:
            print(_plain_table(headers, rows))
        else:
            print(tabulate(rows, headers=headers))

    # ---- code generation ----------------------------------------------------------------------------

    def python_code(self, root_module: str, *, verbose: bool = False) -> PythonCode:
        """The source of `def forward(<root_module>, <placeholders>)` that runs this graph."""
        return _CodeGen(self, root_module).generate()

    def _python_code_src(self) -> str:
        return self.python_code("self").src


def _plain_table(headers: List[str], rows: List[List[Any]]) -> str:
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    fmt = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([fmt(headers), "  ".join("-" * w for w in widths)] + [fmt(r) for r in cells[1:]])


def _is_identifier(s: str) -> bool:
    return s.isidentifier() and not keyword.iskeyword(s)


def _attr_path(base: str, target: str) -> str:
    """self.a.b, or getattr(self.seq, "0") where an atom is no identifier."""
    expr = base
    for atom in target.split("."):
        expr = f"{expr}.{atom}" if _is_identifier(atom) else f'getattr({expr}, "{atom}")'
    return expr


class _CodeGen:
    """Writes one graph as the body of a forward function. A value is set to None right after its
    last use, so the generated forward frees intermediates as eagerly as the original code."""

    def __init__(self, graph: Graph, root_module: str) -> None:
        self.graph = graph
        self.root = root_module
        self.globals: Dict[str, Any] = {"torch": minitorch, "operator": operator, "builtins": builtins,
                                        "device": minitorch.device, "inf": math.inf, "nan": math.nan}
        self._global_ids: Dict[int, str] = {}
        self._node_names = {n.name for n in graph.nodes}

    def _add_global(self, hint: str, obj: Any) -> str:
        if id(obj) in self._global_ids:
            return self._global_ids[id(obj)]
        name = re.sub(r"[^0-9a-zA-Z_]", "_", hint) or "_obj"
        name = name if not name[0].isdigit() else "_" + name
        base, i = name, 0
        while name in self.globals or name in self._node_names or _illegal(name):
            i += 1
            name = f"{base}_{i}"
        self.globals[name] = obj
        self._global_ids[id(obj)] = name
        return name

    def _fn_name(self, fn: Any) -> str:
        qual = _qualified_name(fn)
        if qual.startswith(("torch.", "operator.")):
            return qual
        if qual.startswith("builtins."):
            return qual[len("builtins."):]
        return self._add_global(getattr(fn, "__name__", "fn"), fn)

    def repr_arg(self, a: Any) -> str:
        if isinstance(a, Node):
            return a.name
        if isinstance(a, tuple) and not hasattr(a, "_fields"):
            inner = ", ".join(self.repr_arg(x) for x in a)
            return f"({inner},)" if len(a) == 1 else f"({inner})"
        if isinstance(a, list):
            return "[" + ", ".join(self.repr_arg(x) for x in a) + "]"
        if isinstance(a, dict) and all(isinstance(k, (str, int)) for k in a):
            return "{" + ", ".join(f"{k!r}: {self.repr_arg(v)}" for k, v in a.items()) + "}"
        if isinstance(a, slice):
            return f"slice({self.repr_arg(a.start)}, {self.repr_arg(a.stop)}, {self.repr_arg(a.step)})"
        if a is None or a is ... or isinstance(a, (bool, int, str)):
            return repr(a)
        if isinstance(a, float):
            return repr(a)  # inf and nan print as names that the globals define
        if isinstance(a, minitorch.dtype) and getattr(minitorch, str(a).split(".")[-1], None) is a:
            return "torch." + str(a).split(".")[-1]
        if callable(a) and (isinstance(a, type) or hasattr(a, "__name__")):
            return self._fn_name(a) if not isinstance(a, type) else self._add_global(a.__name__, a)
        return self._add_global("_" + type(a).__name__.lower(), a)

    def _args_text(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> str:
        parts = [self.repr_arg(a) for a in args] + [f"{k} = {self.repr_arg(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def _expr(self, node: Node) -> str:
        op, target, args, kwargs = node.op, node.target, node.args, node.kwargs
        if op == "get_attr":
            return _attr_path(self.root, target)
        if op == "call_module":
            return f"{_attr_path(self.root, target)}({self._args_text(args, kwargs)})"
        if op == "call_method":
            return f"{self.repr_arg(args[0])}.{target}({self._args_text(args[1:], kwargs)})"
        if not kwargs and len(args) == 2 and target in _BINARY_OPS:
            return f"{self.repr_arg(args[0])} {_BINARY_OPS[target]} {self.repr_arg(args[1])}"
        if not kwargs and len(args) == 1 and target in _UNARY_OPS:
            return f"{_UNARY_OPS[target]}{self.repr_arg(args[0])}"
        if target is operator.getitem and not kwargs and len(args) == 2:
            return f"{self.repr_arg(args[0])}[{self.repr_arg(args[1])}]"
        if (target is builtins.getattr and not kwargs and len(args) == 2 and isinstance(args[1], str)
                and _is_identifier(args[1])):
            return f"{self.repr_arg(args[0])}.{args[1]}"
        return f"{self._fn_name(target)}({self._args_text(args, kwargs)})"

    def generate(self) -> PythonCode:
        nodes = list(self.graph.nodes)
        last_use: Dict[Node, Node] = {}
        for node in reversed(nodes):
            for arg in node._input_nodes:
                last_use.setdefault(arg, node)
        freed_at: Dict[Node, List[str]] = {}
        for value, user in last_use.items():
            freed_at.setdefault(user, []).append(value.name)
        signature = [self.root]
        body: List[str] = []
        returned = False
        for node in nodes:
            if node.op == "placeholder":
                stars = node.target[:len(node.target) - len(node.target.lstrip("*"))]
                # the signature keeps the argument's own name (callers may pass it by keyword),
                # rebound to the node's name where that had to differ (input -> input_1)
                arg = node.target[len(stars):]
                arg = arg if _is_identifier(arg) else node.name
                default = f" = {self.repr_arg(node.args[0])}" if node.args and not stars else ""
                signature.append(stars + arg + default)
                if arg != node.name:
                    body.append(f"{node.name} = {arg}")
                continue
            if node.op == "output":
                body.append(f"return {self.repr_arg(node.args[0])}")
                returned = True
                continue
            line = f"{node.name} = {self._expr(node)}"
            dead = list(freed_at.get(node, []))
            if not node.users:
                dead.append(node.name)
            if dead:
                line += ";  " + " = ".join(dead) + " = None"
            body.append(line)
        if not returned:
            body.append("pass")
        src = f"\n\n\ndef forward({', '.join(signature)}):\n" + "".join(f"    {line}\n" for line in body) + "    "
        return PythonCode(src, self.globals)
