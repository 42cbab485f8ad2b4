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


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the main diagonal, zeros elsewhere)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with minitorch.no_grad():
        minitorch.eye(*tensor.shape, out=tensor, requires_grad=tensor.requires_grad)
    return tensor


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight with the Dirac delta: each output channel of a group
    copies one input channel (as many as there are), through the kernel's centre tap."""
    dimensions = tensor.ndimension()
    if dimensions not in [3, 4, 5]:
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    centre = tuple(n // 2 for n in sizes[2:])
    with minitorch.no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min_dim):
                tensor[(g * out_chans_per_grp + d, d) + centre] = 1
    return tensor


def _norm_cdf(x: float) -> float:
    return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0


def trunc_normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
    generator: Optional[Generator] = None,
) -> Tensor:
    """N(mean, std**2) restricted to [a, b], by PyTorch's two rejection samplers (the same draws
    from the same seed): where [a, b] holds more than 30% of the mass, normal draws outside it are
    redrawn; else uniform draws on [a, b] are kept with probability pdf(x) / pdf(mode)."""
    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
            "The distribution of values may be incorrect.",
            stacklevel=2,
        )
    with minitorch.no_grad():
        p = _norm_cdf((b - mean) / std) - _norm_cdf((a - mean) / std)
        if p > 0.3:
            # bounds rounded to the tensor's dtype, so the test sees the values it can hold
            lo = tensor.new_tensor(a, device="cpu").item()
            hi = tensor.new_tensor(b, device="cpu").item()
            result = tensor.normal_(mean, std, generator=generator)
            while True:
                mask = (result < lo) | (result > hi)
                if not mask.any():
                    break
                redraw = minitorch.empty_like(result).normal_(mean, std, generator=generator)
                result = minitorch.where(mask, redraw, result)
            if tensor is not result:
                tensor.copy_(result)
            return tensor
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        candidates = minitorch.empty_like(tensor)
        accept_buf = minitorch.empty_like(tensor)
        tensor.uniform_(a, b, generator=generator)
        candidates.copy_(tensor)
        # log pdf(x) - log pdf(mode), against the log of a uniform draw
        candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
        pending = accept_buf.uniform_(generator=generator).log_().gt(candidates)
        if pending.any():
            result = tensor
            while True:
                candidates.uniform_(a, b, generator=generator)
                result = minitorch.where(pending, candidates, result)
                candidates.sub_(mean).div_(std).pow_(2).mul_(-0.5).sub_(log_peak)
                accepted = accept_buf.uniform_(generator=generator).log_().gt(candidates)
                pending = minitorch.where(pending, accepted, pending)
                if not pending.any():
                    break
            tensor.copy_(result)
        return tensor


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Optional[Generator] = None) -> Tensor:
    """Saxe et al. (2013): a (semi-)orthogonal matrix, from the QR factorisation of a normal draw
    with R's diagonal signs folded into Q (so Q is Haar-distributed), times gain; dims after the
    first are flattened."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    flattened = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)
    if rows < cols:
        flattened.t_()
    q, r = minitorch.linalg.qr(flattened)
    q *= minitorch.diag(r, 0).sign()
    if rows < cols:
        q.t_()
    with minitorch.no_grad():
        tensor.view_as(q).copy_(q)
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Optional[Generator] = None) -> Tensor:
    """Martens (2010): N(0, std**2) draws with ceil(sparsity * rows) entries of each column zeroed,
    the rows picked by a fresh permutation per column."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with minitorch.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            row_indices = minitorch.randperm(rows)
            tensor[row_indices[:num_zeros], col_idx] = 0
    return tensor


__all__ += ["eye_", "dirac_", "trunc_normal_", "orthogonal_", "sparse_"]


def _make_deprecate(meth):
    """The old name without the trailing underscore, which warns and calls the new one."""
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(
            f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.",
            FutureWarning,
            stacklevel=2,
        )
        return meth(*args, **kwargs)

    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
if hasattr(Tensor, "normal_"):
    normal = _make_deprecate(normal_)
    xavier_normal = _make_deprecate(xavier_normal_)
    kaiming_normal = _make_deprecate(kaiming_normal_)


def _reset_weight_and_bias(weight, bias) -> None:
    """Linear's and Conv's default initialisation (PyTorch's reset_parameters): weight from
    kaiming_uniform_ with a=sqrt(5), which makes its bound exactly 1/sqrt(fan_in), and bias from
    U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
