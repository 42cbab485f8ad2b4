"""torch.utils._pytree's core: nested Python containers (tuple, list, dict, OrderedDict, namedtuple)
flattened to a list of leaves and a TreeSpec that rebuilds them. Everything else, None included,
is a leaf, as in PyTorch's Python implementation. minitorch.func uses it for the pytrees of
inputs and outputs that vmap, grad, jacrev and the rest accept.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, List, Optional, Tuple

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
           "tree_map_", "treespec_pprint"]


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_type(x: Any) -> Optional[type]:
    """The container kind of x (namedtuple as one kind), or None for a leaf."""
    if _is_namedtuple(x):
        return _NamedTuple
    for t in (OrderedDict, dict, tuple, list):  # OrderedDict before its base class dict
        if type(x) is t:
            return t
    return None


class _NamedTuple:
    """Stands for every namedtuple class in a TreeSpec (the class itself is the context)."""


_NamedTuple.__name__ = "namedtuple"


def _children(x: Any, kind: type) -> Tuple[List[Any], Any]:
    """(children, context) of a container."""
    if kind in (dict, OrderedDict):
        keys = list(x.keys())
        return [x[k] for k in keys], keys
    if kind is _NamedTuple:
        return list(x), type(x)
    return list(x), None


def _rebuild(kind: type, context: Any, children: List[Any]) -> Any:
    if kind in (dict, OrderedDict):
        return kind(zip(context, children))
    if kind is _NamedTuple:
        return context(*children)
    return kind(children)


class TreeSpec:
    """The structure of a pytree: its container type, context (dict keys, namedtuple class) and
    the specs of its children."""

    def __init__(self, type: type, context: Any, children_specs: List["TreeSpec"]) -> None:
        self.type = type
        self._context = context
        self._children = children_specs
        self.num_leaves = sum(c.num_leaves for c in children_specs)
        self.num_children = len(children_specs)

    @property
    def context(self) -> Any:
        return self._context

    @property
    def children_specs(self) -> List["TreeSpec"]:
        return self._children

    def is_leaf(self) -> bool:
        return False

    def __repr__(self, indent: int = 0) -> str:
        prefix = f"TreeSpec({self.type.__name__}, {self._context}, ["
        body = ""
        if self.num_children > 0:
            indent += 2
            body += self._children[0].__repr__(indent)
            body += "," if self.num_children > 1 else ""
            body += ",".join("\n" + " " * indent + child.__repr__(indent) for child in self._children[1:])
        return prefix + body + "])"

    def __eq__(self, other: Any) -> bool:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return False
        return self.type is other.type and self._context == other._context and self._children == other._children

    def __hash__(self) -> int:
        return hash((self.type, repr(self)))


class LeafSpec(TreeSpec):
    def __init__(self) -> None:
        super().__init__(object, None, [])
        self.num_leaves = 1

    def is_leaf(self) -> bool:
        return True

    def __repr__(self, indent: int = 0) -> str:
        return "*"


_LEAF = LeafSpec()


def tree_flatten(tree: Any) -> Tuple[List[Any], TreeSpec]:
    """(the leaves of tree, left to right, and the spec that tree_unflatten rebuilds it from)."""
    leaves: List[Any] = []

    def walk(x: Any) -> TreeSpec:
        kind = _node_type(x)
        if kind is None:
            leaves.append(x)
            return _LEAF
        children, context = _children(x, kind)
        return TreeSpec(kind, context, [walk(c) for c in children])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves: Any, treespec: TreeSpec) -> Any:
    """The pytree of spec treespec whose leaves are leaves, in order."""
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                         f"a pytree that holds {treespec.num_leaves} items ({treespec}).")
    it = iter(leaves)

    def build(spec: TreeSpec) -> Any:
        if spec.is_leaf():
            return next(it)
        return _rebuild(spec.type, spec.context, [build(c) for c in spec.children_specs])

    return build(treespec)


def tree_leaves(tree: Any) -> List[Any]:
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> TreeSpec:
    return tree_flatten(tree)[1]


def _flatten_up_to(prefix_spec: TreeSpec, tree: Any) -> List[Any]:
    """The subtrees of tree at the leaves of prefix_spec; ValueError where tree lacks that prefix."""
    if prefix_spec.is_leaf():
        return [tree]
    kind = _node_type(tree)
    if kind is not prefix_spec.type:
        raise ValueError(f"Node type mismatch; expected {prefix_spec.type.__name__}, but got {type(tree)}.")
    children, context = _children(tree, kind)
    if len(children) != prefix_spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {prefix_spec.num_children}, but got {len(children)}.")
    if kind in (dict, OrderedDict):
        if set(context) != set(prefix_spec.context):
            raise ValueError("Node keys mismatch.")
        children = [tree[k] for k in prefix_spec.context]
    elif kind is _NamedTuple and context is not prefix_spec.context:
        raise ValueError("Node context mismatch.")
    out: List[Any] = []
    for child_spec, child in zip(prefix_spec.children_specs, children):
        out.extend(_flatten_up_to(child_spec, child))
    return out


def tree_map(func: Callable[..., Any], tree: Any, *rests: Any) -> Any:
    """tree with each leaf x replaced by func(x, *the matching subtrees of rests)."""
    leaves, spec = tree_flatten(tree)
    others = [_flatten_up_to(spec, r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func: Callable[..., Any], tree: Any, *rests: Any) -> Any:
    """tree_map for func's side effects; returns tree."""
    leaves, spec = tree_flatten(tree)
    others = [_flatten_up_to(spec, r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _broadcast_to_and_flatten(tree: Any, treespec: TreeSpec) -> Optional[List[Any]]:
    """tree (a prefix of treespec's structure) with each leaf repeated over the leaves of the
    subtree it covers; None where tree is not a prefix of treespec."""
    full = tree_unflatten([0] * treespec.num_leaves, treespec)
    leaves, spec = tree_flatten(tree)
    try:
        subtrees = _flatten_up_to(spec, full)
    except ValueError:
        return None
    out: List[Any] = []
    for x, sub in zip(leaves, subtrees):
        out.extend([x] * tree_structure(sub).num_leaves)
    return out


class _Asterisk(str):
    def __new__(cls) -> "_Asterisk":
        return super().__new__(cls, "*")

    def __repr__(self) -> str:
        return "*"


def treespec_pprint(treespec: TreeSpec) -> str:
    """treespec as the container it describes with * for each leaf: '(*, [*, *])'."""
    return repr(tree_unflatten([_Asterisk()] * treespec.num_leaves, treespec))
