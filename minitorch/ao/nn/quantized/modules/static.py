"""The static quantized modules that convert puts in place of QuantStub, DeQuantStub and Linear
(torch.ao.nn.quantized.Quantize, DeQuantize, Linear): quantized tensors in, quantized tensors out.

The quantized Linear computes as PyTorch's fbgemm kernel: the exact integer product of the
activation's and the weight's integers (less their zero points), then in float32
(acc + bias / (x_scale * w_scale)) * (x_scale * w_scale / out_scale), rounded half to even, plus
the output zero point, clamped to quint8's range.
"""
from __future__ import annotations

from typing import Any

import minitorch
from minitorch import nn
from minitorch._qtensor import QTensor, per_tensor_affine, quint8

from .linear import Linear as _LinearBase

__all__ = ["Quantize", "DeQuantize", "Linear"]


class Quantize(nn.Module):
    """Quantizes its float input per tensor with a fixed scale and zero point."""

    def __init__(self, scale: float, zero_point: int, dtype: Any, factory_kwargs: Any = None) -> None:
        super().__init__()
        self.register_buffer("scale", minitorch.tensor([scale]))
        self.register_buffer("zero_point", minitorch.tensor([zero_point], dtype=minitorch.int64))
        self.dtype = dtype

    def forward(self, X: Any) -> Any:
        return minitorch.quantize_per_tensor(X, float(self.scale), int(self.zero_point), self.dtype)

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "Quantize":
        if not hasattr(mod, "activation_post_process"):
            raise AssertionError("Input float module must have activation_post_process attribute")
        scale, zero_point = mod.activation_post_process.calculate_qparams()
        return Quantize(float(scale.float().item()), int(zero_point.long().item()),
                        mod.activation_post_process.dtype)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype}"


class DeQuantize(nn.Module):
    """The float values of its quantized input."""

    def forward(self, Xq: Any) -> Any:
        return Xq.dequantize()

    @staticmethod
    def from_float(mod: Any, use_precomputed_fake_quant: bool = False) -> "DeQuantize":
        return DeQuantize()


def _f32(v: Any) -> Any:
    return minitorch.tensor(v, dtype=minitorch.float32)


class Linear(_LinearBase):
    """A statically quantized Linear: quint8 input (per tensor), qint8 weight (per tensor or per
    channel), float bias, quint8 output with the scale and zero point its observer chose."""

    def forward(self, x: Any) -> Any:
        if not isinstance(x, QTensor) or x.dtype is not quint8 or x.qscheme() is not per_tensor_affine:
            raise RuntimeError("quantized::linear (fbgemm): Expected input data type to be quint8, per tensor")
        packed = self._packed_params._packed_params
        K, N = packed._w.shape
        rows = x._ir.reshape(-1, K).double() - x.q_zero_point()
        acc = (rows @ packed._w).float()  # (M, N): exact integers
        ab_scale = _f32(x.q_scale()) * packed._w_scale  # float32, one per column or one
        if packed.bias is not None:
            acc = acc + packed.bias.detach().float() / ab_scale
        v = (acc * (ab_scale / _f32(self.scale))).round() + self.zero_point
        ir = v.clamp(0, 255).to(minitorch.uint8).reshape(*x.shape[:-1], N)
        return QTensor(ir, quint8, per_tensor_affine, self.scale, self.zero_point)

    @classmethod
    def from_float(cls, mod: Any, use_precomputed_fake_quant: bool = False) -> "Linear":
        from .utils import _quantize_weight

        if hasattr(mod, "weight_fake_quant"):  # a QAT Linear: its own weight FakeQuantize quantizes
            observer = mod.weight_fake_quant
        else:
            if type(mod) not in cls._FLOAT_MODULE:
                raise AssertionError(f"nnq.Linear.from_float only works for Linear, NonDynamicallyQuantizableLinear, "
                                     f"but got: {type(mod)}")
            if not hasattr(mod, "qconfig"):
                raise AssertionError("Input float module must have qconfig defined")
            observer = mod.qconfig.weight()
        observer(mod.weight)
        if observer.dtype is not minitorch.qint8:
            raise AssertionError("Weight observer must have dtype torch.qint8")
        qweight = _quantize_weight(mod.weight.float(), observer)
        out_scale, out_zp = mod.activation_post_process.calculate_qparams()
        qlinear = cls(mod.in_features, mod.out_features, dtype=observer.dtype)
        qlinear.set_weight_bias(qweight, mod.bias)
        qlinear.scale, qlinear.zero_point = float(out_scale), int(out_zp)
        return qlinear
