"""distributed.checkpoint.stateful: what dcp.save and dcp.load call state_dict() and
load_state_dict() on instead of saving the object itself (a module, an optimizer, an app state)."""
from typing import Any, Dict, Protocol, runtime_checkable

__all__ = ["Stateful", "StatefulT"]


@runtime_checkable
class Stateful(Protocol):
    def state_dict(self) -> Dict[str, Any]:
        ...

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        ...


StatefulT = Stateful
