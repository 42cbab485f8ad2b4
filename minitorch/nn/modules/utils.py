"""Argument helpers of the layers (torch/nn/modules/utils.py): int-or-tuple expansion."""
from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any, List, Sequence

__all__: List[str] = []


def _ntuple(n: int, name: str = "parse"):
    def parse(x: Any):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")


def _reverse_repeat_tuple(t: Sequence[Any], n: int) -> tuple:
    """t reversed with each element repeated n times: (1, 2) -> (2, 2, 1, 1) for n=2 (F.pad's order)."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size: Any, defaults: Sequence[int]) -> Any:
    """out_size with each None replaced by the matching trailing entry of defaults."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size) :])]
