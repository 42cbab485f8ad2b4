"""minitorch._dynamo: the names scripts call around torch.compile (reset, config, mark_dynamic,
disable, allow_in_graph). minitorch runs eagerly (see compiler.py), so there is no graph capture
here: reset has no cache to clear, shape marks change nothing, and config keeps the settings a
script writes (with PyTorch's defaults and its error for a name it does not have) without acting
on them. It must not pretend to compile: nothing here reports graphs or guards."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable

from minitorch.compiler import OptimizedModule, allow_in_graph, disable, is_compiling  # noqa: F401
from minitorch.compiler import reset as _compiler_reset

# PyTorch's defaults for the settings scripts commonly write or read.
_DEFAULTS = {
    "cache_size_limit": 8, "recompile_limit": 8, "accumulated_cache_size_limit": 256,
    "accumulated_recompile_limit": 256, "suppress_errors": False, "verbose": False,
    "capture_scalar_outputs": False, "capture_dynamic_output_shape_ops": False,
    "automatic_dynamic_shapes": True, "assume_static_by_default": True, "optimize_ddp": True,
    "specialize_int": False, "guard_nn_modules": True, "inline_inbuilt_nn_modules": True,
    "log_compilation_metrics": True, "force_parameter_static_shapes": True,
    "cache_size_limit_warn": True, "error_on_recompile": False, "compiled_autograd": False,
}


class _Config:
    """torch._dynamo.config: attribute reads and writes of known settings; an unknown name is an
    AttributeError in PyTorch's words; patch(**changes) sets some for a with-block or a call."""

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(_DEFAULTS))

    def _known(self, name: str) -> None:
        if name not in self._values:
            raise AttributeError(f"minitorch._dynamo.config.{name} does not exist")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._known(name)
        return self._values[name]

    def __setattr__(self, name: str, value: Any) -> None:
        self._known(name)
        self._values[name] = value

    @contextlib.contextmanager
    def _patched(self, changes: dict):
        for name in changes:
            self._known(name)
        saved = {name: self._values[name] for name in changes}
        self._values.update(changes)
        try:
            yield
        finally:
            self._values.update(saved)

    def patch(self, arg1: Any = None, arg2: Any = None, **changes: Any) -> Any:
        """config.patch("name", value), patch({"name": value}) or patch(name=value): a context
        manager that is also a decorator."""
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        return _Patch(self, changes)


class _Patch:
    def __init__(self, config: _Config, changes: dict) -> None:
        self._config, self._changes, self._active = config, changes, None

    def __enter__(self) -> None:
        self._active = self._config._patched(self._changes)
        self._active.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._active.__exit__(*exc)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def patched(*args: Any, **kwargs: Any) -> Any:
            with self._config._patched(self._changes):
                return fn(*args, **kwargs)

        return patched


config = _Config()


def reset() -> None:
    """torch._dynamo.reset: as compiler.reset, there is no compile cache to clear."""
    _compiler_reset()


def mark_dynamic(t: Any, index: Any, *, min: Any = None, max: Any = None, **kwargs: Any) -> None:
    """Marks dims of t as dynamic for a compiler; eager runs take every shape as it comes."""


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """As mark_dynamic."""


def mark_static(t: Any, index: Any = None) -> None:
    """As mark_dynamic."""


def graph_break() -> None:
    """A graph break for a compiler; eager code has no graph to break."""


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list:
    """The backends torch.compile accepts here: all of them run the code eagerly."""
    return ["cudagraphs", "inductor", "openxla", "tvm"]
