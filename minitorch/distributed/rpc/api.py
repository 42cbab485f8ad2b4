"""torch.distributed.rpc.api: the RRef type. Constructing one needs the RPC agent, which minitorch
does not have (see the package's docstring), so it raises PyTorch's error for a process that has
not called init_rpc."""
from typing import Generic, TypeVar

T = TypeVar("T")

__all__ = ["RRef"]


class RRef(Generic[T]):
    """A remote reference to a value owned by an RPC worker."""

    def __init__(self, value: T, type_hint=None, devices=None) -> None:
        raise RuntimeError("Current RPC agent is not set! Did you initialize the RPC framework "
                           "(e.g. by calling `rpc.init_rpc`)?")
