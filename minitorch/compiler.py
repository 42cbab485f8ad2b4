"""minitorch.compile and minitorch.compiler: minitorch runs eagerly only, so compiling a function
wraps it in a function that calls it as it is, and compiling a module wraps it in an
OptimizedModule that calls it as it is (its state_dict keys gain "_orig_mod.", as PyTorch's do,
which checkpoints written by compiled models and the scripts that strip that prefix rely on); the
first compile says so once. Scripts written for torch.compile run as they would with PyTorch's
`backend="eager"`: inside a compiled call is_compiling() is True (as it is while Dynamo traces),
inside a disabled function and under set_stance("force_eager") it is False. There is no
compilation, so no recompilation: the recompile stances change nothing."""
from __future__ import annotations

import functools
import threading
import warnings
from typing import Any, Callable, Optional

from minitorch.nn import Module

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile", "eager_then_compile",
            "aot_eager_then_compile")
_told = False
_state = threading.local()  # depth: compiled calls running on this thread, inside any disabled one
_stance = {"stance": "default", "skip_guard_eval_unsafe": False, "backend": None}


def _compiled_depth() -> int:
    return getattr(_state, "depth", 0)


def _run_compiled(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """fn(*args, **kwargs) as a compiled call: is_compiling() True inside (unless the stance is
    force_eager); an unknown stance fails here, as PyTorch's does at the call."""
    stance = _stance["stance"]
    if stance not in _STANCES:
        raise RuntimeError(f"invalid torch.compile stance 'DynamoStance(stance='{stance}', skip_guard_eval_unsafe="
                           f"{_stance['skip_guard_eval_unsafe']}, backend={_stance['backend']})'")
    if stance == "force_eager":
        return fn(*args, **kwargs)
    _state.depth = _compiled_depth() + 1
    try:
        return fn(*args, **kwargs)
    finally:
        _state.depth -= 1


def _tell_once() -> None:
    global _told
    if not _told:
        _told = True
        warnings.warn("minitorch.compile: minitorch runs eagerly; the model or function runs as it is "
                      "(as torch.compile(backend='eager') would run it)", stacklevel=3)


def compile(model: Optional[Callable] = None, *, fullgraph: bool = False, dynamic: Optional[bool] = None,
            backend: Any = None, mode: Optional[str] = None, options: Optional[dict] = None,
            name: Optional[str] = None, disable: bool = False, recompile_limit: Optional[int] = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None) -> Any:
    """torch.compile's signature and checks; returns a function itself, a module wrapped in an
    OptimizedModule (with disable=True the module itself), or, without model, a decorator."""
    if backend is None:
        backend = "inductor"  # PyTorch's default backend (get_default_backend)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(m for m in _MODES if m)}")
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, name=name, disable=disable,
                                 recompile_limit=recompile_limit, isolate_recompiles=isolate_recompiles,
                                 shapes_spec=shapes_spec)
    if not callable(model):
        raise RuntimeError("Model must be callable")
    if disable:
        return model
    _tell_once()
    # A module compiled twice is wrapped once (PyTorch would hand back a compiled function).
    if isinstance(model, Module):
        return model if isinstance(model, OptimizedModule) else OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args: Any, **kwargs: Any) -> Any:
        return _run_compiled(model, args, kwargs)

    compiled._torchdynamo_orig_callable = model  # type: ignore[attr-defined]
    return compiled


class OptimizedModule(Module):
    """What compile(module) returns: the module as the child `_orig_mod`, called eagerly. Any
    other attribute is the wrapped module's: reads that find nothing here, writes and
    deletes go through to it, and `training` is its flag."""

    _OWN = frozenset({"_orig_mod", "_wrapping", "forward"})

    def __init__(self, mod: Module) -> None:
        # Until _orig_mod is registered every write stays here (Module.__init__ makes some).
        object.__setattr__(self, "_wrapping", False)
        super().__init__()
        self._modules["_orig_mod"] = mod
        object.__setattr__(self, "_wrapping", True)

    @property
    def training(self) -> bool:  # type: ignore[override]
        return self._orig_mod.training

    @training.setter
    def training(self, value: bool) -> None:
        if self.__dict__.get("_wrapping"):
            self._orig_mod.training = value

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return _run_compiled(self._orig_mod, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        modules = self.__dict__.get("_modules")
        if modules is None or "_orig_mod" not in modules:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "_orig_mod":
            return modules["_orig_mod"]
        return getattr(modules["_orig_mod"], name)

    def _stays_here(self, name: str) -> bool:
        return not self.__dict__.get("_wrapping") or name in self._OWN or hasattr(type(self), name)

    def __setattr__(self, name: str, value: Any) -> None:
        if self._stays_here(name):
            super().__setattr__(name, value)
        else:
            setattr(self._orig_mod, name, value)

    def __delattr__(self, name: str) -> None:
        if self._stays_here(name):
            super().__delattr__(name)
        else:
            delattr(self._orig_mod, name)

    def __len__(self) -> int:
        inner = self._orig_mod
        if not hasattr(type(inner), "__len__"):
            raise TypeError(f"{type(inner).__name__} does not support len()")
        return len(inner)

    def __dir__(self) -> list:
        return sorted(set(dir(self._orig_mod)) | set(super().__dir__()))


def is_compiling() -> bool:
    """True inside a call of a compiled function or module (see the module's comment)."""
    return _compiled_depth() > 0


def is_dynamo_compiling() -> bool:
    return is_compiling()


def disable(fn: Optional[Callable] = None, recursive: bool = True, *, reason: Optional[str] = None) -> Any:
    """torch.compiler.disable: fn runs as it is, outside any compiled call (is_compiling() False
    inside it, and, here, in what it calls, whatever recursive says)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def disabled(*args: Any, **kwargs: Any) -> Any:
        depth = _compiled_depth()
        _state.depth = 0
        try:
            return fn(*args, **kwargs)
        finally:
            _state.depth = depth

    return disabled


class set_stance:
    """torch.compiler.set_stance(stance="default", *, skip_guard_eval_unsafe=False,
    force_backend=None): a function call that sets the stance, a with-block that restores the
    one before, a decorator that sets it for each call. "force_eager" runs compiled functions and
    modules as plain ones (is_compiling() False); the recompile stances change nothing, as
    nothing is compiled; an unknown stance fails at the next compiled call."""

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: Any = None) -> None:
        if is_compiling():
            raise RuntimeError("Attempt to trace forbidden callable <function set_stance>")
        self._new = {"stance": stance, "skip_guard_eval_unsafe": skip_guard_eval_unsafe, "backend": force_backend}
        self._prev = dict(_stance)
        _stance.update(self._new)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: Any) -> None:
        _stance.update(self._prev)

    def __call__(self, fn: Callable) -> Callable:
        _stance.update(self._prev)  # as a decorator it sets the stance only for the calls
        new = self._new

        @functools.wraps(fn)
        def with_stance(*args: Any, **kwargs: Any) -> Any:
            prev = dict(_stance)
            _stance.update(new)
            try:
                return fn(*args, **kwargs)
            finally:
                _stance.update(prev)

        return with_stance


def reset() -> None:
    """torch.compiler.reset: there is no compile cache to clear."""


def allow_in_graph(fn: Callable) -> Callable:
    return fn
