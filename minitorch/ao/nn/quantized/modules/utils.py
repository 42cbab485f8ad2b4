"""_quantize_weight: a float weight quantized with the parameters its observer chose."""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import nn
from minitorch._qtensor import QTensor, per_channel_affine, per_channel_symmetric, per_tensor_affine
from minitorch._qtensor import per_tensor_symmetric, qint8


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
