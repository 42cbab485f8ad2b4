"""torch.utils.hooks: the handle that the register_*_hook methods return."""
from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any


class RemovableHandle:
    """Returned by the register_*_hook methods; `remove()` unregisters the hook."""

    _next_id = 0

    def __init__(self, hooks: "OrderedDict[int, Any]", *extra: "OrderedDict[int, Any]") -> None:
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        # Weak references: a handle kept by the user must not keep a dead Module's hooks alive.
        self._refs = [weakref.ref(d) for d in (hooks,) + extra]

    def remove(self) -> None:
        for ref in self._refs:
            table = ref()
            if table is not None:
                table.pop(self.id, None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.remove()
