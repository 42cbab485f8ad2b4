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
    """One overload: ops.mylib.foo.default. Calls the op."""

    def __init__(self, ns: str, name: str, overload: str, fn: Callable, schema: str):
        self._ns, self._name, self._overloadname = ns, name, overload or "default"
        self._fn = fn
        self._schema = schema
        self.__name__ = f"{name}.{self._overloadname}"

    def name(self) -> str:
        return f"{self._ns}::{self._name}" + (f".{self._overloadname}" if self._overloadname != "default" else "")

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{self._ns}.{self._name}.{self._overloadname}"


class OpOverloadPacket:
    """ops.mylib.foo: the op by name; .default and .<overload> are its overloads."""

    def __init__(self, ns: str, name: str):
        self._ns, self._name = ns, name
        self.__name__ = name

    def _overloads(self) -> Dict[str, OpOverload]:
        defs = _defs.get(f"{self._ns}::{self._name}", {})
        if self._ns == "aten" and not defs:
            op = builtin_op(self._name)
            return {"default": OpOverload("aten", self._name, "", getattr(_C, op), builtin_schema(op))}
        return {o or "default": OpOverload(self._ns, self._name, o, d, str(d.schema)) for o, d in defs.items()}

    def overloads(self) -> List[str]:
        return list(self._overloads())

    def __getattr__(self, overload: str) -> OpOverload:
        if overload.startswith("__"):
            raise AttributeError(overload)
        found = self._overloads().get(overload)
        op = builtin_op(f"{self._name}.{overload}") if self._ns == "aten" and found is None else None
        if op is not None:  # PyTorch's overloads of one minitorch op: aten.add.Tensor, aten.max.dim
            found = OpOverload("aten", self._name, overload, getattr(_C, op), builtin_schema(op))
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
