"""minitorch._inductor: torch._inductor's config module (minitorch._inductor.config), which
scripts set before torch.compile (freezing, coordinate_descent_tuning, cpp.*, triton.*). There
is no code generator behind it: minitorch runs eagerly (compiler.py)."""
from . import config  # noqa: F401
