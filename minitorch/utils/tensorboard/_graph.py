"""add_graph's GraphDef: the forward that minitorch.viz.trace records, as TensorBoard's graph.

PyTorch traces the model with TorchScript; minitorch has no TorchScript, but its Tracer dispatch
key records every op of one forward with its inputs, outputs and the module that ran it
(minitorch.viz.trace). Each top-level op becomes a NodeDef named by its module scope, as
PyTorch's names are ("Net/Linear[fc1]/addmm_3"), so TensorBoard folds each module into a box;
inputs, outputs and parameters become nodes too, and each node carries its `_output_shapes`.
"""
from __future__ import annotations

from typing import Dict, List, Tuple

from . import _proto as pb

_PRODUCER = 22  # VersionDef.producer, the GraphDef version PyTorch's add_graph writes


def _shape(shape) -> bytes:
    """TensorShapeProto: dim 2, each Dim: size 1."""
    return pb.f_repeated(2, (pb.f_int(1, n) for n in shape))


def _node(name: str, op: str, inputs: List[str], shapes: List[Tuple[int, ...]]) -> bytes:
    """NodeDef: name 1, op 2, input 3, attr 5 (map<string, AttrValue>: key 1, value 2);
    _output_shapes is AttrValue.list 1 -> ListValue.shape 7."""
    attr = pb.f_message(1, pb.f_repeated(7, (_shape(s) for s in shapes)))
    entry = pb.f_bytes(1, "_output_shapes") + pb.f_message(2, attr)
    return (pb.f_bytes(1, name) + pb.f_bytes(2, op) + b"".join(pb.f_bytes(3, i) for i in inputs)
            + pb.f_message(5, entry))


def graph_def(model, input_to_model, verbose: bool = False) -> bytes:
    from minitorch.viz import trace
    args = () if input_to_model is None else input_to_model
    if isinstance(args, list):
        args = tuple(args)
    graph = trace(model, args)

    def scope(path: Tuple[str, ...]) -> str:
        parts = []
        for k in range(1, len(path) + 1):
            qual, cls = graph.modules.get(path[:k], (path[k - 1], ""))  # ("", cls) is the root
            last = qual.rsplit(".", 1)[-1]
            parts.append(f"{cls}[{last}]" if qual and cls else (last or cls or type(model).__name__))
        return "/".join(parts)

    names: Dict[str, str] = {}
    for n in graph.nodes:
        if n.kind in ("input", "output"):
            names[n.id] = f"{n.kind}/{n.id}"
        elif n.kind == "param":
            names[n.id] = f"{scope(n.module)}/{n.name.rsplit('.', 1)[-1]}"
        else:
            names[n.id] = f"{scope(n.module or ('',))}/{n.name}_{n.id[2:] if n.kind == 'op' else n.id}"
    inputs: Dict[str, List[str]] = {n.id: [] for n in graph.nodes}
    shapes: Dict[str, List[Tuple[int, ...]]] = {n.id: [] for n in graph.nodes}
    for e in graph.edges:
        inputs[e.dst].append(names[e.src])
        if e.shape not in shapes[e.src]:
            shapes[e.src].append(e.shape)
    nodes = []
    for n in graph.nodes:
        op = {"input": "IO Node", "output": "IO Node", "param": "prim::GetAttr", "const": "prim::Constant"}.get(
            n.kind, f"aten::{n.name}")
        out_shapes = [tuple(n.shape)] if n.kind in ("input", "param", "output", "const") else shapes[n.id]
        nodes.append(_node(names[n.id], op, inputs[n.id], out_shapes))
        if verbose:
            print(f"{names[n.id]} = {op}({', '.join(inputs[n.id])}) {out_shapes}")
    return pb.f_repeated(1, nodes) + pb.f_message(4, pb.f_int(1, _PRODUCER))  # GraphDef: node 1, versions 4
