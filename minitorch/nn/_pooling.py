"""3-D pooling, the adaptive max pools and max unpooling of torch.nn.functional (issue 20).

max_pool3d, avg_pool3d and adaptive_avg_pool3d call their ops (the 2-D pools' kernels over
(N*C, D, H, W) volumes, csrc/cpu/pool.c and cuda/pool.cu). The adaptive max pools gather each
window's taps with index_select (windows of one size, a short one repeating its last tap) and
take the max over them; max unpooling scatters each value to its index in a zero volume, as
ATen's max_unpool2d/3d do. Autograd gives both their gradients (a gather)."""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

import minitorch as _minitorch
from minitorch import _C, Tensor
from minitorch.nn.modules.utils import _list_with_default, _ntuple, _pair, _single
from minitorch._checks import _tensors

__all__ = ["max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool1d",
           "max_unpool2d", "max_unpool3d"]

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


def _adaptive_windows(size: int, out: int, device) -> Tuple[Tensor, int]:
    """The input positions of each of out adaptive windows over size: an (out, kmax) index table,
    short windows repeating their last position (which leaves a max unchanged)."""
    starts = [(i * size) // out for i in range(out)]
    ends = [-((-(i + 1) * size) // out) for i in range(out)]
    kmax = max((e - b for b, e in zip(starts, ends)), default=1)
    table = [[min(b + j, e - 1) for j in range(kmax)] for b, e in zip(starts, ends)]
    return _minitorch.tensor(table, dtype=_minitorch.int64, device=device), kmax


# PyTorch's CPU kernel names, for the dtypes they lack
_ADAPTIVE_MAX_KERNEL = {2: "adaptive_max_pool2d", 3: "adaptive_max_pool3d_cpu"}


def _adaptive_max_pool(name: str, nd: int, input: Tensor, output_size, return_indices: bool):
    """Max over output_size windows that tile the last nd dims (window i of n over size S spans
    [floor(i*S/n), ceil((i+1)*S/n))); with return_indices, also each max's flat position in its
    plane (h*W+w, (d*H+h)*W+w)."""
    _tensors(name, input=input)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    size = _list_with_default(output_size, input.size())
    outs = list(_ntuple(nd)(size))
    lead = list(input.shape[:-nd])
    if len(outs) != nd:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    if any(o < 0 for o in outs):
        bad = next(o for o in outs if o < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: {lead + outs}")
    for d in range(1, input.dim()):
        if input.shape[d] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, "
                f"but input has sizes {list(input.shape)} with dimension {d} being empty")
    from minitorch.nn.functional import _floats_only

    _floats_only(_ADAPTIVE_MAX_KERNEL[nd], input)
    sizes = list(input.shape[-nd:])
    tables = [_adaptive_windows(s, o, input.device) for s, o in zip(sizes, outs)]
    ks = [k for _, k in tables]
    x = input
    for i, (table, _) in enumerate(tables):
        x = x.index_select(i - nd, table.flatten())
    # lead + [o0*k0, o1*k1, ...] -> lead + [o0, o1, ..., k0*k1*...]
    n = len(lead)
    x = x.reshape(lead + [v for pair in zip(outs, ks) for v in pair])
    x = x.permute(list(range(n)) + [n + 2 * i for i in range(nd)] + [n + 2 * i + 1 for i in range(nd)])
    out, arg = x.reshape(lead + outs + [math.prod(ks)]).max(-1)
    if not return_indices:
        return out
    flat = None
    for i, (table, k) in enumerate(tables):
        inner = math.prod(ks[i + 1:])
        tap = arg.div(inner, rounding_mode="floor") % k  # the window's tap along dim i
        here = _minitorch.arange(outs[i], device=input.device).reshape([outs[i]] + [1] * (nd - 1 - i))
        pos = table.flatten()[here * k + tap]
        flat = pos if flat is None else flat * sizes[i] + pos
    return out, flat


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
    lead = list(input.shape[:-nd])
    plane = math.prod(output_size)
    flat_idx = indices.reshape(lead + [math.prod(input.shape[-nd:])])
    if flat_idx.numel():
        bad = flat_idx[(flat_idx < 0) | (flat_idx >= plane)]
        if bad.numel():
            raise RuntimeError(f"Found an invalid max index: {int(bad[0])} (output volumes are of size "
                               f"{'x'.join(str(s) for s in output_size)})")
    out = _minitorch.zeros(lead + [plane], dtype=input.dtype, device=input.device)
    out = out.scatter(-1, flat_idx, input.reshape(flat_idx.shape))
    return out.reshape(lead + list(output_size))


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
