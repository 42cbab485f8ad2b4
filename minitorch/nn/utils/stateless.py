"""torch.nn.utils.stateless: functional_call, deprecated in PyTorch 2.0 for torch.func.functional_call,
which it calls (with PyTorch's FutureWarning)."""
from __future__ import annotations

import warnings
from typing import Any, Dict

__all__ = ["functional_call"]


def functional_call(module: Any, parameters_and_buffers: Dict[str, Any], args: Any = None, kwargs: Any = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """module(*args, **kwargs) with the given parameters and buffers in place of its own."""
    from ...func._functional_call import _functional_call

    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in a "
                  "future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
