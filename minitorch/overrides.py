"""torch.overrides: the __torch_function__ protocol, for Tensor subclasses, for classes that
stand in for tensors, and for modes.

A call of an op of the C core (minitorch.add, Tensor.sum), of an operator (x + 1) or of
t[index] leaves the C path when a torch function mode is on, or when an argument (or an element
of a list argument) is a Tensor subclass or another object whose class has a __torch_function__
other than _C._disabled_torch_function_impl (csrc/python/torch_function.c, whose gate only
compares type pointers for plain Tensors and Python numbers, so their calls cost nothing more).
It then comes to _handle_c_call below as the public function PyTorch names (minitorch.add;
Tensor.add for x.add(1) and for x + 1; Tensor.__rsub__ for 1 - x; Tensor.__getitem__), and goes
to the innermost mode, else to the arguments' __torch_function__, subclasses before their bases.
A subclass's other members (properties such as shape, size(), repr) dispatch through wrappers put
on the subclass when it is defined (end of this file). Tensor's own __torch_function__
(minitorch/_tensor.py) calls the function with subclass dispatch off and makes its tensor results
instances of the subclass.
"""
from __future__ import annotations

import contextlib
import functools
import threading
import types
import warnings
from typing import Any, Callable, Dict, Iterable, List, Set

import minitorch
from minitorch import _C

__all__ = ["TorchFunctionMode", "enable_reentrant_dispatch", "get_default_nowrap_functions",
           "get_ignored_functions", "get_overridable_functions", "handle_torch_function", "has_torch_function",
           "has_torch_function_unary", "has_torch_function_variadic", "is_tensor_like",
           "is_tensor_method_or_property", "resolve_name", "wrap_torch_function"]

# The top-level functions that take no tensor to dispatch on (factories, global switches),
# as PyTorch lists them among its ignored functions.
_IGNORED = (
    "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "scalar_tensor", "zeros", "ones", "empty",
    "empty_strided", "full", "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
    "normal", "rand_like", "randn_like", "tril_indices", "triu_indices", "hamming_window", "hann_window",
    "bartlett_window", "blackman_window", "kaiser_window", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "get_default_dtype", "set_default_device", "get_default_device",
    "is_tensor", "is_storage", "typename", "set_grad_enabled", "is_grad_enabled", "is_inference_mode_enabled",
    "use_deterministic_algorithms", "are_deterministic_algorithms_enabled", "set_printoptions",
    "promote_types", "can_cast", "result_type", "set_num_threads", "get_num_threads", "load", "save", "compile",
)


def _overrides(arg: Any) -> bool:
    """Whether arg's class takes part in the protocol: it has a __torch_function__ that is not the
    disabled one, and arg is no plain Tensor (whose class's is the default subclasses inherit)."""
    cls = type(arg)
    return cls is not minitorch.Tensor and getattr(cls, "__torch_function__", _C._disabled_torch_function_impl) \
        is not _C._disabled_torch_function_impl


def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether a call with relevant_args goes to a __torch_function__: a mode is on, or one of them
    overrides (and DisableTorchFunction(Subclass) is not in force), the C gate's answer."""
    return _C._has_torch_function(tuple(relevant_args))


def has_torch_function_unary(arg: Any) -> bool:
    return _C._has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    return _C._has_torch_function(args)


def _get_overloaded_args(relevant_args: Iterable[Any]) -> List[Any]:
    """One argument per overriding class, in the order they come, except that a subclass goes
    before its base classes (their __torch_function__ is tried first)."""
    chosen: List[Any] = []
    for arg in relevant_args:
        cls = type(arg)
        if not _overrides(arg) or any(type(c) is cls for c in chosen):
            continue
        spot = next((i for i, c in enumerate(chosen) if issubclass(cls, type(c))), len(chosen))
        chosen.insert(spot, arg)
    return chosen


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
    """Calls the innermost mode's __torch_function__, else those of the overriding arguments'
    classes, subclasses first, with (public_api, types, args, kwargs); the first result other than
    NotImplemented is returned."""
    chosen = _get_overloaded_args(relevant_args)
    result = _first_answer(chosen, public_api, args, kwargs)
    if result is not NotImplemented:
        return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement __torch_function__: "
                    f"{[type(a) for a in chosen]}")


def _first_answer(chosen: List[Any], public_api: Callable, args: tuple, kwargs: dict) -> Any:
    """The first result other than NotImplemented of the innermost mode's and then the chosen
    arguments' __torch_function__, or NotImplemented."""
    classes = tuple(type(a) for a in chosen)
    if _C._is_torch_function_mode_enabled():
        with _pop_mode_temporarily() as mode:
            result = mode.__torch_function__(public_api, classes, args, kwargs)
        if result is not NotImplemented:
            return result
    for arg in chosen:
        method = type(arg).__torch_function__
        if not isinstance(type(arg).__dict__.get("__torch_function__", classmethod(method)), classmethod) and \
                method is not _C._disabled_torch_function_impl:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and will be an error "
                          "in future, please define it as a classmethod.", DeprecationWarning, stacklevel=3)
            method = functools.partial(method, arg)
        result = method(public_api, classes, args, kwargs)
        if result is not NotImplemented:
            return result
    return NotImplemented


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """A decorator: the function hands its call to handle_torch_function when one of the
    arguments dispatcher(*args, **kwargs) returns overrides it."""

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)

        return wrapped

    return decorate


def is_tensor_like(inp: Any) -> bool:
    """A minitorch.Tensor, or an object whose class has __torch_function__."""
    return type(inp) is minitorch.Tensor or hasattr(inp, "__torch_function__")


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether func is a method of Tensor or the getter of one of its properties."""
    members = [v for cls in minitorch.Tensor.__mro__ for v in vars(cls).values()]
    return func in members or getattr(func, "__name__", None) == "__get__"


def get_ignored_functions() -> Set[Callable]:
    """The top-level functions that never dispatch to __torch_function__."""
    return {getattr(minitorch, n) for n in _IGNORED if hasattr(minitorch, n)}


def _relevant(values: Iterable[Any]) -> List[Any]:
    """values and the elements of their list and tuple values, as the C gate looks at them."""
    return [item for v in values for item in (v if isinstance(v, (list, tuple)) else (v,))]


_public_cache: Dict[tuple, Callable] = {}


def _public(name: str, is_method: bool) -> Callable:
    """The public function a call of the C core's `name` is: Tensor.<name> for a method (an
    operator's dunder too), else minitorch.<name> (or _C.<name> for an op with no public name)."""
    key = (name, is_method)
    found = _public_cache.get(key)
    if found is None:
        owner = minitorch.Tensor if is_method else minitorch
        found = getattr(owner, name, None)
        if not callable(found) or isinstance(found, type):
            found = getattr(_C.TensorBase if is_method else _C, name)
        _public_cache[key] = found
    return found


def _handle_c_call(name: str, kind: int, args: tuple, kwargs: dict) -> Any:
    """A call of the C core (csrc/python/torch_function.c) that a mode or an argument takes: kind
    is 0 for the function minitorch.<name>, 1 for the method Tensor.<name>."""
    public = _public(name, kind == 1)
    chosen = _get_overloaded_args(_relevant(list(args) + list(kwargs.values())))
    result = _first_answer(chosen, public, args, kwargs)
    if result is not NotImplemented:
        return result
    handlers = "".join(f"  - tensor subclass {type(a)}\n" for a in chosen)
    what = f"Tensor.{name}" if kind == 1 else f"minitorch.{name}"
    raise TypeError(f"Multiple dispatch failed for '{what}'; all __torch_function__ handlers returned "
                    f"NotImplemented:\n\n{handlers}")


# ---- modes ----

class _ModeStack(threading.local):
    def __init__(self) -> None:
        self.modes: List["TorchFunctionMode"] = []


_stack = _ModeStack()


def _push_mode(mode: "TorchFunctionMode") -> None:
    _stack.modes.append(mode)
    _C._set_torch_function_modes(len(_stack.modes))


def _pop_mode() -> "TorchFunctionMode":
    if not _stack.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _stack.modes.pop()
    _C._set_torch_function_modes(len(_stack.modes))
    return mode


@contextlib.contextmanager
def _pop_mode_temporarily():
    """The innermost mode, off the stack while its __torch_function__ runs (so the calls it
    makes go to the next mode), back on afterwards."""
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


def _get_current_function_mode_stack() -> List["TorchFunctionMode"]:
    return list(_stack.modes)


def _get_current_function_mode():
    return _stack.modes[-1] if _stack.modes else None


class TorchFunctionMode:
    """A context manager whose __torch_function__(func, types, args, kwargs) sees every call that
    can go to __torch_function__ while it is entered, factories included, whatever the arguments.
    Modes nest: inside its __torch_function__ a mode is off the stack, so the calls it makes go to
    the mode entered before it, then to the arguments' classes."""

    inner: "TorchFunctionMode"

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        _pop_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`",
                      stacklevel=2)
        return cls(*args, **kwargs)


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """PyTorch's lets __torch_dispatch__ code call back into the dispatcher with the Python key
    on; minitorch's __torch_dispatch__ (utils/_python_dispatch.py) may always do so, so its body
    simply runs."""
    yield


def get_default_nowrap_functions() -> Set[Callable]:
    """The functions whose results Tensor.__torch_function__ leaves as they are: the getters of
    _base and grad, as PyTorch's."""
    return {minitorch.Tensor._base.__get__, minitorch.Tensor.grad.__get__}


def get_overridable_functions() -> Dict[Any, List[Callable]]:
    """The functions that go to __torch_function__, by namespace: minitorch's functions and
    Tensor's methods and operators that the C core's ops are."""
    ignored = get_ignored_functions()
    functions, methods = [], []
    for name in _C.OPS:
        info = _C._op_info(name)
        if info["function"] and callable(getattr(minitorch, name, None)) and getattr(minitorch, name) not in ignored:
            functions.append(getattr(minitorch, name))
        if info.get("method") and callable(getattr(minitorch.Tensor, name, None)):
            methods.append(getattr(minitorch.Tensor, name))
    # operators are their ops' methods (x + 1 is Tensor.add), but for the reflected forms whose
    # operands do not commute, and indexing
    methods += [getattr(minitorch.Tensor, f"__r{op}__") for op in ("sub", "truediv", "floordiv", "mod", "lshift",
                                                                   "rshift", "pow", "matmul")]
    methods += [minitorch.Tensor.__getitem__, minitorch.Tensor.__setitem__]
    return {minitorch: functions, minitorch.Tensor: methods}


def resolve_name(f: Callable) -> Any:
    """The dotted name of a function get_overridable_functions lists (None for others)."""
    for space, funcs in get_overridable_functions().items():
        if f in funcs:
            prefix = "torch" if space is minitorch else "torch.Tensor"
            return f"{prefix}.{f.__name__}"
    return None


# ---- a Tensor subclass's members ----
# The C gate sees the ops, the operators and indexing. The rest of Tensor's members (properties,
# C methods that are no ops, Python methods, printing and len()) go to __torch_function__ through
# wrappers that Tensor.__init_subclass__ puts on each subclass that takes part in the protocol,
# so that a plain Tensor's members stay as they are and cost nothing more. (A mode sees these
# members' calls on subclasses only.)

_DUNDERS = ("__repr__", "__str__", "__format__", "__iter__", "__reversed__", "__len__", "__contains__",
            "__bool__", "__float__", "__int__", "__index__")
# members that construct, copy or convert through protocols of their own
_LEFT_ALONE = ("as_subclass", "new")
_SETTABLE = ("requires_grad", "grad")  # C properties with a setter (Python ones say so in fset)


def _inherited(cls: type, name: str) -> Any:
    """The member name of cls as its class dicts have it (no descriptor protocol)."""
    return next((c.__dict__[name] for c in cls.__mro__ if name in c.__dict__), None)


def _tensor_members() -> Dict[str, Any]:
    """Tensor's members that the wrappers cover: the public properties and methods that are no op
    of the op table (which the C gate sees), and the dunders of _DUNDERS."""
    ops = set(_C.OPS)
    found: Dict[str, Any] = {}
    for name in dir(minitorch.Tensor):
        public = not name.startswith("_") and name not in ops and name not in _LEFT_ALONE
        if public or name in _DUNDERS:
            member = _inherited(minitorch.Tensor, name)
            if isinstance(member, (property, types.GetSetDescriptorType)) or callable(member):
                found[name] = member
    return found


def _property_wrapper(name: str, member: Any) -> property:
    def fget(self):
        if _C._has_torch_function((self,)):
            return handle_torch_function(member.__get__, (self,), self)
        return member.__get__(self)

    def fset(self, value):
        if _C._has_torch_function((self, value)):
            handle_torch_function(member.__set__, (self, value), self, value)
        else:
            member.__set__(self, value)

    settable = name in _SETTABLE if isinstance(member, types.GetSetDescriptorType) else member.fset is not None
    return property(fget, fset if settable else None, doc=member.__doc__)


def _method_wrapper(name: str, member: Any) -> Callable:
    public = getattr(minitorch.Tensor, name)

    def method(self, *args, **kwargs):
        if _C._has_torch_function((self,)):
            return handle_torch_function(public, (self, *args, *kwargs.values()), self, *args, **kwargs)
        return public(self, *args, **kwargs)

    method.__name__, method.__qualname__, method.__doc__ = name, f"Tensor.{name}", getattr(member, "__doc__", None)
    return method


def _install_member_wrappers(cls: type) -> None:
    """Tensor.__init_subclass__'s: cls's members inherited from Tensor unchanged go to
    __torch_function__, unless cls's __torch_function__ is the disabled one (nn.Parameter)."""
    if getattr(cls, "__torch_function__", None) is _C._disabled_torch_function_impl:
        return
    for name, member in _tensor_members().items():
        if _inherited(cls, name) is member:
            is_property = isinstance(member, (property, types.GetSetDescriptorType))
            setattr(cls, name, (_property_wrapper if is_property else _method_wrapper)(name, member))
