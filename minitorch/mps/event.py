"""torch.mps.Event: an MPS event, which a machine without the MPS backend cannot make."""
from __future__ import annotations


class Event:
    """Wrapper around an MPS event; creating one raises without the MPS backend, as PyTorch's."""

    def __init__(self, enable_timing: bool = False) -> None:
        raise RuntimeError("Cannot execute acquireEvent() without MPS backend.")
