"""nn.init: fill a tensor in place with the values a layer starts from.

Every function here is one in-place tensor method (`uniform_`, `fill_`, `zero_`) run under
`no_grad`, so initialising a Parameter is never recorded by autograd. The arithmetic here is on
Python floats only (fans, gains, bounds), never on tensor elements.
"""
from __future__ import annotations

import math
import warnings
from typing import Optional, Tuple, Union

import minitorch
from minitorch import Generator, Tensor

__all__ = [
    "calculate_gain",
    "uniform_",
    "constant_",
    "ones_",
    "zeros_",
    "xavier_uniform_",
    "kaiming_uniform_",
]

# Names calculate_gain treats as linear: the convolutions and identity-like maps have gain 1.
_LINEAR_NONLINEARITIES = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def calculate_gain(nonlinearity: str, param: Optional[Union[int, float]] = None) -> float:
    """The factor by which `nonlinearity` scales a unit-variance input's standard deviation.

    leaky_relu takes its negative slope as `param` (0.01 when omitted).
    """
    if nonlinearity in _LINEAR_NONLINEARITIES:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> Tuple[int, int]:
    """(fan_in, fan_out) of a weight shaped (out, in, *receptive_field)."""
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive_field = math.prod(shape[2:])
    return shape[1] * receptive_field, shape[0] * receptive_field


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _no_op_if_empty(tensor: Tensor) -> bool:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return True
    return False


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
    """Fill `tensor` with values drawn uniformly from [a, b)."""
    with minitorch.no_grad():
        return tensor.uniform_(a, b, generator=generator)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill `tensor` with `val`."""
    with minitorch.no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with ones."""
    with minitorch.no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with zeros."""
    with minitorch.no_grad():
        return tensor.zero_()


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
    """Glorot & Bengio (2010): U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
    generator: Optional[Generator] = None,
) -> Tensor:
    """He et al. (2015): U(-bound, bound) with bound = gain * sqrt(3 / fan).

    `a` is the negative slope of the leaky_relu that follows; `mode` picks fan_in (keeps the
    forward variance) or fan_out (keeps the backward variance).
    """
    if _no_op_if_empty(tensor):
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


# The normal-distribution initialisers exist only where the Tensor can draw normal samples.
if hasattr(Tensor, "normal_"):

    def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
        """Fill `tensor` with values drawn from N(mean, std**2)."""
        with minitorch.no_grad():
            return tensor.normal_(mean, std, generator=generator)

    def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Optional[Generator] = None) -> Tensor:
        """Glorot & Bengio (2010): N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
        fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
        return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)

    def kaiming_normal_(
        tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
        generator: Optional[Generator] = None,
    ) -> Tensor:
        """He et al. (2015): N(0, std**2) with std = gain / sqrt(fan)."""
        if _no_op_if_empty(tensor):
            return tensor
        fan = _calculate_correct_fan(tensor, mode)
        return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)

    __all__ += ["normal_", "xavier_normal_", "kaiming_normal_"]


def _reset_weight_and_bias(weight, bias) -> None:
    """Linear's and Conv's default initialisation (PyTorch's reset_parameters): weight from
    kaiming_uniform_ with a=sqrt(5), which makes its bound exactly 1/sqrt(fan_in), and bias from
    U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
