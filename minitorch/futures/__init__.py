"""torch.futures.Future: the result of work that may still be running (a collective issued with
async_op=True: Work.get_future()), and what DDP's communication hooks return.

A Future made for local work runs nothing in the background: wait() drives the work it stands for
(Work.wait()) and then the callbacks chained with then(), in order, on the calling thread. One that
another thread completes (an RPC's reply, a user's set_result) blocks wait() until it does."""
from __future__ import annotations

import threading
from typing import Any, Callable, List, Optional

__all__ = ["Future", "collect_all", "wait_all"]

_UNSET = object()


class Future:
    """A value that becomes available later: set_result/set_exception, or the completion of the
    work it was made for; then(callback) chains a Future of callback(this future)."""

    def __init__(self, *, devices: Optional[List[Any]] = None) -> None:
        self._value: Any = _UNSET
        self._error: Optional[BaseException] = None
        self._waiter: Optional[Callable[[], Any]] = None  # computes the value when waited for
        self._poll: Optional[Callable[[], bool]] = None  # whether it could be computed now
        self._callbacks: List[Callable[["Future"], None]] = []
        self._completed = threading.Event()  # set once a value or an error is in

    @classmethod
    def _of(cls, waiter: Callable[[], Any], poll: Optional[Callable[[], bool]] = None) -> "Future":
        f = cls()
        f._waiter = waiter
        f._poll = poll
        return f

    def done(self) -> bool:
        if self._value is _UNSET and self._error is None and self._poll is not None and self._poll():
            self._resolve()
        return self._value is not _UNSET or self._error is not None

    def _resolve(self) -> None:
        if self._value is not _UNSET or self._error is not None or self._waiter is None:
            return
        waiter, self._waiter = self._waiter, None
        try:
            self._value = waiter()
        except BaseException as e:  # noqa: BLE001 - kept, raised by wait() and value()
            self._error = e
        self._completed.set()
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def wait(self) -> Any:
        self._resolve()
        if self._value is _UNSET and self._error is None:
            self._completed.wait()  # another thread sets the result
        if self._error is not None:
            raise self._error
        return self._value

    def value(self) -> Any:
        if not self.done():
            raise RuntimeError("Future.value(): the future is not completed yet (call wait() first)")
        return self.wait()

    def set_result(self, result: Any) -> None:
        if self._value is not _UNSET or self._error is not None:
            raise RuntimeError("Future can only be marked completed once.")
        self._waiter = None
        self._value = result
        self._completed.set()
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def set_exception(self, result: BaseException) -> None:
        if not isinstance(result, BaseException):
            raise TypeError("set_exception() takes an exception")
        if self._value is not _UNSET or self._error is not None:
            raise RuntimeError("Future can only be marked completed once.")
        self._waiter = None
        self._error = result
        self._completed.set()
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def then(self, callback: Callable[["Future"], Any]) -> "Future":
        """A Future of callback(self), computed once self completed."""
        parent = self

        def compute():
            parent.wait()
            return callback(parent)

        return Future._of(compute, lambda: parent.done())

    def add_done_callback(self, callback: Callable[["Future"], None]) -> None:
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)


def collect_all(futures: List[Future]) -> Future:
    """A Future of the list of futures, completed once each is."""

    def every():
        for f in futures:
            f.wait()
        return list(futures)

    return Future._of(every, lambda: all(f.done() for f in futures))


def wait_all(futures: List[Future]) -> List[Any]:
    return [f.wait() for f in futures]
