"""torch.fx.node: a Node is one operation of a Graph (placeholder, get_attr, call_function,
call_module, call_method, output), with its arguments, its users and free-form meta data.

A node keeps its use lists in step with its arguments: assigning args or kwargs records the node
as a user of every Node found in them (however nested), and forgets the old ones.
"""
from __future__ import annotations

import builtins
import operator
import types
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import minitorch

__all__ = ["Node", "map_arg", "map_aggregate", "Argument", "Target"]

Target = Union[Callable[..., Any], str]
Argument = Any

_OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr", "output", "root")

# Functions whose call changes state outside its result, so dead-code elimination keeps them.
_side_effectful_functions = {operator.setitem}


def map_aggregate(a: Argument, fn: Callable[[Argument], Argument]) -> Argument:
    """fn applied to every leaf of a nest of tuples, lists, dicts and slices (a named tuple stays
    one of its class)."""
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(e, fn) for e in a)
        return type(a)(*mapped) if hasattr(a, "_fields") else mapped
    if isinstance(a, list):
        return [map_aggregate(e, fn) for e in a]
    if isinstance(a, dict):
        return {k: map_aggregate(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn), map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Argument, fn: Callable[["Node"], Argument]) -> Argument:
    """fn applied to every Node inside a nest of arguments; other leaves are kept."""
    if not callable(fn):
        raise AssertionError("torch.fx.map_arg(a, fn): fn must be a callable")
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def _qualified_name(fn: Any) -> str:
    """How generated code and printed graphs name a function: torch.relu, operator.add,
    torch.nn.functional.relu (minitorch's public functions are spelled as PyTorch's, with the
    generated code's `torch` bound to minitorch)."""
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return "builtins." + fn.__name__
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return "operator." + fn.__name__
    from ._symbolic_trace import _public_name

    name = _public_name(fn)
    if name is not None:
        return name
    module = getattr(fn, "__module__", None) or "__main__"
    return f"{module}.{getattr(fn, '__qualname__', getattr(fn, '__name__', repr(fn)))}"


def _format_target(target: Target) -> str:
    if isinstance(target, str):
        return target
    return _qualified_name(target)


def _format_arg(arg: Any) -> str:
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        inner = ", ".join(_format_arg(a) for a in arg)
        return f"({inner},)" if len(arg) == 1 else f"({inner})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + arg.name
    return str(arg)


class Node:
    """One operation of a Graph. op says what kind (placeholder, get_attr, call_function,
    call_module, call_method, output), target what it calls or reads, args and kwargs its
    inputs; users lists the nodes that read its value."""

    def __init__(self, graph: Any, name: str, op: str, target: Target, args: Tuple[Argument, ...],
                 kwargs: Dict[str, Argument], return_type: Optional[Any] = None) -> None:
        if op not in _OPCODES:
            raise AssertionError(f"unknown node op {op!r}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a Callable is expected")
        if op in ("call_method", "call_module", "get_attr", "placeholder") and not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has type "
                             f"{type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: Dict[Node, None] = {}
        self.users: Dict[Node, None] = {}
        self.type = return_type
        self.meta: Dict[str, Any] = {}
        self._prev = self
        self._next = self
        self._erased = False
        self._args: Tuple[Argument, ...] = ()
        self._kwargs: Dict[str, Argument] = {}
        self._update_args_kwargs(args, kwargs)

    # ---- the linked list of a graph ---------------------------------------------------------

    @property
    def next(self) -> "Node":
        return self._next

    @property
    def prev(self) -> "Node":
        return self._prev

    def _remove_from_list(self) -> None:
        # The node's own links stay, so an iteration standing on it goes on to its old next.
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    def prepend(self, x: "Node") -> None:
        """Moves x to just before this node."""
        if x is self:
            raise AssertionError("Cannot prepend self")
        if x.graph is not self.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: "Node") -> None:
        """Moves x to just after this node."""
        self._next.prepend(x)

    # ---- arguments and uses -------------------------------------------------------------------

    @property
    def args(self) -> Tuple[Argument, ...]:
        return self._args

    @args.setter
    def args(self, a: Tuple[Argument, ...]) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> Dict[str, Argument]:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: Dict[str, Argument]) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> List["Node"]:
        """The distinct Nodes this node reads, in the order its args and kwargs name them."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args: Tuple[Argument, ...], new_kwargs: Dict[str, Argument]) -> None:
        found: Dict[Node, None] = {}

        def note(n: Node) -> Node:
            found.setdefault(n)
            return n

        self._args = map_arg(tuple(new_args), note)
        self._kwargs = map_arg(dict(new_kwargs), note)
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes = found
        for new in found:
            new.users.setdefault(self)

    def replace_all_uses_with(self, replace_with: "Node", delete_user_cb: Callable[["Node"], bool] = lambda user: True,
                              *, propagate_meta: bool = False) -> List["Node"]:
        """Every user reads replace_with instead of this node (those delete_user_cb accepts);
        returns the users changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, propagate_meta=True), "
                                     "but replace_with already has .meta keys")
            replace_with.meta.update(self.meta)
        changed = [u for u in list(self.users) if delete_user_cb(u)]
        for user in changed:
            user._replace_input(self, replace_with)
        return changed

    def replace_input_with(self, old_input: "Node", new_input: "Node") -> None:
        """This node reads new_input wherever it read old_input."""
        self._replace_input(old_input, new_input)

    def _replace_input(self, old: "Node", new: "Node") -> None:
        swap = lambda n: new if n is old else n  # noqa: E731
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ---- properties of the operation ------------------------------------------------------------

    @property
    def stack_trace(self) -> Optional[str]:
        return self.meta.get("stack_trace")

    @stack_trace.setter
    def stack_trace(self, trace: Optional[str]) -> None:
        self.meta["stack_trace"] = trace

    def is_impure(self) -> bool:
        """Whether the node has an effect besides its value (dead-code elimination keeps it)."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return self.target in _side_effectful_functions or getattr(self.target, "_is_impure", False)
        if self.op == "call_method":
            return isinstance(self.target, str) and self.target.endswith("_") and not self.target.endswith("__")
        if self.op == "call_module" and self.graph.owning_module is not None:
            try:
                return getattr(self.graph.owning_module.get_submodule(self.target), "_is_impure", False)
            except AttributeError:
                return False
        return False

    def format_node(self, placeholder_names: Optional[List[str]] = None,
                    maybe_return_typename: Optional[List[str]] = None) -> Optional[str]:
        """One line of a printed graph: `%name : [num_users=N] = op[target=...](args = ..., kwargs = ...)`;
        the output node prints as `return value`. Given placeholder_names, a placeholder's name is
        appended there and None is returned."""
        if self.op == "placeholder":
            if placeholder_names is not None:
                placeholder_names.append(self.target)
                return None
            default = f"(default={self.args[0]})" if self.args else ""
            return (f"%{self.name} : {self._typename()}[num_users={len(self.users)}] = "
                    f"placeholder[target={self.target}]{default}")
        if self.op == "output":
            if self.type is not None and maybe_return_typename is not None:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        head = (f"%{self.name} : {self._typename()}[num_users={len(self.users)}] = "
                f"{self.op}[target={_format_target(self.target)}]")
        if self.op == "get_attr":
            return head
        return (head + f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def _typename(self) -> str:
        return f"{_type_repr(self.type)} " if self.type is not None else ""

    def __repr__(self) -> str:
        return self.name


def _type_repr(t: Any) -> str:
    if isinstance(t, type):
        if t.__module__ == "builtins":
            return t.__qualname__
        if t.__module__.startswith("minitorch"):
            return "torch." + t.__qualname__
        return f"{t.__module__}.{t.__qualname__}"
    return repr(t)


# The leaf types an argument may hold (besides Nodes and containers of them).
base_types = (str, int, float, bool, complex, type(None), type(...), slice, types.FunctionType,
              minitorch.dtype, minitorch.device, minitorch.memory_format, minitorch.Size)
