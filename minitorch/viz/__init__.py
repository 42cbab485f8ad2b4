"""minitorch.viz: the graph of a model, drawn from what actually ran.

`trace(model, x)` records the forward through the Tracer dispatch key; `backward_graph(loss)`
walks the autograd graph. Both give a Graph with `to_dot()`, `to_svg()`, `save("g.svg"|"g.html")`,
`collapse(depth)` and inline display in Jupyter.
"""
from minitorch.viz._graph import Edge, Graph, Node, backward_graph, trace

__all__ = ["Edge", "Graph", "Node", "backward_graph", "trace"]
