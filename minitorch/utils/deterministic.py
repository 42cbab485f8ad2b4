"""torch.utils.deterministic: `fill_uninitialized_memory` (True by default). While it and
use_deterministic_algorithms(True) are both on, empty(), empty_like(), empty_strided(),
new_empty() and resize_()'s new elements are filled with NaN (floating and complex dtypes) or
the dtype's largest value (integers; True for bool), as PyTorch's, so that reading memory never
written gives the same result on every run."""
from __future__ import annotations

import sys
import types


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self) -> bool:
        from .._modes import _deterministic

        return _deterministic["fill"]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode: bool) -> None:
        from .._modes import _deterministic, _push_deterministic

        if not isinstance(mode, bool):
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _deterministic["fill"] = mode
        _push_deterministic()


sys.modules[__name__].__class__ = _Deterministic
