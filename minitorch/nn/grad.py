"""torch.nn.grad: the gradients of a convolution with respect to its input and to its weight,
given the gradient of its output (what a custom autograd.Function fusing a convolution calls in
its backward).

The 2-D ones are _C's convolution_backward_input/_weight, the kernels conv2d's own backward
runs (differentiable again); 1-D runs them on a height of one. 3-D differentiates F.conv3d at a
zero input or weight: a convolution is linear in each, so its vector-Jacobian product does not
depend on the point."""
from __future__ import annotations

from typing import Sequence, Tuple, Union

import minitorch
from minitorch import _C

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]

_size = Union[int, Sequence[int]]


def _tuple(value: _size, n: int, name: str) -> Tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} values to match the "
                           f"convolution dimensions, but got {name}={list(value)}")
    return value


def _sizes(size, n: int, what: str) -> list:
    size = [int(s) for s in size]
    if len(size) != n + 2:
        raise ValueError(f"{what} must have {n + 2} elements (got {len(size)})")
    return size


def _conv1d_as_2d(kernel, grad_output, other, size, stride, padding, dilation, groups):
    """A 1-D convolution's backward kernel run on a height of one: size (3 values) gains a 1 at
    dim 2, grad_output and other (the weight or the input) a dim of one there."""
    n0, n1, n2 = size
    g = kernel(grad_output.unsqueeze(2), other.unsqueeze(2), [n0, n1, 1, n2], [1, _tuple(stride, 1, "stride")[0]],
               [0, _tuple(padding, 1, "padding")[0]], [1, _tuple(dilation, 1, "dilation")[0]], groups)
    return g.squeeze(2)


def conv1d_input(input_size, weight, grad_output, stride: _size = 1, padding: _size = 0, dilation: _size = 1,
                 groups: int = 1):
    """d(conv1d)/d(input) applied to grad_output, for an input of input_size (N, C_in, L)."""
    return _conv1d_as_2d(_C.convolution_backward_input, grad_output, weight, _sizes(input_size, 1, "input_size"),
                         stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride: _size = 1, padding: _size = 0, dilation: _size = 1,
                  groups: int = 1):
    """d(conv1d)/d(weight) applied to grad_output, for a weight of weight_size (C_out, C_in/groups, K)."""
    return _conv1d_as_2d(_C.convolution_backward_weight, grad_output, input, _sizes(weight_size, 1, "weight_size"),
                         stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride: _size = 1, padding: _size = 0, dilation: _size = 1,
                 groups: int = 1):
    """d(conv2d)/d(input) applied to grad_output, for an input of input_size (N, C_in, H, W)."""
    return _C.convolution_backward_input(grad_output, weight, _sizes(input_size, 2, "input_size"),
                                         list(_tuple(stride, 2, "stride")), list(_tuple(padding, 2, "padding")),
                                         list(_tuple(dilation, 2, "dilation")), groups)


def conv2d_weight(input, weight_size, grad_output, stride: _size = 1, padding: _size = 0, dilation: _size = 1,
                  groups: int = 1):
    """d(conv2d)/d(weight) applied to grad_output, for a weight of weight_size (C_out, C_in/groups, KH, KW)."""
    return _C.convolution_backward_weight(grad_output, input, _sizes(weight_size, 2, "weight_size"),
                                          list(_tuple(stride, 2, "stride")), list(_tuple(padding, 2, "padding")),
                                          list(_tuple(dilation, 2, "dilation")), groups)


def _conv3d_vjp(input, weight, grad_output, wrt, stride, padding, dilation, groups):
    """grad_output's vector-Jacobian product through F.conv3d with respect to input or weight (the
    zero tensor standing for it), recorded when grad_output or the other operand needs a gradient."""
    create = grad_output.requires_grad or (weight if wrt is input else input).requires_grad
    with minitorch.enable_grad():
        out = minitorch.nn.functional.conv3d(input, weight, None, _tuple(stride, 3, "stride"),
                                             _tuple(padding, 3, "padding"), _tuple(dilation, 3, "dilation"), groups)
        (g,) = minitorch.autograd.grad(out, wrt, grad_output, create_graph=create)
    return g


def conv3d_input(input_size, weight, grad_output, stride: _size = 1, padding: _size = 0, dilation: _size = 1,
                 groups: int = 1):
    """d(conv3d)/d(input) applied to grad_output, for an input of input_size (N, C_in, D, H, W)."""
    zero = minitorch.zeros(_sizes(input_size, 3, "input_size"), dtype=grad_output.dtype, device=grad_output.device,
                           requires_grad=True)
    return _conv3d_vjp(zero, weight, grad_output, zero, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride: _size = 1, padding: _size = 0, dilation: _size = 1,
                  groups: int = 1):
    """d(conv3d)/d(weight) applied to grad_output, for a weight of weight_size (C_out, C_in/groups, KD, KH, KW)."""
    zero = minitorch.zeros(_sizes(weight_size, 3, "weight_size"), dtype=grad_output.dtype,
                           device=grad_output.device, requires_grad=True)
    return _conv3d_vjp(input, zero, grad_output, zero, stride, padding, dilation, groups)
