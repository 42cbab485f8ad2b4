"""CUDA streams and events, as torch.cuda.Stream and torch.cuda.Event.

A Stream wraps a cudaStream_t from the device's pool (PyTorch's: 32 per priority class,
reused round-robin, never destroyed); cuda_stream is its handle, 0 for the default stream.
Kernel launches, cuBLAS calls and the caching allocator use the calling thread's current
stream of the device (minitorch.cuda.stream(s) sets it). An Event is created on its first
record(), as PyTorch's is.
"""
from __future__ import annotations

from typing import Any, Optional

from .. import _C
from . import _C_cuda, _index, _lazy_init

__all__ = ["Event", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream",
           "stream"]


class Stream:
    """A CUDA stream of device (default: the current one); priority < 0 is the high class."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        if _C_cuda is None:
            raise RuntimeError("minitorch.cuda.Stream requires CUDA support")
        _lazy_init()
        self.device_index = _index(device)
        if "stream_ptr" in kwargs:  # wraps an existing handle (current_stream(), ExternalStream)
            self.cuda_stream = int(kwargs.pop("stream_ptr"))
        else:
            self.cuda_stream = _C_cuda.stream_from_pool(self.device_index, int(priority))
        if kwargs:
            raise TypeError(f"Stream() got an unexpected keyword argument '{next(iter(kwargs))}'")

    @property
    def device(self):
        from .._device import device

        return device("cuda", self.device_index)

    def query(self) -> bool:
        """Whether every kernel queued on the stream has finished."""
        return _C_cuda.stream_query(self.cuda_stream)

    def synchronize(self) -> None:
        """Waits for every kernel queued on the stream."""
        _C_cuda.stream_synchronize(self.cuda_stream)

    def wait_event(self, event: "Event") -> None:
        """Work queued on this stream from now on waits for event."""
        if event._handle is not None:
            _C_cuda.stream_wait_event(self.cuda_stream, event._handle)

    def wait_stream(self, stream: "Stream") -> None:
        """Work queued on this stream from now on waits for the work queued on stream so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Stream) and self.cuda_stream == other.cuda_stream
                and self.device_index == other.device_index)

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device_index))

    def __repr__(self) -> str:
        return f"<minitorch.cuda.Stream device=cuda:{self.device_index} cuda_stream={self.cuda_stream:#x}>"


def current_stream(device: Any = None) -> Stream:
    """The calling thread's current stream on device."""
    _lazy_init()
    idx = _index(device)
    return Stream(idx, stream_ptr=_C_cuda.current_stream(idx))


def default_stream(device: Any = None) -> Stream:
    """The device's default stream (the legacy NULL stream, handle 0)."""
    _lazy_init()
    return Stream(_index(device), stream_ptr=0)


def set_stream(stream: Optional[Stream]) -> None:
    """Makes stream its device's current stream for the calling thread."""
    if stream is not None:
        _C_cuda.set_current_stream(stream.device_index, stream.cuda_stream)


class StreamContext:
    """Makes a stream current inside a with block (None does nothing), then restores."""

    def __init__(self, stream: Optional[Stream]) -> None:
        self.stream = stream
        self._prev: Optional[Stream] = None

    def __enter__(self) -> None:
        if self.stream is None:
            return
        self._prev = current_stream(self.stream.device_index)
        set_stream(self.stream)

    def __exit__(self, *exc: Any) -> None:
        if self.stream is not None:
            set_stream(self._prev)


def stream(stream: Optional[Stream]) -> StreamContext:
    """with minitorch.cuda.stream(s): kernels launched inside go to s."""
    return StreamContext(stream)


class Event:
    """A marker in a stream's work: record() it, then wait(), query(), synchronize() or time
    the work between two events with elapsed_time (milliseconds; enable_timing=True)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        if _C_cuda is None:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self._handle: Optional[int] = None
        self._device: Optional[int] = None

    def record(self, stream: Optional[Stream] = None) -> None:
        if stream is None:
            stream = current_stream()
        if self._handle is None:
            self._handle = _C_cuda.event_create(stream.device_index, self.enable_timing, self.blocking)
            self._device = stream.device_index
        elif self._device != stream.device_index:
            raise RuntimeError(f"Event device cuda:{self._device} does not match recording stream's "
                               f"device cuda:{stream.device_index}.")
        _C_cuda.event_record(stream.device_index, self._handle, stream.cuda_stream)

    def wait(self, stream: Optional[Stream] = None) -> None:
        """Work queued on stream (default: the current one) from now on waits for this event."""
        if stream is None:
            stream = current_stream()
        stream.wait_event(self)

    def query(self) -> bool:
        return True if self._handle is None else _C_cuda.event_query(self._handle)

    def synchronize(self) -> None:
        if self._handle is not None:
            _C_cuda.event_synchronize(self._handle)

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds between this event and end_event, both recorded and complete."""
        if self._handle is None or end_event._handle is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return _C_cuda.event_elapsed_time(self._handle, end_event._handle)

    @property
    def cuda_event(self) -> int:
        return self._handle or 0

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None and _C_cuda is not None:
            _C_cuda.event_destroy(self._handle)

    def __repr__(self) -> str:
        return f"<minitorch.cuda.Event {self._handle:#x}>" if self._handle else "<minitorch.cuda.Event uninitialized>"


def _record_stream(tensor: Any, s: Any) -> None:
    """Tensor.record_stream: the tensor's block is not reused before s's work queued so far is done."""
    if not isinstance(s, Stream):
        raise RuntimeError("unknown parameter type")
    if not tensor.is_cuda:
        raise NotImplementedError("Could not run 'aten::record_stream' with arguments from the 'CPU' backend.")
    if _C._dlpack_is_imported(tensor):
        return  # a producer's memory: not the caching allocator's to hold back, as in PyTorch
    # The allocator knows blocks by their start: the storage's, not this view's.
    base = tensor.data_ptr() - tensor.storage_offset() * tensor.element_size()
    _C_cuda.record_stream(tensor.device.index or 0, base, s.cuda_stream)
