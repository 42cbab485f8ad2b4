"""minitorch._logging: torch._logging.set_logs, which scripts call to see what torch.compile
traced. minitorch compiles nothing (see compiler.py), so there are no compile artifacts to log;
the call checks its arguments' form and records nothing."""
from __future__ import annotations

import logging
from typing import Any


def set_logs(*, all: Any = None, **settings: Any) -> None:
    """Accepts PyTorch's keywords: a component's level (an int such as logging.DEBUG, or None)
    or an artifact's switch (a bool)."""
    for name, value in settings.items():
        if value is not None and not isinstance(value, (bool, int)):
            raise ValueError(f"Unrecognized log level for log {name}: {value!r}")
    if all is not None and not isinstance(all, int):
        raise ValueError(f"Unrecognized log level for log all: {all!r}")
    logging.getLogger("minitorch").debug("set_logs: minitorch runs eagerly; nothing is compiled to log")
