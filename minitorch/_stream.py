"""torch.Stream and torch.Event: a device's queue of work and a marker in it, whatever the device.
On CUDA they are minitorch.cuda.Stream's and Event's (each wraps one); the CPU runs work as it is
called, so its one stream is always done and, as PyTorch's CPU backend, it has no events to
record."""
from __future__ import annotations

from typing import Any, Optional

_DEVICE_TYPES = {"cpu": 0, "cuda": 1}  # PyTorch's DeviceType numbers, as device_type reports them


def _target(device: Any):
    """device, or the current accelerator (CUDA where usable) else the CPU."""
    from . import cuda
    from ._device import device as _device

    if device is None:
        return _device("cuda", cuda.current_device()) if cuda.is_available() else _device("cpu")
    d = _device(device) if not isinstance(device, int) else _device("cuda", device)
    if d.type == "cuda" and d.index is None:
        cuda._lazy_init()
        d = _device("cuda", cuda.current_device())
    return d


class Stream:
    """An in-order queue of a device's work (device default: the current accelerator's current
    device, else the CPU); priority < 0 asks CUDA for the high-priority class."""

    def __init__(self, device: Any = None, *, priority: int = 0) -> None:
        from . import cuda

        d = _target(device)
        self._cuda = cuda.Stream(d, priority=priority) if d.type == "cuda" else None
        self.device_type = _DEVICE_TYPES[d.type]
        self.device_index = d.index if d.type == "cuda" else -1

    @property
    def device(self):
        from ._device import device

        return device("cuda", self.device_index) if self._cuda is not None else device("cpu")

    @property
    def stream_id(self) -> int:
        return self._cuda.cuda_stream if self._cuda is not None else 0

    def query(self) -> bool:
        return self._cuda.query() if self._cuda is not None else True

    def synchronize(self) -> None:
        if self._cuda is not None:
            self._cuda.synchronize()

    def wait_event(self, event: "Event") -> None:
        if self._cuda is not None and event._cuda is not None:
            self._cuda.wait_event(event._cuda)

    def wait_stream(self, stream: "Stream") -> None:
        if self._cuda is not None and stream._cuda is not None:
            self._cuda.wait_stream(stream._cuda)

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def __enter__(self) -> "Stream":
        if self._cuda is not None:
            from . import cuda

            self._context = cuda.stream(self._cuda)
            self._context.__enter__()
        return self

    def __exit__(self, *exc: Any) -> bool:
        context = self.__dict__.pop("_context", None)
        if context is not None:
            context.__exit__(*exc)
        return False

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and (self.device_type, self.device_index, self.stream_id) == (
            other.device_type, other.device_index, other.stream_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __repr__(self) -> str:
        kind = "cuda" if self._cuda is not None else "cpu"
        return f"torch.Stream device_type={kind}, device_index={self.device_index}, stream_id={self.stream_id}"


class Event:
    """A marker recorded in a stream's work: query(), synchronize(), wait(stream) and
    elapsed_time(end) (milliseconds, with enable_timing) once recorded. CPU events cannot be."""

    def __init__(self, device: Any = None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        from . import cuda

        d = _target(device)
        self._type = d.type
        self._index = d.index if d.type == "cuda" else -1
        self.enable_timing = enable_timing
        self._cuda = cuda.Event(enable_timing, blocking, interprocess) if d.type == "cuda" else None

    @property
    def device(self):
        from ._device import device

        return device("cuda", self._index) if self._type == "cuda" else device("cpu")

    def record(self, stream: Optional[Stream] = None) -> None:
        if self._cuda is None:
            raise RuntimeError("cpu backend doesn't support events.")
        self._cuda.record(None if stream is None else stream._cuda)

    def query(self) -> bool:
        return self._cuda.query() if self._cuda is not None else True

    def synchronize(self) -> None:
        if self._cuda is not None:
            self._cuda.synchronize()

    def wait(self, stream: Optional[Stream] = None) -> None:
        if self._cuda is not None:
            self._cuda.wait(None if stream is None else stream._cuda)

    def elapsed_time(self, end_event: "Event") -> float:
        if self._cuda is None or end_event._cuda is None:
            raise RuntimeError("cpu backend doesn't support events.")
        return self._cuda.elapsed_time(end_event._cuda)

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self._type}, device_index={self._index}, "
                f"event_flag={int(self.enable_timing)}, event_id={self._cuda.cuda_event if self._cuda else 0}")


Stream.__module__ = Event.__module__ = "minitorch"  # as torch.Stream's and torch.Event's
