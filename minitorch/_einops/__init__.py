"""einops on minitorch tensors, with no cost to `import minitorch` and no import of einops or torch.

einops finds a tensor's backend among the subclasses of its AbstractBackend whose framework_name
is in sys.modules, so minitorch's backend (backend.py) has to exist as a class once einops has
loaded, whichever of the two was imported first. install() (run by `import minitorch`) defines it
at once where einops is already loaded, and otherwise leaves a finder on sys.meta_path that
defines it right after einops's own package has run.

The same finder serves minitorch's einops layers (layers.py: Rearrange, Reduce, EinMix as
minitorch.nn.Modules) as `einops.layers.minitorch`, the name einops gives a framework's layers,
and as `einops.layers.torch` where no real torch is installed, so `from einops.layers.torch
import Rearrange` in a program run with `import minitorch as torch` gets modules that nest in
minitorch's. Where PyTorch is installed, einops.layers.torch stays PyTorch's: one process may use
both libraries (the tests do), and a module name can name only one class. Nothing here aliases
`torch` itself in sys.modules.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys

_LAYERS = "minitorch._einops.layers"


def _define_backend() -> None:
    importlib.import_module("minitorch._einops.backend")


class _RegisterAfter:
    """einops's own loader, which defines minitorch's backend once einops's package has run."""

    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = module.__spec__.loader = self._loader  # einops keeps its own loader
        self._loader.exec_module(module)
        _define_backend()


class _ServeLayers:
    """Loads minitorch's einops layers under an einops name (the same module object)."""

    def create_module(self, spec):
        return importlib.import_module(_LAYERS)

    def exec_module(self, module) -> None:
        pass  # already run by create_module's import


class _EinopsFinder:
    """A meta path finder (PEP 451) that answers only for the einops names above."""

    def find_spec(self, name, path, target=None):
        if name == "einops":
            for finder in sys.meta_path:
                spec = None if finder is self else getattr(finder, "find_spec", lambda *a: None)(name, path, target)
                if spec is not None and spec.loader is not None:
                    spec.loader = _RegisterAfter(spec.loader)
                    return spec
            return None
        if name == "einops.layers.minitorch" or (name == "einops.layers.torch" and not _real_torch_installed()):
            return importlib.util.spec_from_loader(name, _ServeLayers())
        return None


def _real_torch_installed() -> bool:
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):  # a finder that refuses torch, or a broken torch in sys.modules
        return False


def install() -> None:
    """Makes einops see minitorch (see the module's docstring); called once by `import minitorch`."""
    if "einops" in sys.modules:
        _define_backend()
    sys.meta_path.insert(0, _EinopsFinder())  # ahead of the path finder, which would load einops itself
