"""nn.functional: the stateless functions that the layers in nn.modules call.

Each function is one call into `_C`, where the dispatcher decomposes it (`linear -> addmm`,
`relu -> clamp_min`, `cross_entropy -> log_softmax + nll_loss`), or a short composition of such
calls; nothing here touches tensor values. What stays in Python is what PyTorch keeps in Python:
argument checks, the `reduction` strings (passed to C as PyTorch's Reduction enum) and warnings.
"""
from __future__ import annotations

import warnings
from typing import List, Optional, Tuple, Union

from minitorch.nn.modules.utils import _list_with_default, _pair

from minitorch import _C, Tensor

__all__ = [
    "linear", "relu", "gelu", "silu", "tanh", "sigmoid",
    "softmax", "log_softmax", "dropout", "layer_norm", "batch_norm", "embedding", "one_hot",
    "mse_loss", "l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
]


def _tensors(fname: str, **args) -> None:
    """PyTorch's TypeError for an argument that must be a tensor and is not (before any Python
    here reads its .size(), which would raise AttributeError instead)."""
    for pos, (name, value) in enumerate(args.items(), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not {type(value).__name__}")


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """y = input @ weight.T + bias; input (*, in_features), weight (out_features, in_features)."""
    return _C.linear(input, weight, bias)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise; with inplace=True, written into input and input returned."""
    if inplace:
        return _C.relu_(input)
    return _C.relu(input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: the exact erf form, or with approximate='tanh'
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))."""
    return _C.gelu(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    if inplace:
        out = _C.silu(input)  # first: it raises PyTorch's TypeError for a non-tensor input
        return input.copy_(out)
    return _C.silu(input)


def tanh(input: Tensor) -> Tensor:
    return _C.tanh(input)


def sigmoid(input: Tensor) -> Tensor:
    return _C.sigmoid(input)


# ---- softmax, dropout, normalisation, embedding ----


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. "
        "Change the call to include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along dim, computed in dtype when given."""
    if dim is None:
        _tensors("softmax", input=input)
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _C.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """x - logsumexp(x) along dim, computed in dtype when given."""
    if dim is None:
        _tensors("log_softmax", input=input)
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _C.log_softmax(input, dim, dtype)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability p and scales the rest by 1 / (1 - p) while training;
    the identity (input itself) otherwise."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return (_C.dropout_ if inplace else _C.dropout)(input, p, training)


def layer_norm(
    input: Tensor,
    normalized_shape: List[int],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises over the trailing normalized_shape dims: (x - mean) / sqrt(var + eps) * w + b."""
    return _C.layer_norm(input, normalized_shape, weight, bias, eps, True)


def _verify_batch_size(size) -> None:
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def batch_norm(
    input: Tensor,
    running_mean: Optional[Tensor],
    running_var: Optional[Tensor],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each channel (dim 1) of input (N, C, *): by the batch's statistics while
    training (then running_mean/running_var move towards them in place, the variance unbiased),
    else by running_mean and running_var."""
    if training:
        _tensors("batch_norm", input=input)
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _C.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: Optional[int] = None,
    max_norm: Optional[float] = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """The rows of weight (num_embeddings, embedding_dim) named by the indices in input."""
    _tensors("embedding", input=input, weight=weight)
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        raise NotImplementedError("embedding(max_norm=...): renormalising the weight is not implemented yet")
    return _C.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 tensor (*, num_classes) with a 1 at each index of tensor (int64)."""
    return _C.one_hot(tensor, num_classes)


# ---- losses ----

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction_enum(reduction: str) -> int:
    """PyTorch's _Reduction.get_enum: the int the C losses take."""
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.")
        return 1
    try:
        return _REDUCTIONS[reduction]
    except (KeyError, TypeError):
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _legacy_reduction(size_average: Optional[bool], reduce: Optional[bool]) -> str:
    """The reduction string that the deprecated size_average/reduce arguments stand for."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.")
    return ret


def _pointwise_loss(op, input, target, size_average, reduce, reduction, weight):
    """mse_loss and l1_loss: the C op, or PyTorch's Python form when weighted."""
    _tensors(op.__name__, input=input, target=target)
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if weight is None:
        return op(input, target, _reduction_enum(reduction))
    _tensors(op.__name__, input=input, target=target, weight=weight)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    weighted = op(input, target, 0) * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _C.sum(weighted)
    if reduction == "mean":
        return _C.sum(weighted) / _C.sum(weight)
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    weight: Optional[Tensor] = None,
) -> Tensor:
    """(input - target)^2, reduced ('none', 'mean' or 'sum')."""
    return _pointwise_loss(_C.mse_loss, input, target, size_average, reduce, reduction, weight)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    weight: Optional[Tensor] = None,
) -> Tensor:
    """|input - target|, reduced ('none', 'mean' or 'sum')."""
    return _pointwise_loss(_C.l1_loss, input, target, size_average, reduce, reduction, weight)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    ignore_index: int = -100,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """-weight[t] * input[n, t, ...] for class indices t = target[n, ...] (log-probabilities in
    input (C), (N, C) or (N, C, d1, ...)); targets equal to ignore_index count for nothing."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _C.nll_loss(input, target, weight, _reduction_enum(reduction), ignore_index)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    ignore_index: int = -100,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """nll_loss(log_softmax(input, class dim), target): target holds class indices (int64), or
    class probabilities shaped as input (floating point)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _C.cross_entropy_loss(
        input, target, weight, _reduction_enum(reduction), ignore_index, label_smoothing
    )


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """-weight * (t log x + (1 - t) log(1 - x)) for probabilities x, each log clamped at -100."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    reduction_enum = _reduction_enum(reduction)
    _tensors("binary_cross_entropy", input=input, target=target)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) "
            "is deprecated. Please ensure they have the same size."
        )
    return _C.binary_cross_entropy(input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    pos_weight: Optional[Tensor] = None,
) -> Tensor:
    """binary_cross_entropy(sigmoid(input), target) in a form that never overflows; pos_weight
    scales the positive term, per class."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    reduction_enum = _reduction_enum(reduction)
    _tensors("binary_cross_entropy_with_logits", input=input, target=target)
    if not (target.size() == input.size()):
        raise ValueError(f"Target size ({target.size()}) must be the same as input size ({input.size()})")
    return _C.binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction_enum)
# ---- convolution and pooling ----

_size_2_t = Union[int, Tuple[int, int], List[int]]


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: _size_2_t = 1,
    padding: Union[str, _size_2_t] = 0,
    dilation: _size_2_t = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation; input (N, C, H, W) or (C, H, W), weight (OC, C/groups, KH, KW).

    padding is ints, or 'valid' (none) or 'same' (the output as large as the input; stride 1).
    """
    if not isinstance(padding, str):
        return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)
    if padding == "valid":
        return _C.conv2d(input, weight, bias, stride, 0, dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    if any(s != 1 for s in _pair(stride)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    if not isinstance(weight, Tensor) or weight.dim() != 4:  # let the op report the bad weight
        return _C.conv2d(input, weight, bias, stride, 0, dilation, groups)
    # Total padding d*(k-1) per dim, split left = total // 2, right = the rest (PyTorch's split).
    total = [d * (k - 1) for d, k in zip(_pair(dilation), weight.shape[2:])]
    left = [t // 2 for t in total]
    right = [t - t // 2 for t in total]
    if left == right:
        return _C.conv2d(input, weight, bias, stride, left, dilation, groups)
    warnings.warn(
        "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
        "copy of the input be created",
        stacklevel=2,
    )
    # Pad `right` on both sides and drop the one extra leading row/column that gives.
    out = _C.conv2d(input, weight, bias, stride, right, dilation, groups)
    return out[..., right[0] - left[0] :, right[1] - left[1] :].contiguous()


def max_pool2d(
    input: Tensor,
    kernel_size: _size_2_t,
    stride: Optional[_size_2_t] = None,
    padding: _size_2_t = 0,
    dilation: _size_2_t = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
):
    """Max over kernel_size windows; with return_indices, also each max's h*W+w in its plane."""
    if return_indices:
        out, indices = _C.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
        return out, indices
    return _C.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool2d(
    input: Tensor,
    kernel_size: _size_2_t,
    stride: Optional[_size_2_t] = None,
    padding: _size_2_t = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Tensor:
    """Mean over kernel_size windows (stride defaults to kernel_size)."""
    return _C.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Mean over output_size windows that tile (H, W); None in output_size keeps that size."""
    _tensors("adaptive_avg_pool2d", input=input)
    size = _list_with_default(output_size, input.size())
    if size == 1 or (not isinstance(size, int) and list(size) == [1, 1]):
        # As PyTorch: a 1x1 output is the mean over H and W.
        return input.mean((-1, -2), keepdim=True)
    return _C.adaptive_avg_pool2d(input, size)
