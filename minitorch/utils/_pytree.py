"""torch.utils._pytree: nested Python containers flattened to a list of leaves and a TreeSpec that
rebuilds them. The containers are the registered node types: tuple, list, dict, OrderedDict,
defaultdict, deque, every namedtuple (as one kind) and every structseq (minitorch's return types,
as PyTorch registers torch.return_types), and what register_pytree_node adds; everything else,
None included, is a leaf, as in PyTorch's Python implementation. Each node type may also say
the key of each child (SequenceKey, MappingKey, GetAttrKey), for tree_flatten_with_path.
minitorch.func uses it for the pytrees of inputs and outputs that vmap, grad, jacrev and the
rest accept.
"""
from __future__ import annotations

import dataclasses
import functools
import threading
import types
from collections import OrderedDict, defaultdict, deque
from typing import Any, Callable, Dict, Iterable, List, NamedTuple, Optional, Tuple

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map",
           "tree_map_", "treespec_pprint", "register_pytree_node", "tree_iter", "tree_is_leaf", "tree_map_only",
           "tree_map_only_", "tree_any", "tree_all", "tree_any_only", "tree_all_only", "map_only",
           "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr", "key_get",
           "SequenceKey", "MappingKey", "GetAttrKey"]


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _is_structseq(x: Any) -> bool:
    cls = type(x)
    return isinstance(x, tuple) and hasattr(cls, "n_fields") and hasattr(cls, "n_sequence_fields")


class _NamedTuple:
    """Stands for every namedtuple class in a TreeSpec (the class itself is the context)."""


_NamedTuple.__name__ = "namedtuple"


class _StructSeq:
    """The node kind of every structseq class (each is its own TreeSpec type)."""


# ---- the keys of a node's children ----

@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"

    def get(self, sequence: Any) -> Any:
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True, slots=True)
class MappingKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"

    def get(self, mapping: Any) -> Any:
        return mapping[self.key]


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"

    def get(self, obj: Any) -> Any:
        return getattr(obj, self.name)


def keystr(kp: Tuple[Any, ...]) -> str:
    """A key path as text: "['a'][1].x"."""
    return "".join(str(k) for k in kp)


def key_get(obj: Any, kp: Tuple[Any, ...]) -> Any:
    """The part of obj at key path kp."""
    for k in kp:
        obj = k.get(obj)
    return obj


# ---- the registry of node types ----

class NodeDef(NamedTuple):
    type: Any
    flatten_fn: Callable[[Any], Tuple[List[Any], Any]]
    unflatten_fn: Callable[[Iterable[Any], Any], Any]
    flatten_with_keys_fn: Optional[Callable[[Any], Tuple[List[Tuple[Any, Any]], Any]]]


SUPPORTED_NODES: Dict[Any, NodeDef] = {}
_NODE_REGISTRY_LOCK = threading.Lock()


def _private_register_pytree_node(cls: Any, flatten_fn: Callable, unflatten_fn: Callable, *,
                                  flatten_with_keys_fn: Optional[Callable] = None, **_: Any) -> None:
    with _NODE_REGISTRY_LOCK:
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


def register_pytree_node(cls: type, flatten_fn: Callable[[Any], Tuple[List[Any], Any]],
                         unflatten_fn: Callable[[Iterable[Any], Any], Any], *,
                         serialized_type_name: Optional[str] = None, to_dumpable_context: Optional[Callable] = None,
                         from_dumpable_context: Optional[Callable] = None,
                         flatten_with_keys_fn: Optional[Callable] = None) -> None:
    """Registers cls as a container: flatten_fn(x) -> (children, context), unflatten_fn(children,
    context) -> x, and optionally flatten_with_keys_fn(x) -> ([(key, child)], context) for the
    key paths. serialized_type_name and the dumpable contexts are accepted for PyTorch's
    signature (minitorch serializes no TreeSpec)."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    if (to_dumpable_context is None) ^ (from_dumpable_context is None):
        raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must "
                         "be None or registered.")
    _private_register_pytree_node(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn=flatten_with_keys_fn)


def _with_keys(flatten: Callable, key: Callable[[Any, Any, int], Any]) -> Callable:
    """A flatten_with_keys_fn from flatten and key(node, context, position)."""
    def flatten_with_keys(x: Any) -> Tuple[List[Tuple[Any, Any]], Any]:
        children, context = flatten(x)
        return [(key(x, context, i), c) for i, c in enumerate(children)], context
    return flatten_with_keys


def _seq_key(x: Any, context: Any, i: int) -> Any:
    return SequenceKey(i)


def _map_key(x: Any, context: Any, i: int) -> Any:
    return MappingKey((context[1] if type(x) is defaultdict else context)[i])


def _dict_flatten(d: Any) -> Tuple[List[Any], Any]:
    keys = list(d.keys())
    return [d[k] for k in keys], keys


def _defaultdict_flatten(d: Any) -> Tuple[List[Any], Any]:
    values, keys = _dict_flatten(d)
    return values, [d.default_factory, keys]


for _cls, _flatten, _unflatten, _key in (
        (tuple, lambda x: (list(x), None), lambda v, c: tuple(v), _seq_key),
        (list, lambda x: (list(x), None), lambda v, c: list(v), _seq_key),
        (dict, _dict_flatten, lambda v, c: dict(zip(c, v)), _map_key),
        (_NamedTuple, lambda x: (list(x), type(x)), lambda v, c: c(*v),
         lambda x, c, i: GetAttrKey(c._fields[i])),
        (OrderedDict, _dict_flatten, lambda v, c: OrderedDict(zip(c, v)), _map_key),
        (defaultdict, _defaultdict_flatten, lambda v, c: defaultdict(c[0], zip(c[1], v)), _map_key),
        (deque, lambda x: (list(x), x.maxlen), lambda v, c: deque(v, maxlen=c), _seq_key),
        (_StructSeq, lambda x: (list(x), None), None, _seq_key)):
    _private_register_pytree_node(_cls, _flatten, _unflatten, flatten_with_keys_fn=_with_keys(_flatten, _key))


def _node_type(x: Any) -> Optional[Any]:
    """The registered node type of x (every namedtuple as one kind), or None for a leaf."""
    cls = type(x)
    if cls in SUPPORTED_NODES and cls is not _NamedTuple and cls is not _StructSeq:
        return cls
    if _is_namedtuple(x):
        return _NamedTuple
    if _is_structseq(x):
        return cls
    return None


def _node_def(kind: Any) -> NodeDef:
    found = SUPPORTED_NODES.get(kind)
    if found is None:  # a structseq class: its values, rebuilt by the class
        base = SUPPORTED_NODES[_StructSeq]
        found = NodeDef(kind, base.flatten_fn, lambda v, c, kind=kind: kind(list(v)), base.flatten_with_keys_fn)
    return found


def _children(x: Any, kind: Any) -> Tuple[List[Any], Any]:
    """(children, context) of a container."""
    children, context = _node_def(kind).flatten_fn(x)
    return list(children), context


def _rebuild(kind: Any, context: Any, children: List[Any]) -> Any:
    return _node_def(kind).unflatten_fn(children, context)


def tree_is_leaf(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    """Whether tree is a leaf: is_leaf says so, or it is no registered container."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _node_type(tree) is None


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


def tree_flatten(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> Tuple[List[Any], TreeSpec]:
    """(the leaves of tree, left to right, and the spec that tree_unflatten rebuilds it from)."""
    leaves: List[Any] = []

    def walk(x: Any) -> TreeSpec:
        kind = None if is_leaf is not None and is_leaf(x) else _node_type(x)
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


def tree_iter(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> Iterable[Any]:
    """The leaves of tree, left to right, one at a time."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in _children(tree, _node_type(tree))[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> List[Any]:
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> TreeSpec:
    return tree_flatten(tree, is_leaf)[1]


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
    if kind in (dict, OrderedDict, defaultdict):
        keys, want = (context[1], prefix_spec.context[1]) if kind is defaultdict else (context, prefix_spec.context)
        if set(keys) != set(want):
            raise ValueError("Node keys mismatch.")
        children = [tree[k] for k in want]
    elif kind is _NamedTuple and context is not prefix_spec.context:
        raise ValueError("Node context mismatch.")
    out: List[Any] = []
    for child_spec, child in zip(prefix_spec.children_specs, children):
        out.extend(_flatten_up_to(child_spec, child))
    return out


def tree_map(func: Callable[..., Any], tree: Any, *rests: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """tree with each leaf x replaced by func(x, *the matching subtrees of rests)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_up_to(spec, r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func: Callable[..., Any], tree: Any, *rests: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """tree_map for func's side effects; returns tree."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [_flatten_up_to(spec, r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def map_only(type_or_types_or_pred: Any) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """A decorator: func applied to the leaves of the given type(s), or that the predicate
    accepts; every other leaf passes through."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x: Any) -> bool:
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func: Callable[[Any], Any]) -> Callable[[Any], Any]:
        @functools.wraps(func)
        def wrapped(x: Any) -> Any:
            return func(x) if pred(x) else x
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred: Any, /, func: Callable[[Any], Any], tree: Any,
                  is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """tree_map over the leaves of the given type(s) (or that a predicate accepts) only."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred: Any, /, func: Callable[[Any], Any], tree: Any,
                   is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_any(pred: Callable[[Any], bool], tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all(pred: Callable[[Any], bool], tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any_only(type_or_types: Any, /, pred: Callable[[Any], bool], tree: Any,
                  is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_all_only(type_or_types: Any, /, pred: Callable[[Any], bool], tree: Any,
                  is_leaf: Optional[Callable[[Any], bool]] = None) -> bool:
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


# ---- key paths ----

def _key_paths(path: Tuple[Any, ...], tree: Any, is_leaf: Optional[Callable[[Any], bool]]) -> Iterable[Tuple[Any, Any]]:
    if tree_is_leaf(tree, is_leaf):
        yield path, tree
        return
    kind = _node_type(tree)
    with_keys = _node_def(kind).flatten_with_keys_fn
    if with_keys is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {kind}. "
                         "Please pass a flatten_with_keys_fn argument to register_pytree_node.")
    for key, child in with_keys(tree)[0]:
        yield from _key_paths((*path, key), child, is_leaf)


def tree_flatten_with_path(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None
                           ) -> Tuple[List[Tuple[Tuple[Any, ...], Any]], TreeSpec]:
    """tree_flatten, each leaf with its key path: ([((MappingKey('a'), SequenceKey(0)), leaf), ...], spec)."""
    spec = tree_flatten(tree, is_leaf)[1]
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None
                          ) -> List[Tuple[Tuple[Any, ...], Any]]:
    return list(_key_paths((), tree, is_leaf))


def tree_map_with_path(func: Callable[..., Any], tree: Any, *rests: Any,
                       is_leaf: Optional[Callable[[Any], bool]] = None) -> Any:
    """tree_map whose func also takes each leaf's key path first."""
    pairs, spec = tree_flatten_with_path(tree, is_leaf)
    others = [_flatten_up_to(spec, r) for r in rests]
    return tree_unflatten([func(kp, x, *xs) for (kp, x), *xs in zip(pairs, *others)], spec)


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
