"""The loss layers: thin Modules over the losses of nn.functional, holding the reduction and,
for the weighted ones, the class weights as a buffer (so they are in the state_dict)."""
from __future__ import annotations

import math
import warnings
from typing import Optional

from minitorch import Tensor
from minitorch.nn import functional as F
from minitorch.nn.modules.linear import Linear
from minitorch.nn.modules.module import Module

__all__ = ["L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"]


class _Loss(Module):
    reduction: str

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__()
        if size_average is not None or reduce is not None:
            self.reduction = F._legacy_reduction(size_average, reduce)
        else:
            self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight: Optional[Tensor] = None, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class _ElementLoss(_Loss):
    """A loss of input and target with nothing but the reduction: the nn.functional loss named
    _fn (by name: functional imports this module while it loads)."""

    __constants__ = ["reduction"]
    _fn: str

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return getattr(F, self._fn)(input, target, reduction=self.reduction)


class L1Loss(_ElementLoss):
    """|input - target|, reduced."""

    _fn = "l1_loss"


class MSELoss(_ElementLoss):
    """(input - target)^2, reduced."""

    _fn = "mse_loss"


class NLLLoss(_WeightedLoss):
    """The negative log-likelihood of class indices, given log-probabilities."""

    __constants__ = ["ignore_index", "reduction"]

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index, reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """NLLLoss under its deprecated name (it once took (N, C, H, W) inputs only)."""

    def __init__(self, *args, **kwargs) -> None:  # NLLLoss's parameters
        warnings.warn(
            "`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement and see "
            "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__(*args, **kwargs)


class CrossEntropyLoss(_WeightedLoss):
    """log_softmax then NLLLoss, for class indices or class probabilities; optional smoothing."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        size_average=None,
        ignore_index: int = -100,
        reduce=None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class BCELoss(_WeightedLoss):
    """The binary cross entropy of probabilities."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """The binary cross entropy of sigmoid(input), computed stably; pos_weight per class."""

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        size_average=None,
        reduce=None,
        reduction: str = "mean",
        pos_weight: Optional[Tensor] = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, pos_weight=self.pos_weight, reduction=self.reduction
        )


# ---- losses, as torch/nn/modules/loss.py ----


class SmoothL1Loss(_Loss):
    """0.5 d^2 / beta below beta, |d| - 0.5 beta above, reduced."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """0.5 d^2 below delta, delta (|d| - 0.5 delta) above, reduced."""

    __constants__ = ["reduction", "delta"]

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class SoftMarginLoss(_ElementLoss):
    """log(1 + exp(-y x)) for targets of +-1, reduced."""

    _fn = "soft_margin_loss"


class KLDivLoss(_Loss):
    """The KL divergence of log-probabilities input from target."""

    __constants__ = ["reduction"]

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class _MarginLoss(_Loss):
    """The losses with a margin (MarginRankingLoss, CosineEmbeddingLoss, HingeEmbeddingLoss)."""

    __constants__ = ["margin", "reduction"]

    def __init__(self, margin: float, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """max(0, -y (x1 - x2) + margin), reduced."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(x1, x2) for y = 1, max(0, cos(x1, x2) - margin) for y = -1, reduced."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """x for y = 1, max(0, margin - x) for y = -1, reduced."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """The negative log-likelihood of a Poisson target, reduced."""

    __constants__ = ["log_input", "full", "eps", "reduction"]

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None, eps: float = 1e-8,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """The negative log-likelihood of a Gaussian target with predicted mean and variance."""

    __constants__ = ["full", "eps", "reduction"]

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var) -> Tensor:
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(a, p) - d(a, n)), reduced."""

    __constants__ = ["margin", "p", "eps", "swap", "reduction"]

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6, swap: bool = False,
                 size_average=None, reduce=None, reduction: str = "mean") -> None:
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The binary cross entropy of each class's logit, averaged over the classes, reduced."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)


__all__ += [
    "SmoothL1Loss", "HuberLoss", "SoftMarginLoss", "KLDivLoss", "MarginRankingLoss", "CosineEmbeddingLoss",
    "HingeEmbeddingLoss", "PoissonNLLLoss", "GaussianNLLLoss", "TripletMarginLoss", "MultiLabelSoftMarginLoss",
]


class TripletMarginWithDistanceLoss(_Loss):
    """max(d(a, p) - d(a, n) + margin, 0) with any distance function d (PairwiseDistance() by
    default), reduced by `reduction`."""

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean") -> None:
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(
                f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, got {margin} instead"
            )
        from minitorch.nn.modules.distance import PairwiseDistance

        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function, margin=self.margin,
            swap=self.swap, reduction=self.reduction,
        )


__all__ += ["TripletMarginWithDistanceLoss"]


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss: sum over classes i != y of w[y] * max(0, margin - x[y] +
    x[i])^p / C, reduced."""

    __constants__ = ["p", "margin", "reduction"]

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Optional[Tensor] = None, size_average=None,
                 reduce=None, reduction: str = "mean") -> None:
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss: each target class (up to the first -1) against each other
    class, max(0, 1 - (x[y_j] - x[i])) / C, reduced."""

    __constants__ = ["reduction"]

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


__all__ += ["MultiMarginLoss", "MultiLabelMarginLoss"]


class CTCLoss(_Loss):
    """The connectionist temporal classification loss of log_probs (T, N, C) against target
    sequences (blank the blank class), reduced; zero_infinity makes an impossible alignment's
    infinite loss (and its gradient) 0."""

    __constants__ = ["blank", "reduction"]

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> None:
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor) -> Tensor:
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)


__all__ += ["CTCLoss"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of the logits of a Linear layer it owns (num_classes * prod(out_features)
    outputs, viewed as (num_classes, *out_features) per sample) against the target:
    F.linear_cross_entropy."""

    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def __init__(self, in_features: int, num_classes: int, *, out_features: tuple = (), bias: bool = False,
                 device=None, dtype=None, reduction: str = "mean", weight: Optional[Tensor] = None,
                 ignore_index: Optional[int] = None, label_smoothing: float = 0.0, options=None) -> None:
        super().__init__(weight, None, None, reduction)
        self.num_classes = num_classes
        self.out_features = tuple(out_features)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.options = options
        self.linear = Linear(in_features, num_classes * math.prod(self.out_features), bias=bias, device=device,
                             dtype=dtype)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        logical = (self.num_classes, *self.out_features)
        bias = None if self.linear.bias is None else self.linear.bias.reshape(logical)
        return F.linear_cross_entropy(input, self.linear.weight.reshape(*logical, self.linear.in_features), target,
                                      linear_bias=bias, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
