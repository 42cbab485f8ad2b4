"""minitorch._dynamo: the names scripts call around torch.compile (reset, config, mark_dynamic,
disable, allow_in_graph). minitorch runs eagerly (see compiler.py), so there is no graph capture
here: reset has no cache to clear, shape marks change nothing, and config keeps the settings a
script writes (with PyTorch's defaults and its error for a name it does not have) without acting
on them. It must not pretend to compile: nothing here reports graphs or guards."""
from __future__ import annotations

from typing import Any

from minitorch.compiler import OptimizedModule, allow_in_graph, disable, is_compiling  # noqa: F401
from minitorch.compiler import reset as _compiler_reset

from . import config  # noqa: E402,F401  (torch._dynamo.config: _config_module.py)


def reset() -> None:
    """torch._dynamo.reset: as compiler.reset, there is no compile cache to clear."""
    _compiler_reset()


def mark_dynamic(t: Any, index: Any, *, min: Any = None, max: Any = None, **kwargs: Any) -> None:
    """Marks dims of t as dynamic for a compiler; eager runs take every shape as it comes."""


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    """As mark_dynamic."""


def mark_static(t: Any, index: Any = None) -> None:
    """As mark_dynamic."""


def graph_break() -> None:
    """A graph break for a compiler; eager code has no graph to break."""


def list_backends(exclude_tags: Any = ("debug", "experimental")) -> list:
    """The backends torch.compile accepts here: all of them run the code eagerly."""
    return ["cudagraphs", "inductor", "openxla", "tvm"]
