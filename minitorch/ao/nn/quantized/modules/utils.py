"""What the static quantized modules share: _quantize_weight (a float weight quantized with the
parameters its observer chose), the weight's integers and scales as the products use them, and
_requantize, fbgemm's output stage.

A quantized Linear or convolution computes as PyTorch's fbgemm kernels: the exact integer sum
acc = sum (xq - x_zp) * (wq - w_zp) (here a float64 product of integer-valued tensors: every
partial sum is an integer below 2**53, so exact as fbgemm's int32 one), then, in float32,
(acc + bias / (x_scale * w_scale)) * (x_scale * w_scale / out_scale), rounded half to even, plus
the output zero point, clamped to quint8's range (from the zero point up with a fused ReLU)."""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import nn
from minitorch._qtensor import QTensor, per_channel_affine, per_channel_symmetric, per_tensor_affine
from minitorch._qtensor import per_tensor_symmetric, qint8, quint8


def _weight_integers(qweight: QTensor) -> tuple:
    """(wq - w_zp as float64, w_scale as float32): the scale one number, or one per output
    channel (dim 0) for a per-channel weight."""
    ir = qweight._ir.to(minitorch.float64)
    if qweight.qscheme() is per_tensor_affine:
        return ir - qweight.q_zero_point(), minitorch.tensor(qweight.q_scale(), dtype=minitorch.float32)
    shape = [-1] + [1] * (ir.dim() - 1)
    zero_points = qweight.q_per_channel_zero_points().to(minitorch.float64).view(shape)
    return ir - zero_points, qweight.q_per_channel_scales().to(minitorch.float32)


def _input_integers(x: Any, op: str) -> Any:
    """xq - x_zp as float64, for a quint8 per-tensor input x."""
    if not isinstance(x, QTensor) or x.dtype is not quint8 or x.qscheme() is not per_tensor_affine:
        raise RuntimeError(f"{op} (fbgemm): Expected input data type to be quint8, per tensor")
    return x._ir.to(minitorch.float64) - x.q_zero_point()


def _requantize(acc: Any, x_scale: float, w_scale: Any, bias: Any, out_scale: float, out_zp: int, relu: bool,
                channel_dim: int) -> QTensor:
    """fbgemm's ReQuantizeOutput of the exact integer sums acc (float64; output channels along
    channel_dim): the quint8 result with out_scale and out_zp (module docstring)."""
    f32 = minitorch.float32
    shape = [1] * acc.dim()
    shape[channel_dim] = -1
    ab_scale = minitorch.tensor(x_scale, dtype=f32) * w_scale  # float32, one or one per channel
    if ab_scale.dim():
        ab_scale = ab_scale.view(shape)
    v = acc.to(f32)
    if bias is not None:
        v = v + bias.detach().to(f32).view(shape) / ab_scale
    v = (v * (ab_scale / minitorch.tensor(out_scale, dtype=f32))).round() + out_zp
    ir = v.clamp(out_zp if relu else 0, 255).to(minitorch.uint8)
    return QTensor(ir, quint8, per_tensor_affine, out_scale, out_zp)


def _clamp_weights(qweight: QTensor, observer: Any) -> QTensor:
    """The integers clamped to the observer's range where it is narrower than the dtype's."""
    qdtype = qweight.dtype
    lo, hi = observer.quant_min, observer.quant_max
    if (lo, hi) == (qdtype._qmin, qdtype._qmax):
        return qweight
    return qweight._like(qweight._ir.clamp(lo, hi))


def _quantize_weight(float_wt: Any, observer: Any) -> QTensor:
    """float_wt quantized to qint8 per tensor or per channel, as the observer's qscheme says."""
    scale, zero_point = observer.calculate_qparams()
    if observer.qscheme in (per_tensor_symmetric, per_tensor_affine):
        qweight = minitorch.quantize_per_tensor(float_wt, float(scale), int(zero_point), qint8)
    elif observer.qscheme in (per_channel_symmetric, per_channel_affine):
        qweight = minitorch.quantize_per_channel(float_wt, scale.to(minitorch.float64), zero_point.to(minitorch.int64),
                                                 observer.ch_axis, qint8)
    else:
        raise ValueError("Unexpected qscheme " + repr(observer.qscheme))
    return _clamp_weights(qweight, observer)


class _RecordsVersion(nn.Module):
    """Loading a state_dict records the version it was saved at (older ones computed differently:
    a dynamic Linear before version 4 used the full activation range) and loads non-strictly, as
    PyTorch's quantized modules do."""

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        self.version = local_metadata.get("version", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


class _WithOutputQParams(nn.Module):
    """A quantized module with an output scale and zero point, saved in its state_dict as
    one-element tensors (`<prefix>scale`, `<prefix>zero_point`) and loaded non-strictly, as
    PyTorch's."""

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "scale"] = minitorch.tensor(self.scale)
        destination[prefix + "zero_point"] = minitorch.tensor(self.zero_point)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        self.scale = float(state_dict.pop(prefix + "scale"))
        self.zero_point = int(state_dict.pop(prefix + "zero_point"))
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)
