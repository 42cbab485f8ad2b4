"""The config modules of the compiler stack (torch._dynamo.config, torch._inductor.config) as
scripts use them: a module whose attributes are settings with PyTorch's defaults, written and read
as `config.freezing = True` or `config.cpp.threads`, an unknown name an AttributeError in
PyTorch's words, and patch(...) for a with-block or a decorator. minitorch compiles nothing
(compiler.py), so the settings are kept and never acted on."""
from __future__ import annotations

import contextlib
import functools
import sys
import types
from typing import Any, Callable, Dict


class _SubConfig:
    """The settings under one dotted prefix (config.cpp, config.triton)."""

    def __init__(self, module: "ConfigModule", prefix: str) -> None:
        object.__setattr__(self, "_module", module)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        return self._module._get(self._prefix + name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._module._set(self._prefix + name, value)


class ConfigModule(types.ModuleType):
    """The class a config module's file makes itself (install_config_module), so that
    attribute writes are checked."""

    _values: Dict[str, Any]
    _qualname: str

    def _known(self, name: str) -> bool:
        return name in self._values or any(k.startswith(name + ".") for k in self._values)

    def _get(self, name: str) -> Any:
        if name in self._values:
            return self._values[name]
        if self._known(name):
            return _SubConfig(self, name + ".")
        raise AttributeError(f"{self._qualname}.{name} does not exist")

    def _set(self, name: str, value: Any) -> None:
        if name not in self._values:
            raise AttributeError(f"{self._qualname}.{name} does not exist")
        self._values[name] = value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._get(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_values", "_qualname") or name.startswith("__"):
            super().__setattr__(name, value)
        else:
            self._set(name, value)

    @contextlib.contextmanager
    def _patched(self, changes: dict):
        for name in changes:
            if name not in self._values:
                raise AttributeError(f"{self._qualname}.{name} does not exist")
        saved = {name: self._values[name] for name in changes}
        self._values.update(changes)
        try:
            yield
        finally:
            self._values.update(saved)

    def patch(self, arg1: Any = None, arg2: Any = None, **changes: Any) -> "_Patch":
        """patch("name", value), patch({"name": value}) or patch(name=value): a context
        manager that is also a decorator."""
        if isinstance(arg1, str):
            changes[arg1] = arg2
        elif isinstance(arg1, dict):
            changes.update(arg1)
        return _Patch(self, changes)

    def get_config_copy(self) -> Dict[str, Any]:
        return dict(self._values)


class _Patch:
    def __init__(self, module: ConfigModule, changes: dict) -> None:
        self._module, self._changes, self._active = module, changes, None

    def __enter__(self) -> None:
        self._active = self._module._patched(self._changes)
        self._active.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self._active.__exit__(*exc)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def patched(*args: Any, **kwargs: Any) -> Any:
            with self._module._patched(self._changes):
                return fn(*args, **kwargs)

        return patched


def install_config_module(module_name: str, qualname: str, defaults: Dict[str, Any]) -> None:
    """Makes the module module_name a ConfigModule holding defaults (dotted names for the
    settings of a sub-config), its errors naming it qualname."""
    module = sys.modules[module_name]
    module.__class__ = ConfigModule
    module._values = dict(defaults)
    module._qualname = qualname
