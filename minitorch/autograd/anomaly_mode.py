"""Anomaly detection, as torch.autograd.anomaly_mode: detect_anomaly (a context manager) and
set_detect_anomaly (a context manager or a plain call). The check is the C engine's
(csrc/autograd/engine.c): with anomaly mode on and check_nan, a backward node that returns a NaN
raises RuntimeError("Function 'SqrtBackward0' returned nan values in its 0th output.")."""
from __future__ import annotations

import warnings

from .. import _C

__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_anomaly_enabled",
           "set_detect_anomaly"]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    _C._set_anomaly_enabled(bool(enabled), bool(check_nan))


def is_anomaly_enabled() -> bool:
    return _C._is_anomaly_enabled()


def is_anomaly_check_nan_enabled() -> bool:
    return _C._is_anomaly_check_nan_enabled()


class detect_anomaly:
    """Turns anomaly detection on inside the block (check_nan: a NaN returned by a backward
    function raises), restoring the previous setting after it."""

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled "
            "for debugging.",
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Sets anomaly detection on or off now; as a context manager, restores the previous setting
    on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)
