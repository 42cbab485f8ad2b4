"""torch.nn.attention: which kernels scaled_dot_product_attention may use.

minitorch has one implementation of scaled_dot_product_attention, written with the math
backend's steps, on CPU and CUDA. sdpa_kernel restricts the backends as PyTorch does, through
the switches of minitorch.backends.cuda (enable_math_sdp, ...), and the call fails as PyTorch's
does when no allowed backend could run it: a fused backend stands in for the math one where
PyTorch's fused kernel would accept the inputs (its rank, dtype and dropout conditions).
"""
from __future__ import annotations

import contextlib
import enum
from typing import Iterator, List, Union

import minitorch

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The backends of scaled_dot_product_attention, numbered as PyTorch's."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    __str__ = enum.Enum.__str__  # "SDPBackend.MATH", not the number


# backend -> its switch in minitorch.backends.cuda ("overrideable" is kept here: no switch there)
_SWITCHES = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
             SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}
_overrideable = {"enabled": False}


def _enabled() -> List[SDPBackend]:
    from minitorch.backends import _sdp

    on = [b for b, name in _SWITCHES.items() if _sdp[name]]
    return on + [SDPBackend.OVERRIDEABLE] if _overrideable["enabled"] else on


def _enable_only(backends: List[SDPBackend]) -> None:
    from minitorch.backends import _sdp

    for backend, name in _SWITCHES.items():
        _sdp[name] = backend in backends
    _overrideable["enabled"] = SDPBackend.OVERRIDEABLE in backends


@contextlib.contextmanager
def sdpa_kernel(backends: Union[List[SDPBackend], SDPBackend], set_priority: bool = False) -> Iterator[dict]:
    """Only `backends` may run scaled_dot_product_attention inside the block; the switches as they
    were come back after it. set_priority is accepted (minitorch has one kernel to order)."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, "
                             f"got {type(backends).__name__}")
    chosen = [backends] if isinstance(backends, SDPBackend) else list(dict.fromkeys(backends))
    previous = _enabled()
    try:
        _enable_only(chosen)
        yield {}
    finally:
        _enable_only(previous)


_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _fused_can_run(on: List[SDPBackend], query, key, value, dropout_p: float) -> bool:
    """Whether one of the enabled fused backends would take these inputs in PyTorch: on the CPU
    its flash kernel (4-D floating inputs, no dropout, one head size); on CUDA flash (half
    types) or memory-efficient attention (half types and float32), 4-D."""
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        return False
    dtype = str(query.dtype).split(".")[-1]
    if query.device.type == "cpu":
        return (SDPBackend.FLASH_ATTENTION in on and dtype in _FLOATS and dropout_p == 0.0
                and query.size(-1) == value.size(-1))
    half = dtype in ("float16", "bfloat16")
    return ((SDPBackend.FLASH_ATTENTION in on and half)
            or (SDPBackend.EFFICIENT_ATTENTION in on and (half or dtype == "float32")))


def _check_backends(query, key, value, dropout_p: float) -> None:
    """Raises PyTorch's RuntimeError when the math backend is off and no enabled fused backend
    would run the call."""
    on = _enabled()
    fused = [b for b in on if b != SDPBackend.MATH]
    if query.device.type == "cpu":
        fused = [b for b in fused if b == SDPBackend.FLASH_ATTENTION]
    if not fused:
        raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely "
                           "due to turning off both the math kernel and the fused kernels.")
    if not _fused_can_run(on, query, key, value, dropout_p):
        raise RuntimeError("No available kernel.  Aborting execution.")


_switches: dict = {}  # minitorch.backends._sdp, once backends is imported (it imports after nn)


def _sdpa_allowed(query, key, value, dropout_p: float) -> None:
    """Called by F.scaled_dot_product_attention: nothing to check while the math backend is on."""
    if not _switches:
        from minitorch.backends import _sdp

        _switches["sdp"] = _sdp
    if not _switches["sdp"]["math"] and isinstance(query, minitorch.Tensor):
        _check_backends(query, key, value, dropout_p)
