"""minitorch.linalg, as torch.linalg: the functions are ops of _C (linalg_<name>)."""
from __future__ import annotations

from .. import _C

__all__ = ["cross"]


def cross(input, other, *, dim: int = -1, out=None):
    """The cross product of the 3-vectors of input and other along dim (their other dims
    broadcast)."""
    result = _C.linalg_cross(input, other, dim=dim)
    if out is not None:
        return out.copy_(result)
    return result
