"""Packed linear weights and the dynamic quantized linear, as PyTorch's fbgemm engine computes it
(torch.ops.quantized.linear_prepack / linear_dynamic / linear_dynamic_fp16).

linear_dynamic(x, packed) with a qint8 weight, per PyTorch's qlinear_dynamic.cpp and fbgemm:
  1. the activation x (float32, flattened to rows) is quantized per tensor to quint8 with scale
     and zero point chosen from its min and max (ChooseQuantizationParams; reduce_range=True
     halves the range to [0, 127] so that fbgemm's pairwise int16 sums cannot saturate);
  2. the int8 weight and the uint8 activation are multiplied with int32 accumulation:
     acc[m, n] = sum_k (xq[m, k] - x_zp) * (wq[n, k] - w_zp);
  3. out = acc * (x_scale * w_scale) + bias, one fused multiply-add in float32 (the multiplier
     is the float32 product of the two scales).
Each step is a few calls of minitorch ops. The integer product runs as a float32 matmul where
every partial sum stays below 2**24 (K * 127 * 128 < 2**24: K up to 1032 with reduce_range and a
symmetric weight), else as a float64 one (below 2**53): exact either way, as the int32
accumulation is. The fused
multiply-add is float64 arithmetic rounded once to float32 (the product of two float32 numbers
is exact in float64). The tests compare with torch element by element.
With a float16 weight (dtype=torch.float16) the weight is rounded to float16 once and the
product runs in float32, as fbgemm's fp16 GEMM.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

import minitorch
from minitorch._qtensor import QTensor, _choose_qparams, qint8, quint8


def _f32(v: float) -> float:
    return float(np.float32(v))


class LinearPacked:
    """A weight (qint8 QTensor, or float32 values already rounded to float16) and its float bias,
    as linear_prepack / linear_prepack_fp16 pack them; the float64 and float32 copies of the
    integer weight, transposed for the product, are made once here."""

    def __init__(self, weight: Any, bias: Optional[Any], dtype: Any) -> None:
        self.dtype, self.bias = dtype, bias
        if dtype is qint8:
            if not isinstance(weight, QTensor) or weight.dtype is not qint8:
                raise RuntimeError("quantized::linear_prepack (fbgemm): Weight tensor must be qint8")
            self.weight = weight
            ir = weight._ir.to(minitorch.float64)
            if weight.qscheme() is minitorch.per_tensor_affine:
                self._w = (ir - weight.q_zero_point()).t().contiguous()  # (K, N)
                self._w_scale = minitorch.tensor(_f32(weight.q_scale()))
            else:
                axis_zp = weight.q_per_channel_zero_points().to(minitorch.float64).view(-1, 1)
                self._w = (ir - axis_zp).t().contiguous()
                self._w_scale = weight.q_per_channel_scales().to(minitorch.float32)
            self._w32 = self._w.float()  # integers below 256 in magnitude: exact in float32
            self._w_bound = int(self._w.abs().max()) if self._w.numel() else 0  # 128 at most when symmetric
        else:
            self.weight = weight.detach().to(minitorch.float32)
            if bool((self.weight.abs() > 65504.0).any()):
                import warnings

                warnings.warn("FOUND weight out of range ")
                self.weight = self.weight.clamp(-65504.0, 65504.0)
            self._w16 = self.weight.half().float().t().contiguous()

    def unpack(self) -> tuple:
        """(weight, bias), as linear_unpack: the fp16 weight comes back as float32."""
        if self.dtype is qint8:
            return self.weight, self.bias
        return self._w16.t().contiguous(), self.bias


def linear_dynamic(x: Any, packed: LinearPacked, reduce_range: bool = True) -> Any:
    """y = x W^T + b with x quantized on the fly (module docstring): x (*, K), at least 2-D -> (*, N)."""
    if packed.dtype is not qint8:
        return linear_dynamic_fp16(x, packed)
    K, N = packed._w.shape
    if x.dim() < 2:
        raise RuntimeError("The dimension of input tensor should be larger than or equal to 2")
    if x.shape[-1] != K:
        raise RuntimeError(f"The number of rows in the packB should be equal to K: {K}")
    lead = tuple(x.shape[:-1])
    rows = x.detach().reshape(-1, K).float()
    if rows.numel() == 0:
        return minitorch.zeros(*lead, N)
    lo, hi = (float(v) for v in minitorch.aminmax(rows))
    x_scale, x_zp = _choose_qparams(lo, hi, quint8._qmin, quint8._qmax, reduce_range)
    qmax = 127 if reduce_range else 255
    inv = _f32(np.float32(1.0) / np.float32(x_scale))
    xq = (rows.double() * inv + x_zp).float().round()  # fbgemm's fused x * (1/scale) + zero_point
    if lo != lo or hi != hi:  # NaN rounds to the top of the range, as fbgemm's clamp does
        xq = minitorch.nan_to_num(xq, nan=float(qmax))
    xq = xq.clamp(0, qmax) - x_zp
    # every partial sum is an integer of magnitude at most K * qmax * max|w - w_zp|: where that is
    # below 2**24, float32 holds them all exactly and sgemm is exact; else float64 (exact below 2**53)
    exact32 = K * qmax * packed._w_bound < 2 ** 24
    acc = xq @ packed._w32 if exact32 else xq.double() @ packed._w  # (M, N)
    mult = (minitorch.tensor(_f32(x_scale)) * packed._w_scale).double()
    out = acc.double() * mult
    if packed.bias is not None:
        out = out + packed.bias.detach().double()
    return out.float().reshape(*lead, N)


def linear_dynamic_fp16(x: Any, packed: LinearPacked) -> Any:
    """y = x W16^T + b in float32, W16 the weight rounded to float16."""
    K = packed._w16.shape[0]
    if x.dim() < 2:
        raise RuntimeError("The dimension of input tensor should be larger than or equal to 2")
    if x.shape[-1] != K:
        raise RuntimeError(f"The number of rows in the packB should be equal to K: {K}")
    out = x.detach().float() @ packed._w16
    if packed.bias is not None:
        out = out + packed.bias.detach().float()
    return out
