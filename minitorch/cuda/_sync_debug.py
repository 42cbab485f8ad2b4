"""torch.cuda.set_sync_debug_mode / get_sync_debug_mode: "warn" or "error" on the calls that make
the host wait for a CUDA device.

The waits a program asks for from Python are watched: reading a CUDA tensor's values on the host
(item, tolist, bool/int/float, numpy, cpu and to("cpu")), nonzero (its size comes from the
device) and cuda.synchronize(). While the mode is "default" nothing is watched: the methods are
wrapped only while a mode is set, so they cost nothing otherwise. A wait inside a C op (a
boolean-mask index, for one) is not seen.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Dict, Union

_MODES = ("default", "warn", "error")  # index = the mode's number
_mode = 0
_MESSAGE = "called a synchronizing CUDA operation"
# Tensor methods that wait for the device when the tensor (or, for to, the result) is on it
_TENSOR_WAITS = ("item", "tolist", "__bool__", "__int__", "__float__", "numpy", "cpu", "nonzero", "to")
_saved: Dict[str, Any] = {}


def _alert() -> None:
    if _mode == 1:
        warnings.warn(_MESSAGE, UserWarning, stacklevel=3)
    elif _mode == 2:
        raise RuntimeError(_MESSAGE)


def _waits(name: str, args: tuple, kwargs: dict) -> bool:
    """Whether Tensor.<name>(self, *args, **kwargs) on a CUDA tensor waits for the device."""
    if name != "to":
        return True
    target = kwargs.get("device", args[0] if args else None)
    return target is not None and str(target).startswith("cpu")


def _watched(name: str, method: Callable) -> Callable:
    @functools.wraps(method)
    def watched(self, *args, **kwargs):
        if self.is_cuda and _waits(name, args, kwargs):
            _alert()
        return method(self, *args, **kwargs)

    return watched


def _watch(on: bool) -> None:
    from .. import Tensor

    if on and not _saved:
        for name in _TENSOR_WAITS:
            _saved[name] = Tensor.__dict__.get(name)
            setattr(Tensor, name, _watched(name, getattr(Tensor, name)))
    elif not on and _saved:
        for name, own in _saved.items():
            if own is None:
                delattr(Tensor, name)  # the base class's method again
            else:
                setattr(Tensor, name, own)
        _saved.clear()


def set_sync_debug_mode(debug_mode: Union[int, str]) -> None:
    """0 / "default": no check; 1 / "warn": a UserWarning at each wait; 2 / "error": RuntimeError."""
    from . import _lazy_init

    _lazy_init()
    global _mode
    if isinstance(debug_mode, str):
        if debug_mode not in _MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = _MODES.index(debug_mode)
    _mode = int(debug_mode)
    _watch(_mode != 0)


def get_sync_debug_mode() -> int:
    from . import _lazy_init

    _lazy_init()
    return _mode


def on_synchronize() -> None:
    """Called by cuda.synchronize()."""
    if _mode:
        _alert()
