"""minitorch.jit: TorchScript's entry points where they are harmless in eager mode. script and
trace return what they were given (the eager model computes the same), the decorators leave
functions alone, freeze and optimize_for_inference give the (eval-mode) module itself, and the
fusion switches are kept and change nothing; saving or loading TorchScript archives is not
supported."""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, List, Optional


def script(obj: Any, optimize: Optional[bool] = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    return obj


def trace(func: Any, example_inputs: Any = None, *args: Any, **kwargs: Any) -> Any:
    """Returns func itself: runs the eager function rather than a recording of one call (so it
    also follows data-dependent control flow, which a real trace would freeze)."""
    return func


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn: Callable) -> Callable:
    return fn


def export(fn: Callable) -> Callable:
    return fn


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def freeze(mod: Any, preserved_attrs: Optional[List[str]] = None, optimize_numerics: bool = True) -> Any:
    """torch.jit.freeze: the module itself (its weights are already what an eager call reads);
    PyTorch's error for a module in training mode."""
    if getattr(mod, "training", False):
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return mod


def optimize_for_inference(mod: Any, other_methods: Optional[List[str]] = None) -> Any:
    """torch.jit.optimize_for_inference: the module in eval mode, frozen (freeze)."""
    if hasattr(mod, "training"):
        mod.eval()
    return freeze(mod)


_onednn_fusion = False
_FUSERS = ("fuser0", "fuser1", "fuser2", "fuser3", "none")


def enable_onednn_fusion(enabled: bool) -> None:
    global _onednn_fusion
    _onednn_fusion = bool(enabled)


def onednn_fusion_enabled() -> bool:
    return _onednn_fusion


@contextlib.contextmanager
def fuser(name: str) -> Iterator[None]:
    """torch.jit.fuser(name): selects a TorchScript fuser for the block; nothing is fused here."""
    if name not in _FUSERS:
        raise Exception(f"unrecognized fuser option (name: {name})")
    yield


def _not_supported(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError("minitorch.jit: TorchScript archives are not supported (minitorch runs eagerly); "
                              "save a state_dict with minitorch.save instead")


save = load = _not_supported
