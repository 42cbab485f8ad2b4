"""The graph of what ran: op nodes, tensor edges and module groups, from the Tracer dispatch key.

`trace(model, x)` turns the Tracer key on (`_C._tracer_start`) for one forward: every op that
goes through the dispatcher is recorded in C with its nesting depth, the key that computed it and
its input and output tensors (kept alive for the trace, so identities are stable). nn.Module calls
mark where each module's ops begin and end (the scope hook in nn/modules/module.py). The top-level
ops become nodes; the ops a composite called are kept as its `parts` (linear: t, addmm).
`backward_graph(loss)` walks loss.grad_fn's next_functions instead, as torchviz's make_dot does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from minitorch import _C
from minitorch.nn.modules import module as _module


@dataclass
class Node:
    id: str
    kind: str  # "op", "input", "param", "output", "const", "module", "grad_fn", "leaf"
    name: str
    module: Tuple[str, ...] = ()  # module path, outermost first ("" is the root)
    key: str = ""
    kernel: str = ""
    shape: Tuple[int, ...] = ()
    parts: List[Tuple[int, str, str]] = field(default_factory=list)  # (depth, op, key) of nested ops

    @property
    def label(self) -> str:
        if self.kind in ("input", "param", "output", "const", "leaf"):
            return f"{self.name}\n{_shape(self.shape)}"
        if self.kind == "op":
            key = "Composite" if self.key == "CompositeImplicitAutograd" else self.key
            parts = [op for d, op, _ in self.parts if d == 1]
            return f"{self.name}\n[{key}]" + (f"\n= {' + '.join(parts)}" if parts else "")
        return self.name


@dataclass
class Edge:
    src: str
    dst: str
    shape: Tuple[int, ...] = ()
    dtype: str = ""
    device: str = ""

    @property
    def label(self) -> str:
        return _shape(self.shape) if self.dtype else ""


def _shape(shape: Tuple[int, ...]) -> str:
    return str(tuple(shape))


class Graph:
    """Nodes, edges and the module tree ({path: (qualified name, class name)})."""

    def __init__(self, nodes: List[Node], edges: List[Edge], modules: Dict[Tuple[str, ...], Tuple[str, str]],
                 title: str = "") -> None:
        self.nodes = nodes
        self.edges = edges
        self.modules = modules
        self.title = title

    def node(self, id: str) -> Node:
        return next(n for n in self.nodes if n.id == id)

    def collapse(self, depth: int) -> "Graph":
        """A copy where each module nested deeper than `depth` (the root module is depth 0) is one node."""
        nodes: List[Node] = []
        where: Dict[str, str] = {}
        for n in self.nodes:
            if len(n.module) > depth:
                path = n.module[: depth + 1]
                mid = "module:" + "/".join(path)
                where[n.id] = mid
                if not any(m.id == mid for m in nodes):
                    qual, cls = self.modules[path]
                    nodes.append(Node(mid, "module", f"{qual}: {cls}" if qual else cls, path[:-1]))
            else:
                where[n.id] = n.id
                nodes.append(n)
        edges: List[Edge] = []
        seen = set()
        for e in self.edges:
            s, d = where[e.src], where[e.dst]
            if s != d and (s, d, e.shape) not in seen:
                seen.add((s, d, e.shape))
                edges.append(Edge(s, d, e.shape, e.dtype, e.device))
        modules = {p: v for p, v in self.modules.items() if len(p) <= depth}
        return Graph(nodes, edges, modules, self.title)

    # renderers (minitorch/viz/_render.py)
    def to_dot(self) -> str:
        from minitorch.viz import _render
        return _render.to_dot(self)

    def to_svg(self, use_dot: bool = False) -> str:
        from minitorch.viz import _render
        return _render.to_svg(self, use_dot)

    def to_html(self) -> str:
        from minitorch.viz import _render
        return _render.to_html(self)

    def save(self, path: str) -> None:
        """Writes Graphviz source (.dot/.gv), an SVG (.svg) or a self-contained page (.html)."""
        ext = str(path).rsplit(".", 1)[-1].lower()
        text = {"svg": self.to_svg, "html": self.to_html, "htm": self.to_html, "dot": self.to_dot,
                "gv": self.to_dot}.get(ext)
        if text is None:
            raise ValueError(f"unknown graph format '.{ext}' (use .svg, .html or .dot)")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text())

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        from minitorch.viz import _render
        return _render.to_html_fragment(self)

    def __repr__(self) -> str:
        kinds: Dict[str, int] = {}
        for n in self.nodes:
            kinds[n.kind] = kinds.get(n.kind, 0) + 1
        return f"Graph({', '.join(f'{v} {k}' for k, v in kinds.items())}, {len(self.edges)} edges)"


class _Scopes:
    """What the module hook calls: marks, by the tracer's op count, where each module call begins and ends."""

    def __init__(self) -> None:
        self.events: List[Tuple[int, Any]] = []  # (op count, module or None for an exit)

    def push(self, m: Any) -> None:
        self.events.append((_C._tracer_count(), m))

    def pop(self) -> None:
        self.events.append((_C._tracer_count(), None))


def _flat(x: Any) -> List[Any]:
    if isinstance(x, _C.TensorBase):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _flat(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _flat(v)]
    return []


def _tensor_edge(src: str, dst: str, t: Any) -> Edge:
    return Edge(src, dst, tuple(t.shape), str(t.dtype).replace("minitorch.", ""), str(t.device))


def trace(model: Any, example_input: Any) -> Graph:
    """Runs model(example_input) once with the Tracer key on and returns the graph of what ran."""
    args = example_input if isinstance(example_input, tuple) else (example_input,)
    scopes = _Scopes()
    _module._viz_scope = scopes
    _C._tracer_start()
    try:
        result = model(*args)
    finally:
        records = _C._tracer_stop()
        _module._viz_scope = None

    names = {id(m): q for q, m in model.named_modules()} if hasattr(model, "named_modules") else {}
    params = {id(p): q for q, p in model.named_parameters()} if hasattr(model, "named_parameters") else {}
    modules: Dict[Tuple[str, ...], Tuple[str, str]] = {}
    nodes: List[Node] = []
    edges: List[Edge] = []
    producer: Dict[int, str] = {}

    for k, t in enumerate(_flat(args)):
        nid = f"input{k}"
        nodes.append(Node(nid, "input", "input" if len(_flat(args)) == 1 else f"input {k}", (), shape=tuple(t.shape)))
        producer[id(t)] = nid

    def param_node(t: Any) -> str:
        qual = params[id(t)]
        owner = tuple(qual.split(".")[:-1])
        path = ("",) + tuple(".".join(owner[: i + 1]) for i in range(len(owner)))
        nid = "param:" + qual
        nodes.append(Node(nid, "param", qual, path, shape=tuple(t.shape)))
        producer[id(t)] = nid
        return nid

    stack: List[str] = []
    ev = 0
    last_top: Optional[Node] = None
    for i, (op, depth, key, kernel, ok, ins, outs, _call) in enumerate(records):
        while ev < len(scopes.events) and scopes.events[ev][0] <= i:
            m = scopes.events[ev][1]
            if m is None:
                stack.pop()
            else:
                q = names.get(id(m), type(m).__name__)
                stack.append(q)
                modules.setdefault(tuple(stack), (q, type(m).__name__))
            ev += 1
        if depth > 0:
            if last_top is not None:
                last_top.parts.append((depth, op, key))
            continue
        node = Node(f"op{i}", "op", op, tuple(stack), key, kernel)
        nodes.append(node)
        last_top = node
        for t in ins:
            src = producer.get(id(t))
            if src is None:
                if id(t) in params:
                    src = param_node(t)
                else:
                    src = f"const{len(nodes)}"
                    nodes.append(Node(src, "const", "tensor", tuple(stack), shape=tuple(t.shape)))
                    producer[id(t)] = src
            edges.append(_tensor_edge(src, node.id, t))
        for t in outs:
            producer[id(t)] = node.id

    for k, t in enumerate(_flat(result)):
        nid = f"output{k}"
        nodes.append(Node(nid, "output", "output" if len(_flat(result)) == 1 else f"output {k}", (),
                          shape=tuple(t.shape)))
        src = producer.get(id(t))
        if src is not None:
            edges.append(_tensor_edge(src, nid, t))
    del records  # releases the tensors the tracer kept
    return Graph(nodes, edges, modules, type(model).__name__)


def backward_graph(loss: Any, params: Optional[Dict[str, Any]] = None) -> Graph:
    """The autograd graph of `loss`: grad_fn nodes and AccumulateGrad leaves (torchviz's make_dot)."""
    names = {id(p): q for q, p in (params or {}).items()}
    nodes: List[Node] = []
    edges: List[Edge] = []
    ids: Dict[int, str] = {}

    seen: List[Any] = []  # keeps each visited fn alive, so that no id() is reused

    def enter(fn: Any) -> str:
        nid = f"fn{len(ids)}"
        ids[id(fn)] = nid
        seen.append(fn)
        var = getattr(fn, "variable", None)
        if var is not None:
            nodes.append(Node(nid, "leaf", names.get(id(var), fn.name()), shape=tuple(var.shape)))
        else:
            nodes.append(Node(nid, "grad_fn", fn.name()))
        return nid

    def visit(root: Any) -> str:
        # Depth first with a stack of its own, not Python's: a graph 10^5 nodes deep (a loss
        # summed over a long loop) must not raise RecursionError. Nodes are numbered in
        # pre-order, an edge is added once its source's subtree is done.
        stack = [(enter(root), iter(root.next_functions))]
        while stack:
            nid, rest = stack[-1]
            for nxt, _ in rest:
                if nxt is None:
                    continue
                if id(nxt) in ids:
                    edges.append(Edge(ids[id(nxt)], nid))
                    continue
                stack.append((enter(nxt), iter(nxt.next_functions)))
                break
            else:
                stack.pop()
                if stack:
                    edges.append(Edge(nid, stack[-1][0]))
        return ids[id(root)]

    out = Node("output", "output", "loss", shape=tuple(loss.shape))
    if loss.grad_fn is not None:
        root = visit(loss.grad_fn)
        nodes.append(out)
        edges.append(Edge(root, "output", tuple(loss.shape), str(loss.dtype).replace("minitorch.", ""),
                          str(loss.device)))
    else:
        nodes.append(out)
    return Graph(nodes, edges, {}, "backward")
