"""torch.distributed.elastic.multiprocessing.errors: the @record decorator that a torchrun script
puts on its entry point, so that an exception in a worker is written, as JSON, to the file named by
TORCHELASTIC_ERROR_FILE (where a launcher gives one) before it propagates; ErrorHandler, which does
the writing, and ChildFailedError, what a launcher raises for failed workers.

The error file has torchelastic's layout: {"message": {"message": "<Type>: <text>", "extraInfo":
{"py_callstack": <traceback>, "timestamp": "<seconds>"}}}. Without TORCHELASTIC_ERROR_FILE nothing
is written and the exception propagates unchanged, as in PyTorch.
"""
from __future__ import annotations

import faulthandler
import functools
import json
import os
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple

__all__ = ["ChildFailedError", "ErrorHandler", "ProcessFailure", "get_error_handler", "record"]

_NOT_AVAILABLE = "<N/A>"


class ErrorHandler:
    """Writes a worker's exception to the error file named by TORCHELASTIC_ERROR_FILE."""

    def _get_error_file_path(self) -> Optional[str]:
        return os.environ.get("TORCHELASTIC_ERROR_FILE", None)

    def initialize(self) -> None:
        """Sends the interpreter's fault traces (a segfault's stack) to the error file too."""
        path = self._get_error_file_path()
        try:
            if path is not None:
                faulthandler.enable(file=open(path, "a"), all_threads=True)  # noqa: SIM115  (kept open)
            else:
                faulthandler.enable(all_threads=True)
        except Exception as e:  # a closed stderr or an unwritable file must not stop the worker
            print(f"Unable to enable fault handler. {type(e).__name__}: {e}")

    def record_exception(self, e: BaseException) -> None:
        """Writes e (its type, message and the traceback being handled) to the error file, if any."""
        path = self._get_error_file_path()
        if path:
            data = {"message": {"message": f"{type(e).__name__}: {e}",
                                "extraInfo": {"py_callstack": traceback.format_exc(),
                                              "timestamp": str(int(time.time()))}}}
            with open(path, "w") as fp:
                json.dump(data, fp)

    def dump_error_file(self, rootcause_error_file: str, error_code: int = 0) -> None:
        """Copies a failed child's error file into this process's (a launcher's root cause)."""
        with open(rootcause_error_file) as fp:
            rootcause = json.load(fp)
        if error_code and isinstance(rootcause.get("message"), dict):
            rootcause["message"].setdefault("errorCode", error_code)
        path = self._get_error_file_path()
        if path:
            with open(path, "w") as fp:
                json.dump(rootcause, fp)


def get_error_handler() -> ErrorHandler:
    return ErrorHandler()


@dataclass
class ProcessFailure:
    """One failed worker: its local rank, process id, exit code and error file (with what it says)."""

    local_rank: int
    pid: int
    exitcode: int
    error_file: str
    error_file_data: Dict[str, Any] = field(init=False)
    message: str = field(init=False)
    timestamp: int = field(init=False)

    def __post_init__(self) -> None:
        self.error_file_data = {}
        self.message = ""
        self.timestamp = int(time.time())
        if self.error_file != _NOT_AVAILABLE and os.path.isfile(self.error_file):
            with open(self.error_file) as fp:
                self.error_file_data = json.load(fp)
            msg = self.error_file_data.get("message", {})
            self.message = msg.get("message", "") if isinstance(msg, dict) else str(msg)
            if isinstance(msg, dict):
                self.timestamp = int(msg.get("extraInfo", {}).get("timestamp", self.timestamp))
        elif self.exitcode < 0:
            self.message = f"Signal {-self.exitcode} received by PID {self.pid}"
        else:
            self.message = "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"

    def signal_name(self) -> str:
        import signal

        return signal.Signals(-self.exitcode).name if self.exitcode < 0 else _NOT_AVAILABLE

    def timestamp_isoformat(self) -> str:
        import datetime

        return datetime.datetime.fromtimestamp(self.timestamp).isoformat(sep="_")


class ChildFailedError(Exception):
    """Some workers of `name` failed; failures maps each global rank to its ProcessFailure."""

    def __init__(self, name: str, failures: Dict[int, ProcessFailure]) -> None:
        self.name = name
        self.failures = failures
        if not failures:
            raise AssertionError("ChildFailedError needs at least one failure")
        super().__init__(f"{name} FAILED")

    def get_first_failure(self) -> Tuple[int, ProcessFailure]:
        rank = min(self.failures, key=lambda r: self.failures[r].timestamp)
        return rank, self.failures[rank]

    def format_msg(self, boarder_delim: str = "=", section_delim: str = "-") -> str:
        """torchrun's report: the title, the other failures, then the root cause (the first),
        each with its time, rank, exit code, error file and traceback."""
        import socket

        title = f"{self.name} FAILED"
        root, _ = self.get_first_failure()
        blocks = {}
        for idx, (rank, f) in enumerate(self.failures.items()):
            trace = f.error_file_data.get("message", {}) if f.error_file_data else {}
            text = trace.get("extraInfo", {}).get("py_callstack", f.message) if isinstance(trace, dict) else f.message
            signal = f" ({f.signal_name()})" if f.signal_name() != _NOT_AVAILABLE else ""
            blocks[rank] = (f"[{idx}]:\n  time      : {f.timestamp_isoformat()}\n  host      : {socket.getfqdn()}\n"
                            f"  rank      : {rank} (local_rank: {f.local_rank})\n"
                            f"  exitcode  : {f.exitcode} (pid: {f.pid}){signal}\n  error_file: {f.error_file}\n"
                            f"  traceback : {text.rstrip().replace(chr(10), chr(10) + '  ')}")
        width = min(60, max(len(title), *(len(line) for b in blocks.values() for line in b.splitlines())))
        others = [b for r, b in blocks.items() if r != root] or ["  <NO_OTHER_FAILURES>"]
        return "\n".join([boarder_delim * width, title, section_delim * width, "Failures:", *others,
                          section_delim * width, "Root Cause (first observed failure):", blocks[root],
                          boarder_delim * width])


def record(fn: Callable, error_handler: Optional[ErrorHandler] = None) -> Callable:
    """Decorates a worker's entry point: an exception is written to the error file, then raised
    again; SystemExit(0) returns None; a ChildFailedError (a launcher's) copies the first failed
    child's error file instead."""
    if not error_handler:
        error_handler = get_error_handler()

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        error_handler.initialize()
        try:
            return fn(*args, **kwargs)
        except SystemExit as se:
            if se.code == 0:
                return None
            raise
        except ChildFailedError as e:
            _, failure = e.get_first_failure()
            if failure.error_file != _NOT_AVAILABLE:
                error_handler.dump_error_file(failure.error_file, failure.exitcode)
            raise
        except Exception as e:
            error_handler.record_exception(e)
            raise

    return wrapper
