"""minitorch.ops, and the dispatcher of the operators defined from Python (minitorch.library).

`minitorch.ops.aten.<op>` is a built-in op of the C op table; `minitorch.ops.<ns>.<op>` one that
minitorch.library defined. A built-in op's kernels registered from Python live in the C
dispatcher (_C._set_python_kernel: its per-op, per-key slot); a Python-defined op's kernels live
here, and its calls are dispatched here with the C dispatcher's rule: the highest key of the call
with a kernel runs, Autograd > CUDA | CPU, else the CompositeImplicitAutograd kernel; a backend
kernel runs inside the profiler's `Op::<ns>::<op>` event, as the dispatcher records a built-in op.

Which registration is current, and what a Library's _destroy() puts back, is kept here for both:
a stack of (kernel, library) per op and key, whose top is the kernel in use.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _C
from ._library.schema import FunctionSchema

# Dispatch keys a kernel may be registered for, as torch.library names them, and what each is here.
KEY_ALIASES = {
    "CPU": ("CPU",), "CUDA": ("CUDA",), "Autograd": ("Autograd",), "AutogradCPU": ("Autograd",),
    "AutogradCUDA": ("Autograd",), "CompositeImplicitAutograd": ("CompositeImplicitAutograd",),
    "CompositeExplicitAutograd": ("CPU", "CUDA"), "Meta": ("Meta",),
}

# (qualified name with overload, key) -> [(kernel, library), ...]: the last is the one in use.
# The qualified name of a built-in op is "aten::<name>"; of a Python-defined one "ns::name.overload".
_kernels: Dict[Tuple[str, str], List[Tuple[Callable, Any]]] = {}
# "ns::name" -> {overload ("" for the default): OpDef}
_defs: Dict[str, Dict[str, "OpDef"]] = {}


def parse_keys(dispatch_key: str) -> Tuple[str, ...]:
    if dispatch_key not in KEY_ALIASES:
        raise RuntimeError(f"could not parse dispatch key: {dispatch_key}")
    return KEY_ALIASES[dispatch_key]


def builtin_op(name: str) -> Optional[str]:
    """The C op table's name for aten op `name` ("relu", "max.dim" -> max_dim, "add.Tensor" ->
    add), or None where there is none."""
    base, _, overload = name.partition(".")
    for candidate in (f"{base}_{overload}" if overload else "", base):
        if candidate and candidate in _C.OPS:
            return candidate
    return None


def push_kernel(qualname: str, key: str, fn: Callable, lib: Any) -> None:
    stack = _kernels.setdefault((qualname, key), [])
    stack.append((fn, lib))
    _sync(qualname, key)


def drop_kernels(lib: Any, qualname: str = "", key: str = "") -> None:
    """Removes every kernel lib registered (for qualname and key, where given); the ones below
    come back into use."""
    for (q, k), stack in list(_kernels.items()):
        if (qualname and q != qualname) or (key and k != key):
            continue
        kept = [entry for entry in stack if entry[1] is not lib]
        if len(kept) != len(stack):
            stack[:] = kept
            _sync(q, k)
            if not kept:
                del _kernels[(q, k)]


def _sync(qualname: str, key: str) -> None:
    """A built-in op's current Python kernel for key, to the C dispatcher's slot."""
    ns, _, name = qualname.partition("::")
    op = builtin_op(name) if ns == "aten" else None
    if op is not None:  # (an aten name the table lacks keeps its kernels, unused, as PyTorch's)
        stack = _kernels.get((qualname, key))
        _C._set_python_kernel(op, key, stack[-1][0] if stack else None)


def builtin_schema(op: str) -> str:
    """A built-in op's schema as PyTorch prints it: "aten::relu(Tensor self) -> Tensor"."""
    info = _C._op_info(op)
    nout = info["nout"]
    returns = info["returns"] or {0: "()", 1: "Tensor", -1: "Tensor[]"}.get(nout, f"({', '.join(['Tensor'] * nout)})")
    return f"aten::{info['schema']} -> {returns}"


def kernel(qualname: str, key: str) -> Optional[Callable]:
    stack = _kernels.get((qualname, key))
    return stack[-1][0] if stack else None


# ---- Python-defined operators ----

class OpDef:
    """One overload of a Python-defined operator: its schema and the library that defined it."""

    def __init__(self, schema: FunctionSchema, lib: Any):
        self.schema = schema
        self.lib = lib
        self.ns, _, self.name = schema.name.partition("::")
        self.overload = schema.overload_name
        self.qualname = schema.name + (f".{self.overload}" if self.overload else "")
        self.custom = None  # the CustomOpDef, for an op made by custom_op

    def __repr__(self) -> str:
        return f"{self.ns}.{self.name}.{self.overload or 'default'}"

    # the call's arguments against the schema, with PyTorch's messages
    def bind(self, args: tuple, kwargs: dict) -> list:
        params = self.schema.arguments
        where = f"{self.schema.name}()"
        decl = f"Declaration: {self.schema}"
        npos = sum(not p.kwarg_only for p in params)
        if len(args) > npos:
            raise RuntimeError(f"{where} expected at most {npos} argument(s) but received {len(args)} "
                               f"argument(s). {decl}")
        for k in kwargs:
            if all(p.name != k for p in params):
                raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{self.schema.name}'. "
                                   f"Schema: {self.schema}")
        values = []
        for j, p in enumerate(params):
            if j < len(args):
                v = args[j]
                if p.name in kwargs:
                    raise RuntimeError(f"{where} got multiple values for argument '{p.name}'. {decl}")
            elif p.name in kwargs:
                v = kwargs[p.name]
            elif p.has_default:
                v = p.default
            else:
                raise RuntimeError(f"{where} is missing value for argument '{p.name}'. {decl}")
            if not _fits(p, v):
                raise RuntimeError(f"{where} Expected a value of type '{p.type_str()}' for argument "
                                   f"'{p.name}' but instead found type '{type(v).__name__}'.\nPosition: {j}\n"
                                   f"Value: {v!r}\n{decl}\nCast error details: Unable to cast {v!r} to "
                                   f"{p.type_str()}")
            values.append(v)
        return values

    def split(self, values: list) -> Tuple[tuple, dict]:
        """Bound values back into (positional, keyword-only) as a kernel takes them."""
        params = self.schema.arguments
        pos = tuple(v for p, v in zip(params, values) if not p.kwarg_only)
        kw = {p.name: v for p, v in zip(params, values) if p.kwarg_only}
        return pos, kw

    def __call__(self, *args, **kwargs):
        values = self.bind(args, kwargs)
        tensors = _tensors_of(values)
        needs_grad = _C.is_grad_enabled() and any(t.requires_grad for t in tensors)
        autograd = kernel(self.qualname, "Autograd")
        if needs_grad and autograd is not None:
            pos, kw = self.split(values)
            return autograd(*pos, **kw)
        return self.redispatch(values, tensors)

    def redispatch(self, values: list, tensors: Optional[list] = None):
        """The call below the Autograd key: the backend's kernel, else the composite one."""
        tensors = _tensors_of(values) if tensors is None else tensors
        backend = "CUDA" if any(t.device.type == "cuda" for t in tensors) else "CPU"
        pos, kw = self.split(values)
        for key in (backend, "CompositeImplicitAutograd"):
            fn = kernel(self.qualname, key)
            if fn is not None:
                out = _C._trace_op_call(self.qualname, fn, pos, kw, key) if _C._trace_enabled() else fn(*pos, **kw)
                if self.custom is not None and key != "CompositeImplicitAutograd":
                    self.custom._check_aliasing(tensors, out)
                return out
        has = sorted(k for (q, k), stack in _kernels.items() if q == self.qualname and stack)
        raise NotImplementedError(
            f"Could not run '{self.schema.name}' with arguments from the '{backend}' backend. This could be "
            f"because the operator doesn't exist for this backend. '{self.schema.name}' is only available for "
            f"these backends: [{', '.join(has)}].")

    def fake(self) -> Optional[Callable]:
        """The fake kernel: the registered one; for an op that returns nothing, one that
        returns None (as PyTorch generates for it)."""
        fn = kernel(self.qualname, "Meta")
        if fn is None and not self.schema.returns:
            return _returns_nothing
        return fn


def _returns_nothing(*args, **kwargs) -> None:
    return None


def _fits(p, v) -> bool:
    if v is None:
        return p.optional or (p.has_default and p.default is None)
    if p.is_list:
        return isinstance(v, (list, tuple)) and all(
            (x is None and p.list_optional) or _fits_one(p.type, x) for x in v)
    return _fits_one(p.type, v)


def _fits_one(ty: str, v) -> bool:
    from . import device, dtype

    checks = {
        "Tensor": lambda: isinstance(v, _C.TensorBase),
        "int": lambda: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda: isinstance(v, (int, float)) and not isinstance(v, bool),
        "bool": lambda: isinstance(v, bool),
        "str": lambda: isinstance(v, str),
        "Scalar": lambda: isinstance(v, (int, float, bool, complex)),
        "ScalarType": lambda: isinstance(v, dtype),
        "Device": lambda: isinstance(v, (device, str)),
    }
    checks["SymInt"] = checks["int"]
    return checks.get(ty, lambda: True)()


def _tensors_of(values: list) -> list:
    out = []
    for v in values:
        if isinstance(v, _C.TensorBase):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(x for x in v if isinstance(x, _C.TensorBase))
    return out


def define(schema: FunctionSchema, lib: Any) -> OpDef:
    overloads = _defs.setdefault(schema.name, {})
    ns = schema.name.partition("::")[0]
    if schema.overload_name in overloads or (ns == "aten" and builtin_op(schema.name[6:]) and not overloads):
        raise RuntimeError(f"Tried to register an operator ({schema}) with the same name and overload name "
                           "multiple times. Each overload's schema should only be registered with a single "
                           "call to def().")
    op = overloads[schema.overload_name] = OpDef(schema, lib)
    return op


def undefine(lib: Any) -> None:
    for name, overloads in list(_defs.items()):
        for overload, op in list(overloads.items()):
            if op.lib is lib:
                del overloads[overload]
        if not overloads:
            del _defs[name]


def lookup(qualname: str) -> Optional[OpDef]:
    """The OpDef of "ns::name" or "ns::name.overload", or None."""
    name, _, overload = qualname.partition(".")
    return _defs.get(name, {}).get("" if overload == "default" else overload)


# ---- minitorch.ops ----

class OpOverload:
    """One overload: ops.mylib.foo.default, ops.aten.add.Tensor. Calls the op; what
    __torch_dispatch__ receives as func (minitorch/utils/_python_dispatch.py)."""

    def __init__(self, ns: str, name: str, overload: str, fn: Callable, schema: Any):
        self._ns, self._name, self._overloadname = ns, name, overload or "default"
        self._opname = name
        self._fn = fn
        self._schema = schema
        self.__name__ = f"{name}.{self._overloadname}"
        self.__qualname__ = self.__name__
        self.namespace = ns

    @property
    def overloadpacket(self) -> "OpOverloadPacket":
        return OpOverloadPacket(self._ns, self._name)

    @property
    def op(self) -> Callable:
        return self._fn

    def name(self) -> str:
        return f"{self._ns}::{self._name}" + (f".{self._overloadname}" if self._overloadname != "default" else "")

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, OpOverload) and (self._ns, self._name, self._overloadname) == \
            (other._ns, other._name, other._overloadname)

    def __hash__(self) -> int:
        return hash((self._ns, self._name, self._overloadname))

    def __repr__(self) -> str:
        return f"<OpOverload(op='{self._ns}.{self._name}', overload='{self._overloadname}')>"

    def __str__(self) -> str:
        return f"{self._ns}.{self._name}.{self._overloadname}"


class OpOverloadPacket:
    """ops.mylib.foo: the op by name; .default and .<overload> are its overloads."""

    def __init__(self, ns: str, name: str):
        self._ns, self._name = ns, name
        self.__name__ = name
        self._qualified_op_name = f"{ns}::{name}"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, OpOverloadPacket) and (self._ns, self._name) == (other._ns, other._name)

    def __hash__(self) -> int:
        return hash((self._ns, self._name))

    def _overloads(self) -> Dict[str, OpOverload]:
        defs = _defs.get(f"{self._ns}::{self._name}", {})
        if self._ns == "aten" and not defs:
            op = builtin_op(self._name)
            return {"default": _builtin_overload(op, "default")}
        return {o or "default": OpOverload(self._ns, self._name, o, d, str(d.schema)) for o, d in defs.items()}

    def overloads(self) -> List[str]:
        return list(self._overloads())

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        found = self._overloads().get(overload)
        op = builtin_op(f"{self._name}.{overload}") if self._ns == "aten" and found is None else None
        if op is not None:  # PyTorch's overloads of one minitorch op: aten.add.Tensor, aten.max.dim
            found = _builtin_overload(op, overload)
        if found is None:
            raise AttributeError(f"The underlying op of '{self._ns}.{self._name}' has no overload name '{overload}'")
        return found

    def __call__(self, *args, **kwargs):
        overloads = list(self._overloads().values())
        if not overloads:
            raise RuntimeError(f"operator {self._ns}::{self._name} does not exist")
        for op in overloads[:-1]:  # the first whose schema takes the arguments
            try:
                op._fn.bind(args, kwargs)
            except RuntimeError:
                continue
            return op(*args, **kwargs)
        return overloads[-1](*args, **kwargs)

    def __repr__(self) -> str:
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self) -> str:
        return f"{self._ns}.{self._name}"


class _OpNamespace:
    def __init__(self, ns: str):
        self.name = ns

    def __getattr__(self, name: str) -> OpOverloadPacket:
        exists = f"{self.name}::{name}" in _defs or (self.name == "aten" and builtin_op(name))
        if name.startswith("__") or not exists:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{name}'")
        return OpOverloadPacket(self.name, name)


class _Ops:
    """minitorch.ops: ops.<namespace>.<op>."""

    def __getattr__(self, ns: str) -> _OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        return _OpNamespace(ns)


ops = _Ops()


# ---- the built-in ops as __torch_dispatch__ sees them ----
# A call of op `name` of the C table reaches Python's dispatch (utils/_python_dispatch.py) as
# the aten overload PyTorch's dispatcher would show for it: its aten name (max_dim is aten.max)
# and the overload PyTorch's argument parser picks for the arguments given (x + 1 is add.Tensor,
# x > 0 gt.Scalar, x ** 2 pow.Tensor_Scalar, x.sum(1) sum.dim_IntList); "default" otherwise.

# C ops whose aten name is another op's overload
_ATEN_NAMES = {"max_dim": ("max", "dim"), "min_dim": ("min", "dim"), "median_dim": ("median", "dim"),
               "nanmedian_dim": ("nanmedian", "dim"), "view_dtype": ("view", "dtype"),
               "split_with_sizes": ("split_with_sizes", "default")}
_TENSOR_OVERLOAD = {"add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_", "where", "index"}
# Tensor if the other operand is a tensor, else Scalar
_TENSOR_OR_SCALAR = {"eq", "ne", "lt", "le", "gt", "ge", "eq_", "ne_", "lt_", "le_", "gt_", "ge_",
                     "remainder", "remainder_", "fmod", "fmod_", "bitwise_and", "bitwise_or", "bitwise_xor",
                     "bitwise_and_", "bitwise_or_", "bitwise_xor_", "masked_fill", "masked_fill_", "fill_",
                     "floor_divide", "floor_divide_", "lerp", "lerp_", "clamp_min", "clamp_max", "copysign",
                     "copysign_", "rsub"}
# default without a dim, else the dim overload's name
_DIM_OVERLOAD = {"sum": "dim_IntList", "mean": "dim", "nansum": "default", "prod": "dim_int", "any": "dim",
                 "all": "dim", "logsumexp": "default", "amax": "default", "amin": "default",
                 "squeeze": "dim", "var": "correction", "std": "correction", "var_mean": "correction",
                 "std_mean": "correction", "count_nonzero": "dim_IntList"}
_INT_OVERLOAD = {"transpose": "int", "select": "int", "unbind": "int", "softmax": "int", "log_softmax": "int",
                 "split": "Tensor", "flatten": "using_ints", "unflatten": "int", "repeat_interleave": "self_int",
                 "scatter": "src", "scatter_": "src", "scatter_add": "default", "index_fill": "int_Scalar",
                 "index_fill_": "int_Scalar", "empty": "memory_format", "chunk": "default", "norm": "Scalar",
                 "div_mode": "Tensor_mode", "slice": "Tensor"}

_builtin_cache: Dict[Tuple[str, str], OpOverload] = {}


class _BuiltinSchema:
    """func._schema of a built-in op: its aten name and overload, and str() as PyTorch prints it;
    its arguments parsed where the schema language is PyTorch's."""

    def __init__(self, op: str, name: str, overload: str):
        self._op = op
        self.name = f"aten::{name}"
        self.overload_name = "" if overload == "default" else overload
        self._parsed: Any = None

    def _parse(self) -> Any:
        if self._parsed is None:
            from ._library.schema import parse_schema

            text = builtin_schema(self._op).replace("Tensor|Scalar", "Tensor")
            try:
                self._parsed = parse_schema(text)
            except RuntimeError:
                self._parsed = False
        return self._parsed

    @property
    def arguments(self) -> list:
        return self._parse().arguments if self._parse() else []

    @property
    def returns(self) -> list:
        return self._parse().returns if self._parse() else []

    def __str__(self) -> str:
        text = builtin_schema(self._op)
        aten = self.name + (f".{self.overload_name}" if self.overload_name else "")
        return aten + text[text.index("("):]

    def __repr__(self) -> str:
        return str(self)


def _builtin_overload(op: str, overload: str) -> OpOverload:
    """aten.<op's aten name>.<overload> for C op `op`, made once."""
    key = (op, overload)
    found = _builtin_cache.get(key)
    if found is None:
        name = _ATEN_NAMES.get(op, (op, None))[0]
        found = OpOverload("aten", name, overload, getattr(_C, op), _BuiltinSchema(op, name, overload))
        _builtin_cache[key] = found
    return found


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, complex)) and not isinstance(v, _C.TensorBase)


def dispatch_overload(op: str, args: tuple, kwargs: dict) -> OpOverload:
    """The OpOverload a call of C op `op` with these (boxed) arguments is, as PyTorch names it."""
    if op in _ATEN_NAMES:
        overload = _ATEN_NAMES[op][1]
    elif op in _TENSOR_OVERLOAD:
        overload = "Tensor_mode" if op in ("div", "div_") and kwargs.get("rounding_mode") else \
            ("self" if op == "where" else "Tensor")
    elif op in _TENSOR_OR_SCALAR:
        other = args[-1] if op in ("masked_fill", "masked_fill_", "fill_", "clamp_min", "clamp_max") or \
            len(args) < 2 else args[1]
        overload = "Scalar" if _is_number(other) else "Tensor"
        overload = "Scalar" if op in ("lerp", "lerp_") and _is_number(args[-1]) else overload
    elif op in ("pow", "pow_"):
        overload = "Scalar" if _is_number(args[0]) else "Tensor_Scalar" if _is_number(args[1]) else "Tensor_Tensor"
        overload = "Scalar" if op == "pow_" and overload == "Tensor_Scalar" else overload
        overload = "Tensor" if op == "pow_" and overload == "Tensor_Tensor" else overload
    elif op in _DIM_OVERLOAD:
        has_dim = len(args) > 1 or kwargs.get("dim") is not None
        overload = _DIM_OVERLOAD[op] if has_dim or op in ("var", "std", "var_mean", "std_mean") else "default"
    elif op in _INT_OVERLOAD:
        overload = _INT_OVERLOAD[op]
    elif op in ("clamp", "clamp_"):
        overload = "Tensor" if any(isinstance(v, _C.TensorBase) for v in args[1:]) else "default"
    else:
        overload = "default"
    return _builtin_overload(op, overload)
