"""minitorch.device: where a tensor's memory lives, as PyTorch's torch.device; and the default
device of factories (set_default_device, `with minitorch.device("cuda"):`), one per thread as in
PyTorch. The device in force lives in _C (csrc/python/defaults.c), which gives it to every
factory op called without device= and to tensor(); here is only the stack of `with` blocks."""
from __future__ import annotations

import threading

_saved = threading.local()  # .stack: the device in force before each open `with device(...)`


class device:
    """A device type ('cpu', 'cuda' or 'meta') and, for CUDA, an index: device('cuda:0'). A
    tensor on 'meta' has a shape, strides and a dtype but no data (PyTorch's meta device)."""

    __slots__ = ("type", "index")

    def __init__(self, type: "str | device", index: int | None = None) -> None:
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type.__class__.__name__})")
        if ":" in type:
            if index is not None:
                raise ValueError(f"type (string) must not include an index because index was passed explicitly: {type}")
            type, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(f"Expected one of cpu, cuda, meta device type at start of device string: {type}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError("device objects are immutable")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def _repr_html_(self) -> str:
        from minitorch._html import device_html  # Jupyter: the repr and where the memory is

        return device_html(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (str(self),))

    def __enter__(self) -> "device":
        """Factories called without device= make their tensors here until the block ends."""
        from . import _C

        _saved.__dict__.setdefault("stack", []).append(_C._get_default_device())
        _C._set_default_device(self)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        from . import _C

        _C._set_default_device(_saved.stack.pop())


def set_default_device(device: "device | str | int | None") -> None:
    """Factories called without device= (zeros, rand, arange, tensor, ...) make their tensors on
    device from now on, on this thread; None (or "cpu") goes back to the CPU. "cuda" without an
    index is whichever CUDA device is current at each call."""
    from . import _C

    _C._set_default_device(None if device is None else _as_device(device))


def get_default_device() -> "device":
    """The device factories use when called without device= (a CUDA one with its index)."""
    from . import _C, cuda

    d = _C._get_default_device()
    if d is None:
        return device("cpu")
    if d.type == "cuda" and d.index is None:
        return device("cuda", cuda.current_device() if cuda.is_available() else 0)
    return d


def _as_device(d: "device | str | int") -> "device":
    if isinstance(d, int) and not isinstance(d, bool):
        return device("cuda", d)
    return d if isinstance(d, device) else device(d)


device.__module__ = "minitorch"  # as torch.device's
