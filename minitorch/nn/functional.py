"""nn.functional: the stateless functions that the layers in nn.modules call.

Each function is one call into `_C`, where the dispatcher decomposes it (`linear -> addmm`,
`relu -> clamp_min`, `cross_entropy -> log_softmax + nll_loss`), or a short composition of such
calls; nothing here touches tensor values. What stays in Python is what PyTorch keeps in Python:
argument checks, the `reduction` strings (passed to C as PyTorch's Reduction enum) and warnings.
"""
from __future__ import annotations

import warnings
import math
from typing import List, Optional, Tuple, Union

from minitorch.nn.modules.utils import _list_with_default, _ntuple, _pair

import minitorch as _minitorch
from minitorch import _C, Tensor
from minitorch._grad_mode import no_grad as _no_grad
from minitorch.nn.attention import _sdpa_allowed

__all__ = [
    "linear", "relu", "gelu", "silu", "tanh", "sigmoid",
    "threshold", "leaky_relu", "elu", "selu", "celu", "hardtanh", "relu6", "softplus", "softsign",
    "tanhshrink", "mish", "hardswish", "hardsigmoid", "logsigmoid", "glu", "prelu", "softshrink",
    "hardshrink", "relu_", "threshold_", "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_",
    "softmax", "log_softmax", "dropout", "layer_norm", "batch_norm", "group_norm", "instance_norm", "local_response_norm",
    "embedding",
    "one_hot",
    "mse_loss", "l1_loss", "nll_loss", "cross_entropy", "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "smooth_l1_loss", "huber_loss", "soft_margin_loss", "kl_div", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss", "triplet_margin_loss",
    "multilabel_soft_margin_loss", "cosine_similarity", "pairwise_distance", "normalize", "pad",
    "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
    "conv1d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "avg_pool1d", "adaptive_avg_pool1d",
    "adaptive_max_pool1d", "adaptive_max_pool2d", "unfold", "fold", "pixel_shuffle", "pixel_unshuffle",
    "channel_shuffle", "native_channel_shuffle",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "embedding_bag",
    "scaled_dot_product_attention", "multi_head_attention_forward",
    "softmin", "gumbel_softmax", "rms_norm", "bilinear", "grid_sample", "affine_grid",
    "lp_pool1d", "lp_pool2d", "triplet_margin_with_distance_loss", "conv3d",
    "conv_transpose3d", "max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "rrelu", "rrelu_", "multi_margin_loss",
    "multilabel_margin_loss", "pdist", "ctc_loss",
]


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


# ---- activations: ops of the elementwise table and composites in C; softsign
# and tanhshrink are Python in PyTorch too ----


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """value where input <= threshold, else input."""
    return (_C.threshold_ if inplace else _C.threshold)(input, threshold, value)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """input where positive, else negative_slope * input."""
    return (_C.leaky_relu_ if inplace else _C.leaky_relu)(input, negative_slope)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """input where positive, else input times a slope: in training one drawn from U(lower, upper)
    per non-positive element (in float64, in row-major order, as PyTorch's CPU kernel draws, so
    one seed gives its values), in eval (lower + upper) / 2."""
    _tensors("rrelu", input=input)
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    _floats_only("leaky_relu_cpu", input)
    with _no_grad():
        hit = input <= 0
        draws = _minitorch.empty(int(hit.sum()), dtype=_minitorch.float64, device=input.device)
        noise = _minitorch.ones(input.shape, dtype=_minitorch.float64, device=input.device)
        noise = noise.masked_scatter(hit, draws.uniform_(lower, upper)).to(input.dtype)
    return input.mul_(noise) if inplace else input * noise


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """rrelu in place."""
    return rrelu(input, lower, upper, training, inplace=True)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """input where positive, else alpha * (exp(input) - 1)."""
    return (_C.elu_ if inplace else _C.elu)(input, alpha)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(input, alpha), with SELU's fixed alpha and scale."""
    return (_C.selu_ if inplace else _C.selu)(input)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    return (_C.celu_ if inplace else _C.celu)(input, alpha)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """input clamped into [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return (_C.hardtanh_ if inplace else _C.hardtanh)(input, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """hardtanh(input, 0, 6)."""
    return (_C.relu6_ if inplace else _C.relu6)(input)


# the in-place forms PyTorch's nn.functional has as bare ops (torch._C._nn's and torch.*'s)
relu_ = _C.relu_
threshold_ = _C.threshold_
leaky_relu_ = _C.leaky_relu_
elu_ = _C.elu_
selu_ = _C.selu_
celu_ = _C.celu_
hardtanh_ = _C.hardtanh_


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, x itself where beta * x > threshold."""
    return _C.softplus(input, beta, threshold)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    _tensors("softsign", input=input)
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    _tensors("tanhshrink", input=input)
    return input - input.tanh()


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return (_C.mish_ if inplace else _C.mish)(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * relu6(x + 3) / 6."""
    return (_C.hardswish_ if inplace else _C.hardswish)(input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return (_C.hardsigmoid_ if inplace else _C.hardsigmoid)(input)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed without overflow."""
    return _C.log_sigmoid(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), a and b the two halves of input along dim."""
    return _C.glu(input, dim)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """input where positive, else weight * input, weight one value or one per channel (dim 1)."""
    return _C.prelu(input, weight)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""
    return _C.softshrink(input, lambd)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x outside [-lambd, lambd], 0 inside."""
    return _C.hardshrink(input, lambd)


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


def softmin(input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x) along dim, computed in dtype when given (PyTorch writes it so too)."""
    if dim is None:
        _tensors("softmin", input=input)
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _C.softmax(_C.neg(input), dim, dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """A sample of the Gumbel-softmax distribution (Jang et al. 2016): softmax((logits + g) / tau)
    with g ~ Gumbel(0, 1) drawn as -log(Exp(1)), PyTorch's draws; hard: the one-hot of its argmax
    in the forward with the soft sample's gradient (straight-through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = _C.neg(_minitorch.empty_like(logits).exponential_().log())
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _minitorch.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes each element with probability p and scales the rest by 1 / (1 - p) while training;
    the identity (input itself) otherwise."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return (_C.dropout_ if inplace else _C.dropout)(input, p, training)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _channel_dropout(input: Tensor, p: float, training: bool, inplace: bool, batched: bool) -> Tensor:
    """feature_dropout over (N, C, ...), a batch dim added for the call when not `batched`."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = (_C.feature_dropout_ if inplace else _C.feature_dropout)(input, p, training)
    if not batched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability p, scaling the rest."""
    _tensors("dropout1d", input=input)
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {inp_dim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    return _channel_dropout(input, p, training, inplace, inp_dim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, H, W) input with probability p, scaling the rest; a 3-D
    input is taken as (N, C, L), as PyTorch does (with its warning)."""
    _tensors("dropout2d", input=input)
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability p."""
    _tensors("dropout3d", input=input)
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    return _channel_dropout(input, p, training, inplace, inp_dim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped elements set to SELU's negative saturation, then an
    affine map that keeps the mean and variance."""
    _check_p(p)
    return (_C.alpha_dropout_ if inplace else _C.alpha_dropout)(input, p, training)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels."""
    _check_p(p)
    return (_C.feature_alpha_dropout_ if inplace else _C.feature_alpha_dropout)(input, p, training)


def layer_norm(
    input: Tensor,
    normalized_shape: List[int],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises over the trailing normalized_shape dims: (x - mean) / sqrt(var + eps) * w + b."""
    return _C.layer_norm(input, normalized_shape, weight, bias, eps, True)


def rms_norm(
    input: Tensor, normalized_shape: List[int], weight: Optional[Tensor] = None, eps: Optional[float] = None
) -> Tensor:
    """x / sqrt(mean(x**2) + eps) * weight over the trailing normalized_shape dims; eps None is
    the machine epsilon of x's dtype (float32's for a 16-bit x, which is computed in float32)."""
    return _C.rms_norm(input, normalized_shape, weight, eps)


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]."""
    return _C.bilinear(input1, input2, weight, bias)


_ALIGN_CORNERS_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
    "Please specify align_corners=True if the old behavior is desired. "
    "See the documentation of grid_sample for details."
)


def grid_sample(
    input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
    align_corners: Optional[bool] = None,
) -> Tensor:
    """out[n, c, h, w] = input[n, c] read at grid[n, h, w] = (x, y) in [-1, 1] (the input's
    left/top to right/bottom edges, or corner pixels' centres with align_corners), interpolated
    (bilinear, nearest, bicubic) and padded (zeros, border, reflection) as PyTorch's; a 5-D input
    (N, C, D, H, W) reads at grid[n, d, h, w] = (x, y, z), trilinear ('bilinear') or nearest."""
    _tensors("grid_sample", input=input, grid=grid)
    if mode != "bilinear" and mode != "nearest" and mode != "bicubic":
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode != "zeros" and padding_mode != "border" and padding_mode != "reflection":
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    sampler = _C.grid_sampler_2d if input.dim() == 4 else _C.grid_sampler_3d
    return sampler(input, grid, ("bilinear", "nearest", "bicubic").index(mode),
                   ("zeros", "border", "reflection").index(padding_mode), align_corners)


def affine_grid(theta: Tensor, size: List[int], align_corners: Optional[bool] = None) -> Tensor:
    """The (N, H, W, 2) grid (or (N, D, H, W, 3)) of grid_sample's coordinates that each affine
    matrix theta[n] (N, 2, 3) (or (N, 3, 4)) maps the output's pixels to."""
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    _tensors("affine_grid", theta=theta)  # before theta.is_floating_point(): a TypeError
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}."
            )
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got {theta.shape}."
            )
        spatial_size = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
            f"Got size {size}."
        )
    if align_corners and min(spatial_size) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
            "This is not an intended use case of affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _C.affine_grid_generator(theta, list(size), align_corners)


def _lp_pool(max_pool, avg_pool, window: int, input: Tensor, norm_type: float, kernel_size, stride,
             ceil_mode: bool) -> Tensor:
    """(sum over each window of x**p)**(1/p), as PyTorch writes it: the average pool of x**p times
    the window's size (`window` elements); p = inf is the max pool of |x| (-inf: the minimum of |x|)."""
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    return (_C.sign(out) * relu(_C.abs(out))).mul(window).pow(1.0 / norm_type)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """Power-average pooling over (N, C, H, W) or (C, H, W) (see _lp_pool)."""
    _tensors("lp_pool2d", input=input)
    kw, kh = _pair(kernel_size)
    return _lp_pool(max_pool2d, avg_pool2d, kw * kh, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride=None, ceil_mode: bool = False) -> Tensor:
    """lp_pool2d's 1-D form, over (N, C, L) or (C, L)."""
    _tensors("lp_pool1d", input=input)
    return _lp_pool(max_pool1d, avg_pool1d, kernel_size, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False) -> Tensor:
    """lp_pool2d's 3-D form, over (N, C, D, H, W) or (C, D, H, W)."""
    _tensors("lp_pool3d", input=input)
    kd, kh, kw = _ntuple(3)(kernel_size)
    return _lp_pool(max_pool3d, avg_pool3d, kd * kh * kw, input, norm_type, kernel_size, stride, ceil_mode)


def triplet_margin_with_distance_loss(
    anchor: Tensor, positive: Tensor, negative: Tensor, *, distance_function=None, margin: float = 1.0,
    swap: bool = False, reduction: str = "mean",
) -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) for any distance function d (pairwise_distance by
    default); swap takes min(d(a, n), d(p, n)) as the negative's distance."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _tensors("triplet_margin_with_distance_loss", anchor=anchor, positive=positive, negative=negative)
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs"
        )
    if distance_function is None:
        distance_function = _C.pairwise_distance
    dist_pos = distance_function(anchor, positive)
    dist_neg = distance_function(anchor, negative)
    if swap:
        dist_neg = _minitorch.minimum(dist_neg, distance_function(positive, negative))
    loss = _C.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "sum":
        return _C.sum(loss)
    if reduction == "mean":
        return _C.mean(loss)
    return loss


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


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each group of C / num_groups channels of each sample of input (N, C, *) by its
    own mean and biased variance, then scales and shifts each channel by weight and bias (C)."""
    _tensors("group_norm", input=input)
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.dim()}")
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _C.group_norm(input, num_groups, weight, bias, eps, True)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """input / (k + alpha * the mean of input^2 over `size` neighbouring channels)^beta, over
    (N, C, *) input, the channels zero-padded (PyTorch's Python, over avg_pool2d: the pooling
    window spans channels only, so the spatial dims may be flattened into one)."""
    _tensors("local_response_norm", input=input)
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    sizes = input.size()
    div = input.mul(input).reshape(sizes[0], 1, sizes[1], -1)
    div = pad(div, (0, 0, size // 2, (size - 1) // 2))
    div = avg_pool2d(div, (size, 1), stride=1).view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def _verify_spatial_size(size) -> None:
    size_prods = 1
    for i in range(2, len(size)):
        size_prods *= size[i]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def instance_norm(
    input: Tensor,
    running_mean: Optional[Tensor] = None,
    running_var: Optional[Tensor] = None,
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalises each channel of each sample of input (N, C, *) over its * elements: by its own
    statistics when use_input_stats (moving running_mean/running_var towards their average over
    the batch), else by running_mean and running_var; then weight * y + bias per channel."""
    if use_input_stats:
        _tensors("instance_norm", input=input)  # before input.size(): a TypeError, not AttributeError
        _verify_spatial_size(input.size())
    return _C.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, True)


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
        # the looked-up rows of weight are rescaled in place first, outside autograd, as PyTorch's
        input = input.contiguous()
        with _no_grad():
            _C.embedding_renorm_(weight, input, max_norm, norm_type)
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


def _warn_size_mismatch(input: Tensor, target: Tensor, stacklevel: int = 3) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=stacklevel,
        )


def _pointwise_loss(op, input, target, size_average, reduce, reduction, weight):
    """mse_loss and l1_loss: the C op, or PyTorch's Python form when weighted."""
    _tensors(op.__name__, input=input, target=target)
    _warn_size_mismatch(input, target, stacklevel=4)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if weight is None:
        return op(input, target, _reduction_enum(reduction))
    _tensors(op.__name__, input=input, target=target, weight=weight)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    return _weighted_reduce(op(input, target, 0) * weight, reduction, lambda w: _C.sum(w) / _C.sum(weight))


def _weighted_reduce(weighted, reduction, mean):
    """A weighted pointwise loss reduced as PyTorch's Python code does; mean(weighted) for 'mean'."""
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return _C.sum(weighted)
    if reduction == "mean":
        return mean(weighted)
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


# ---- losses: composites in C (ops/losses.c), or Python where PyTorch's are ----


def _reduction_of(size_average: Optional[bool], reduce: Optional[bool], reduction: str) -> int:
    """The Reduction enum of the (possibly legacy) arguments."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _reduction_enum(reduction)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta, d = input - target; reduced."""
    _tensors("smooth_l1_loss", input=input, target=target)
    _warn_size_mismatch(input, target)
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if beta == 0.0:
        return _C.l1_loss(input, target, reduction_enum)
    return _C.smooth_l1_loss(input, target, reduction_enum, beta)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Optional[Tensor] = None,
) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta), d = input - target; reduced."""
    _tensors("huber_loss", input=input, target=target)
    _warn_size_mismatch(input, target)
    if weight is None:
        return _C.huber_loss(input, target, _reduction_enum(reduction), delta)
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    return _weighted_reduce(_C.huber_loss(input, target, 0, delta) * weight, reduction, lambda w: w.mean())


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """log(1 + exp(-target * input)) for targets of +-1; reduced."""
    return _C.soft_margin_loss(input, target, _reduction_of(size_average, reduce, reduction))


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """target * (log(target) - input), input log-probabilities (target too with log_target);
    'batchmean' divides the sum by the batch size, the KL divergence's definition."""
    if size_average is not None or reduce is not None:
        reduction_enum = _reduction_enum(_legacy_reduction(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support size."
                "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        reduction_enum = _reduction_enum("sum" if reduction == "batchmean" else reduction)
    reduced = _C.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.size()[0]
    return reduced


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, -target * (input1 - input2) + margin); reduced."""
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    _tensors("margin_ranking_loss", input1=input1, input2=input2, target=target)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} "
        )
    return _C.margin_ranking_loss(input1, input2, target, margin, reduction_enum)


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1; reduced."""
    return _C.hinge_embedding_loss(input, target, margin, _reduction_of(size_average, reduce, reduction))


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1; reduced."""
    return _C.cosine_embedding_loss(input1, input2, target, margin, _reduction_of(size_average, reduce, reduction))


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: Optional[bool] = None,
    eps: float = 1e-8,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """exp(input) - target * input (log_input), else input - target * log(input + eps); with
    full, Stirling's approximation of log(target!) added where target > 1; reduced."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    return _C.poisson_nll_loss(input, target, log_input, full, eps, _reduction_enum(reduction))


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Union[Tensor, float],
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """0.5 (log(var) + (input - target)^2 / var), var clamped to eps (without gradient there);
    with full, plus 0.5 log(2 pi); reduced."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * _minitorch.ones_like(input)
    elif bool(_C.any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = _C.unsqueeze(var, -1)
        elif input.dim() == var.dim() and sum(y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass  # heteroscedastic with one dim broadcast
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with _no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (_C.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance; with
    swap, d(anchor, negative) is the smaller of it and d(positive, negative); reduced."""
    reduction_enum = _reduction_of(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    return _C.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction_enum)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """-(target log sigmoid(x) + (1 - target) log sigmoid(-x)), times weight, averaged over the
    classes (the last dim); reduced."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# ---- distances, normalisation, padding ----

cosine_similarity = _C.cosine_similarity
pairwise_distance = _C.pairwise_distance


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional[Tensor] = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value, one op; fails as PyTorch's does when
    nn.attention.sdpa_kernel (or backends.cuda) allows no backend that could run it. A tensor
    subclass among the arguments (nn.attention.bias.CausalBias as attn_mask) gets the call through
    __torch_function__ with this function as the public API, as PyTorch's."""
    if has_torch_function_variadic(query, key, value, attn_mask):
        return handle_torch_function(scaled_dot_product_attention, (query, key, value, attn_mask), query, key, value,
                                     attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                                     enable_gqa=enable_gqa)
    _sdpa_allowed(query, key, value, dropout_p)
    return _C.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                           enable_gqa=enable_gqa)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Optional[Tensor] = None) -> Tensor:
    """input divided by its p-norm along dim, the norm at least eps."""
    _tensors("normalize", input=input)
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return _minitorch.div(input, denom, out=out)


_INTS = 16  # the most ints an int[] argument holds (MT_MAX_DIMS)


def _pad_value(value):
    """pad's value as PyTorch's schema types it, float?: None, a real Python or NumPy number, or a
    0-dim tensor whose value is real (a complex one with an imaginary part cannot convert: a
    RuntimeError); anything else, a complex number included, is a TypeError"""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, _C.TensorBase):
        if value.dim() != 0:
            raise TypeError("pad(): argument 'value' (position 4) must be float, not Tensor")
        if value.is_complex():
            if value.imag.item() != 0:
                raise RuntimeError("value cannot be converted to type double without overflow")
            return value.real
        return value
    if isinstance(value, complex) or not hasattr(type(value), "__float__"):
        raise TypeError(f"pad(): argument 'value' (position 4) must be float, not {type(value).__name__}")
    return float(value)  # a NumPy scalar (a complex one warns and drops its imaginary part, as in PyTorch)


def pad(input: Tensor, pad: List[int], mode: str = "constant", value: Optional[float] = None) -> Tensor:
    """input padded by pad = (front, back) for the last len(pad) / 2 dims, the last dim first:
    with value ('constant', any number of dims, negative pads crop), or by 'reflect',
    'replicate' or 'circular' (the last 1, 2 or 3 dims of a batched or unbatched input)."""
    pad = list(pad)
    value = _pad_value(value)
    if mode != "constant" or len(pad) <= _INTS:
        return _C.pad(input, pad, mode, value)
    # more pads than an int[] holds: constant padding of different dims commutes, so the dims
    # are padded a group at a time, each group moved last for constant_pad_nd and back
    _tensors("pad", input=input)
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    n = input.dim()
    if len(pad) > 2 * n:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but got "
            f"padding length {len(pad)} and input of dimension {n}"
        )
    out = input
    for start in range(0, len(pad), _INTS):
        group = pad[start : start + _INTS]
        dims = list(range(n - start // 2 - len(group) // 2, n - start // 2))
        last = list(range(n - len(dims), n))
        moved = out.movedim(dims, last)
        out = _C.constant_pad_nd(moved, group, 0.0 if value is None else value).movedim(last, dims)
    return out
# ---- convolution and pooling ----

_size_2_t = Union[int, Tuple[int, int], List[int]]


def _conv_padded(op, nd: int, input, weight, bias, stride, padding, dilation, groups):
    """conv1d/conv2d with padding ints, or 'valid' (none) or 'same' (the output as large as the
    input; stride 1), as PyTorch's _convolution_mode does."""
    if not isinstance(padding, str):
        return op(input, weight, bias, stride, padding, dilation, groups)
    if padding == "valid":
        return op(input, weight, bias, stride, 0, dilation, groups)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: '{padding}'")
    expand = _ntuple(nd)
    if any(s != 1 for s in expand(stride)):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    if not isinstance(weight, Tensor) or weight.dim() != nd + 2:  # let the op report the bad weight
        return op(input, weight, bias, stride, 0, dilation, groups)
    # Total padding d*(k-1) per dim, split left = total // 2, right = the rest (PyTorch's split).
    total = [d * (k - 1) for d, k in zip(expand(dilation), weight.shape[2:])]
    left = [t // 2 for t in total]
    right = [t - t // 2 for t in total]
    if left == right:
        return op(input, weight, bias, stride, left, dilation, groups)
    warnings.warn(
        "Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
        "copy of the input be created",
        stacklevel=3,
    )
    # Pad `right` on both sides and drop the extra leading rows/columns that gives.
    out = op(input, weight, bias, stride, right, dilation, groups)
    return out[(...,) + tuple(slice(r - l, None) for r, l in zip(right, left))].contiguous()


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
    return _conv_padded(_C.conv2d, 2, input, weight, bias, stride, padding, dilation, groups)


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride=1,
    padding: Union[str, int, Tuple[int]] = 0,
    dilation=1,
    groups: int = 1,
) -> Tensor:
    """1-D cross-correlation; input (N, C, L) or (C, L), weight (OC, C/groups, K); padding as
    conv2d's."""
    return _conv_padded(_C.conv1d, 1, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride=1, padding=0, dilation=1,
           groups: int = 1) -> Tensor:
    """3-D cross-correlation; input (N, C, D, H, W) or (C, D, H, W), weight (OC, C/groups, KD, KH,
    KW); padding as conv2d's."""
    return _conv_padded(_C.conv3d, 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose (input gradient) of conv1d; input (N, IC, L), weight (IC, OC/groups, K)."""
    return _C.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose (input gradient) of conv2d; input (N, IC, H, W), weight (IC, OC/groups, KH, KW)."""
    return _C.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """The transpose (input gradient) of conv3d; input (N, IC, D, H, W), weight (IC, OC/groups, KD,
    KH, KW)."""
    return _C.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups, dilation)


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


def _pool1d_input(name: str, input: Tensor) -> Tensor:
    """input (N, C, L) or (C, L) as the 2-D pools' (N, C, 1, L) or (C, 1, L)."""
    _tensors(name, input=input)
    if input.dim() not in (2, 3):
        if name == "max_pool1d":
            raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{list(input.shape)}")
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")
    return input.unsqueeze(-2)


def _one(fname: str, name: str, value, default=None):
    """A 1-D pool's int-or-(int,) argument as one int."""
    if value is None or (isinstance(value, (tuple, list)) and len(value) == 0 and default is not None):
        return default
    if isinstance(value, (tuple, list)):
        if len(value) != 1:
            raise RuntimeError(f"{fname}() {name} must be an int, list of ints or tuple of ints of size 1 but got "
                               f"size {len(value)}")
        return value[0]
    return value


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Max over kernel_size windows along L (max_pool2d over a 1 x L plane)."""
    x = _pool1d_input("max_pool1d", input)
    k = _one("max_pool1d", "kernel_size", kernel_size)
    s = _one("max_pool1d", "stride", stride, k)
    args = ((1, k), (1, s), (0, _one("max_pool1d", "padding", padding)),
            (1, _one("max_pool1d", "dilation", dilation)), ceil_mode)
    if return_indices:
        out, indices = _C.max_pool2d_with_indices(x, *args)
        return out.squeeze(-2), indices.squeeze(-2)
    out = _C.max_pool2d(x, *args).squeeze(-2)
    # PyTorch's CPU max_pool1d without autograd is a kernel of its own with a row-major result;
    # with a gradient to record it is max_pool2d's, whose layout follows the input's
    if out.device.type == "cpu" and not (input.requires_grad and _C.is_grad_enabled()):
        return out.contiguous()
    return out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """Mean over kernel_size windows along L (avg_pool2d over a 1 x L plane)."""
    x = _pool1d_input("avg_pool1d", input)
    k = _one("avg_pool1d", "kernel_size", kernel_size)
    s = _one("avg_pool1d", "stride", stride, k)
    p = _one("avg_pool1d", "padding", padding)
    return _C.avg_pool2d(x, (1, k), (1, s), (0, p), ceil_mode, count_include_pad, None).squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Mean over output_size windows that tile L."""
    x = _pool1d_input("adaptive_avg_pool1d", input)
    return _C.adaptive_avg_pool2d(x, (1, _one("adaptive_avg_pool1d", "output_size", output_size))).squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over output_size windows that tile (H, W) (window i of n over size S spans
    [floor(i*S/n), ceil((i+1)*S/n))); with return_indices, also each max's h*W+w."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, return_indices)


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Max over output_size windows that tile L; with return_indices, also each max's position."""
    x = _pool1d_input("adaptive_max_pool1d", input)
    res = adaptive_max_pool2d(x, (1, _one("adaptive_max_pool1d", "output_size", output_size)), return_indices)
    if return_indices:
        return res[0].squeeze(-2), res[1].squeeze(-2)
    return res.squeeze(-2)


def _block_args(name, kernel_size, dilation, padding, stride):
    k, d, p, s = (_pair(v) for v in (kernel_size, dilation, padding, stride))
    for v, what in ((k, "kernel_size"), (d, "dilation"), (p, "padding"), (s, "stride")):
        if len(v) != 2:
            raise RuntimeError(f"{name}(): argument '{what}' must be tuple of 2 ints")
    return k, d, p, s


def _floats_only(kernel: str, input: Tensor, bool_ok: bool = False) -> None:
    """PyTorch's NotImplementedError for the dtypes its im2col/col2im kernels lack."""
    if not input.is_floating_point() and not (bool_ok and input.dtype == _minitorch.bool):
        from minitorch._shape import _SCALAR_NAMES

        name = _SCALAR_NAMES.get(str(input.dtype), str(input.dtype))
        raise NotImplementedError(f'"{kernel}" not implemented for \'{name}\'')


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: each kernel_size block of input (N, C, H, W) as a column of (N, C*KH*KW, L),
    channel-major then row then column, L the number of blocks."""
    _tensors("unfold", input=input)
    k, d, p, s = _block_args("unfold", kernel_size, dilation, padding, stride)
    if input.dtype == _minitorch.bool:  # copied values only: bools go through as 0 and 1
        return _C.im2col(input.float(), k, d, p, s).bool()
    return _C.im2col(input, k, d, p, s)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im, unfold's adjoint: the columns of input (N, C*KH*KW, L) summed back into
    (N, C, *output_size)."""
    _tensors("fold", input=input)
    k, d, p, s = _block_args("fold", kernel_size, dilation, padding, stride)
    return _C.col2im(input, _pair(output_size), k, d, p, s)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r): each channel block of r*r spread over an r x r patch."""
    _tensors("pixel_shuffle", input=input)
    return _C.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """pixel_shuffle's inverse: (*, C, H*r, W*r) -> (*, C*r*r, H, W)."""
    _tensors("pixel_unshuffle", input=input)
    return _C.pixel_unshuffle(input, downscale_factor)
from minitorch.nn._upsampling import interpolate, upsample, upsample_bilinear, upsample_nearest  # noqa: E402
from minitorch.nn._embedding_bag import embedding_bag  # noqa: E402
from minitorch.nn._margin import multi_margin_loss, multilabel_margin_loss, pdist  # noqa: E402
from minitorch.nn._ctc import ctc_loss  # noqa: E402
from minitorch.nn._pooling import (  # noqa: E402
    _adaptive_max_pool, adaptive_avg_pool3d, adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d, adaptive_max_pool3d_with_indices, avg_pool3d, fractional_max_pool2d,
    fractional_max_pool2d_with_indices, fractional_max_pool3d, fractional_max_pool3d_with_indices,
    max_pool1d_with_indices, max_pool2d_with_indices, max_pool3d, max_pool3d_with_indices, max_unpool1d,
    max_unpool2d, max_unpool3d,
)
from minitorch.nn._attention import (  # noqa: E402 (it calls the functions above)
    _canonical_mask, _in_projection, _in_projection_packed, _mha_shape_check, _none_or_dtype,
    multi_head_attention_forward,
)
from minitorch._checks import _tensors


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with C = g * k -> the channels interleaved across the g groups (ShuffleNet's):
    a view as (N, g, k, *), its group and channel dims swapped, made contiguous again."""
    _tensors("channel_shuffle", input=input)
    if input.dim() <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    n, c = input.shape[0], input.shape[1]
    if c % groups != 0:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups.")
    rest = list(input.shape[2:])
    x = input.reshape([n, groups, c // groups] + rest).transpose(1, 2)
    return x.reshape([n, c] + rest)


native_channel_shuffle = channel_shuffle
from minitorch.nn import grad  # noqa: E402,F401  (torch.nn.functional.grad is torch.nn.grad)
from minitorch.nn._linear_cross_entropy import linear_cross_entropy  # noqa: E402,F401
from minitorch.nn._grouped_mm import grouped_mm  # noqa: E402,F401  (MoE grouped products)
from minitorch.nn._functional_names import (  # noqa: E402,F401
    GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES, BroadcastingList1, BroadcastingList2, BroadcastingList3,
    DType, assert_int_or_pair, boolean_dispatch,
)
from minitorch._native import conv_tbc  # noqa: E402,F401  (F.conv_tbc is torch.conv_tbc)
from minitorch.overrides import (  # noqa: E402,F401  (as PyTorch's functional re-exports them)
    handle_torch_function, has_torch_function, has_torch_function_unary, has_torch_function_variadic,
)
