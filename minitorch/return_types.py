"""torch.return_types: the named tuples that ops with several results return (max's
(values, indices), linalg.qr's (Q, R), ...), made by _C from the ops' schemas, so that code can
name them (isinstance checks, type annotations, pickling)."""
from . import _C

globals().update(_C._return_types)
__all__ = sorted(_C._return_types)
