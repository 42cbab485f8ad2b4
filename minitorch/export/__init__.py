"""torch.export: export(mod, args) records one call with torch.jit.trace's recorder (jit/_trace.py)
and states it as a minitorch.fx graph of aten operators, as PyTorch's ExportedProgram does: the
graph module takes the lifted parameters, buffers and tensor constants, then the user's inputs,
and returns the flattened outputs; .module() gives a module that holds the parameters (get_attr)
and returns the outputs in the structure forward returned them (its inputs' sizes checked against
the example's unless dynamic_shapes is given, which then turns the checks off altogether). Data-dependent control flow cannot
be exported: converting a tensor to a Python value while exporting raises, as PyTorch's export does."""
from __future__ import annotations

import dataclasses
import enum
import operator
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import fx
from .._ops import ops
from ..jit import _trace
from ..jit._graph import Graph as _JitGraph
from ..jit._graph import map_values, values_in
from ..nn.modules.module import Module

__all__ = ["export", "ExportedProgram", "ExportGraphSignature", "InputKind", "InputSpec", "OutputKind",
           "OutputSpec", "TensorArgument"]


class InputKind(enum.Enum):
    USER_INPUT = enum.auto()
    PARAMETER = enum.auto()
    BUFFER = enum.auto()
    CONSTANT_TENSOR = enum.auto()


class OutputKind(enum.Enum):
    USER_OUTPUT = enum.auto()


@dataclasses.dataclass
class TensorArgument:
    name: str


@dataclasses.dataclass
class InputSpec:
    kind: InputKind
    arg: TensorArgument
    target: Optional[str]
    persistent: Optional[bool] = None


@dataclasses.dataclass
class OutputSpec:
    kind: OutputKind
    arg: TensorArgument
    target: Optional[str]


@dataclasses.dataclass
class ExportGraphSignature:
    input_specs: List[InputSpec]
    output_specs: List[OutputSpec]

    @property
    def parameters(self) -> Tuple[str, ...]:
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.PARAMETER)

    @property
    def buffers(self) -> Tuple[str, ...]:
        return tuple(s.target for s in self.input_specs if s.kind == InputKind.BUFFER)

    @property
    def user_inputs(self) -> Tuple[str, ...]:
        return tuple(s.arg.name for s in self.input_specs if s.kind == InputKind.USER_INPUT)

    @property
    def user_outputs(self) -> Tuple[str, ...]:
        return tuple(s.arg.name for s in self.output_specs if s.kind == OutputKind.USER_OUTPUT)


class ExportedProgram:
    """What export returns: graph_module (lifted inputs first), graph, graph_signature,
    state_dict (the parameters and persistent buffers, shared with the exported module),
    constants, and module() to run it."""

    def __init__(self, graph_module: fx.GraphModule, signature: ExportGraphSignature, state_dict: Dict[str, Any],
                 constants: Dict[str, Any], unlifted: fx.GraphModule) -> None:
        self.graph_module, self.graph_signature = graph_module, signature
        self.state_dict, self.constants, self._unlifted = state_dict, constants, unlifted

    @property
    def graph(self) -> fx.Graph:
        return self.graph_module.graph

    def module(self) -> fx.GraphModule:
        return self._unlifted

    def parameters(self) -> Any:
        return iter(self.state_dict[name] for name in self.graph_signature.parameters)

    def named_parameters(self) -> Any:
        return iter((name, self.state_dict[name]) for name in self.graph_signature.parameters)

    def buffers(self) -> Any:
        return iter(self.state_dict[name] for name in self.graph_signature.buffers if name in self.state_dict)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("Unable to call ExportedProgram directly. You should use `exported_program.module()` "
                           "instead.")

    def __str__(self) -> str:
        code = self.graph_module.code.strip("\n").replace("\n", "\n        ")
        return (f"ExportedProgram:\n    class GraphModule(torch.nn.Module):\n        {code}\n\n"
                f"Graph signature: {self.graph_signature}\n")


def _aten(op: str) -> Callable:
    return getattr(ops.aten, op).default


def _build(jit: _JitGraph, node_of: Dict[int, Any], g: fx.Graph) -> None:
    """jit's nodes into g (its inputs already in node_of), each call_function of an aten overload."""
    for node in jit.node_list:
        look = (lambda v: node_of[v.index])
        made = g.create_node("call_function", _aten(node.op), map_values(node.args, look),
                             map_values(node.kwargs, look), name=node.op)
        if len(node.outputs) == 1:
            node_of[node.outputs[0]] = made
            continue
        for k, index in enumerate(node.outputs):
            node_of[index] = g.call_function(operator.getitem, (made, k))


def export(mod: Module, args: Tuple[Any, ...], kwargs: Optional[Dict[str, Any]] = None, *,
           dynamic_shapes: Any = None, strict: bool = False, preserve_module_call_signature: Tuple[str, ...] = ()
           ) -> ExportedProgram:
    """The ExportedProgram of mod called on args (a tuple) and kwargs."""
    if not isinstance(mod, Module):
        raise ValueError(f"Expected `mod` to be an instance of `torch.nn.Module`, got {type(mod)}.")
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    kwargs = dict(kwargs or {})
    keys = list(kwargs)
    call_args = args + tuple(kwargs.values())

    def call(*flat: Any) -> Any:
        return mod(*flat[:len(args)], **dict(zip(keys, flat[len(args):])))
    with warnings.catch_warnings():
        warnings.simplefilter("error", _trace.TracerWarning)
        try:
            jit, _ = _trace.record(call, call_args, mod, _trace.qualified_type(mod))
        except _trace.TracerWarning as e:
            raise RuntimeError(f"Could not guard on data-dependent expression: the exported program would depend "
                               f"on a tensor's value ({e}). Rewrite the control flow with torch.cond or tensor ops."
                               ) from None
    names = _trace._input_names(mod.forward, len(args)) + keys
    persistent = {n for n, _ in mod.named_buffers()} - {
        f"{p}{'.' if p else ''}{b}" for p, m in mod.named_modules() for b in m._non_persistent_buffers_set}

    lifted, unlifted = fx.Graph(), fx.Graph()
    lifted_of: Dict[int, Any] = {}
    unlifted_of: Dict[int, Any] = {}
    specs: List[InputSpec] = []
    user = values_in(jit.input_template)
    for name, v in zip(names, user):
        unlifted_of[v.index] = unlifted.placeholder(name)
    state: Dict[str, Any] = {}
    constants: Dict[str, Any] = {}
    index_of = {path: index for index, path in jit.attrs.items()}
    lifted_all = [(n, t, InputKind.PARAMETER) for n, t in mod.named_parameters()] + [
        (n, t, InputKind.BUFFER) for n, t in mod.named_buffers()]
    for path, obj, kind in lifted_all:  # every parameter and buffer, used or not, as PyTorch lifts them
        name = ("p_" if kind == InputKind.PARAMETER else "b_") + path.replace(".", "_")
        placeholder = lifted.placeholder(name)
        specs.append(InputSpec(kind, TensorArgument(placeholder.name), path,
                               None if kind == InputKind.PARAMETER else path in persistent))
        if path in index_of:
            lifted_of[index_of[path]] = placeholder
            unlifted_of[index_of[path]] = unlifted.get_attr(path)
        if kind == InputKind.PARAMETER or path in persistent:
            state[path] = obj
        else:
            constants[path] = obj
    holder = Module()
    for k, (index, t) in enumerate(jit.constants.items()):
        name = f"lifted_tensor_{k}"
        lifted_of[index] = lifted.placeholder(f"c_{name}")
        holder.register_buffer(name, t, persistent=False)
        unlifted_of[index] = unlifted.get_attr(name)
        specs.append(InputSpec(InputKind.CONSTANT_TENSOR, TensorArgument(lifted_of[index].name), name))
        constants[name] = t
    for name, v in zip(names, user):
        lifted_of[v.index] = lifted.placeholder(name)
        specs.append(InputSpec(InputKind.USER_INPUT, TensorArgument(lifted_of[v.index].name), None))
    _build(jit, lifted_of, lifted)
    _build(jit, unlifted_of, unlifted)
    flat_out = values_in(jit.output)
    lifted.output(tuple(lifted_of[v.index] for v in flat_out))
    unlifted.output(map_values(jit.output, lambda v: unlifted_of[v.index]))
    out_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(lifted_of[v.index].name), None)
                 for v in flat_out]
    for name, sub in mod.named_children():
        holder.add_module(name, sub)
    for name, p in mod._parameters.items():
        holder.register_parameter(name, p)
    for name, b in mod._buffers.items():
        holder.register_buffer(name, b, persistent=name not in mod._non_persistent_buffers_set)
    runnable = fx.GraphModule(holder, unlifted)
    if dynamic_shapes is None:  # static shapes: module() checks its inputs' sizes, as PyTorch's guards do
        shapes = [(name, tuple(t.shape)) for name, t in zip(names, call_args) if hasattr(t, "shape")]
        runnable.register_forward_pre_hook(lambda m, given: _guard(shapes, given))
    return ExportedProgram(fx.GraphModule(Module(), lifted), ExportGraphSignature(specs, out_specs), state, constants,
                           runnable)


def _guard(shapes: List[Tuple[str, tuple]], given: tuple) -> None:
    for (name, shape), t in zip(shapes, given):
        got = tuple(getattr(t, "shape", ()))
        if len(got) != len(shape):
            raise AssertionError(f"Guard failed: {name}.dim() == {len(shape)}")
        for d, (want, have) in enumerate(zip(shape, got)):
            if want != have:
                raise AssertionError(f"Guard failed: {name}.size()[{d}] == {want}")
