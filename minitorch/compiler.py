"""minitorch.compile and minitorch.compiler: minitorch runs eagerly only, so compiling returns
what it was given, unchanged, and says so once; scripts written for torch.compile run as they
would with PyTorch's `backend="eager"`."""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Optional

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
_told = False


def _tell_once() -> None:
    global _told
    if not _told:
        _told = True
        warnings.warn("minitorch.compile: minitorch runs eagerly; the model or function is returned "
                      "unchanged (as torch.compile(backend='eager') would run it)", stacklevel=3)


def compile(model: Optional[Callable] = None, *, fullgraph: bool = False, dynamic: Optional[bool] = None,
            backend: Any = "inductor", mode: Optional[str] = None, options: Optional[dict] = None,
            disable: bool = False) -> Any:
    """torch.compile's signature and checks; returns model itself (or, without model, a decorator)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(m for m in _MODES if m)}")
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if not callable(model):
        raise RuntimeError("Model must be callable")
    if not disable:
        _tell_once()
    return model


def is_compiling() -> bool:
    return False


def is_dynamo_compiling() -> bool:
    return False


def disable(fn: Optional[Callable] = None, recursive: bool = True, *, reason: Optional[str] = None) -> Any:
    """torch.compiler.disable: nothing is compiled, so fn runs as it is."""
    return fn if fn is not None else (lambda f: f)


def reset() -> None:
    """torch.compiler.reset: there is no compile cache to clear."""


def allow_in_graph(fn: Callable) -> Callable:
    return fn
