"""nn.utils.skip_init: a module whose parameters and buffers are left uninitialised."""
from __future__ import annotations

import inspect
from typing import Any

import minitorch

__all__ = ["skip_init"]


def skip_init(module_cls: Any, *args: Any, **kwargs: Any) -> Any:
    """module_cls(*args, **kwargs) with uninitialised memory for its parameters and buffers, on
    kwargs' device (cpu by default): built on the meta device (no memory, no initialisation),
    then given fresh empty memory on that device, as PyTorch's."""
    if not issubclass(module_cls, minitorch.nn.Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    device = kwargs.pop("device", "cpu")
    kwargs["device"] = "meta"
    return module_cls(*args, **kwargs).to_empty(device=device)
