"""torch.fx.subgraph_rewriter: replace_pattern finds every occurrence of a pattern (a function or
GraphModule, traced) in a GraphModule's graph and puts the replacement's nodes in its place.

A match maps each pattern node to a graph node, starting from the pattern's returned values (the
anchors) and walking arguments backwards: an op node matches a node of the same op, target and
argument structure; a pattern placeholder matches any value, the same value wherever it is used.
The matched nodes other than the anchors must be read only inside the match (else removing them
would change the program), and matches do not overlap.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Union

from ._symbolic_trace import symbolic_trace
from .graph import Graph
from .graph_module import GraphModule, _copy_attr
from .node import Node

__all__ = ["Match", "replace_pattern"]


class Match(NamedTuple):
    anchor: Node  # the graph node matched to the pattern's (first) returned node
    nodes_map: Dict[Node, Node]  # pattern node -> graph node


def _as_graph(fn: Union[Callable, GraphModule]) -> GraphModule:
    return fn if isinstance(fn, GraphModule) else symbolic_trace(fn)


class _Matcher:
    def __init__(self, pattern: Graph) -> None:
        self.pattern = pattern
        out = next(n for n in pattern.nodes if n.op == "output")
        value = out.args[0]
        self.anchors: List[Node] = list(value) if isinstance(value, (tuple, list)) else [value]
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]

    def match_at(self, anchor: Node, others: List[Node]) -> Optional[Dict[Node, Node]]:
        """The match whose first anchor is `anchor`, the other anchors among `others`."""
        nodes_map: Dict[Node, Node] = {}
        if not self._match(self.anchors[0], anchor, nodes_map):
            return None
        for p_anchor in self.anchors[1:]:
            if p_anchor in nodes_map:
                continue
            for cand in others:
                trial = dict(nodes_map)
                if self._match(p_anchor, cand, trial):
                    nodes_map = trial
                    break
            else:
                return None
        return nodes_map if self._self_contained(nodes_map) else None

    def _match(self, p: Node, g: Node, nodes_map: Dict[Node, Node]) -> bool:
        if p in nodes_map:
            return nodes_map[p] is g
        if p.op == "placeholder":
            nodes_map[p] = g
            return True
        if g.op != p.op or g.target != p.target or g in nodes_map.values():
            return False
        if len(g.args) != len(p.args) or set(g.kwargs) != set(p.kwargs):
            return False
        nodes_map[p] = g
        pairs = list(zip(p.args, g.args)) + [(p.kwargs[k], g.kwargs[k]) for k in p.kwargs]
        return all(self._match_arg(pa, ga, nodes_map) for pa, ga in pairs)

    def _match_arg(self, pa: Any, ga: Any, nodes_map: Dict[Node, Node]) -> bool:
        if isinstance(pa, Node):
            return isinstance(ga, Node) and self._match(pa, ga, nodes_map)
        if isinstance(pa, (tuple, list)):
            return (type(pa) is type(ga) and len(pa) == len(ga)
                    and all(self._match_arg(a, b, nodes_map) for a, b in zip(pa, ga)))
        return not isinstance(ga, Node) and pa == ga

    def _self_contained(self, nodes_map: Dict[Node, Node]) -> bool:
        inner = {g for p, g in nodes_map.items() if p.op != "placeholder"}
        anchors = {nodes_map[a] for a in self.anchors}
        return all(u in inner for g in inner - anchors for u in g.users)


def replace_pattern(gm: GraphModule, pattern: Union[Callable, GraphModule],
                    replacement: Union[Callable, GraphModule]) -> List[Match]:
    """Replaces every non-overlapping occurrence of pattern in gm's graph by replacement (both
    take the same inputs and return as many values), recompiles gm and returns the matches."""
    pattern_gm, replacement_gm = _as_graph(pattern), _as_graph(replacement)
    matcher = _Matcher(pattern_gm.graph)
    graph = gm.graph
    matches: List[Match] = []
    taken: set = set()
    candidates = list(graph.nodes)
    for node in candidates:
        nodes_map = matcher.match_at(node, candidates)
        if nodes_map is None:
            continue
        inner = {g for p, g in nodes_map.items() if p.op != "placeholder"}
        if inner & taken:
            continue
        taken |= inner
        matches.append(Match(anchor=node, nodes_map=nodes_map))

    for match in matches:
        _replace_one(gm, graph, matcher, match.nodes_map, replacement_gm)
    gm.recompile()
    return matches


def _replace_one(gm: GraphModule, graph: Graph, matcher: _Matcher, nodes_map: Dict[Node, Node],
                 replacement_gm: GraphModule) -> None:
    repl = replacement_gm.graph
    repl_placeholders = [n for n in repl.nodes if n.op == "placeholder"]
    if len(repl_placeholders) != len(matcher.placeholders):
        raise RuntimeError("replace_pattern: the pattern and the replacement must take the same number of inputs")
    val_map = {rp: nodes_map[pp] for rp, pp in zip(repl_placeholders, matcher.placeholders)}
    for node in repl.nodes:
        if node.op in ("get_attr", "call_module") and not _has_path(gm, node.target):
            _copy_attr(replacement_gm, gm, node.target)
    # insert before the first matched anchor's position: all inputs are defined there
    g_anchors = [nodes_map[a] for a in matcher.anchors]
    first = next(n for n in graph.nodes if n in g_anchors)
    with graph.inserting_before(first):
        copied = graph.graph_copy(repl, val_map)
    copied = list(copied) if isinstance(copied, (tuple, list)) else [copied]
    if len(copied) != len(g_anchors):
        raise RuntimeError("replace_pattern: the pattern and the replacement must return as many values")
    for old, new in zip(g_anchors, copied):
        if isinstance(new, Node):
            old.replace_all_uses_with(new)
        else:
            raise RuntimeError(f"replace_pattern: the replacement returns a constant ({new!r}), not a value "
                               "the graph computes")
    for p in reversed(list(matcher.pattern.nodes)):
        if p.op not in ("placeholder", "output") and p in nodes_map:
            g = nodes_map[p]
            if not g.users:
                graph.erase_node(g)


def _has_path(mod: Any, target: str) -> bool:
    for atom in target.split("."):
        if not hasattr(mod, atom):
            return False
        mod = getattr(mod, atom)
    return True
