"""nn.LinearCrossEntropyOptions: PyTorch's settings for its chunked linear_cross_entropy, which
never holds the whole (batch, classes) logits at once. minitorch takes them and computes the
reference path (linear, then cross_entropy): the same loss and gradients, with the logits whole."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

import minitorch

_POLICIES = ("accurate", "balanced", "compact", "auto")


@dataclass
class LinearCrossEntropyOptions:
    allow_retain_graph: bool = False
    batch_chunk_size: Optional[int] = None
    chunking_method: Optional[str] = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: Optional[minitorch.dtype] = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _POLICIES:
            raise ValueError(f"acc_policy must be one of {_POLICIES}, got {self.acc_policy!r}")
        if self.batch_chunk_size is not None and self.batch_chunk_size <= 0:
            raise ValueError(f"batch_chunk_size must be positive, got {self.batch_chunk_size}")
