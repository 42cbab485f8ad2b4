"""distributed.checkpoint.api: CheckpointException, raised by dcp.save and dcp.load when a rank failed."""
import traceback as tb
from typing import Any, Dict

__all__ = ["CheckpointException"]


class CheckpointException(BaseException):
    """A failure of save or load; failures maps each failed rank to (its exception, its traceback)."""

    def __init__(self, msg: str, failures: Dict[int, Any]) -> None:
        super().__init__(msg, failures)
        self._failures = failures

    @property
    def failures(self) -> Dict[int, Any]:
        return self._failures

    def __str__(self) -> str:
        text = f"CheckpointException ranks:{self._failures.keys()}\n"
        for rank, (exc, trace) in self._failures.items():
            text += f"Traceback (most recent call last): (RANK {rank})\n"
            if trace is not None:
                text += "".join(tb.format_list(trace))
            text += "".join(tb.format_exception_only(type(exc), value=exc))
        return text
