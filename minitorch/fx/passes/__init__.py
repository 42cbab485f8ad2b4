"""torch.fx.passes: analyses and rewrites over a GraphModule's graph."""
from . import shape_prop  # noqa: F401
