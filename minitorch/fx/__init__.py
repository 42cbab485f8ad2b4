"""torch.fx: capture a module's forward as a Graph of operations (symbolic_trace), edit the
graph, and run it again as a GraphModule whose forward is generated Python code; Interpreter and
Transformer run a graph node by node. See torch.fx's documentation; the design note on how
minitorch's functions are recorded is in _symbolic_trace.py.
"""
from . import passes, subgraph_rewriter  # noqa: F401
from ._symbolic_trace import PH, Tracer, symbolic_trace, wrap
from .graph import Graph
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_arg
from .proxy import Proxy
from .subgraph_rewriter import replace_pattern

__all__ = ["symbolic_trace", "Tracer", "wrap", "PH", "Graph", "GraphModule", "Interpreter", "Transformer", "Node",
           "Proxy", "map_arg", "replace_pattern"]
