"""torch.jit.trace: one call recorded through the dispatcher's Tracer key (csrc/tracer/), its
top-level ops (depth 0: a composite's own calls are left to the composite) turned into a Graph
(jit/_graph.py) that the traced module's forward replays. As PyTorch's tracer, the recording
freezes control flow and Python values: converting a tensor to a Python value while tracing warns
TracerWarning (csrc/python/tracer.c), and check_trace traces again and compares."""
from __future__ import annotations

import copy
import inspect
import os
import threading
import warnings
from typing import Any, Dict, List, Optional, Tuple

from .. import _C
from ..nn.modules.module import Module
from ._graph import Graph, Node, Value, Values, graph_inputs, values_in


class TracerWarning(Warning):
    """Warns that a trace may not generalize: it recorded a Python value computed from a tensor."""

    @staticmethod
    def ignore_lib_warnings() -> None:
        warnings.filterwarnings("ignore", category=TracerWarning, module="minitorch.(?!jit)")


class TracingCheckError(Exception):
    """check_trace found that a second trace, or its outputs, differ from the first."""

    def __init__(self, graph_diff_error: Optional[str], tensor_compare_error: Optional[str],
                 extra_msg: Optional[str] = None) -> None:
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error + "\n"
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across invocations. This often "
                             "indicates that the tracer has encountered untraceable code.\n" + tensor_compare_error)
        super().__init__(self.message)


_state = threading.local()
# minitorch's own files: a size they read is not the user's (see _C._tracer_sizes_read)
_LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_tracing() -> bool:
    return getattr(_state, "depth", 0) > 0


def _is_tensor(o: Any) -> bool:
    return isinstance(o, _C.TensorBase)


def _input_names(fn: Any, n: int) -> List[str]:
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind != p.VAR_POSITIONAL]
    return (names + [f"input.{k}" for k in range(n)])[:n]


class _Calls:
    """The submodule calls of a trace, marked by forward hooks with the tracer's record count
    (as minitorch.viz marks its module scopes): each submodule's first call, whose records
    become that submodule's own graph (traced.dg.code, as PyTorch gives)."""

    def __init__(self, owner: Optional[Module]) -> None:
        self.calls: List[dict] = []
        self.names: Dict[int, str] = {}
        self.handles: List[Any] = []
        self.open: List[dict] = []
        if owner is None:
            return
        for name, m in owner.named_modules():
            if name and id(m) not in self.names:
                self.names[id(m)] = name
                self.handles.append(m.register_forward_pre_hook(self.enter, with_kwargs=True))
                self.handles.append(m.register_forward_hook(self.leave, with_kwargs=True))

    def enter(self, m: Module, args: tuple, kwargs: dict) -> None:
        first = not kwargs and all(c["module"] is not m for c in self.calls + self.open)
        self.open.append({"module": m, "start": _C._tracer_count(), "args": args, "keep": first})

    def leave(self, m: Module, args: tuple, kwargs: dict, output: Any) -> None:
        call = self.open.pop()
        if call["keep"]:
            call.update(end=_C._tracer_count(), output=output, name=self.names[id(m)])
            self.calls.append(call)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def record(fn: Any, args: tuple, owner: Optional[Module], self_type: Optional[str]) -> Tuple[Graph, Any]:
    """Calls fn(*args) with the tracer on: the Graph of what it did, and its result. With an
    owner module, graph.submodules maps each called submodule's dotted name to its own Graph."""
    values = Values()
    template = graph_inputs(args, values)
    attrs_by_id: Dict[int, str] = {}
    if owner is not None:
        for name, t in list(owner.named_parameters(remove_duplicate=False)) + list(owner.named_buffers()):
            attrs_by_id.setdefault(id(t), name)
    attrs: Dict[int, str] = {}
    constants: Dict[int, Any] = {}
    nodes: List[Tuple[int, Node]] = []
    objects: Dict[int, Any] = {}  # each value's tensor, while the submodules' graphs are cut out

    def value_of(t: Any) -> Value:
        if id(t) in values.env:
            return values.env[id(t)]
        v = values.new(t)
        objects[v.index] = t
        if id(t) in attrs_by_id:
            attrs[v.index] = attrs_by_id[id(t)]
        else:
            constants[v.index] = t
        return v

    def template_of(a: Any) -> Any:
        if _is_tensor(a):
            return value_of(a)
        if type(a) in (list, tuple):
            return type(a)(template_of(x) for x in a)
        return a

    calls = _Calls(owner)
    _C._tracer_warnings(TracerWarning, _LIBRARY)
    _C._tracer_start()
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        result = fn(*args)
    finally:
        _state.depth -= 1
        records = _C._tracer_stop()
        sizes_read = _C._tracer_sizes_read()
        _C._tracer_warnings(None)
        calls.remove()

    def mark(i: int) -> None:
        """The inputs of the calls that start at record i, the outputs of those that end there."""
        for c in calls.calls:
            if c["start"] == i:
                c["inputs"] = _call_inputs(c["args"], template_of)
        for c in calls.calls:
            if c["end"] == i and c.get("inputs") is not None:
                c["out"] = _call_output(c["output"], value_of)

    for i, (op, depth, _key, _kernel, ok, _ins, outs, call) in enumerate(records):
        mark(i)
        if depth != 0 or not ok or call is None:
            continue
        node = Node(op, template_of(call[0]), {k: template_of(v) for k, v in call[1].items()}, [], [])
        node.outputs = [values.new(o).index for o in outs]
        objects.update(zip(node.outputs, outs))
        nodes.append((i, node))
    mark(len(records))
    output = _output_template(result, value_of)
    nodes = _live(nodes, values_in((output, [c.get("out") for c in calls.calls])))
    used = {v.index for v in values_in(([n.args for _, n in nodes], [n.kwargs for _, n in nodes], output))}
    attrs = {k: path for k, path in attrs.items() if k in used}
    constants = {k: t for k, t in constants.items() if k in used}
    names = _input_names(getattr(owner, "forward", fn) if owner is not None else fn, len(values_in(template)))
    graph = Graph(names, template, attrs, constants, [n for _, n in nodes], output, values.types, self_type)
    graph.submodules = {c["name"]: _cut(c, nodes, attrs, objects, values.types) for c in calls.calls
                        if c.get("inputs") is not None and c.get("out") is not None}
    for g in [graph, *graph.submodules.values()]:
        g.sizes_frozen = sizes_read
        g.input_shapes = [values.shapes[v.index] for v in values_in(g.input_template)]
    del records
    return graph, result


def _pure(op: str) -> bool:
    """Whether leaving out an unused call of op changes nothing else: not in place, no state
    (batch norm's running statistics) and no random draws (a generator's state)."""
    schema = _C._op_info(op)["schema"]
    return not op.endswith("_") and not _C._op_info(op)["inplace"] and "running_" not in schema and (
        "Generator" not in schema) and "(a!) " not in schema.replace("(a!)? out", "")


def _live(nodes: List[Tuple[int, Node]], used: List[Value]) -> List[Tuple[int, Node]]:
    """nodes without the pure ones whose results nothing uses (as PyTorch's dead code
    elimination leaves out the x.sum() > 0 that a frozen branch computed)."""
    live = {v.index for v in used}
    kept = []
    for i, node in reversed(nodes):
        if _pure(node.op) and not live.intersection(node.outputs):
            continue
        live.update(v.index for v in node.inputs())
        kept.append((i, node))
    return kept[::-1]


def _call_inputs(args: tuple, template_of: Any) -> Optional[tuple]:
    """A submodule call's arguments as a template, None if any is not a tensor (no graph then)."""
    return template_of(args) if _only_tensors(args) else None


def _only_tensors(o: Any) -> bool:
    if _is_tensor(o):
        return True
    if type(o) in (list, tuple):
        return all(_only_tensors(x) for x in o)
    return False


def _call_output(o: Any, value_of: Any) -> Any:
    try:
        return _output_template(o, value_of)
    except RuntimeError:  # a submodule that returns a Python value has no graph of its own
        return None


def _cut(call: dict, nodes: List[Tuple[int, Node]], attrs: Dict[int, str], objects: Dict[int, Any],
         types: Dict[int, str]) -> Graph:
    """The graph of one submodule call: the top-level records made during it, its arguments as
    inputs, the parameters under its name as its attributes, other outside values as constants."""
    mine = [n for i, n in nodes if call["start"] <= i < call["end"]]
    inputs = values_in(call["inputs"])
    made = {k for n in mine for k in n.outputs} | {v.index for v in inputs}
    prefix = call["name"] + "."
    sub_attrs, sub_constants = {}, {}
    for v in values_in(([n.args for n in mine], [n.kwargs for n in mine], call["out"])):
        if v.index in made:
            continue
        path = attrs.get(v.index, "")
        if path.startswith(prefix):
            sub_attrs[v.index] = path[len(prefix):]
        else:
            sub_constants[v.index] = objects[v.index]
    m = call["module"]
    return Graph(_input_names(m.forward, len(inputs)), call["inputs"], sub_attrs, sub_constants, mine, call["out"],
                 types, qualified_type(m))


def qualified_type(mod: Any) -> str:
    """The class's name as TorchScript's types print it (__torch__.<module>.<class>)."""
    cls = type(mod)
    module = cls.__module__.replace("minitorch", "torch")
    return cls.__qualname__ if module == "__main__" else f"{module}.{cls.__qualname__}"


def _output_template(o: Any, value_of: Any) -> Any:
    if _is_tensor(o):
        return value_of(o)
    if type(o) in (list, tuple) or (isinstance(o, tuple) and hasattr(o, "_fields")):
        return tuple(_output_template(x, value_of) for x in o) if isinstance(o, tuple) else [
            _output_template(x, value_of) for x in o]
    if isinstance(o, dict):
        return {k: _output_template(v, value_of) for k, v in o.items()}
    raise RuntimeError("Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from "
                       f"traced functions (got {type(o).__name__})")


def _as_tuple(example_inputs: Any) -> tuple:
    """The call's arguments, as PyTorch's make_tuple: a tensor or a dict is the one argument,
    another iterable (a list) the arguments."""
    if _is_tensor(example_inputs) or isinstance(example_inputs, dict):
        return (example_inputs,)
    try:
        return tuple(example_inputs)
    except TypeError:
        return (example_inputs,)


def _flat_tensors(o: Any) -> List[Any]:
    found: List[Any] = []
    _output_template(o, lambda t: found.append(t))
    return found


def _compare_outputs(got: Any, want: Any, tolerance: float, what: str) -> None:
    from ..testing import assert_close
    for k, (g, w) in enumerate(zip(_flat_tensors(got), _flat_tensors(want))):
        try:
            assert_close(g.double(), w.double(), rtol=tolerance, atol=1e-5, equal_nan=True)
        except AssertionError as e:
            warnings.warn(f"Output nr {k + 1}. of the traced function does not match the corresponding output of "
                          f"the {what}. Detailed error:\n{e}", TracerWarning, stacklevel=4)


def check(graph: Graph, fn: Any, owner: Any, inputs: List[tuple], self_type: Optional[str],
          tolerance: float) -> None:
    """PyTorch's check_trace: each check input traced again (the ops must be the same) and the
    replay compared with the Python function on it (a difference warns TracerWarning)."""
    from ..autograd.grad_mode import no_grad
    for args in inputs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            again, want = record(fn, copy.deepcopy(args), owner, self_type)
        if again.op_names() != graph.op_names():
            diff = "\n".join(f"  First: {a}\n  Second: {b}" for a, b in zip(graph.op_names() + ["<end>"],
                                                                             again.op_names() + ["<end>"]) if a != b)
            raise TracingCheckError(f"Graph diff:\n{diff}", None)
        with no_grad():
            got = graph.run(owner, copy.deepcopy(args))
        _compare_outputs(got, want, tolerance, "Python function")
