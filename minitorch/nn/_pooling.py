"""3-D pooling, the adaptive max pools and max unpooling of torch.nn.functional.

max_pool3d, avg_pool3d and adaptive_avg_pool3d call their ops (the 2-D pools' kernels over
(N*C, D, H, W) volumes, csrc/cpu/pool.c and cuda/pool.cu). The adaptive max pools gather each
window's taps with index_select (windows of one size, a short one repeating its last tap) and
take the max over them; max unpooling scatters each value to its index in a zero volume, as
ATen's max_unpool2d/3d do. Autograd gives both their gradients (a gather)."""
from __future__ import annotations

import math
from typing import List, Optional

import minitorch as _minitorch
from minitorch import _C, Tensor
from minitorch.nn.modules.utils import _list_with_default, _ntuple, _pair, _single
from minitorch._checks import _tensors
from minitorch._memory_format import suggest_memory_format
from minitorch._modes import _alert_not_deterministic

__all__ = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]

_triple = _ntuple(3, "_triple")


def _tensors(fname: str, **args) -> None:
    from minitorch.nn.functional import _tensors as check

    check(fname, **args)


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """Max over kernel_size windows of each volume: (N, C, D, H, W) -> (N, C, OD, OH, OW); with
    return_indices, also each max's (d*H+h)*W+w in its volume."""
    if return_indices:
        out, indices = _C.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
        return out, indices
    return _C.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: Optional[int] = None) -> Tensor:
    """Mean over kernel_size windows of each volume (stride defaults to kernel_size)."""
    return _C.avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Mean over output_size windows that tile (D, H, W); None in output_size keeps that size."""
    _tensors("adaptive_avg_pool3d", input=input)
    size = _list_with_default(output_size, input.size())
    if size == 1 or (not isinstance(size, int) and list(size) == [1, 1, 1]):
        # As PyTorch: a 1x1x1 output is the mean over D, H and W.
        return input.mean((-1, -2, -3), keepdim=True)
    return _C.adaptive_avg_pool3d(input, size)


def _adaptive_max_pool(name: str, nd: int, input: Tensor, output_size, return_indices: bool):
    """Max over output_size windows that tile the last nd dims (window i of n over size S spans
    [floor(i*S/n), ceil((i+1)*S/n))); with return_indices, also each max's flat position in its
    plane (h*W+w, (d*H+h)*W+w). One op (adaptive_max_pool2d/3d), its checks in C."""
    _tensors(name, input=input)
    size = _list_with_default(output_size, input.size())
    out, indices = getattr(_C, name)(input, list(_ntuple(nd)(size)))
    return (out, indices) if return_indices else out


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Max over output_size windows that tile (D, H, W); return_indices also gives (d*H+h)*W+w."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, return_indices)


def _unpool_output_size(input: Tensor, kernel_size: List[int], stride: List[int], padding: List[int],
                        output_size) -> List[int]:
    """PyTorch's: (in - 1) * stride + kernel - 2 * padding per dim, or output_size (its last dims)
    within a stride of that."""
    n = len(kernel_size)
    default = [(input.size()[-n + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d] for d in range(n)]
    if output_size is None:
        return default
    if len(output_size) == n + 2:
        output_size = output_size[2:]
    if len(output_size) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, but it has a "
                         f"length of '{len(output_size)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} and {hi})')
    return list(output_size)


def _max_unpool(nd: int, input: Tensor, indices: Tensor, output_size: List[int]) -> Tensor:
    """ATen's max_unpool2d/3d: zeros of (N, C, *output_size) with input's values at indices (flat
    positions in each plane), a scatter; PyTorch's checks in its order."""
    from minitorch._shape import _SCALAR_NAMES

    name = f"max_unpooling{nd}d"
    if indices.dtype != _minitorch.int64:
        kind = _SCALAR_NAMES.get(str(indices.dtype), str(indices.dtype))
        raise RuntimeError(f"elements in indices should be type int64 but got: {kind}")
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {name} should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
                           f"{input.dim()} dimensions.")
    if input.shape != indices.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            where = "max_unpooling2d_forward_out_cpu()" if nd == 2 else "max_unpooling3d_forward_out()"
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{list(input.shape)} with dimension {d} being empty.")
    _alert_not_deterministic(f"max_unpooling{nd}d_forward_out")
    lead = list(input.shape[:-nd])
    plane = math.prod(output_size)
    flat_idx = indices.reshape(lead + [math.prod(input.shape[-nd:])])
    # the CPU reads the indices for PyTorch's error; on a device scatter's kernel checks them (a
    # device-side assertion at the next synchronisation, as PyTorch's CUDA kernel): no wait
    if flat_idx.numel() and flat_idx.device.type == "cpu":
        bad = flat_idx[(flat_idx < 0) | (flat_idx >= plane)]
        if bad.numel():
            raise RuntimeError(f"Found an invalid max index: {int(bad[0])} (output volumes are of size "
                               f"{'x'.join(str(s) for s in output_size)})")
    out = _minitorch.zeros(lead + [plane], dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(flat_idx.shape))
    out = out.reshape(lead + list(output_size))
    if nd == 2 and suggest_memory_format(input) is _minitorch.channels_last:
        # ATen's max_unpool2d writes in the format its input suggests (its 3-d one row-major)
        out = out.contiguous(memory_format=_minitorch.channels_last)
    return out


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_pool1d's partial inverse: each value of input to its index, zeros elsewhere."""
    _tensors("max_unpool1d", input=input, indices=indices)
    k = _single(kernel_size)
    s = _single(stride) if stride is not None else k
    size = _unpool_output_size(input, k, s, _single(padding), output_size)
    return _max_unpool(2, input.unsqueeze(-1), indices.unsqueeze(-1), size + [1]).squeeze(-1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_pool2d's partial inverse: each value of input to its index h*W+w, zeros elsewhere."""
    _tensors("max_unpool2d", input=input, indices=indices)
    k = _pair(kernel_size)
    s = _pair(stride) if stride is not None else k
    return _max_unpool(2, input, indices, _unpool_output_size(input, k, s, _pair(padding), output_size))


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """max_pool3d's partial inverse: each value of input to its index (d*H+h)*W+w, zeros
    elsewhere."""
    _tensors("max_unpool3d", input=input, indices=indices)
    k = _triple(kernel_size)
    s = _triple(stride) if stride is not None else k
    return _max_unpool(3, input, indices, _unpool_output_size(input, k, s, _triple(padding), output_size))


# Fractional max pooling (Graham, arXiv:1412.6071): window j along a dim of size S, for an output
# of size O and windows of size k, starts at floor((j + u) * a) - floor(u * a), a = (S - k) / (O - 1),
# and the last one at S - k; u is the plane's draw in [0, 1) for that dim. The arithmetic runs in
# the input's dtype, as PyTorch's does, so that given the same draws the windows are the same.
# Each dim's draw sits in column _SAMPLE_COLUMN[nd][dim] of _random_samples: PyTorch's 2-D kernel
# reads (W, H), its 3-D one (T, H, W).
_SAMPLE_COLUMN = {2: (1, 0), 3: (0, 1, 2)}
_FRACTIONAL_DIMS = {2: ("height", "width"), 3: ("time", "height", "width")}


def _fractional_starts(u: Tensor, size: int, out: int, k: int) -> Tensor:
    """(N, C) draws -> (N, C, out) int64 window starts along one dim of `size`."""
    last = _minitorch.full(list(u.shape) + [1], size - k, dtype=_minitorch.int64, device=u.device)
    if out <= 1:
        return last[..., :out]
    alpha = (_minitorch.tensor(float(size - k), dtype=u.dtype, device=u.device)
             / _minitorch.tensor(float(out - 1), dtype=u.dtype, device=u.device))
    j = _minitorch.arange(out - 1, device=u.device).to(u.dtype)
    at = ((j + u.unsqueeze(-1)) * alpha).trunc().long() - (u * alpha).trunc().long().unsqueeze(-1)
    return _minitorch.cat([at, last], -1)


def _fractional_checks(name: str, nd: int, input: Tensor, ks: List[int], outs: List[int], samples: Tensor) -> None:
    dims = _FRACTIONAL_DIMS[nd]
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(f"{name}: Expected input to have non-zero size for non-batch dimensions, "
                               f"but got{list(input.shape)} with dimension {d} being empty.")
    if any(k <= 0 for k in ks):
        raise RuntimeError(f"{name}: kernel_size must be greater than zero, but got {tuple(ks)}")
    for o in outs:
        if o < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {o}: "
                               f"{list(input.shape[:-nd]) + outs}")
    # PyTorch's 3-D kernel also refuses a window that would reach the last element (o + k - 1 == size)
    slack = 0 if nd == 2 else 1
    for what, size, o, k in zip(dims, input.shape[-nd:], outs, ks):
        if o + k - 1 + slack > size:
            raise RuntimeError(f"{name}: pool {what} {k} too large relative to input {what} {size}")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    n = input.shape[0] if input.dim() == nd + 2 else 1
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != input.shape[-nd - 1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")


def _fractional_max_pool(nd: int, input: Tensor, kernel_size, output_size, output_ratio, samples):
    """(out, indices) of fractional max pooling over the last nd dims of (N, C, *) or (C, *)."""
    fname = f"fractional_max_pool{nd}d"
    _tensors(fname, input=input)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fname} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{fname} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _ntuple(nd)(output_ratio)
        output_size = [int(input.size(d - nd) * r) for d, r in zip(range(nd), ratio)]
    if samples is None:
        n = 1 if input.dim() == nd + 1 else input.size(0)
        samples = _minitorch.rand(n, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    ks, outs = list(_ntuple(nd)(kernel_size)), list(_ntuple(nd)(output_size))
    name = "fractional_max_pool2d()" if nd == 2 else "fractional_max_pool3d_out()"
    many = "tuple of Ints" if nd == 2 else "tuple of three Ints"
    if len(ks) != nd:
        raise RuntimeError(f"fractional_max_pool{nd}d: kernel_size must either be a single Int or {many}")
    if len(outs) != nd:
        raise RuntimeError(f"fractional_max_pool{nd}d: output_size must either be a single Int or {many}")
    _fractional_checks(name, nd, input, ks, outs, samples)
    if not input.is_floating_point():
        from minitorch._shape import _SCALAR_NAMES

        kernel = f"fractional_max_pool{nd}d_out_frame"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_SCALAR_NAMES.get(str(input.dtype), str(input.dtype))}'")
    x = input if input.dim() == nd + 2 else input.unsqueeze(0)
    n, c, sizes = x.shape[0], x.shape[1], list(x.shape[2:])
    # flat position of each window's taps: (N, C, o0, .., o{nd-1}, k0*..*k{nd-1})
    flat = None
    for i in range(nd):
        start = _fractional_starts(samples[:n, :, _SAMPLE_COLUMN[nd][i]], sizes[i], outs[i], ks[i])
        taps = start.unsqueeze(-1) + _minitorch.arange(ks[i], device=x.device)  # (N, C, o_i, k_i)
        # o_i to its place among the output dims, k_i to its place among the tap dims
        taps = taps.reshape([n, c] + [outs[i] if j == i else 1 for j in range(nd)]
                            + [ks[i] if j == i else 1 for j in range(nd)])
        flat = taps if flat is None else flat * sizes[i] + taps
    flat = flat.expand([n, c] + outs + ks).reshape(n, c, math.prod(outs) * math.prod(ks))
    picked = x.reshape(n, c, math.prod(sizes)).gather(-1, flat)
    flat = flat.reshape([n, c] + outs + [math.prod(ks)])
    out, arg = picked.reshape([n, c] + outs + [math.prod(ks)]).max(-1)
    indices = flat.gather(-1, arg.unsqueeze(-1)).squeeze(-1)
    if input.dim() == nd + 1:
        return out.squeeze(0), indices.squeeze(0)
    return out, indices


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Optional[Tensor] = None):
    """(out, indices): the max over kernel_size windows of (N, C, H, W) or (C, H, W) whose starts
    step by random amounts to give output_size (or input size * output_ratio); indices h*W+w."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Optional[Tensor] = None):
    """fractional_max_pool2d_with_indices's output, and its indices if return_indices."""
    out, indices = _fractional_max_pool(2, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, indices) if return_indices else out


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                                       return_indices: bool = False, _random_samples: Optional[Tensor] = None):
    """(out, indices) of fractional max pooling over (N, C, T, H, W) or (C, T, H, W); indices
    (t*H+h)*W+w."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Optional[Tensor] = None):
    """fractional_max_pool3d_with_indices's output, and its indices if return_indices."""
    out, indices = _fractional_max_pool(3, input, kernel_size, output_size, output_ratio, _random_samples)
    return (out, indices) if return_indices else out


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """(out, indices) of max_pool1d, whatever return_indices says."""
    from minitorch.nn.functional import max_pool1d

    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """(out, indices) of max_pool2d, whatever return_indices says."""
    return _C.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
                            return_indices: bool = False):
    """(out, indices) of max_pool3d, whatever return_indices says."""
    return _C.max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(out, indices) of adaptive_max_pool1d, whatever return_indices says."""
    from minitorch.nn.functional import adaptive_max_pool1d

    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(out, indices) of adaptive_max_pool2d, whatever return_indices says."""
    return _adaptive_max_pool("adaptive_max_pool2d", 2, input, output_size, True)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size, return_indices: bool = False):
    """(out, indices) of adaptive_max_pool3d, whatever return_indices says."""
    return _adaptive_max_pool("adaptive_max_pool3d", 3, input, output_size, True)
