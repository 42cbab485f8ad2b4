"""The recorded graph of torch.jit.trace: values, nodes, the replay, and its two printed forms
(PyTorch's IR text, `.graph`, and Python-like code, `.code`).

A value is an input of forward, an attribute of the module (a parameter or buffer, by its dotted
path, read again at every call so that the module's current weights are used), a constant (a tensor
the trace met that no input, attribute or recorded op made) or a result of a node. A node is one
op of minitorch._C called with arguments in which tensors are replaced by Value references; the
replay calls the same ops through the dispatcher, so autograd records them as it records eager
calls."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from .. import _C

_SCALAR_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                      "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                      "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


class Value:
    """A reference to value number `index` of a recorded graph (kept in argument templates)."""
    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __reduce__(self) -> Any:
        return (Value, (self.index,))

    def __repr__(self) -> str:
        return f"%{self.index}"


def tensor_type(t: Any) -> str:
    """PyTorch's printed type of a traced tensor: Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)."""
    name = _SCALAR_TYPE_NAMES.get(str(t.dtype).rpartition(".")[2], "Tensor")
    dims = "".join(f"{s}, " for s in t.shape)
    strides = ", ".join(str(s) for s in t.stride())
    return f"{name}({dims}strides=[{strides}], requires_grad={int(t.requires_grad)}, device={t.device})"


def map_values(template: Any, fn: Callable[[Value], Any]) -> Any:
    """template with each Value replaced by fn(value), through lists, tuples and dicts."""
    if type(template) is Value:
        return fn(template)
    if type(template) in (list, tuple):
        return type(template)(map_values(v, fn) for v in template)
    if type(template) is dict:
        return {k: map_values(v, fn) for k, v in template.items()}
    return template


def values_in(template: Any) -> List[Value]:
    found: List[Value] = []
    map_values(template, found.append)
    return found


class Node:
    """One recorded op: `op` (a minitorch._C function's name) called with args and kwargs
    (templates holding Values), giving the values `outputs`."""

    def __init__(self, op: str, args: tuple, kwargs: dict, outputs: List[int], types: List[str]) -> None:
        self.op, self.args, self.kwargs, self.outputs, self.types = op, args, kwargs, outputs, types

    def kind(self) -> str:
        return f"aten::{self.op}"

    def inputs(self) -> List[Value]:
        return values_in((self.args, self.kwargs))

    def __repr__(self) -> str:
        return f"Node({self.kind()})"


class Graph:
    """A traced function: inputs (a template of the call's arguments), attributes (value index ->
    dotted path under self), constants (value index -> tensor), nodes, and the output template."""

    def __init__(self, input_names: List[str], inputs: Any, attrs: Dict[int, str], constants: Dict[int, Any],
                 nodes: List[Node], output: Any, types: Dict[int, str], self_type: Optional[str]) -> None:
        self.input_names, self.input_template, self.attrs = input_names, inputs, attrs
        self.constants, self.node_list, self.output = constants, nodes, output
        self.types, self.self_type = types, self_type

    def nodes(self) -> List[Node]:
        return list(self.node_list)

    def op_names(self) -> List[str]:
        return [n.kind() for n in self.node_list]

    # ---- the replay ----
    # Set by the trace when the user's code read a tensor's size (recorded as a constant): then
    # the replay takes only inputs of the traced sizes (input_shapes), lest it compute silently
    # with the old sizes.
    sizes_frozen = False
    input_shapes: Optional[List[tuple]] = None

    def run(self, owner: Any, args: tuple) -> Any:
        env: Dict[int, Any] = {}
        bind_inputs(self.input_template, args, env)
        if self.sizes_frozen and self.input_shapes is not None:
            self._check_sizes(env)
        for index, table, name, path in self._attributes(owner):
            env[index] = table[name] if table is not None and name in table else _getattr_path(owner, path)
        env.update(self.constants)
        look = env.__getitem__
        for fn, spec, node_args, node_kwargs, outputs in self._steps():
            if spec is not None:  # the common case: positional Values and plain values
                res = fn(*[env[p] if is_value else p for is_value, p in spec])
            else:
                res = fn(*map_values(node_args, lambda v: look(v.index)),
                         **map_values(node_kwargs, lambda v: look(v.index)))
            if len(outputs) == 1:
                env[outputs[0]] = res
            else:
                env.update(zip(outputs, res))
        return map_values(self.output, lambda v: look(v.index))

    def positional(self, args: tuple, kwargs: Dict[str, Any]) -> tuple:
        """A call's arguments in the traced order: keyword ones by the traced inputs' names."""
        if not kwargs:
            return args
        names = self.input_names[len(args):len(values_in(self.input_template))]
        unknown = sorted(set(kwargs) - set(names))
        if unknown:
            raise RuntimeError(f"forward() got an unexpected keyword argument '{unknown[0]}'")
        missing = [n for n in names if n not in kwargs]
        if missing:
            raise RuntimeError(f"forward() is missing value for argument '{missing[0]}'")
        return tuple(args) + tuple(kwargs[n] for n in names)

    def _check_sizes(self, env: Dict[int, Any]) -> None:
        for k, (v, shape) in enumerate(zip(values_in(self.input_template), self.input_shapes)):
            got = tuple(env[v.index].shape)
            if got != shape:
                raise RuntimeError(f"this trace read tensor sizes in Python, which minitorch's tracer records as "
                                   f"constants, so it replays only inputs of the traced sizes: input {k} was traced "
                                   f"with size {list(shape)} and is given {list(got)}; trace the module again "
                                   f"for these sizes")

    def _steps(self) -> List[tuple]:
        """The nodes as (the _C function, spec, args, kwargs, outputs), made once per graph; spec
        lists a node without keyword arguments or nested Values as (is a Value, index or value)."""
        steps = self.__dict__.get("_steps_cache")
        if steps is None:
            steps = []
            for n in self.node_list:
                simple = not n.kwargs and all(type(a) is Value or not values_in(a) for a in n.args)
                spec = [(type(a) is Value, a.index if type(a) is Value else a) for a in n.args] if simple else None
                steps.append((getattr(_C, n.op), spec, n.args, n.kwargs, n.outputs))
            self.__dict__["_steps_cache"] = steps
        return steps

    def _attributes(self, owner: Any) -> List[tuple]:
        """(value index, the table that holds it, its name, its path) per attribute of owner: the
        module's own parameter or buffer dict, read at each call (a replaced weight is seen);
        None where the path does not end in one (then read by getattr)."""
        cached = self.__dict__.get("_attr_cache")
        if cached is not None and cached[0] is owner:
            return cached[1]
        entries = []
        for index, path in self.attrs.items():
            *parents, name = path.split(".")
            table = None
            try:
                holder = _getattr_path(owner, ".".join(parents)) if parents else owner
                d = holder.__dict__
                table = next((d[t] for t in ("_parameters", "_buffers") if name in d.get(t, ())), None)
            except AttributeError:
                pass
            entries.append((index, table, name, path))
        self.__dict__["_attr_cache"] = (owner, entries)
        return entries

    def __getstate__(self) -> Dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_steps_cache", None)
        state.pop("_attr_cache", None)
        return state

    # ---- PyTorch's IR text ----
    def __str__(self) -> str:
        return _IRPrinter(self).text()

    __repr__ = __str__

    # ---- Python-like code ----
    def code(self) -> str:
        return _CodePrinter(self).text()


def _getattr_path(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def bind_inputs(template: Any, given: Any, env: Dict[int, Any]) -> None:
    """Puts the tensors of `given` (the call's arguments) where template's Values stand."""
    if type(template) is Value:
        if not hasattr(given, "dtype") or not hasattr(given, "shape"):
            raise RuntimeError(f"Expected a value of type 'Tensor' for argument but instead found type "
                               f"'{type(given).__name__}'.")
        env[template.index] = given
        return
    if type(template) in (list, tuple):
        if not isinstance(given, (list, tuple)) or len(given) != len(template):
            got = len(given) if isinstance(given, (list, tuple)) else type(given).__name__
            raise RuntimeError(f"forward() expected {len(template)} argument(s) in this position but received {got}")
        for t, g in zip(template, given):
            bind_inputs(t, g, env)
        return
    if type(template) is dict:
        if not isinstance(given, dict) or set(given) != set(template):
            raise RuntimeError(f"forward() expected a dict with keys {sorted(template)}")
        for k, t in template.items():
            bind_inputs(t, given[k], env)


def _literal(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, float):
        return repr(v) if v == v and abs(v) != float("inf") else f"float('{v}')"
    if hasattr(v, "is_floating_point") and hasattr(v, "itemsize"):  # a dtype
        return str(v).replace("minitorch.", "torch.")
    if hasattr(v, "type") and hasattr(v, "index") and not isinstance(v, (list, tuple)):  # a device
        return f'torch.device("{v}")'
    return repr(v)


def _constant_type(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if v is None:
        return "NoneType"
    for t in (int, float, str, complex):
        if isinstance(v, t):
            return t.__name__
    if hasattr(v, "is_floating_point") and hasattr(v, "itemsize"):
        return "int"  # a ScalarType prints as its number
    return type(v).__name__


class _IRPrinter:
    """graph(%self : __torch__.M, %x : Float(...)):  %n : Float(...) = aten::linear(%x, %w, %b)  return (%y)"""

    def __init__(self, g: Graph) -> None:
        self.g, self.lines, self.names, self.next = g, [], {}, 0

    def fresh(self) -> str:
        while str(self.next) in self.names.values():
            self.next += 1
        self.next += 1
        return str(self.next - 1)

    def name(self, v: Value) -> str:
        return "%" + self.names[v.index]

    def unique(self, base: str) -> str:
        taken, name, k = set(self.names.values()), base, 0
        while name in taken:
            k += 1
            name = f"{base}.{k}"
        self.names[("name", name)] = name
        return name

    def arg(self, a: Any) -> str:
        if type(a) is Value:
            return self.name(a)
        if type(a) in (list, tuple):
            parts = [self.arg(x) for x in a]
            kind = "Tensor[]" if a and all(type(x) is Value for x in a) else (
                f"{_constant_type(a[0])}[]" if a else "int[]")
            n = self.fresh()
            self.lines.append(f"  %{n} : {kind} = prim::ListConstruct({', '.join(parts)})")
            return "%" + n
        n = self.fresh()
        shown = "" if a is None else f"[value={_ir_value(a)}]"
        self.lines.append(f"  %{n} : {_constant_type(a)} = prim::Constant{shown}()")
        return "%" + n

    def text(self) -> str:
        g = self.g
        heads = []
        if g.self_type is not None:
            self.names[-1] = "self"
            heads.append(f"%self : __torch__.{g.self_type}")
        for name, v in zip(g.input_names, values_in(g.input_template)):
            self.names[v.index] = name
            heads.append(f"%{name} : {g.types[v.index]}")
        got: Dict[str, str] = {}  # a dotted path -> its printed name
        for index, path in g.attrs.items():
            parts = path.split(".")
            for k in range(len(parts)):
                sub = ".".join(parts[:k + 1])
                if sub not in got:
                    got[sub] = self.unique(parts[k])
                    parent = "%" + (got[".".join(parts[:k])] if k else "self")
                    kind = "Tensor" if k == len(parts) - 1 else "Module"
                    self.lines.append(f'  %{got[sub]} : {kind} = prim::GetAttr[name="{parts[k]}"]({parent})')
            self.names[index] = got[path]
        for index, t in g.constants.items():
            self.names[index] = self.fresh()
            self.lines.append(f"  %{self.names[index]} : {g.types[index]} = prim::Constant[value=<Tensor>]()")
        for node in g.node_list:
            args = [self.arg(a) for a in node.args] + [self.arg(a) for a in node.kwargs.values()]
            outs = []
            for index in node.outputs:
                self.names[index] = self.fresh()
                outs.append(f"%{self.names[index]} : {g.types[index]}")
            self.lines.append(f"  {', '.join(outs)} = {node.kind()}({', '.join(args)})")
        out = self.output(g.output)
        sep = ",\n      "
        return f"graph({sep.join(heads)}):\n" + "\n".join(self.lines) + f"\n  return ({out})\n"

    def output(self, o: Any) -> str:
        if type(o) is Value:
            return self.name(o)
        parts = [self.output(x) for x in (o.values() if type(o) is dict else o)]
        n = self.fresh()
        kind = {tuple: "prim::TupleConstruct", list: "prim::ListConstruct", dict: "prim::DictConstruct"}[type(o)]
        if type(o) is dict:
            keys = [self.arg(k) for k in o]
            parts = [x for kv in zip(keys, parts) for x in kv]
        self.lines.append(f"  %{n} : {self.type_of(o)} = {kind}({', '.join(parts)})")
        return "%" + n

    def type_of(self, o: Any) -> str:
        """A result's printed type: a tensor's, (T1, T2) for a tuple, T[] for a list."""
        if type(o) is Value:
            return self.g.types[o.index]
        if type(o) is tuple:
            return "(" + ", ".join(self.type_of(x) for x in o) + ")"
        if type(o) is list:
            return "Tensor[]"
        return "Dict(str, Tensor)"


def _ir_value(a: Any) -> str:
    if isinstance(a, str):
        return f'"{a}"'
    if hasattr(a, "is_floating_point") and hasattr(a, "itemsize"):
        return str(_dtype_number(a))
    if isinstance(a, float):
        return repr(a)
    return str(a) if not isinstance(a, bool) else str(int(a))


_DTYPE_NUMBERS = ["uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex32",
                  "complex64", "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16"]


def _dtype_number(dtype: Any) -> int:
    """PyTorch's ScalarType number of a dtype (how TorchScript prints a dtype constant)."""
    name = str(dtype).rpartition(".")[2]
    return _DTYPE_NUMBERS.index(name) if name in _DTYPE_NUMBERS else -1


class _CodePrinter:
    """def forward(self, x: Tensor) -> Tensor:  linear = self.linear ... _0 = torch.linear(x, weight, bias)"""

    def __init__(self, g: Graph) -> None:
        self.g, self.names = g, {}

    def arg(self, a: Any) -> str:
        if type(a) is Value:
            return self.names[a.index]
        if type(a) is list:
            return "[" + ", ".join(self.arg(x) for x in a) + "]"
        if type(a) is tuple:
            return "(" + ", ".join(self.arg(x) for x in a) + ("," if len(a) == 1 else "") + ")"
        if type(a) is dict:
            return "{" + ", ".join(f"{self.arg(k)}: {self.arg(v)}" for k, v in a.items()) + "}"
        return _literal(a)

    def text(self) -> str:
        g, lines = self.g, []
        params = ["self"] if g.self_type is not None else []
        for name, v in zip(g.input_names, values_in(g.input_template)):
            self.names[v.index] = name
            params.append(f"{name}: Tensor")
        for index, path in g.attrs.items():
            parts = path.split(".")
            for k in range(len(parts)):
                sub = "_".join(parts[:k + 1])
                if sub not in self.names.values():
                    parent = "self" if k == 0 else "_".join(parts[:k])
                    lines.append(f"  {sub} = {parent}.{parts[k]}")
                    self.names[("attr", sub)] = sub
            self.names[index] = "_".join(parts)
        for k, index in enumerate(g.constants):
            self.names[index] = f"CONSTANTS.c{k}"
        count = 0
        for node in g.node_list:
            outs = []
            for index in node.outputs:
                self.names[index] = f"_{count}"
                outs.append(f"_{count}")
                count += 1
            call = ", ".join([self.arg(a) for a in node.args] + [f"{k}={self.arg(v)}" for k, v in node.kwargs.items()])
            target = ", ".join(outs) if outs else "_"
            lines.append(f"  {target} = torch.{node.op}({call})")
        ret = _return_type(g.output)
        lines.append(f"  return {self.arg(g.output)}")
        head = ",\n    ".join(params)
        return f"def {getattr(g, 'name', 'forward')}({head}) -> {ret}:\n" + "\n".join(lines) + "\n"


def _return_type(o: Any) -> str:
    if type(o) is Value:
        return "Tensor"
    if type(o) is tuple:
        return "Tuple[" + ", ".join(_return_type(x) for x in o) + "]"
    if type(o) is list:
        return "List[Tensor]"
    if type(o) is dict:
        return "Dict[str, Tensor]"
    return type(o).__name__


class Values:
    """The values of a graph being recorded: tensors (by id) to their Values, and their types."""

    def __init__(self) -> None:
        self.count, self.env, self.types, self.shapes = 0, {}, {}, {}

    def new(self, t: Any) -> Value:
        """A new Value for tensor t, which names t from here on (an in-place op's result takes
        over its input's name)."""
        v = Value(self.count)
        self.count += 1
        self.env[id(t)] = v
        self.types[v.index] = tensor_type(t)
        self.shapes[v.index] = tuple(t.shape)
        return v


def graph_inputs(args: Tuple[Any, ...], values: Values) -> Any:
    """The template of a call's arguments: each tensor a new Value."""
    def walk(a: Any) -> Any:
        if hasattr(a, "dtype") and hasattr(a, "shape") and hasattr(a, "stride"):
            return values.env[id(a)] if id(a) in values.env else values.new(a)
        if type(a) in (list, tuple):
            return type(a)(walk(x) for x in a)
        if type(a) is dict:
            return {k: walk(x) for k, x in a.items()}
        raise RuntimeError(f"Type '{type(a).__name__}' cannot be traced. Only Tensors and (possibly nested) Lists, "
                           f"Dicts, and Tuples of Tensors can be traced")
    return tuple(walk(a) for a in args)
