"""torch.mps.profiler: the Metal signposts and captures, which need the MPS backend."""
from __future__ import annotations

import contextlib


def start(mode: str = "interval", wait_until_completed: bool = False) -> None:
    raise RuntimeError("Cannot execute profilerStartTrace() without MPS backend.")


def stop() -> None:
    raise RuntimeError("Cannot execute profilerStopTrace() without MPS backend.")


@contextlib.contextmanager
def profile(mode: str = "interval", wait_until_completed: bool = False):
    start(mode, wait_until_completed)
    try:
        yield
    finally:
        stop()


def is_metal_capture_enabled() -> bool:
    """Whether metal_capture can be used: never without the MPS backend."""
    return False


def is_capturing_metal() -> bool:
    return False


@contextlib.contextmanager
def metal_capture(fname: str):
    raise RuntimeError("Cannot execute metal_capture() without MPS backend.")
    yield
