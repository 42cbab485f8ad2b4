"""nn.utils.fusion: fold an eval-mode BatchNorm into the convolution or Linear before it, so that
one layer computes both: with s = bn.weight / sqrt(running_var + eps), the weight's output
channels are scaled by s and the bias becomes (bias - running_mean) * s + bn.bias. The fused
layer is a copy; the originals are left as they were."""
from __future__ import annotations

import copy
from typing import Any, Optional, Tuple

import minitorch
from minitorch import Tensor
from minitorch.nn.parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def _eval_only(layer: Any, bn: Any) -> None:
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv: Any, bn: Any, transpose: bool = False) -> Any:
    """A copy of conv (in eval mode, as bn) that computes bn(conv(x)); transpose for a
    ConvTranspose, whose output channels are its weight's dim 1."""
    _eval_only(conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias, transpose)
    return fused


def fuse_conv_bn_weights(conv_w: Tensor, conv_b: Optional[Tensor], bn_rm: Tensor, bn_rv: Tensor, bn_eps: float,
                         bn_w: Optional[Tensor], bn_b: Optional[Tensor],
                         transpose: bool = False) -> Tuple[Parameter, Parameter]:
    """(weight, bias) Parameters of the convolution that computes the batch norm of conv_w, conv_b's
    output; each keeps its input's dtype (the bias, conv_w's when there is none)."""
    bias_dtype = conv_w.dtype if conv_b is None else conv_b.dtype
    if conv_b is None:
        conv_b = minitorch.zeros_like(bn_rm)
    bn_w = minitorch.ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = minitorch.zeros_like(bn_rm) if bn_b is None else bn_b
    inv_std = (bn_rv + bn_eps).rsqrt()
    # the output channels are dim 0 of a convolution's weight, dim 1 of a transposed one's
    channels = [1, -1] if transpose else [-1, 1]
    scale = (bn_w * inv_std).reshape(channels + [1] * (conv_w.dim() - 2))
    weight = (conv_w * scale).to(dtype=conv_w.dtype)
    bias = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, conv_w.requires_grad), Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear: Any, bn: Any) -> Any:
    """A copy of linear (in eval mode, as bn) that computes bn(linear(x)); bn has linear's
    out_features features, or one."""
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, "
            f"got linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _eval_only(linear, bn)
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(fused.weight, fused.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w: Tensor, linear_b: Optional[Tensor], bn_rm: Tensor, bn_rv: Tensor,
                           bn_eps: float, bn_w: Tensor, bn_b: Tensor) -> Tuple[Parameter, Parameter]:
    """(weight, bias) Parameters of the Linear that computes the batch norm of linear_w, linear_b's
    output."""
    bias_dtype = linear_w.dtype if linear_b is None else linear_b.dtype
    if linear_b is None:
        linear_b = minitorch.zeros_like(bn_rm)
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    weight = linear_w * scale.unsqueeze(-1).to(dtype=linear_w.dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return Parameter(weight, linear_w.requires_grad), Parameter(bias, linear_b.requires_grad)
