"""minitorch.library, as torch.library: operators and kernels defined from Python.

The low-level API: `Library(ns, "DEF" | "IMPL" | "FRAGMENT")`, `lib.define(schema)`,
`lib.impl(name, fn, dispatch_key)`, and the `define` and `impl` functions. A kernel registered
for a built-in op (`Library("aten", "IMPL").impl("relu", fn, "CPU")`) replaces that op's kernel
for the key in the C dispatcher, so `minitorch.relu` and `F.relu` call it, until the library is
destroyed. The high-level API: `custom_op` (schema inferred from type hints), with
`register_kernel`, `register_fake`, `register_autograd`, and `opcheck`.

minitorch has no meta device and no fake tensors: a fake kernel is kept, and opcheck runs it on
real inputs to compare its results' shapes, dtypes and devices with the real kernel's.
"""
from __future__ import annotations

import warnings
import weakref
from typing import Callable, Optional

from . import _ops
from ._library.custom_ops import CustomOpDef, autograd_kernel, device_keys
from ._library.opcheck import OpCheckError, opcheck
from ._library.schema import infer_schema, parse_schema

__all__ = ["Library", "define", "impl", "custom_op", "register_kernel", "register_fake", "register_autograd",
           "opcheck", "infer_schema", "CustomOpDef", "OpCheckError"]

_KINDS = ("DEF", "IMPL", "FRAGMENT")
_def_namespaces = {"aten"}  # namespaces a DEF library holds (one each, as TORCH_LIBRARY)
_keep: list = []  # the libraries of impl()/define() calls made without one: they live on


class Library:
    """A set of registrations in namespace ns, undone together by _destroy() (or when it is
    collected). kind: "DEF" (the namespace's one defining library), "FRAGMENT" (defines more in
    it) or "IMPL" (only registers kernels)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF" and ns in _def_namespaces:
            raise RuntimeError(
                f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of "
                "your definitions in a single TORCH_LIBRARY block.  If you were trying to specify "
                "implementations, consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really "
                f"intended to define operators for a single namespace in a distributed way, you can use "
                "TORCH_LIBRARY_FRAGMENT to explicitly indicate this.")
        if kind == "DEF":
            _def_namespaces.add(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._destroyed = False
        weakref.finalize(self, _undo, self.__dict__)

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def _check_alive(self) -> None:
        if self._destroyed:
            raise AssertionError("Library object has been destroyed")

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Defines an op of this namespace from its schema ("foo(Tensor x) -> Tensor"); returns its
        name."""
        self._check_alive()
        name = schema.split("(", 1)[0].strip()
        if self.kind == "IMPL":
            raise RuntimeError(f'def("{name}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL block.  '
                               "All def()s should be placed in the (unique) TORCH_LIBRARY block for their "
                               "namespace.")
        parsed = parse_schema(schema)
        if "::" not in parsed.name:
            parsed.name = f"{self.ns}::{parsed.name}"
        _ops.define(parsed, _Owner.of(self))
        return name

    def impl(self, op_name, fn: Callable, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = True) -> None:
        """Registers fn as op_name's kernel for dispatch_key ("CPU", "CUDA", "Autograd",
        "CompositeImplicitAutograd", ...; the library's own key, else CompositeImplicitAutograd, by
        default). A kernel for a key that already has one (every built-in op's) replaces it, with a
        warning, until this library is destroyed; with allow_override=False, one registered from
        Python already is an error. with_keyset passes fn the dispatch key first."""
        self._check_alive()
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        name = op_name if isinstance(op_name, str) else op_name.name().partition("::")[2]
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        keys = _ops.parse_keys(key)
        builtin = self.ns == "aten" and _ops.builtin_op(name)
        qualname = f"aten::{builtin}" if builtin else f"{self.ns}::{_default_overload(name)}"
        if builtin and "Meta" in keys:
            raise NotImplementedError("minitorch has no meta device: a built-in op takes no Meta kernel")
        if with_keyset:
            fn = _with_keyset(fn, key)
        for k in keys:
            if not allow_override and _ops.kernel(qualname, k) is not None:
                raise RuntimeError(f"This is not allowed since there's already a kernel registered from python "
                                   f"overriding {name.split('.')[0]}'s behavior for {key} dispatch key and {self.ns} "
                                   "namespace.")
            if builtin or _ops.kernel(qualname, k) is not None:
                _warn_override(qualname, k)
            _ops.push_kernel(qualname, k, fn, _Owner.of(self))

    def _destroy(self) -> None:
        """Undoes every registration this library made (the kernels below come back)."""
        _undo(self.__dict__)


class _Owner:
    """What a registration records as its library: the Library's state, not the Library (which
    must stay collectable to undo its registrations when collected)."""

    @staticmethod
    def of(lib: Library) -> dict:
        return lib.__dict__


def _undo(state: dict) -> None:
    if state.get("_destroyed", True):
        return
    state["_destroyed"] = True
    _ops.drop_kernels(state)
    _ops.undefine(state)
    if state["kind"] == "DEF":
        _def_namespaces.discard(state["ns"])


def _default_overload(name: str) -> str:
    base, _, overload = name.partition(".")
    return base if overload in ("", "default") else name


def _with_keyset(fn: Callable, key: str) -> Callable:
    def with_keyset(*args, **kwargs):
        return fn(key, *args, **kwargs)

    return with_keyset


def _warn_override(qualname: str, key: str) -> None:
    if qualname.startswith("aten::"):
        schema = _ops.builtin_schema(qualname[6:])
    else:
        op = _ops.lookup(qualname)
        schema = str(op.schema) if op else qualname
    warnings.warn("Overriding a previously registered kernel for the same operator and the same dispatch key\n"
                  f"  operator: {schema}\n  dispatch key: {key}\n  new kernel: registered from Python",
                  UserWarning, stacklevel=3)


def _split_qualname(qualname: str):
    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise ValueError(f"Expected the name to be 'namespace::op_name', got {qualname!r}")
    return ns, name


def _lib_for(ns: str, lib: Optional[Library]) -> Library:
    if lib is None:
        lib = Library(ns, "FRAGMENT")
        _keep.append(lib)
    return lib


def define(qualname, schema: str = "", *, lib: Optional[Library] = None, tags=()):
    """define("mylib::foo", "(Tensor x) -> Tensor"): defines an op; define(lib, schema) is
    lib.define(schema)."""
    if isinstance(qualname, Library):
        return qualname.define(schema)
    ns, name = _split_qualname(qualname)
    return _lib_for(ns, lib).define(name + schema, tags=tags)


def impl(qualname, types=None, func: Optional[Callable] = None, *, lib: Optional[Library] = None):
    """Registers a kernel: impl("mylib::foo", "cpu", fn), as a decorator when func is left out;
    types are device types ("cpu", "cuda", or a list) or a dispatch key. impl(lib, name,
    dispatch_key) is the decorator form of lib.impl(name, fn, dispatch_key)."""
    if isinstance(qualname, Library):
        library, name, key = qualname, types, func if isinstance(func, str) else ""

        def register_on(fn):
            library.impl(name, fn, key)
            return fn

        return register_on
    ns, name = _split_qualname(qualname)

    def register(fn):
        library = _lib_for(ns, lib)
        for key in _keys_of_types(types):
            library.impl(name, fn, key)
        return fn

    return register(func) if func is not None else register


def _keys_of_types(types) -> list:
    if isinstance(types, str) and types in _ops.KEY_ALIASES:
        return [types]
    return device_keys(types)


def custom_op(name: str, fn: Optional[Callable] = None, /, *, mutates_args, device_types=None,
              schema: Optional[str] = None):
    """Wraps fn as the op `name` ("mylib::foo"), callable as minitorch.ops.mylib.foo and through
    the CustomOpDef returned; its schema from fn's type hints unless given."""

    def wrap(func: Callable) -> CustomOpDef:
        ns, opname = _split_qualname(name)
        text = schema if schema is not None else infer_schema(func, mutates_args=mutates_args)
        old = _ops.lookup(name)
        if old is not None and old.custom is not None:
            old.custom._lib._destroy()  # a custom_op defined again replaces the first
        lib = Library(ns, "FRAGMENT")
        lib.define(opname + text)
        op = _ops.lookup(name)
        op.custom = CustomOpDef(op, func, lib)
        op.custom.register_kernel(device_types, func)
        lib.impl(opname, autograd_kernel(op), "Autograd")
        return op.custom

    return wrap(fn) if fn is not None else wrap


def _custom_or_def(op) -> "_ops.OpDef":
    if isinstance(op, CustomOpDef):
        return op._opdef
    qualname = op if isinstance(op, str) else op.name()
    found = _ops.lookup(qualname)
    if found is None:
        raise RuntimeError(f"operator {qualname} does not exist")
    return found


def register_kernel(op, device_types, func: Optional[Callable] = None, /, *, lib: Optional[Library] = None):
    """A kernel of op for device_types ("cpu", "cuda", a list, or None for every device)."""
    found = _custom_or_def(op)
    if found.custom is not None and lib is None:
        return found.custom.register_kernel(device_types, func)

    def register(fn):
        library = _lib_for(found.ns, lib)
        for key in device_keys(device_types):
            library.impl(found.name, fn, key)
        return fn

    return register(func) if func is not None else register


def register_fake(op, func: Optional[Callable] = None, /, *, lib: Optional[Library] = None, _stacklevel: int = 1):
    """op's fake kernel: from the inputs' metadata, results of the right shape, dtype and device
    (kept for opcheck; minitorch has no meta device)."""
    found = _custom_or_def(op)

    def register(fn):
        if found.custom is not None and lib is None:
            return found.custom.register_fake(fn)
        _lib_for(found.ns, lib).impl(found.name, fn, "Meta")
        return fn

    return register(func) if func is not None else register


def register_autograd(op, backward: Callable, /, *, setup_context: Optional[Callable] = None,
                      lib: Optional[Library] = None) -> None:
    """op's gradient: backward(ctx, *grads) -> one gradient per input, after setup_context(ctx,
    inputs, output) saved what it needs."""
    found = _custom_or_def(op)
    if found.custom is not None and lib is None:
        return found.custom.register_autograd(backward, setup_context=setup_context)
    if not callable(backward):
        raise TypeError(f"Expected backward to be a function, got {type(backward)}")
    _lib_for(found.ns, lib).impl(found.name, autograd_kernel(found, backward, setup_context), "Autograd")
    return None


