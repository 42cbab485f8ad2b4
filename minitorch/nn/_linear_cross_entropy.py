"""F.linear_cross_entropy: cross_entropy of the logits linear(input, linear_weight, linear_bias),
with K-dimensional weights (C, d_1, ..., d_K, in_features) giving (N, C, d_1, ..., d_K) logits.
Every option of LinearCrossEntropyOptions computes PyTorch's reference path here (see
nn/modules/linear_cross_entropy_options.py): its chunking saves memory, not arithmetic."""
from __future__ import annotations

from typing import Optional

from minitorch import Tensor


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Optional[Tensor] = None,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    ignore_index: Optional[int] = None,
    label_smoothing: float = 0.0,
    options=None,
) -> Tensor:
    """The cross entropy of the classes' logits input @ linear_weight.T (+ linear_bias) against
    target; ignore_index None is cross_entropy's -100."""
    from minitorch.nn.functional import cross_entropy, linear

    classes, k_dims, features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1]), linear_weight.shape[-1]
    if k_dims and input.dim() != 2:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {features}), got unbatched input with shape {tuple(input.shape)}")
    logits = linear(input, linear_weight.reshape(-1, features),
                    None if linear_bias is None else linear_bias.reshape(-1))
    if k_dims:
        logits = logits.reshape(input.shape[0], classes, *k_dims)
    return cross_entropy(logits, target, weight=weight, ignore_index=-100 if ignore_index is None else ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)
